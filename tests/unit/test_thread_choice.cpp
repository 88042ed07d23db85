// The choice between a host space's threads and the calling thread alone (rh/detail/thread_choice.hpp): the rule
// itself on measured clocks given to it, and, on every space, that a batch alone gives the same bits as on the
// threads and launches nothing on them.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rh/detail/engine.hpp"
#include "rh/detail/thread_choice.hpp"
#include "support.hpp"

using namespace rh;
using namespace rh::test;
using rh::detail::ThreadChoice;

namespace {

// Feeds `choice` one batch that ran where it said: threads_seconds or alone_seconds of wall time per unit of work,
// the calling thread busy for `share` of it (negative: the platform cannot tell); returns whether it ran alone.
struct Clocked {
  ThreadChoice choice;
  double now = 0.0, cpu = 0.0;
  bool batch(double threads_seconds, double alone_seconds, double share, double work = 1.0) {
    const bool alone = choice.alone();
    const double seconds = work * (alone ? alone_seconds : threads_seconds);
    const ThreadChoice::Clock start{now, share < 0 ? -1.0 : cpu};
    now += seconds;
    cpu += share < 0 ? 0.0 : share * seconds;
    const ThreadChoice::Clock end{now, share < 0 ? -1.0 : cpu};
    choice.record(alone, start, end, work);
    return alone;
  }
};

}  // namespace

TEST_CASE("the thread choice stays on quiet threads, goes alone when they slow down, and comes back") {
  Clocked c;
  // Quiet: the threads twice as fast as alone, their batch costs varying 2× (more than a quiet stream's): never a
  // probe.
  for (int b = 0; b < 200; ++b) REQUIRE_FALSE(c.batch(0.002 * (1.0 + 0.5 * (b % 3)), 0.004, 1.0));
  // Loaded: the threads 100× slower, the calling thread waiting for its core. The next batch tries alone, which
  // wins, and the choice stays alone while the calling thread waits for its core (its share below quiet_share).
  CHECK_FALSE(c.batch(0.2, 0.005, 0.5));
  CHECK(c.batch(0.2, 0.005, 0.6));
  CHECK(c.choice.chosen_alone());
  for (int b = 0; b < 1000; ++b) REQUIRE(c.batch(0.2, 0.005, 0.6));
  // Quiet again: once the calling thread had its core to itself for a whole window of quiet_seconds (the window
  // running when the load ended may still hold loaded batches: at most two windows), the threads are tried, and win.
  int alone = 0;
  while (c.batch(0.002, 0.004, 1.0)) ++alone;
  CHECK(alone * 0.004 >= ThreadChoice::quiet_seconds - 1e-12);
  CHECK(alone * 0.004 <= 2 * ThreadChoice::quiet_seconds + 0.004 + 1e-12);
  CHECK_FALSE(c.choice.chosen_alone());
  // A threads batch during which a thread waited for a core is also a reason to try alone, but not a wait within
  // transient_seconds (a thread waking); alone losing keeps the threads.
  CHECK_FALSE(c.batch(0.002, 0.004, 0.5));
  CHECK_FALSE(c.batch(0.002, 0.004, 1.0));
  CHECK_FALSE(c.batch(0.002, 0.004, 0.5, 40.0));  // 80 ms, half of it waiting
  CHECK(c.batch(0.002, 0.004, 1.0));
  CHECK_FALSE(c.choice.chosen_alone());
  CHECK_FALSE(c.batch(0.002, 0.004, 1.0));
  // So is a threads batch that costs `slowdown` times their best, the calling thread busy all along (spinning at
  // barriers while a partner thread waited for a core); here alone wins.
  for (int b = 0; b < 20; ++b) REQUIRE_FALSE(c.batch(0.002, 0.004, 1.0));  // the wait after the lost probe
  CHECK_FALSE(c.batch(0.002 * ThreadChoice::slowdown * 1.01, 0.004, 1.0));
  CHECK(c.batch(0.05, 0.004, 0.7));
  CHECK(c.choice.chosen_alone());
  c.choice.choose(false);
  // A batch on the threads that stalled: alone at once; a probe of the threads that stalls later counts as a lost
  // probe, with a wait that bounds what such probes cost (a 0.3 s stall against 4 ms batches alone: over 700).
  c.choice.stalled(0.03);
  CHECK(c.choice.chosen_alone());
  CHECK(c.choice.alone());
  int before_probe = 0;
  while (c.choice.alone() && before_probe < 100000) {
    c.batch(0.002, 0.004, 1.0);
    ++before_probe;
  }
  CHECK(before_probe * 0.004 <= 2 * ThreadChoice::quiet_seconds + 0.01);
  c.choice.stalled(0.3);
  CHECK(c.choice.chosen_alone());
  int waited = 0;
  while (c.choice.alone() && waited < 100000) {
    c.batch(0.002, 0.004, 1.0);
    ++waited;
  }
  CHECK(waited >= 700);
  CHECK(waited < 100000);
}

// Threads 100× slower than alone, the calling thread with a core to itself (one busy process on two cores: the
// calling thread's core is free, its partner's is not): probes keep losing, and the waits make their cost at most
// about a tenth of the stream's.
TEST_CASE("losing probes cost at most about a tenth of a stream") {
  for (const double share : {1.0, -1.0}) {  // measured, or a platform without the thread's CPU clock
    CAPTURE(share);
    Clocked c;
    c.choice.stalled(0.01);  // start alone
    const double alone_cost = 0.004, threads_cost = 0.4;
    double total = 0.0;
    long long probes = 0;
    const long long batches = 20000;
    for (long long b = 0; b < batches; ++b) {
      const bool alone = c.choice.alone();
      probes += alone ? 0 : 1;
      total += alone ? alone_cost : threads_cost;
      c.batch(threads_cost, alone_cost, share);
      REQUIRE(c.choice.chosen_alone());
    }
    MESSAGE("share " << share << ": " << probes << " probes over " << batches << " batches, overhead "
                     << total / (batches * alone_cost) - 1.0);
    CHECK(probes >= 2);  // it does keep trying
    CHECK(total <= 1.15 * batches * alone_cost);
  }
}

TEST_CASE("a batch on the threads stalls when a thread waited for a core long enough") {
  const ThreadChoice::Clock start{1.0, 2.0};
  const double t = ThreadChoice::stall_seconds, w = ThreadChoice::transient_seconds;
  CHECK_FALSE(ThreadChoice::stalled_since(start, {1.0 + 0.9 * t, 2.0}));              // too early to say
  CHECK_FALSE(ThreadChoice::stalled_since(start, {1.0 + 4 * t, 2.0 + 4 * t * 0.9}));  // busy 90 %
  CHECK(ThreadChoice::stalled_since(start, {1.0 + 4 * t, 2.0 + 4 * t * 0.5}));        // busy half the time
  CHECK_FALSE(ThreadChoice::stalled_since({1.0, -1.0}, {1.0 + 4 * t, -1.0}));          // no CPU clock
  // A wait of transient_seconds (a thread waking, another process's threads spinning) at the start of a batch
  // that then has its cores is no stall; a longer one is.
  CHECK_FALSE(ThreadChoice::stalled_since(start, {1.0 + 2.5 * w, 2.0 + 1.5 * w}));
  CHECK(ThreadChoice::stalled_since(start, {1.0 + 2.5 * w, 2.0 + 0.5 * w}));
  ThreadChoice c;
  c.stalled(0.02);
  CHECK(c.chosen_alone());
}

TEST_CASE("a calling thread's first batch starts alone when the machine's cores are taken") {
  CHECK(ThreadChoice::cores_taken(2, 3, 2));        // two busy processes on two cores (and the calling thread)
  CHECK(ThreadChoice::cores_taken(2, 2, 2));        // one
  CHECK_FALSE(ThreadChoice::cores_taken(2, 1, 2));  // none
  CHECK_FALSE(ThreadChoice::cores_taken(16, 2, 16));  // one daemon on a machine the team fills
  CHECK(ThreadChoice::cores_taken(16, 10, 16));
  CHECK_FALSE(ThreadChoice::cores_taken(2, 3, 8));  // cores to spare
  CHECK_FALSE(ThreadChoice::cores_taken(2, -1, 2));  // the platform cannot say
#if defined(__linux__)
  CHECK(ThreadChoice::runnable_threads() >= 1);  // the calling thread runs
#endif
}

TEST_CASE("a new engine's choice starts alone when told, unless a choice was made already") {
  ThreadChoice fresh, chosen, used;
  fresh.start_alone();
  CHECK(fresh.alone());
  chosen.choose(false);
  chosen.start_alone();
  CHECK_FALSE(chosen.alone());
  used.record(false, {1.0, 1.0}, {1.1, 1.1}, 1.0);
  used.start_alone();
  CHECK_FALSE(used.alone());
}

// The team's clocks: a thread that gets no CPU time (here one that sleeps) stalls a batch even while the calling
// thread keeps its core (spinning at a barrier, it would); time the batch spends on the calling
// thread alone is not the team's to lose.
TEST_CASE("a team thread that waits for a core stalls a batch while the calling thread keeps its core") {
  std::intptr_t own = 0;
  if (!ThreadChoice::this_thread_clock(&own)) {
    MESSAGE("this platform has no thread CPU clocks: the team is not watched");
    return;
  }
  std::mutex m;
  std::condition_variable cv;
  bool ready = false, done = false, has_clock = false;
  std::intptr_t sleeper_clock = 0;
  std::thread sleeper([&] {
    std::unique_lock<std::mutex> lock(m);
    has_clock = ThreadChoice::this_thread_clock(&sleeper_clock);
    ready = true;
    cv.notify_all();
    cv.wait(lock, [&] { return done; });
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return ready; });
  }
  CHECK(has_clock);
  const std::vector<std::intptr_t> team{own, sleeper_clock};
  ThreadChoice::TeamClocks clocks;
  const ThreadChoice::Clock start = ThreadChoice::now();
  clocks.begin(start, team);
  const auto spin_until = [](double wall) {
    while (ThreadChoice::wall_now() < wall) {
    }
  };
  spin_until(start.wall + 0.5 * ThreadChoice::stall_seconds);
  // Too young to tell — unless this process lost its core between the spin and the look for longer than the rest of
  // stall_seconds (a loaded machine: seen 1 run in 6-12 under four parallel builds), when the batch is old enough.
  const bool young = clocks.stalled();
  if (ThreadChoice::wall_now() < start.wall + ThreadChoice::stall_seconds) CHECK_FALSE(young);
  else MESSAGE("descheduled past stall_seconds before the first look: its answer is not checked");
  spin_until(start.wall + 2 * ThreadChoice::stall_seconds);
  const ThreadChoice::Clock late = clocks.now();
  CHECK(late.cpu - start.cpu < 0.1 * (late.wall - start.wall));  // the sleeper's, not the spinning thread's
  CHECK(clocks.stalled());
  // All of it on the calling thread alone: the least is the calling thread's own.
  clocks.begin(ThreadChoice::now(), team);
  spin_until(ThreadChoice::wall_now() + 0.5 * ThreadChoice::stall_seconds);
  clocks.exclude(ThreadChoice::stall_seconds);
  const ThreadChoice::Clock own_clock = ThreadChoice::now();
  CHECK(clocks.now().cpu >= own_clock.cpu);
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_all();
  sleeper.join();
}

TEST_CASE("clocks that did not move, or no work, change nothing") {
  Clocked c;
  ThreadChoice::Clock t{1.0, 1.0};
  c.choice.record(false, t, t, 1.0);
  c.choice.record(false, t, ThreadChoice::Clock{2.0, 2.0}, 0.0);
  CHECK_FALSE(c.choice.alone());
  const ThreadChoice::Clock a = ThreadChoice::now(), b = ThreadChoice::now();
  CHECK(b.wall >= a.wall);
  if (a.cpu >= 0) CHECK(b.cpu >= a.cpu);  // POSIX: the thread's CPU clock
}

namespace {
using Launches = std::set<std::pair<uint32_t, std::string>>;  // (device id, kernel label)
Launches* launched_on = nullptr;
void on_launch(const char* name, uint32_t device, uint64_t*) { launched_on->insert({device, name}); }
// Runs f, noting every launch it makes (Kokkos Tools callbacks) in `into`.
template <class F>
auto noting_launches(Launches& into, F&& f) {
  namespace K = Kokkos::Tools::Experimental;
  launched_on = &into;
  const auto saved = K::get_callbacks();
  K::set_begin_parallel_for_callback(&on_launch);
  K::set_begin_parallel_reduce_callback(&on_launch);
  K::set_begin_parallel_scan_callback(&on_launch);
  const auto result = f();
  K::set_callbacks(saved);
  launched_on = nullptr;
  return result;
}
}  // namespace

// A stream whose batches alternate between the threads and the calling thread alone ends in the same state, bit
// for bit, as the same stream on the threads throughout and alone throughout, and so does one whose every batch
// stalls on the threads and starts over alone; a batch alone says so in its
// diagnostics and launches nothing on the space's threads (no barrier waits for them). q = 111 makes J bigger
// than the size from which Kokkos copies host views with the default host space's threads.
TEST_CASE_TEMPLATE_DEFINE("batches on the calling thread alone give the same bits and never wait for the threads",
                          T, thread_choice_bits) {
  using Engine = detail::Engine<typename T::Traits, typename T::S>;
  CAPTURE(T::name());
  Data d = linear_data(6000, 110, 97, 0.3);
  for (long long i = 0; i < d.n; i += 17) d.y[static_cast<size_t>(i)] += 25.0;
  for (int v = 0; penalty_known(static_cast<Penalty>(v)); ++v) {  // every penalty
    const auto penalty = static_cast<Penalty>(v);
    const std::string penalty_label = penalty_name(penalty);
    CAPTURE(penalty_label);
    Config cfg;
    cfg.penalty = penalty;
    Engine threads(T::Traits::instance(0), 0), alone(T::Traits::instance(0), 0), mixed(T::Traits::instance(0), 0),
        stalling(T::Traits::instance(0), 0);
    const uint32_t threads_device = Kokkos::Tools::Experimental::device_id(T::Traits::instance(0));
    for (long long b = 0; b < 6; ++b) {
      CAPTURE(b);
      const TypedBatch t = make_batch(d, T::dtype, b * 1000, 1000);
      threads.thread_choice().choose(false);
      alone.thread_choice().choose(true);
      mixed.thread_choice().choose(b % 2 == 1);
      // On the threads, sequential and coefficient-sized work still runs on the calling thread alone: the dense
      // solve and the symmetry check launch with the calling thread's device id, the row passes with the threads'.
      Launches threads_launches;
      {
        const Diagnostics on_threads =
            noting_launches(threads_launches, [&] { return threads.update(t.batch, cfg, false); });
        if (Engine::can_run_alone && !on_threads.calling_thread_only) {  // (it may stall on a busy machine)
          int sequential = 0, rows = 0;
          for (const auto& launch : threads_launches) {
            const std::string& label = launch.second;
            CAPTURE(label);
            const bool seq = label.rfind("rh::cholesky", 0) == 0 || label == "rh::lu_solve" ||
                             label == "rh::check_symmetry";
            if (seq) {
              ++sequential;
              CHECK(launch.first != threads_device);
            }
            if (label == "rh::stage") {
              ++rows;
              CHECK(launch.first == threads_device);
            }
          }
          CHECK(sequential > 0);
          CHECK(rows > 0);
        }
      }
      Launches devices;
      const Diagnostics on_its_own = noting_launches(devices, [&] { return alone.update(t.batch, cfg, false); });
      const Diagnostics m = mixed.update(t.batch, cfg, false);
      // A batch that stalls on the threads at its first or second checkpoint starts over alone.
      stalling.thread_choice().choose(false);
      stalling.thread_choice().simulate_stall(1 + static_cast<int>(b % 2));
      const Diagnostics st = stalling.update(t.batch, cfg, false);
      CHECK(st.calling_thread_only == Engine::can_run_alone);
      CHECK(st.iterations == on_its_own.iterations);
      CHECK(same_state(stalling.export_state(), threads.export_state()));
      CHECK(on_its_own.calling_thread_only == Engine::can_run_alone);
      // (a batch chosen on the threads may still run alone: it starts over alone if it stalls, and this machine
      // may be busy)
      if (b % 2 == 1) CHECK(m.calling_thread_only == Engine::can_run_alone);
      if (!Engine::can_run_alone) CHECK_FALSE(m.calling_thread_only);
      CHECK(!devices.empty());
      for (const auto& launch : devices) {  // (device id, kernel label)
        const std::string& label = launch.second;
        CAPTURE(label);
        if (Engine::can_run_alone) CHECK(launch.first != threads_device);
      }
      CHECK(same_state(alone.export_state(), threads.export_state()));
      CHECK(same_state(mixed.export_state(), threads.export_state()));
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(thread_choice_bits, Targets);

// The calling thread's team: one launch finds a CPU clock per thread of the space; while the machine's cores were
// lately found taken, a new engine starts alone (its choice fresh); a stall of another engine does not count.
TEST_CASE_TEMPLATE_DEFINE("a new engine starts alone while the machine's cores were lately found taken", T,
                          thread_choice_team) {
  using Engine = detail::Engine<typename T::Traits, typename T::S>;
  CAPTURE(T::name());
  if constexpr (Engine::can_run_alone) {
    ThreadChoice::Team found;
    detail::find_team<typename T::Traits>(found, T::Traits::instance(0));
    CHECK(found.found);
    std::intptr_t own = 0;
    if (ThreadChoice::this_thread_clock(&own)) {
      CHECK(found.clocks.size() == static_cast<size_t>(T::Traits::instance(0).concurrency()));
      CHECK(std::find(found.clocks.begin(), found.clocks.end(), own) != found.clocks.end());  // the caller is one
    }
    ThreadChoice::Team& team = detail::team_of_this_thread<typename T::Traits>();
    const double saved = team.loaded_at;
    Data d = linear_data(2000, 8, 5, 0.3);
    const TypedBatch t = make_batch(d, T::dtype, 0, 1000);
    team.loaded_at = ThreadChoice::wall_now();  // as the calling thread's first batch does when the cores are taken
    Engine fresh(T::Traits::instance(0), 0);
    CHECK(fresh.update(t.batch, Config{}, false).calling_thread_only);
    CHECK(fresh.thread_choice().chosen_alone());
    team.loaded_at = -1e300;
    Engine stalls(T::Traits::instance(0), 0);
    stalls.thread_choice().choose(false);
    stalls.thread_choice().simulate_stall(1);
    CHECK(stalls.update(t.batch, Config{}, false).calling_thread_only);
    CHECK_FALSE(team.loaded_lately(ThreadChoice::wall_now()));
    team.loaded_at = saved;
  }
}
TEST_CASE_TEMPLATE_APPLY(thread_choice_team, Targets);
