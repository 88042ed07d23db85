// Whether a multi-threaded host space (OpenMP) runs its next batch on its threads or on the calling thread alone
// (Serial over the same views: the same bits, because host results do not depend on the thread count).
//
// On a machine whose cores are taken by other processes, every launch of a batch ends in a barrier that may wait a
// whole scheduler time slice (~8 ms here) for a thread that was set aside: a batch on the threads then costs 10–100×
// one on the calling thread alone (docs/performance.md, "OpenMP on a loaded machine"). The choice is measured, never
// guessed. Before each batch on the threads, an empty launch on them (the second of two: the first wakes them)
// must come back within launch_limit. Each batch's wall time per unit of work is recorded, and the other way is
// tried on one batch (a probe) only when the calling thread's CPU clock says it may win: on the threads, the calling
// thread waited for a core during the batch; alone, it had its core to itself over the last `quiet_seconds`. (A
// batch's cost per unit of work varies 1.6× between the batches of one quiet stream, with the iterations' mix: too
// noisy to start a probe, but enough to compare a probe with the batch before it.) A probe that wins switches. One
// that loses waits before the next, long enough that probing costs at most about a tenth of the batches' time (the
// wait grows with what the losing probe cost), and twice as long each time.
#pragma once

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

  // The calling thread's share of a core below which it waited for one (the machine is loaded).
  static constexpr double loaded_share = 0.8;
  // ... and the share, over at least quiet_seconds of batches alone, above which it had a core to itself.
  static constexpr double quiet_share = 0.95;
  static constexpr double quiet_seconds = 0.05;
  // A probe switches when it costs less than this fraction of the other way's last batch: timing noise alone does
  // not flip the choice back and forth.
  static constexpr double switch_margin = 0.8;
  // A losing probe's excess cost is spread over at least this many times its batches (≤ 10 % overhead) ...
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
  }
  // Before a batch on the threads, an empty launch on them right after another (which woke them): above
  // launch_limit seconds a thread was not there to take its share (a quiet machine takes ~1 µs; a loaded one up to
  // a time slice, ~8 ms here), and the batch runs alone.
  static constexpr double launch_limit = 100e-6;
  // Whether the threads answered the empty launch in time; when not, the choice becomes alone (until a probe says
  // otherwise).
  bool threads_ready(double launch_seconds);
  // A batch that ran `alone` (or not) from `start` to `end` and did `work` units (rows × Newton iterations).
  void record(bool alone, const Clock& start, const Clock& end, double work);

 private:
  void lost_probe(double probe_cost, double chosen_cost);

  bool alone_ = false;     // the choice
  bool probing_ = false;   // the next batch tries the other way
  double last_cost_[2] = {0.0, 0.0};  // seconds per unit of work of the last batch on the threads [0] and alone [1]
  double quiet_wall_ = 0.0, quiet_cpu_ = 0.0;  // batches alone since the last probe: wall and the thread's CPU time
  long long wait_ = 0;                // batches before a probe may be tried
  long long last_wait_ = 0;           // the wait after the last losing probe
};

}  // namespace rh::detail
