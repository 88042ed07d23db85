// The minimum-norm solve of the Newton system on the host (dense_solve.hpp), after LU failed.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rh::detail {

// Minimum-norm solution of A x = b (A q×q, row-major) by a one-sided Jacobi SVD. Singular values at or below
// eps·q·σ_max count as zero; eps is the machine epsilon of the model's dtype, as numpy's lstsq uses.
inline std::vector<double> min_norm_solve(std::vector<double> a, const std::vector<double>& b, int q,
                                          double eps) {
  // Work on the columns of A: A V = U Σ. a is copied column-major into u.
  std::vector<double> u(static_cast<size_t>(q) * q), v(static_cast<size_t>(q) * q, 0.0);
  for (int i = 0; i < q; ++i)
    for (int j = 0; j < q; ++j) u[static_cast<size_t>(j) * q + i] = a[static_cast<size_t>(i) * q + j];
  for (int j = 0; j < q; ++j) v[static_cast<size_t>(j) * q + j] = 1.0;
  auto col = [q](std::vector<double>& m, int j) { return m.data() + static_cast<size_t>(j) * q; };
  const double tiny = std::numeric_limits<double>::epsilon();
  for (int sweep = 0; sweep < 80; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < q - 1; ++p) {
      for (int r = p + 1; r < q; ++r) {
        double alpha = 0, beta = 0, gamma = 0;
        double *up = col(u, p), *ur = col(u, r);
        for (int i = 0; i < q; ++i) { alpha += up[i] * up[i]; beta += ur[i] * ur[i]; gamma += up[i] * ur[i]; }
        if (gamma == 0.0 || std::fabs(gamma) <= tiny * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const double zeta = (beta - alpha) / (2.0 * gamma);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::fabs(zeta) + std::sqrt(1.0 + zeta * zeta));
        const double cs = 1.0 / std::sqrt(1.0 + t * t), sn = cs * t;
        double *vp = col(v, p), *vr = col(v, r);
        for (int i = 0; i < q; ++i) {
          const double x = up[i], y = ur[i];
          up[i] = cs * x - sn * y; ur[i] = sn * x + cs * y;
          const double vx = vp[i], vy = vr[i];
          vp[i] = cs * vx - sn * vy; vr[i] = sn * vx + cs * vy;
        }
      }
    }
    if (!rotated) break;
  }
  std::vector<double> sigma(q);
  double sigma_max = 0.0;
  for (int j = 0; j < q; ++j) {
    double s2 = 0;
    for (int i = 0; i < q; ++i) s2 += col(u, j)[i] * col(u, j)[i];
    sigma[j] = std::sqrt(s2);
    sigma_max = std::max(sigma_max, sigma[j]);
  }
  const double cutoff = eps * q * sigma_max;
  std::vector<double> x(q, 0.0);
  for (int j = 0; j < q; ++j) {
    if (!(sigma[j] > cutoff)) continue;
    // u_j = col_j / σ_j, so the coefficient is (col_jᵀ b) / σ_j².
    double ub = 0;
    for (int i = 0; i < q; ++i) ub += col(u, j)[i] * b[i];
    const double coef = ub / (sigma[j] * sigma[j]);
    for (int i = 0; i < q; ++i) x[i] += coef * col(v, j)[i];
  }
  return x;
}

}  // namespace rh::detail
