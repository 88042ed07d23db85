// Where an engine's batch runs, and whether its memory fits: the engine (rh/detail/engine.hpp) keeps the
// transaction; this unit keeps the rest of the batch's circumstances.
//  - Threads: a batch runs on the space's threads or on the calling thread alone, as ThreadChoice
//    (rh/detail/thread_choice.hpp) decides from its measurements; both give the same bits.
//  - Stalls: while a batch runs on the threads, stalled() says when they stalled it (a plain answer, polled at the
//    solver's checkpoints); the engine then abandons the batch before its commit and runs it again alone.
//  - Memory: the bytes an engine holds for a shape, and the check of a growth against rh::memory_limit() and what
//    the space has free.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "rh/detail/instances.hpp"
#include "rh/detail/passes.hpp"  // host_gram_tile
#include "rh/detail/thread_choice.hpp"
#include "rh/error.hpp"
#include "rh/regressor.hpp"  // memory_limit

namespace rh::detail {

// The team of the calling thread on a host space (ThreadChoice::Team), shared by its engines of that space.
template <class Traits>
ThreadChoice::Team& team_of_this_thread() {
  thread_local ThreadChoice::Team team;
  return team;
}
// Finds the team's CPU clocks with one launch in which each thread gives its own.
template <class Traits>
void find_team(ThreadChoice::Team& team, const typename Traits::execution_space& space) {
  const int n = std::max(1, space.concurrency());
  std::vector<std::intptr_t> given(static_cast<std::size_t>(n));
  std::vector<char> has(static_cast<std::size_t>(n), 0);
  Kokkos::parallel_for("rh::team_clocks", Kokkos::RangePolicy<typename Traits::execution_space>(space, 0, n),
                       [&](const int i) { has[i] = ThreadChoice::this_thread_clock(&given[i]) ? 1 : 0; });
  space.fence();
  for (int i = 0; i < n; ++i)
    if (has[i] && std::find(team.clocks.begin(), team.clocks.end(), given[i]) == team.clocks.end())
      team.clocks.push_back(given[i]);
  team.found = true;
}

// The threads-or-alone placement of one engine's batches, and the stall watch of a batch on the threads.
template <class Traits>
class Placement {
 public:
  using execution_space = typename Traits::execution_space;

  // Before a batch: whether it starts on the calling thread alone. A calling thread's first batch on the threads
  // asks whether the machine's cores are taken, and finds its team's clocks.
  bool starts_alone(const execution_space& space) {
    ThreadChoice::Team& team = team_of_this_thread<Traits>();
    if (!team.asked && !choice_.alone()) {  // the first batch of this calling thread on its threads
      team.asked = true;
      if (ThreadChoice::cores_taken(space.concurrency())) team.loaded_at = ThreadChoice::wall_now();
    }
    // A new engine starts alone while the machine's cores were lately found taken: a stall costs a batch's first
    // launches before a checkpoint can see it (docs/performance.md, "Why the code is so").
    if (team.loaded_lately(ThreadChoice::wall_now())) choice_.start_alone();
    if (!team.found && !choice_.alone()) find_team<Traits>(team, space);  // once per calling thread
    return choice_.alone();
  }

  // run() for a batch on the threads, watched from `start`: its result, or nothing when the threads stalled it
  // (then the stall is recorded and `start` moves to the moment it was given up).
  template <class Run>
  auto on_threads(ThreadChoice::Clock& start, Run&& run) {
    team_.begin(start, team_of_this_thread<Traits>().clocks);
    struct Watch {  // while run() runs, however it ends
      Placement& p;
      explicit Watch(Placement& placement) : p(placement) { p.watching_ = true, p.stalled_ = false; }
      ~Watch() { p.watching_ = false; }
    };
    auto result = [&] {
      Watch watch(*this);
      return run();
    }();
    if (!result) {  // nothing was committed: the batch starts over alone
      const ThreadChoice::Clock stop = ThreadChoice::now();
      choice_.stalled(stop.wall - start.wall);
      start = stop;
    }
    return result;
  }

  // The measurement of a finished batch (ThreadChoice::record).
  void record(bool alone, const ThreadChoice::Clock& start, double work) {
    choice_.record(alone, start, alone ? ThreadChoice::now() : team_.now(), work);
  }

  // At a solver checkpoint: whether the threads stalled the watched batch (false when none is watched). Once
  // true, true until the batch is given up.
  bool stalled() {
    if (!watching_) return false;
    if (!stalled_) stalled_ = choice_.simulated_stall_now() || team_.stalled();
    return stalled_;
  }
  // Whether a checkpoint found the watched batch stalled (no new reading of the clocks).
  bool found_stalled() const { return watching_ && stalled_; }

  // Runs f, work on the calling thread within a batch: on the threads (after their launches have ended), their idle
  // time there is no stall (ThreadChoice::TeamClocks::exclude).
  template <class F>
  void calling_thread_section(const execution_space& space, F&& f) {
    if (!watching_) return f();
    space.fence();
    const double start = ThreadChoice::wall_now();
    f();
    team_.exclude(ThreadChoice::wall_now() - start);
  }

  ThreadChoice& choice() { return choice_; }
  bool chosen_alone() const { return choice_.chosen_alone(); }

 private:
  ThreadChoice choice_;
  bool watching_ = false;          // a batch on the threads is being watched for a stall
  bool stalled_ = false;           // and a checkpoint found it stalled
  ThreadChoice::TeamClocks team_;  // its clocks
};

// Bytes an engine of dtype S holds for q coefficients and a row workspace of n rows, in double (it cannot
// overflow): the committed β and J, the q-vectors and q×q work matrices of its work views (K's too), the per-chunk
// partial sums (the squared-score Gram's too), and the design, y, w, s, c, r, u, Δc, the changed-row list (plus the
// caller's X as laid out, on a space with its own memory). Scratch of a few values per chunk or coefficient is left
// out.
template <class Traits, class S>
double footprint_bytes(double n, double q, double chunks) {
  const double values = (1 + 5) * q + (1 + 6) * q * q + chunks * (2 * q * q + q) + n * q + host_gram_tile + 8 * n +
                        (Traits::host ? 0.0 : n * q);
  return values * sizeof(S);
}

inline std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  for (; bytes >= 1024 && u < 6; ++u) bytes /= 1024;
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

// Refuses (rh::Error) a model of q coefficients and `rows` rows that needs `need` bytes, holding `held` now: q·q
// beyond the index range, `need` beyond rh::memory_limit(), or the growth beyond what the space has free (a
// device's free memory). docs/abi.md, "Limits".
template <class Traits>
void require_memory(long long q, long long rows, double need, double held, int device_id) {
  const double qd = static_cast<double>(q);
  if (qd * qd * static_cast<double>(Traits::max_chunks + 6) > 0x1p62)
    throw Error(Errc::invalid_argument,
                fmt::format("a model of {} coefficients needs q×q = {:.3g} values per matrix, beyond the index "
                            "range",
                            q, qd * qd));
  const double limit = static_cast<double>(memory_limit());
  if (need > limit)
    throw Error(Errc::allocation_failed,
                fmt::format("{} coefficients and {} rows need about {} of memory, more than the memory limit of "
                            "{} (rh::set_memory_limit / rh_set_memory_limit)",
                            q, rows, human_bytes(need), human_bytes(limit)));
  const double available = static_cast<double>(Traits::available_memory(device_id));
  if (need - held > available)
    throw Error(Errc::allocation_failed,
                fmt::format("{} coefficients and {} rows need about {} more memory, but the {} space has only "
                            "{} free",
                            q, rows, human_bytes(need - held), space_name(Traits::id), human_bytes(available)));
}

}  // namespace rh::detail
