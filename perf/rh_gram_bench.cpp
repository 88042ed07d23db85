// rh_gram_bench: the dominant dense building block of a Newton iteration, the weighted Gram
// G = Xᵀ diag(c) X of a tall-skinny X (n × q), timed four ways on the host:
//
//   rh_fused     our own fused Gram+gradient kernel, timed inside real partial_fit calls on the OpenMP space
//                (perf/gram_pass.hpp, a Kokkos Tools listener): the mean of its launches, nothing else of the
//                solver is counted. tools/rh bench --profile gram records the same pass for every space.
//   kk_gemm      Kokkos Kernels 3.4's own KokkosBlas::gemm("T","N", Xc, X) on Kokkos::OpenMP (header-only,
//                instantiated here; our Kokkos Kernels has no ETI and no BLAS TPL), X in LayoutLeft and LayoutRight.
//   openblas_syrk / openblas_gemm   OpenBLAS cblas_?syrk (upper triangle of (√c∘X)ᵀ(√c∘X)) and cblas_?gemm
//                ((c∘X)ᵀX) on row-major X, with OpenBLAS set to the same thread count as Kokkos::OpenMP.
//
// Every variant except rh_fused includes the row-weighting pass (c∘X or √c∘X) in its time, as a real solver
// must; rh_fused weights rows while staging them and also forms the gradient Σ s_i x_i in the same launch.
// Counters: Gflop (a rate, shown as Gflop=…/s) counts 2·n·q² flops for every variant, the gemm count; syrk and
// our kernel do about half of that work because G is symmetric, so their rate is "gemm-equivalent" (how fast the
// Gram is delivered). GB_X = n·q·sizeof(S) bytes (X read once) per second. max_rel_err = max |G − G_ref| /
// max |G_ref| against a double-precision reference Gram (not for rh_fused, whose weights come from the solver).
// other_cores = cores other processes used during the timed loop (shared machine; see machine_load.hpp).
//
// Shapes: 32768×91 (reference batch, q = 90 + intercept), 4096×257 (wide batch), 262144×32 (tall, small q).
#include <benchmark/benchmark.h>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gram_pass.hpp"
#include "machine_load.hpp"
#include "perf_build_info.hpp"
#include "rh/regressor.hpp"
#include "rh/version.hpp"

#ifdef RH_PERF_HAVE_OPENBLAS
extern "C" {
// OpenBLAS' CBLAS (declared here so the build does not depend on which cblas.h Debian's alternatives select).
enum RhCblasOrder { RhCblasRowMajor = 101, RhCblasColMajor = 102 };
enum RhCblasTranspose { RhCblasNoTrans = 111, RhCblasTrans = 112 };
enum RhCblasUplo { RhCblasUpper = 121, RhCblasLower = 122 };
void cblas_dsyrk(int order, int uplo, int trans, int n, int k, double alpha, const double* a, int lda, double beta,
                 double* c, int ldc);
void cblas_ssyrk(int order, int uplo, int trans, int n, int k, float alpha, const float* a, int lda, float beta,
                 float* c, int ldc);
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc);
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
char* openblas_get_config(void);
char* openblas_get_corename(void);
}
#endif

namespace {

struct GramShape {
  long long n, q;
};
const GramShape kShapes[] = {{32768, 91}, {4096, 257}, {262144, 32}};

std::string shape_label(const GramShape& s) { return std::to_string(s.n) + "x" + std::to_string(s.q); }

// Row-major X (n × q) with N(0,1) entries and curvature-like weights c ∈ [0, 1].
struct GramData {
  std::vector<double> x, c;
  std::vector<double> reference;  // G in double, full q × q
};

const GramData& gram_data(const GramShape& s) {
  static GramShape cached{0, 0};
  static GramData d;
  if (cached.n == s.n && cached.q == s.q) return d;
  std::mt19937_64 rng(20261202u + static_cast<unsigned>(s.q));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  d.x.resize(static_cast<size_t>(s.n * s.q));
  d.c.resize(static_cast<size_t>(s.n));
  for (auto& v : d.x) v = normal(rng);
  for (auto& v : d.c) v = unit(rng);
  d.reference.assign(static_cast<size_t>(s.q * s.q), 0.0);
  for (long long i = 0; i < s.n; ++i) {
    const double* row = d.x.data() + i * s.q;
    for (long long j = 0; j < s.q; ++j) {
      const double a = d.c[static_cast<size_t>(i)] * row[j];
      double* g = d.reference.data() + j * s.q;
      for (long long k = j; k < s.q; ++k) g[k] += a * row[k];
    }
  }
  for (long long j = 0; j < s.q; ++j)
    for (long long k = 0; k < j; ++k) d.reference[static_cast<size_t>(j * s.q + k)] = d.reference[static_cast<size_t>(k * s.q + j)];
  cached = s;
  return d;
}

// max |G − G_ref| / max |G_ref| over the upper triangle; `at(j, k)` reads the computed G.
template <class At>
double max_rel_err(const GramShape& s, const GramData& d, At at) {
  double worst = 0.0, scale = 0.0;
  for (long long j = 0; j < s.q; ++j)
    for (long long k = j; k < s.q; ++k) {
      const double ref = d.reference[static_cast<size_t>(j * s.q + k)];
      scale = std::max(scale, std::fabs(ref));
      worst = std::max(worst, std::fabs(static_cast<double>(at(j, k)) - ref));
    }
  return scale > 0 ? worst / scale : worst;
}

void set_flop_counters(benchmark::State& state, const GramShape& s, double element_bytes) {
  state.counters["Gflop"] = benchmark::Counter(2.0 * static_cast<double>(s.n) * static_cast<double>(s.q * s.q) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB_X"] =
      benchmark::Counter(static_cast<double>(s.n * s.q) * element_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Waits (at most 5 s) for the shared machine to be quiet, then starts the load window of other_cores.
rh_perf::CpuSnapshot quiet_start() {
  rh_perf::wait_quiet(0.3, 5.0);
  return rh_perf::cpu_snapshot();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// xc_i = c_i · x_i (a functor rather than a lambda, so CUDA builds compile it as plain host code).
template <class Mat, class Vec>
struct WeightRows {
  Mat x, xc;
  Vec c;
  long long q;
  void operator()(const long long i) const {
    for (long long j = 0; j < q; ++j) xc(i, j) = c(i) * x(i, j);
  }
};

// (a) Kokkos Kernels 3.4 gemm on the OpenMP space.
template <class S, class Layout>
void kk_gemm(benchmark::State& state, GramShape s) {
  const GramData& d = gram_data(s);
  using ExecSpace = Kokkos::OpenMP;
  using Mat = Kokkos::View<S**, Layout, ExecSpace>;
  using Vec = Kokkos::View<S*, ExecSpace>;
  Mat x("x", s.n, s.q), xc("xc", s.n, s.q), g("g", s.q, s.q);
  Vec c("c", s.n);
  {
    auto hx = Kokkos::create_mirror_view(x);
    auto hc = Kokkos::create_mirror_view(c);
    for (long long i = 0; i < s.n; ++i) {
      hc(i) = static_cast<S>(d.c[static_cast<size_t>(i)]);
      for (long long j = 0; j < s.q; ++j) hx(i, j) = static_cast<S>(d.x[static_cast<size_t>(i * s.q + j)]);
    }
    Kokkos::deep_copy(x, hx);
    Kokkos::deep_copy(c, hc);
  }
  auto run = [&]() {
    Kokkos::parallel_for("gram::weight_rows", Kokkos::RangePolicy<ExecSpace>(0, s.n),
                         WeightRows<Mat, Vec>{x, xc, c, s.q});
    KokkosBlas::gemm("T", "N", S(1), xc, x, S(0), g);
    Kokkos::fence();
  };
  run();  // warm-up (first-touch, instantiation paths)
  const auto load0 = quiet_start();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    state.SetIterationTime(seconds_since(t0));
  }
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
  state.counters["max_rel_err"] = max_rel_err(s, d, [&](long long j, long long k) { return hg(j, k); });
  state.counters["other_cores"] = rh_perf::other_cores(load0, rh_perf::cpu_snapshot());
  set_flop_counters(state, s, sizeof(S));
}

#ifdef RH_PERF_HAVE_OPENBLAS
// (b) OpenBLAS syrk / gemm on row-major X.
template <class S>
void openblas_gram(benchmark::State& state, GramShape s, bool syrk) {
  const GramData& d = gram_data(s);
  openblas_set_num_threads(Kokkos::OpenMP::concurrency());
  std::vector<S> x(d.x.begin(), d.x.end()), xc(x.size()), g(static_cast<size_t>(s.q * s.q));
  std::vector<S> c(d.c.begin(), d.c.end());
  const int n = static_cast<int>(s.n), q = static_cast<int>(s.q);
  auto run = [&]() {
    // The row-weighting pass, on the same OpenMP threads as the Kokkos variants.
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < s.n; ++i) {
      const S w = syrk ? std::sqrt(c[static_cast<size_t>(i)]) : c[static_cast<size_t>(i)];
      for (long long j = 0; j < s.q; ++j) xc[static_cast<size_t>(i * s.q + j)] = w * x[static_cast<size_t>(i * s.q + j)];
    }
    if constexpr (std::is_same_v<S, double>) {
      if (syrk) cblas_dsyrk(RhCblasRowMajor, RhCblasUpper, RhCblasTrans, q, n, 1.0, xc.data(), q, 0.0, g.data(), q);
      else cblas_dgemm(RhCblasRowMajor, RhCblasTrans, RhCblasNoTrans, q, q, n, 1.0, xc.data(), q, x.data(), q, 0.0, g.data(), q);
    } else {
      if (syrk) cblas_ssyrk(RhCblasRowMajor, RhCblasUpper, RhCblasTrans, q, n, 1.0f, xc.data(), q, 0.0f, g.data(), q);
      else cblas_sgemm(RhCblasRowMajor, RhCblasTrans, RhCblasNoTrans, q, q, n, 1.0f, xc.data(), q, x.data(), q, 0.0f, g.data(), q);
    }
  };
  run();
  const auto load0 = quiet_start();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    state.SetIterationTime(seconds_since(t0));
  }
  state.counters["max_rel_err"] =
      max_rel_err(s, d, [&](long long j, long long k) { return g[static_cast<size_t>(j * s.q + k)]; });
  state.counters["other_cores"] = rh_perf::other_cores(load0, rh_perf::cpu_snapshot());
  set_flop_counters(state, s, sizeof(S));
}
#endif

// (c) Our fused kernel, in situ (perf/gram_pass.hpp): partial_fit with max_iter = 1 and penalty none makes two
// passes with the Gram (the Newton iteration and the commit of J); only those launches are timed.
template <class S>
void rh_fused(benchmark::State& state, GramShape s) {
  const GramData& d = gram_data(s);
  const long long p = s.q - 1;  // the intercept is the q-th column
  std::vector<S> x(static_cast<size_t>(s.n * p)), y(static_cast<size_t>(s.n));
  for (long long i = 0; i < s.n; ++i) {
    double fit = 0;
    for (long long j = 0; j < p; ++j) {
      x[static_cast<size_t>(i * p + j)] = static_cast<S>(d.x[static_cast<size_t>(i * s.q + j)]);
      fit += 0.5 * d.x[static_cast<size_t>(i * s.q + j)];
    }
    y[static_cast<size_t>(i)] = static_cast<S>(fit + 0.2 * d.x[static_cast<size_t>(i * s.q + p)]);
  }
  rh::Config config;
  config.max_iter = 1;
  rh::Regressor model(rh::Space::openmp, rh::dtype_of<S>(), config);
  const rh::Batch batch = rh::host_batch(x.data(), y.data(), s.n, p);
  model.partial_fit(batch);  // warm-up: buffers allocated
  long long launches = 0;
  const auto load0 = quiet_start();
  for (auto _ : state) {
    try {
      const rh_perf::GramPassTiming t = rh_perf::time_gram_pass(model, batch);
      launches = t.passes;
      state.SetIterationTime(t.seconds_per_pass);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
  state.counters["launches/fit"] = static_cast<double>(launches);
  state.counters["other_cores"] = rh_perf::other_cores(load0, rh_perf::cpu_snapshot());
  set_flop_counters(state, s, sizeof(S));
}

template <class S>
const char* dt() {
  return std::is_same_v<S, float> ? "f32" : "f64";
}

template <class S>
void register_all() {
  const double min_time = 0.3;
  // Variant-major order: the OpenBLAS variants run last, so its spinning worker threads cannot slow the others.
  for (const auto& s : kShapes)
    benchmark::RegisterBenchmark((std::string("gram/") + dt<S>() + "/" + shape_label(s) + "/rh_fused_openmp").c_str(),
                                 [s](benchmark::State& st) { rh_fused<S>(st, s); })
        ->UseManualTime()->MinTime(min_time)->Unit(benchmark::kMillisecond);
  for (const auto& s : kShapes) {
    benchmark::RegisterBenchmark((std::string("gram/") + dt<S>() + "/" + shape_label(s) + "/kk_gemm_TN_left").c_str(),
                                 [s](benchmark::State& st) { kk_gemm<S, Kokkos::LayoutLeft>(st, s); })
        ->UseManualTime()->MinTime(min_time)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("gram/") + dt<S>() + "/" + shape_label(s) + "/kk_gemm_TN_right").c_str(),
                                 [s](benchmark::State& st) { kk_gemm<S, Kokkos::LayoutRight>(st, s); })
        ->UseManualTime()->MinTime(min_time)->Unit(benchmark::kMillisecond);
  }
#ifdef RH_PERF_HAVE_OPENBLAS
  for (const auto& s : kShapes) {
    benchmark::RegisterBenchmark((std::string("gram/") + dt<S>() + "/" + shape_label(s) + "/openblas_syrk").c_str(),
                                 [s](benchmark::State& st) { openblas_gram<S>(st, s, true); })
        ->UseManualTime()->MinTime(min_time)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("gram/") + dt<S>() + "/" + shape_label(s) + "/openblas_gemm").c_str(),
                                 [s](benchmark::State& st) { openblas_gram<S>(st, s, false); })
        ->UseManualTime()->MinTime(min_time)->Unit(benchmark::kMillisecond);
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (!rh::space_compiled(rh::Space::openmp)) {
    std::fprintf(stderr, "rh_gram_bench: this build has no OpenMP space; nothing to measure\n");
    return 0;
  }
  rh::initialize_runtime();  // Kokkos, with the library's settings (OMP_NUM_THREADS)
  register_all<double>();
  register_all<float>();
  benchmark::AddCustomContext("rh_git_revision", RH_GIT_REVISION);
  benchmark::AddCustomContext("kokkos_version", rh::kokkos_version());
  benchmark::AddCustomContext("rh_native_arch", RH_PERF_NATIVE_ARCH ? "on (-march=native)" : "off");
  benchmark::AddCustomContext("kokkos_openmp_concurrency", std::to_string(Kokkos::OpenMP::concurrency()));
#ifdef RH_PERF_HAVE_OPENBLAS
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_corename", openblas_get_corename());
#else
  benchmark::AddCustomContext("openblas", "not found at configure time: OpenBLAS variants not built");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
