// The measured choice between a host space's threads and the calling thread alone (rh/detail/thread_choice.hpp).
#include "rh/detail/thread_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "platform.hpp"

namespace rh::detail {

double ThreadChoice::wall_now() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ThreadChoice::Clock ThreadChoice::now() noexcept {
  Clock c;
  c.wall = wall_now();
  c.cpu = platform::thread_cpu_seconds();
  return c;
}

bool ThreadChoice::this_thread_clock(std::intptr_t* clock) noexcept { return platform::thread_cpu_clock(clock); }

int ThreadChoice::runnable_threads() noexcept { return platform::runnable_threads(); }

bool ThreadChoice::cores_taken(int threads) noexcept {
  return cores_taken(threads, runnable_threads(), static_cast<int>(std::thread::hardware_concurrency()));
}

void ThreadChoice::TeamClocks::begin(const Clock& start, const std::vector<std::intptr_t>& clocks) {
  start_ = start;
  excluded_ = 0.0;
  next_check_ = start.wall + stall_seconds;
  clocks_ = &clocks;
  start_cpu_.resize(std::min(clocks.size(), max_threads));
  for (std::size_t i = 0; i < start_cpu_.size(); ++i) start_cpu_[i] = platform::thread_cpu_seconds(clocks[i]);
}

ThreadChoice::Clock ThreadChoice::TeamClocks::now() const {
  Clock c = ThreadChoice::now();
  if (c.cpu < 0.0 || start_.cpu < 0.0 || clocks_ == nullptr) return c;
  double least = c.cpu - start_.cpu;
  for (std::size_t i = 0; i < start_cpu_.size(); ++i) {
    const double cpu = start_cpu_[i] < 0.0 ? -1.0 : platform::thread_cpu_seconds((*clocks_)[i]);
    if (cpu >= 0.0) least = std::min(least, cpu - start_cpu_[i] + excluded_);
  }
  c.cpu = start_.cpu + least;
  return c;
}

bool ThreadChoice::TeamClocks::stalled() {
  // The wall clock first: most checkpoints come before stall_seconds or within check_interval of the last look,
  // and the CPU clocks are system calls.
  const double wall = wall_now();
  if (wall < next_check_) return false;
  next_check_ = wall + check_interval;
  return stalled_since(start_, now());
}

void ThreadChoice::lost_probe(double probe_cost, double chosen_cost) {
  // Waiting w batches spreads the probe's excess (probe − chosen, in batches of the chosen way) over w of them.
  const double excess = chosen_cost > 0.0 ? probe_cost / chosen_cost - 1.0 : 1.0;
  const double spread = std::min(probe_overhead * std::max(excess, 1.0), static_cast<double>(max_wait));
  last_wait_ = std::min(max_wait, std::max(2 * last_wait_, static_cast<long long>(std::ceil(spread))));
  wait_ = last_wait_;
}

void ThreadChoice::stalled(double seconds) {
  probing_ = false;
  fresh_ = false;
  if (!alone_) {  // the threads were chosen: the first sign of a loaded machine
    alone_ = true;
    last_wait_ = 0;
    wait_ = 1;
    return;
  }
  // A probe of the threads that stalled lost, and cost `seconds` where the last batch alone took last_alone_seconds_.
  lost_probe(seconds, last_alone_seconds_ > 0.0 ? last_alone_seconds_ : seconds);
}

void ThreadChoice::record(bool alone, const Clock& start, const Clock& end, double work) {
  const double seconds = end.wall - start.wall;
  if (!(seconds > 0.0) || !(work > 0.0)) return;  // a clock that did not move says nothing
  const double cost = seconds / work;
  const bool cpu_known = start.cpu >= 0.0 && end.cpu >= 0.0;
  const double cpu = cpu_known ? end.cpu - start.cpu : 0.0;
  const bool waited = waited_for_core(start, end, transient_seconds);  // as stalled_since: a wake is no load
  const int way = alone ? 1 : 0, chosen = alone_ ? 1 : 0;
  const bool probe = probing_;
  probing_ = false;
  fresh_ = false;
  quiet_wall_ = alone ? quiet_wall_ + seconds : 0.0;
  quiet_cpu_ = alone ? quiet_cpu_ + cpu : 0.0;
  last_cost_[way] = cost;  // a probe ran the other way: way != chosen, and the comparison reads last_cost_[chosen]
  if (probe) {
    if (cost < switch_margin * last_cost_[chosen]) {  // the probe won
      alone_ = alone;
      last_wait_ = 0;
      threads_best_ = alone ? -1.0 : cost;
    } else {
      lost_probe(cost, last_cost_[chosen]);
    }
    return;
  }
  if (alone) last_alone_seconds_ = seconds;
  if (!alone) threads_best_ = threads_best_ < 0.0 ? cost : std::min(threads_best_, cost);
  if (wait_ > 0) {
    --wait_;
    return;
  }
  if (!alone_) {
    probing_ = waited || cost > slowdown * threads_best_;
  } else if (quiet_wall_ >= quiet_seconds || !cpu_known) {
    // Alone, the thread had its core to itself long enough (or the platform cannot tell): the threads may be
    // faster again.
    probing_ = !cpu_known || quiet_cpu_ >= quiet_share * quiet_wall_;
    quiet_wall_ = quiet_cpu_ = 0.0;
  }
}

}  // namespace rh::detail
