// tools/rh demo: streams a seeded, outlier-contaminated synthetic data set in batches through every compiled
// space (both dtypes), and prints per space the coefficient error against the truth and against ordinary least
// squares, the time per batch, and a final agreement check between spaces.
//
// OLS is the same estimator with τ so large that every residual sits in the quadratic zone, ridge 0, fitted on
// all rows at once: no second solver is written for the comparison.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

#include "rh/regressor.hpp"

namespace {

struct Options {
  long long rows = 262144, features = 32, batch = 16384;
  double outlier_fraction = 0.05;
  unsigned seed = 20261202;
};

struct Data {
  std::vector<double> x, y, truth;  // truth: p slopes then the intercept
};

Data make_data(const Options& o) {
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::student_t_distribution<double> heavy(3.0);  // heavy-tailed noise
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Data d;
  d.truth.resize(static_cast<size_t>(o.features + 1));
  for (auto& b : d.truth) b = normal(rng);
  d.x.resize(static_cast<size_t>(o.rows * o.features));
  d.y.resize(static_cast<size_t>(o.rows));
  for (long long i = 0; i < o.rows; ++i) {
    double fit = d.truth.back();
    for (long long j = 0; j < o.features; ++j) {
      const double v = normal(rng);
      d.x[static_cast<size_t>(i * o.features + j)] = v;
      fit += v * d.truth[static_cast<size_t>(j)];
    }
    double noise = 0.5 * heavy(rng);
    if (unit(rng) < o.outlier_fraction) noise += 40.0 + 20.0 * std::fabs(normal(rng));  // gross, one-sided
    d.y[static_cast<size_t>(i)] = fit + noise;
  }
  return d;
}

double error_norm(const std::vector<double>& beta, const std::vector<double>& truth) {
  double s = 0;
  for (size_t j = 0; j < truth.size(); ++j) s += (beta[j] - truth[j]) * (beta[j] - truth[j]);
  return std::sqrt(s);
}

template <class S>
std::vector<S> cast(const std::vector<double>& v) {
  return std::vector<S>(v.begin(), v.end());
}

struct Run {
  std::string label;
  std::vector<double> beta;
  double ms_per_batch;
  int iterations;
  bool converged;
  long long alone;  // batches run on the calling thread alone (Diagnostics::calling_thread_only)
  long long batches;
};

template <class S>
Run stream(rh::Space space, const Data& d, const Options& o) {
  const auto x = cast<S>(d.x);
  const auto y = cast<S>(d.y);
  rh::Regressor model(space, rh::dtype_of<S>());
  int iterations = 0;
  bool converged = true;
  long long alone = 0;
  const long long batches = (o.rows + o.batch - 1) / o.batch;
  const auto t0 = std::chrono::steady_clock::now();
  for (long long b = 0; b < batches; ++b) {
    const long long r0 = b * o.batch, n = std::min(o.batch, o.rows - r0);
    const auto& diag = model.partial_fit(rh::host_batch(x.data() + r0 * o.features, y.data() + r0, n, o.features));
    iterations += diag.iterations;
    converged = converged && diag.converged;
    alone += diag.calling_thread_only ? 1 : 0;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return {fmt::format("{}/{}", rh::space_name(space), rh::dtype_name(rh::dtype_of<S>())), model.coefficients(),
          ms / static_cast<double>(batches), iterations, converged, alone, batches};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rows") == 0) o.rows = std::atoll(argv[i + 1]);
    else if (std::strcmp(argv[i], "--features") == 0) o.features = std::atoll(argv[i + 1]);
    else if (std::strcmp(argv[i], "--batch") == 0) o.batch = std::atoll(argv[i + 1]);
    else { fmt::print(stderr, "usage: rh_demo [--rows N] [--features P] [--batch B]\n"); return 2; }
  }
  try {
    const Data d = make_data(o);
    fmt::print("renewable-huber {} on Kokkos {}: {} rows x {} features in batches of {}, {:.0f}% gross outliers, "
               "Student-t(3) noise\n",
               rh::library_version(), rh::kokkos_version(), o.rows, o.features, o.batch, 100 * o.outlier_fraction);

    rh::Config ols_config;
    ols_config.tau = 1e12;  // every residual in the quadratic zone: the Huber fit is least squares
    ols_config.ridge = 0.0;
    rh::Regressor ols(rh::Space::serial, rh::Dtype::f64, ols_config);
    ols.fit(rh::host_batch(d.x.data(), d.y.data(), o.rows, o.features));
    const double ols_err = error_norm(ols.coefficients(), d.truth);

    std::vector<Run> runs;
    for (const auto& s : rh::compiled_spaces()) {
      if (s.device_count == 0) {
        fmt::print("  {:<15} compiled, but no device is present: skipped\n", s.name);
        continue;
      }
      runs.push_back(stream<double>(s.space, d, o));
      runs.push_back(stream<float>(s.space, d, o));
    }
    fmt::print("\n  {:<15} {:>12} {:>12} {:>10} {:>14} {:>14} {}\n", "space/dtype", "‖β−β*‖", "OLS ‖β−β*‖",
               "iterations", "ms per batch", "thread alone", "all converged");
    for (const auto& r : runs)
      fmt::print("  {:<15} {:>12.5f} {:>12.5f} {:>10} {:>14.3f} {:>14} {}\n", r.label, error_norm(r.beta, d.truth),
                 ols_err, r.iterations, r.ms_per_batch, fmt::format("{}/{}", r.alone, r.batches),
                 r.converged ? "yes" : "no");

    // Agreement: every run against the first float64 run (float32 runs are held to a float32 bound).
    const Run& ref = runs.front();
    bool agree = true;
    fmt::print("\n  agreement with {}:\n", ref.label);
    for (const auto& r : runs) {
      double worst = 0;
      for (size_t j = 0; j < r.beta.size(); ++j)
        worst = std::max(worst, std::fabs(r.beta[j] - ref.beta[j]) / (1.0 + std::fabs(ref.beta[j])));
      const bool f32 = r.label.find("float32") != std::string::npos;
      const double bound = f32 ? 1e-3 : 1e-8;  // float32 rounding over the stream vs. the solver's tolerance
      agree = agree && worst <= bound;
      fmt::print("    {:<15} max |Δβ|/(1+|β|) = {:.3g} (bound {:.0e}) {}\n", r.label, worst, bound,
                 worst <= bound ? "ok" : "DISAGREES");
    }
    fmt::print("\n{}\n", agree ? "all spaces agree" : "SPACES DISAGREE");
    return agree ? 0 : 1;
  } catch (const rh::Error& e) {
    fmt::print(stderr, "rh_demo: {} ({})\n", e.what(), rh::errc_name(e.code()));
    return 1;
  }
}
