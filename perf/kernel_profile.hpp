// An in-process Kokkos Tools listener: counts and times every kernel launch (parallel_for / reduce / scan, by
// label) and every deep_copy while it is active. The benchmarks use it to time one named solver kernel inside a
// real partial_fit (rh_gram_bench) and to verify the per-iteration cost model (rh_perf_worker --kernel-profile),
// without touching the library's internals: only kernel labels are relied on.
//
// Every callback fences (Kokkos::fence()) before it reads the clock, so a kernel's time is its execution, not
// just its launch: free on host spaces, where launches are synchronous anyway; on CUDA it serializes the stream,
// so the per-kernel times are exact but the profiled operation is slower than an unprofiled one. (Kokkos 3.4 does
// not fence for callbacks installed this way, and does not report fences to tools; synchronizations are counted
// from the code, docs/performance.md.)
#pragma once
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rh_perf {

struct KernelStat {
  long long launches = 0;
  double seconds = 0.0;
};

struct CopyStat {
  long long copies = 0;
  double bytes = 0.0;
  double seconds = 0.0;
};

class KernelProfile {
 public:
  static KernelProfile& instance() {
    static KernelProfile p;
    return p;
  }

  // Installs the callbacks (Kokkos must be initialized) and clears the counts.
  void start() {
    clear();
    if (active_) return;
    namespace T = Kokkos::Tools::Experimental;
    saved_ = T::get_callbacks();
    T::set_begin_parallel_for_callback(&begin_kernel);
    T::set_end_parallel_for_callback(&end_kernel);
    T::set_begin_parallel_reduce_callback(&begin_kernel);
    T::set_end_parallel_reduce_callback(&end_kernel);
    T::set_begin_parallel_scan_callback(&begin_kernel);
    T::set_end_parallel_scan_callback(&end_kernel);
    T::set_begin_deep_copy_callback(&begin_copy);
    T::set_end_deep_copy_callback(&end_copy);
    active_ = true;
  }

  // Restores the callbacks that were installed before start(); the counts stay readable.
  void stop() {
    if (!active_) return;
    Kokkos::Tools::Experimental::set_callbacks(saved_);
    active_ = false;
  }

  void clear() {
    kernels.clear();
    copies.clear();
    open_.clear();
  }

  std::map<std::string, KernelStat> kernels;  // by kernel label
  std::map<std::string, CopyStat> copies;     // by "destination space <- source space"

  long long total_launches() const {
    long long n = 0;
    for (const auto& [name, k] : kernels) n += k.launches;
    return n;
  }
  long long total_copies() const {
    long long n = 0;
    for (const auto& [name, c] : copies) n += c.copies;
    return n;
  }

 private:
  using clock = std::chrono::steady_clock;
  struct Open {
    std::string name;
    clock::time_point t0;
  };

  static void begin_kernel(const char* name, const uint32_t /*device*/, uint64_t* id) {
    Kokkos::fence();  // earlier asynchronous work is not this kernel's
    auto& p = instance();
    *id = p.open_.size();
    p.open_.push_back(Open{name, clock::now()});
  }
  static void end_kernel(uint64_t id) {
    Kokkos::fence();  // the launch returned; wait for the kernel itself
    const auto t1 = clock::now();
    auto& p = instance();
    if (id >= p.open_.size()) return;
    KernelStat& k = p.kernels[p.open_[id].name];
    ++k.launches;
    k.seconds += std::chrono::duration<double>(t1 - p.open_[id].t0).count();
    if (id + 1 == p.open_.size()) p.open_.pop_back();  // launches do not overlap on one host thread
  }
  static void begin_copy(Kokkos::Tools::SpaceHandle dst, const char*, const void*, Kokkos::Tools::SpaceHandle src,
                         const char*, const void*, uint64_t size) {
    auto& p = instance();
    Kokkos::fence();
    p.copy_key_ = std::string(dst.name) + " <- " + src.name;
    p.copy_bytes_ = static_cast<double>(size);
    p.copy_t0_ = clock::now();
  }
  static void end_copy() {
    Kokkos::fence();
    auto& p = instance();
    CopyStat& c = p.copies[p.copy_key_];
    ++c.copies;
    c.bytes += p.copy_bytes_;
    c.seconds += std::chrono::duration<double>(clock::now() - p.copy_t0_).count();
  }

  bool active_ = false;
  Kokkos::Tools::Experimental::EventSet saved_{};
  std::vector<Open> open_;
  std::string copy_key_;
  double copy_bytes_ = 0.0;
  clock::time_point copy_t0_{};
};

}  // namespace rh_perf
