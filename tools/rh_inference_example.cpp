// The worked example of docs/api.md ("Standard errors and confidence intervals"): a stream of 20 batches from
// y = 1.5·x1 − 2·x2 + 0·x3 + 0.5 + Student-t(3) noise, then the coefficients with standard errors, p-values and 95 %
// intervals computed from the renewable summaries alone (docs/method.md §12).
#include <cstdio>
#include <random>
#include <vector>

#include "rh/regressor.hpp"

int main() {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::student_t_distribution<double> noise(3.0);

  rh::Config config;
  config.inference = true;  // also keep the score variance K (penalty none)
  rh::Regressor model(rh::Space::serial, rh::Dtype::f64, config);
  const long long n = 1000, p = 3;
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<double> x(n * p), y(n);
    for (long long i = 0; i < n; ++i) {
      for (long long j = 0; j < p; ++j) x[i * p + j] = normal(rng);
      y[i] = 1.5 * x[i * p] - 2.0 * x[i * p + 1] + 0.5 + noise(rng);  // x3 has no effect
    }
    model.partial_fit(rh::host_batch(x.data(), y.data(), n, p));
  }

  const std::vector<double> beta = model.coefficients(), se = model.standard_errors(), pv = model.p_values();
  const rh::ConfidenceIntervals ci = model.confidence_intervals(0.95);
  const char* names[] = {"x1", "x2", "x3", "intercept"};
  std::printf("%-10s %9s %9s %10s   %s\n", "", "estimate", "std.err", "p-value", "95% interval");
  for (size_t j = 0; j < beta.size(); ++j)
    std::printf("%-10s %9.4f %9.4f %10.2g   [%.4f, %.4f]\n", names[j], beta[j], se[j], pv[j], ci.lower[j],
                ci.upper[j]);
  return 0;
}
