// rh_bench: partial_fit streams on the reference project's shape-sweep shapes (seed-system §5.1), for every
// compiled space that has a device, both dtypes, both penalties and two lifecycles.
//
//   name: <profile>/<shape>_<samples>x<features>_b<batch>/<space>/<dtype>/<penalty>/<lifecycle>
//   e.g.  standard/reference_100000x90_b32768/openmp/f64/l1/steady
//
// One timed operation streams every batch of the shape through partial_fit (the reference's "partial_fit"
// operation). Lifecycles, as in the reference's timing rules:
//   cold    a new rh::Regressor is built inside every timed operation (engine creation and first-batch
//           allocations are timed); its destruction is not timed.
//   steady  one model, primed by one untimed stream; before every timed operation its state is reset with
//           reset() outside the timed region, so the work buffers are reused and nothing is allocated.
// Time is measured manually (steady_clock around the operation only, UseManualTime), so the untimed reset and
// destruction never leak into the numbers.
//
// Counters: solver_iters = Σ diagnostics.iterations over the stream (solver iterations, summed like the
// reference); all_converged = 1 when every batch converged; samples = samples streamed per second (shown as /s);
// s/solver_iter = time of the stream divided by its iterations (a rough per-iteration cost: it includes staging,
// line-search evaluations and the commit pass); other_cores = cores that other processes used while the
// benchmark ran (the machine is shared: above ~0.2 the time is probably inflated, see docs/performance.md);
// discarded = operations thrown away because of such interference (below).
//
// Own flags (before the Google Benchmark ones): --rh_quiet_wait=S waits up to S seconds (default 5, 0 = off)
// before each benchmark run for the machine to use fewer than --rh_quiet_threshold=C cores (default 0.3);
// --rh_retries=N (default 3): an operation of 20 ms or more during which other processes used half a core or
// more is discarded and repeated, at most N times (counter discarded = how many were thrown away).
//
// Select subsets with --benchmark_filter, e.g. --benchmark_filter='^standard/reference.*/openmp/f64/'.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_data.hpp"
#include "machine_load.hpp"
#include "rh/regressor.hpp"
#include "rh/version.hpp"

namespace {

using rh_perf::Dataset;
using rh_perf::Shape;

enum class Lifecycle { cold, steady };

struct Case {
  Shape shape;
  rh::SpaceInfo space;
  rh::Dtype dtype;
  rh::Penalty penalty;
  Lifecycle lifecycle;
};

// --rh_quiet_wait / --rh_quiet_threshold (see main).
double g_quiet_wait = 5.0, g_quiet_threshold = 0.3;
int g_retries = 3;

struct StreamResult {
  long long iterations = 0;
  bool all_converged = true;
};

template <class S>
StreamResult stream(rh::Regressor& model, const Shape& shape, const Dataset& d) {
  StreamResult r;
  const long long p = shape.features;
  for (long long r0 = 0; r0 < shape.samples; r0 += shape.batch) {
    const long long n = std::min(shape.batch, shape.samples - r0);
    const auto& diag =
        model.partial_fit(rh::host_batch(d.x_data<S>() + r0 * p, d.y_data<S>() + r0, n, p));
    r.iterations += diag.iterations;
    r.all_converged = r.all_converged && diag.converged;
  }
  return r;
}

StreamResult stream_any(rh::Regressor& model, const Shape& shape, const Dataset& d) {
  return model.dtype() == rh::Dtype::f32 ? stream<float>(model, shape, d) : stream<double>(model, shape, d);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_case(benchmark::State& state, const Case& c) {
  const Dataset& d = rh_perf::dataset(c.shape);
  rh::Config config;
  config.penalty = c.penalty;
  const bool cold = c.lifecycle == Lifecycle::cold;
  StreamResult last;
  rh_perf::CpuSnapshot load0, load1;
  long long discarded = 0;
  try {
    if (g_quiet_wait > 0) rh_perf::wait_quiet(g_quiet_threshold, g_quiet_wait);
    std::unique_ptr<rh::Regressor> steady;
    if (!cold) {
      steady = std::make_unique<rh::Regressor>(c.space.space, c.dtype, config);
      stream_any(*steady, c.shape, d);  // prime: buffers sized, code paths warm
    }
    // One timed operation; returns its seconds. Whatever is not part of the lifecycle's definition (the cold
    // model's destruction, the steady model's reset) happens outside the timed region.
    auto op = [&]() -> double {
      if (cold) {
        std::unique_ptr<rh::Regressor> model;
        const auto t0 = std::chrono::steady_clock::now();
        model = std::make_unique<rh::Regressor>(c.space.space, c.dtype, config);
        last = stream_any(*model, c.shape, d);
        return seconds_since(t0);
      }
      steady->reset();
      const auto t0 = std::chrono::steady_clock::now();
      last = stream_any(*steady, c.shape, d);
      return seconds_since(t0);
    };
    load0 = rh_perf::cpu_snapshot();
    for (auto _ : state) {
      double t = 0;
      for (int attempt = 0;; ++attempt) {
        const rh_perf::CpuSnapshot a = rh_perf::cpu_snapshot();
        t = op();
        // An operation long enough for /proc/stat to resolve (≥ 20 ms) during which other processes took half a
        // core or more is discarded and run again once the machine is quiet (at most --rh_retries times).
        if (t < 0.02 || attempt >= g_retries || rh_perf::other_cores(a, rh_perf::cpu_snapshot()) < 0.5) break;
        ++discarded;
        rh_perf::wait_quiet(g_quiet_threshold, std::max(g_quiet_wait, 1.0));
      }
      state.SetIterationTime(t);
    }
    load1 = rh_perf::cpu_snapshot();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["discarded"] = benchmark::Counter(static_cast<double>(discarded));
  using benchmark::Counter;
  state.counters["other_cores"] = Counter(rh_perf::other_cores(load0, load1));
  state.counters["solver_iters"] = Counter(static_cast<double>(last.iterations));
  state.counters["all_converged"] = Counter(last.all_converged ? 1.0 : 0.0);
  state.counters["samples"] = Counter(static_cast<double>(c.shape.samples), Counter::kIsIterationInvariantRate);
  state.counters["s/solver_iter"] =
      Counter(static_cast<double>(last.iterations), Counter::kIsIterationInvariantRate | Counter::kInvert);
}

const char* penalty_label(rh::Penalty p) { return rh::penalty_name(p); }
const char* dtype_label(rh::Dtype d) { return d == rh::Dtype::f32 ? "f32" : "f64"; }

}  // namespace

int main(int argc, char** argv) {
  // Our own flags are taken out of argv before Google Benchmark sees it.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--rh_quiet_wait=", 0) == 0) g_quiet_wait = std::stod(a.substr(16));
    else if (a.rfind("--rh_quiet_threshold=", 0) == 0) g_quiet_threshold = std::stod(a.substr(21));
    else if (a.rfind("--rh_retries=", 0) == 0) g_retries = std::stoi(a.substr(13));
    else argv[kept++] = argv[i];
  }
  argc = kept;
  // Minimum time per benchmark: long enough for a stable mean on the small shapes, short enough that every
  // long case runs a single operation (the whole standard profile then takes a few minutes on 2 cores).
  // --benchmark_min_time on the command line overrides it.
  const double min_time = 0.5;

  std::vector<rh::SpaceInfo> spaces;
  for (const auto& s : rh::compiled_spaces())
    if (s.device_count > 0) spaces.push_back(s);

  // Shape-major order: every case of one shape runs back to back, so its data set is generated once.
  for (const Shape& shape : rh_perf::shapes())
    for (const auto& space : spaces)
      for (rh::Dtype dtype : {rh::Dtype::f64, rh::Dtype::f32})
        for (rh::Penalty penalty : {rh::Penalty::none, rh::Penalty::l1})
          for (Lifecycle lc : {Lifecycle::cold, Lifecycle::steady}) {
            const Case c{shape, space, dtype, penalty, lc};
            const std::string name = std::string(shape.profile) + "/" + rh_perf::shape_label(shape) + "/" +
                                     space.name + "/" + dtype_label(dtype) + "/" + penalty_label(penalty) + "/" +
                                     (lc == Lifecycle::cold ? "cold" : "steady");
            benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& st) { run_case(st, c); })
                ->UseManualTime()
                ->MinTime(min_time)
                ->Unit(benchmark::kMillisecond);
          }

  benchmark::AddCustomContext("rh_version", rh::library_version());
  benchmark::AddCustomContext("rh_git_revision", RH_GIT_REVISION);
  benchmark::AddCustomContext("kokkos_version", rh::kokkos_version());
  benchmark::AddCustomContext("rh_native_arch", RH_PERF_NATIVE_ARCH ? "on (-march=native)" : "off");
  std::string space_list;
  for (const auto& s : spaces)
    space_list += (space_list.empty() ? "" : ",") + s.name + "(" + std::to_string(s.concurrency) + ")";
  benchmark::AddCustomContext("spaces(concurrency)", space_list);
  for (const char* var : {"OMP_NUM_THREADS", "OMP_PROC_BIND"}) {
    const char* v = std::getenv(var);
    benchmark::AddCustomContext(var, v ? v : "(unset)");
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
