// Whether a multi-threaded host space (OpenMP) runs its next batch on its threads or on the calling thread alone
// (Serial over the same views: the same bits, because host results do not depend on the thread count).
//
// On a machine whose cores are taken by other processes, every launch of a batch ends in a barrier that may wait a
// whole scheduler time slice for a thread that was set aside: a batch on the threads then costs many times one on
// the calling thread alone (docs/performance.md, "OpenMP on a loaded machine"). The choice is measured,
// never guessed. A batch on the threads is watched: once one of its threads has waited for a core too long
// (TeamClocks::stalled) it stops and starts over alone, which loses only the time spent, since nothing is committed
// before the end. Each batch's wall time per unit of work is recorded, and the other way is tried on one batch (a probe)
// when the measurements say it may win: on the threads, the calling thread waited for a core during the batch, or
// the batch cost `slowdown` times their best; alone, the calling thread had its core to itself over the last
// `quiet_seconds`. A probe that wins switches. One that loses waits before the next, long enough that probing costs
// at most about a tenth of the batches' time (the wait grows with what the losing probe cost), and twice as long
// each time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rh::detail {

class ThreadChoice {
 public:
  // The clocks a batch is measured by: wall seconds and the calling thread's CPU seconds (negative: unknown on
  // this platform, core/src/platform.hpp).
  struct Clock {
    double wall = 0.0;
    double cpu = -1.0;
  };
  static Clock now() noexcept;
  static double wall_now() noexcept;  // the wall clock alone (the CPU clock is a system call: read it when needed)

  // The CPU clocks of the threads a batch on the threads runs on. Every launch ends when its slowest thread does,
  // so the batch's clock is that of the thread that had the least CPU time: while the calling thread spins at a
  // barrier, keeping its core, a partner thread may wait for one (docs/performance.md, "OpenMP on a loaded
  // machine"). The clocks come from a launch in which each thread gives its own (this_thread_clock); at most
  // max_threads are read, each read being a system call (docs/performance.md, "Why the code is so"): on a loaded machine many threads wait.
  class TeamClocks {
   public:
    static constexpr std::size_t max_threads = 16;
    // Starts a batch at `start` (ThreadChoice::now()) on the threads of `clocks`, read now; the clocks must stay
    // valid until the batch ends.
    void begin(const Clock& start, const std::vector<std::intptr_t>& clocks);
    // now(), with the calling thread's CPU time replaced by the least any thread had since begin() (a team
    // thread's counting the time excluded; a thread whose clock cannot be read is left out).
    Clock now() const;
    const Clock& start() const { return start_; }
    // The batch ran `seconds` on the calling thread alone: the team's threads had no work then.
    void exclude(double seconds) { excluded_ += seconds; }
    // Whether the batch stalled (stalled_since), asked at the solver's checkpoints; the CPU clocks are read at most
    // once per check_interval.
    bool stalled();
    static constexpr double check_interval = 0.001;

   private:
    Clock start_;
    double excluded_ = 0.0;  // seconds of the batch on the calling thread alone
    double next_check_ = 0.0;
    const std::vector<std::intptr_t>* clocks_ = nullptr;
    std::vector<double> start_cpu_;  // each thread's CPU seconds at begin() (negative: unreadable)
  };
  // The calling thread's CPU clock for TeamClocks, or false when the platform has none.
  static bool this_thread_clock(std::intptr_t* clock) noexcept;

  // What a calling thread knows of the threads that run its launches on one host space, shared by its engines of
  // that space (an OpenMP runtime gives each thread that launches a team of its own; Engine::update).
  struct Team {
    bool asked = false;                 // the machine's load was read once (cores_taken)
    bool found = false;                 // the clocks were asked for, by a launch on the threads (find_team)
    std::vector<std::intptr_t> clocks;  // then the threads' CPU clocks (TeamClocks)
    double loaded_at = -1e300;          // wall time at which the first batch found the machine's cores taken
    // Whether that was less than team_memory_seconds before `now`: a new engine then starts alone (start_alone).
    // (A stall does not count: one process's first batch after another's may stall, a thread waking and the
    // other's spinning adding up, and engines made after it would all start alone.)
    bool loaded_lately(double now) const { return now - loaded_at < team_memory_seconds; }
  };
  static constexpr double team_memory_seconds = 0.5;
  // Whether the machine has fewer free cores now than `threads`, with enough other threads running to hold up half
  // of them (false when the platform cannot say): asked once,
  // before the first batch of a calling thread on its threads, since no measurement of them exists yet and a stall
  // costs that batch's first launches. From there the measurements decide.
  static bool cores_taken(int threads) noexcept;
  // The rule, given the machine's runnable threads (the calling one included; <= 0: unknown) and cores: others
  // that leave too few cores for the team, and enough of them to hold up half of it (one thread of a daemon waking
  // on a machine whose cores the team fills is not a load).
  static constexpr bool cores_taken(int threads, int runnable, int cores) {
    return runnable > 0 && cores > 0 && (runnable - 1) + threads > cores && 2 * (runnable - 1) >= threads;
  }
  static int runnable_threads() noexcept;  // platform::runnable_threads

  // The calling thread's share of a core below which it waited for one (the machine is loaded).
  static constexpr double loaded_share = 0.8;
  // ... and the share, over at least quiet_seconds of batches alone, above which it had a core to itself. A core to
  // itself does not mean one for each thread (two busy processes may share the other core), and a probe then costs a
  // batch on the threads until it stalls (docs/performance.md, "Why the code is so"): a quarter second of evidence keeps short streams
  // from paying it.
  static constexpr double quiet_share = 0.95;
  static constexpr double quiet_seconds = 0.25;
  // A batch on the threads that costs this many times their best is a reason to try alone: the batches of one
  // quiet stream vary in cost per unit of work (the mix of their iterations) far less than a loaded machine's do
  // (docs/performance.md, "OpenMP on a loaded machine"; the calling thread may keep its core, spinning at barriers while a partner thread waits for one).
  static constexpr double slowdown = 3.0;
  // A probe switches when it costs less than this fraction of the other way's last batch: timing noise alone does
  // not flip the choice back and forth.
  static constexpr double switch_margin = 0.8;
  // A losing probe's excess cost is spread over at least this many times its batches (about a tenth at most) ...
  static constexpr double probe_overhead = 10.0;
  static constexpr long long max_wait = 1LL << 20;  // ... and the wait is bounded all the same.

  // Whether the next batch runs on the calling thread alone.
  bool alone() const { return probing_ ? !alone_ : alone_; }
  // Whether the choice (not a probe) is the calling thread alone.
  bool chosen_alone() const { return alone_; }
  // Sets the choice, with no probe pending and no wait (the tests' way to run a batch either way; the next
  // measurements may change it again).
  void choose(bool alone) {
    alone_ = alone;
    probing_ = false;
    wait_ = 0;
    fresh_ = false;
  }
  // A choice that has not been used yet (no batch recorded, none chosen) starts alone.
  void start_alone() {
    if (fresh_) choose(true);
  }
  // Whether a batch on the threads that ran from `start` to `now` (the clocks of TeamClocks) should stop and
  // start over alone: a thread of it waited for a core longer than transient_seconds plus what loaded_share lets it.
  // A short wait is no stall: a thread that slept takes a while to wake even on a quiet virtual machine (its virtual
  // CPU halted when idle), and another process's OpenMP threads spin after their own work (both measured:
  // docs/performance.md, "OpenMP on a loaded machine"); a loaded machine's waits go on (the batch's state is not committed until it ends, so starting over loses only the time spent). It
  // changes nothing; stalled() makes the choice.
  static constexpr double transient_seconds = 0.016;
  static constexpr double stall_seconds = transient_seconds / loaded_share;  // no stall is younger
  static bool stalled_since(const Clock& start, const Clock& now) {
    return now.wall - start.wall >= stall_seconds && waited_for_core(start, now, transient_seconds);
  }
  // Whether the thread of `end.cpu` had less than loaded_share of a core from start to end, less `allowance`
  // seconds (false when the platform cannot tell).
  static bool waited_for_core(const Clock& start, const Clock& end, double allowance = 0.0) {
    return start.cpu >= 0.0 && end.cpu >= 0.0 &&
           end.cpu - start.cpu < loaded_share * (end.wall - start.wall) - allowance;
  }
  // The threads stalled a batch: alone from here (until a probe says otherwise); a stall after a probe of the
  // threads counts as a lost probe.
  void stalled(double seconds);  // `seconds`: the time the stalled batch took before it stopped
  // The tests' stall: the next batch on the threads stalls at its `checks`-th checkpoint (0: none).
  void simulate_stall(int checks) { simulated_stall_ = checks; }
  bool simulated_stall_now() { return simulated_stall_ > 0 && --simulated_stall_ == 0; }
  // A batch that ran `alone` (or not) from `start` to `end` and did `work` units (rows × Newton iterations).
  void record(bool alone, const Clock& start, const Clock& end, double work);

 private:
  void lost_probe(double probe_cost, double chosen_cost);

  bool alone_ = false;     // the choice
  bool probing_ = false;   // the next batch tries the other way
  bool fresh_ = true;      // no batch recorded and none chosen yet
  double last_cost_[2] = {0.0, 0.0};  // seconds per unit of work of the last batch on the threads [0] and alone [1]
  double quiet_wall_ = 0.0, quiet_cpu_ = 0.0;  // batches alone since the last probe: wall and the thread's CPU time
  double last_alone_seconds_ = 0.0;  // wall time of the last batch alone
  double threads_best_ = -1.0;        // the lowest cost on the threads since they were last chosen (< 0: none)
  long long wait_ = 0;                // batches before a probe may be tried
  long long last_wait_ = 0;           // the wait after the last losing probe
  int simulated_stall_ = 0;           // simulate_stall's countdown
};

}  // namespace rh::detail
