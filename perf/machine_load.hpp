// How busy the machine is, and how much of that is someone else: the CPU numbers of this harness come from a
// shared 2-core VM where other people's compilers run at the same time, and an OpenMP team of 2 threads on 2
// cores slows down by orders of magnitude when one core is taken (every barrier waits for a time slice).
//
//   wait_quiet(threshold, timeout)  waits until the whole machine uses fewer than `threshold` cores
//   LoadWindow                      cores used by other processes between its construction and other_cores()
//
// Linux only (/proc/stat); elsewhere every call reports 0 and never waits.
#pragma once
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace rh_perf {

struct CpuSnapshot {
  long long busy = 0, total = 0;  // whole machine, in clock ticks
  double own_seconds = 0.0;       // this process, every thread
  std::chrono::steady_clock::time_point when;
};

inline CpuSnapshot cpu_snapshot() {
  CpuSnapshot s;
  s.when = std::chrono::steady_clock::now();
  std::ifstream in("/proc/stat");
  std::string cpu;
  long long v[10] = {};
  if (in >> cpu) {
    for (long long& x : v)
      if (!(in >> x)) break;
    long long all = 0;
    for (long long x : v) all += x;
    s.total = all;
    s.busy = all - v[3] - v[4];  // minus idle and iowait
  }
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    s.own_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                    1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  return s;
}

inline double machine_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<double>(n) : 1.0;
}

// Busy cores of the whole machine between two snapshots.
inline double busy_cores(const CpuSnapshot& a, const CpuSnapshot& b) {
  if (b.total <= a.total) return 0.0;
  return machine_cores() * static_cast<double>(b.busy - a.busy) / static_cast<double>(b.total - a.total);
}

// Busy cores of everything except this process between two snapshots.
inline double other_cores(const CpuSnapshot& a, const CpuSnapshot& b) {
  const double wall = std::chrono::duration<double>(b.when - a.when).count();
  if (wall <= 0) return 0.0;
  const double v = busy_cores(a, b) - (b.own_seconds - a.own_seconds) / wall;
  return v > 0 ? v : 0.0;
}

// Waits until the machine uses fewer than `threshold` cores (measured over 0.1 s windows), at most `timeout`
// seconds; returns the seconds waited.
inline double wait_quiet(double threshold, double timeout) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const CpuSnapshot a = cpu_snapshot();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const CpuSnapshot b = cpu_snapshot();
    const double waited = std::chrono::duration<double>(b.when - t0).count();
    if (a.total == 0 || busy_cores(a, b) < threshold || waited >= timeout) return waited;
  }
}

}  // namespace rh_perf
