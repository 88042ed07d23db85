// Inference from the renewable summaries (docs/method.md §12).
#include "inference.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <string>

#include "rh/error.hpp"

namespace rh::detail {

namespace {

double largest_diagonal(const std::vector<double>& a, long long q) {
  double largest = 0.0;
  for (long long j = 0; j < q; ++j) largest = std::fmax(largest, std::fabs(a[j * q + j]));
  return largest;
}

// J = L Lᵀ in place (lower triangle of `a`, row-major q×q); throws when a pivot is not clearly positive: below
// rounding_level, J is singular to working precision (a coefficient is not identified).
void cholesky(std::vector<double>& a, long long q) {
  const double largest = largest_diagonal(a, q);
  const double floor = rounding_level(a, q);
  for (long long j = 0; j < q; ++j) {
    double d = a[j * q + j];
    for (long long k = 0; k < j; ++k) d -= a[j * q + k] * a[j * q + k];
    if (!(d > floor))
      throw Error(Errc::numerical_error,
                  fmt::format("the information matrix J is not positive definite (pivot {} of {} is {:.3g}, the "
                              "largest diagonal entry {:.3g}): coefficient {} is not identified by the data seen "
                              "(collinear or constant columns, or fewer rows than coefficients)",
                              j, q, d, largest, j));
    const double l = std::sqrt(d);
    a[j * q + j] = l;
    for (long long i = j + 1; i < q; ++i) {
      double v = a[i * q + j];
      for (long long k = 0; k < j; ++k) v -= a[i * q + k] * a[j * q + k];
      a[i * q + j] = v / l;
    }
  }
}

}  // namespace

double rounding_level(const std::vector<double>& a, long long q) {
  return static_cast<double>(q) * std::numeric_limits<double>::epsilon() * largest_diagonal(a, q);
}

std::string score_variance_defect(const std::vector<double>& k, long long q) {
  // Each K(j,j) is a sum of w ψ² x_j² ≥ 0; its two triangles are the same sums, so they differ by rounding at most.
  for (long long j = 0; j < q; ++j)
    if (k[j * q + j] < 0)
      return fmt::format("score_variance: K({0},{0}) is {1:.6g}, but K's diagonal entries are sums of squares "
                         "(w psi^2 x_j^2)",
                         j, k[j * q + j]);
  const double tolerance = rounding_level(k, q);
  for (long long i = 0; i < q; ++i)
    for (long long j = i + 1; j < q; ++j)
      if (std::fabs(k[i * q + j] - k[j * q + i]) > tolerance)
        return fmt::format("score_variance is not symmetric: K({0},{1}) is {2} but K({1},{0}) is {3}, a "
                           "difference above rounding (q*eps*max_j K(j,j) = {4:.3g})",
                           i, j, k[i * q + j], k[j * q + i], tolerance);
  return {};
}

std::vector<double> sandwich_covariance(const State& st) {
  const long long q = static_cast<long long>(st.coefficients.size());
  std::vector<double> l = st.information;
  cholesky(l, q);
  // J⁻¹ column by column: forward then backward substitution with L.
  std::vector<double> inverse(static_cast<size_t>(q * q));
  std::vector<double> col(static_cast<size_t>(q));
  for (long long c = 0; c < q; ++c) {
    for (long long i = 0; i < q; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (long long k = 0; k < i; ++k) v -= l[i * q + k] * col[k];
      col[i] = v / l[i * q + i];
    }
    for (long long i = q - 1; i >= 0; --i) {
      double v = col[i];
      for (long long k = i + 1; k < q; ++k) v -= l[k * q + i] * col[k];
      col[i] = v / l[i * q + i];
    }
    for (long long i = 0; i < q; ++i) inverse[i * q + c] = col[i];
  }
  // J⁻¹ K, then (J⁻¹ K) J⁻¹, symmetrized (exact symmetry for the caller; the two halves differ by rounding only).
  const std::vector<double>& k = st.score_variance;
  std::vector<double> left(static_cast<size_t>(q * q), 0.0), cov(static_cast<size_t>(q * q), 0.0);
  for (long long i = 0; i < q; ++i)
    for (long long m = 0; m < q; ++m) {
      const double a = inverse[i * q + m];
      for (long long j = 0; j < q; ++j) left[i * q + j] += a * k[m * q + j];
    }
  for (long long i = 0; i < q; ++i)
    for (long long m = 0; m < q; ++m) {
      const double a = left[i * q + m];
      for (long long j = 0; j < q; ++j) cov[i * q + j] += a * inverse[m * q + j];
    }
  for (long long i = 0; i < q; ++i)
    for (long long j = i + 1; j < q; ++j) cov[i * q + j] = cov[j * q + i] = 0.5 * (cov[i * q + j] + cov[j * q + i]);
  // A K summed from data with J positive definite gives variances > 0 (unless every residual is 0); an imported K
  // may be singular or indefinite in a coefficient's direction J⁻¹e_j, and its √ would be 0 or NaN.
  for (long long j = 0; j < q; ++j) {
    const double v = cov[j * q + j];
    if (v > 0 && std::isfinite(v)) continue;
    const char* why = v < 0 ? "not positive semi-definite" : v == 0 ? "singular" : "too large (the product overflows)";
    throw Error(Errc::numerical_error,
                fmt::format("the estimated variance of coefficient {} is {:.3g}, not positive and finite: the score "
                            "variance K is {} in that coefficient's direction J^-1 e_{} (an imported K that is not a "
                            "sum of w psi^2 x x^T, or residuals that are all 0)",
                            j, v, why, j));
  }
  for (long long e = 0; e < q * q; ++e)
    if (!std::isfinite(cov[e]))
      throw Error(Errc::numerical_error, fmt::format("the covariance of coefficients {} and {} overflows ({})", e / q,
                                                     e % q, cov[e]));
  return cov;
}

double two_sided_p_value(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

double normal_quantile(double p) {
  // The upper half by symmetry: 1 − p is exact there, and Φ(x) − p is then evaluated where Φ is small, with its full
  // relative precision (near 1 it would lose the tail's digits).
  if (p > 0.5) return -normal_quantile(1.0 - p);
  // Acklam's rational approximation (relative error below 1.2e-9), then one Halley step on Φ(x) − p with Φ from
  // erfc, which brings it to double precision.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double low = 0.02425;
  double x;
  if (p < low) {
    const double r = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
        ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1.0);
  } else {
    const double u = p - 0.5, r = u * u;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * u /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  constexpr double sqrt_2pi = 2.5066282746310002;
  const double u = e * sqrt_2pi * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

}  // namespace rh::detail
