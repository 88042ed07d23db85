// Dense solve of the q×q Newton system H d = g (docs/method.md §8).
//
// First choice: LU with partial pivoting in one team, on the execution space, so the system never leaves the
// device. Pivot choice and multipliers follow LAPACK's getrf (first largest |a_ik|, l = a_ik / a_kk); like
// numpy.linalg.solve, the system counts as singular only on an exactly zero pivot, and the solution must be
// finite. Otherwise: the minimum-norm least-squares solution through an SVD with cutoff eps·q·σ_max (numpy's
// lstsq with rcond=None), computed on the host because it is rare and small.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "rh/detail/compat.hpp"
#include "rh/detail/penalty.hpp"  // SolveStatus

namespace rh::detail {

template <class Traits, class MView, class VView, class StatusView>
struct LuSolve {
  using member_type = typename Kokkos::TeamPolicy<typename Traits::execution_space>::member_type;
  MView a_in, lu;  // a_in is kept intact; lu receives the factors
  VView rhs, sol;
  StatusView status;
  int q;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) { lu(e / q, e % q) = a_in(e / q, e % q); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { sol(j) = rhs(j); });
    team.team_barrier();
    for (int k = 0; k < q; ++k) {
      // Pivot: the first row of the largest |a_ik| (as LAPACK's idamax), found by two exact team reductions
      // (max, then the smallest index attaining it), so the choice does not depend on the team size.
      using Abs = decltype(compat::fabs(lu(k, k)));
      Abs best = 0;
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, k, q), [&](const int i, Abs& m) {
        const Abs v = compat::fabs(lu(i, k));
        if (v > m) m = v;
      }, Kokkos::Max<Abs>(best));
      int piv = q;
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, k, q), [&](const int i, int& first) {
        if (compat::fabs(lu(i, k)) == best && i < first) first = i;
      }, Kokkos::Min<int>(piv));
      if (piv >= q || lu(piv, k) == 0) {  // exactly singular (or NaN): the caller falls back to min-norm
        Kokkos::single(Kokkos::PerTeam(team), [&]() { status() = solve_singular; });
        return;
      }
      if (piv != k) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q + 1), [&](const int j) {
          if (j < q) {
            const auto t = lu(k, j); lu(k, j) = lu(piv, j); lu(piv, j) = t;
          } else {
            const auto t = sol(k); sol(k) = sol(piv); sol(piv) = t;
          }
        });
        team.team_barrier();
      }
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, q), [&](const int i) { lu(i, k) = lu(i, k) / lu(k, k); });
      team.team_barrier();
      // Trailing update, plus forward substitution of the unit-lower factor for column k (the same arithmetic in
      // both forms): a flat range over all entries keeps a device team busy; one thread (a host team) runs
      // row by row so the inner loop is contiguous and vectorizes.
      const int m = q - k - 1;
      if constexpr (Traits::host) {
        for (int i = k + 1; i < q; ++i) {
          const auto l = lu(i, k);
          for (int j = k + 1; j < q; ++j) lu(i, j) -= l * lu(k, j);
          sol(i) -= l * sol(k);
        }
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * (m + 1)), [&](const int e) {
          const int i = k + 1 + e / (m + 1), j = k + 1 + e % (m + 1);
          if (j < q) lu(i, j) -= lu(i, k) * lu(k, j);
          else sol(i) -= lu(i, k) * sol(k);
        });
      }
      team.team_barrier();
    }
    for (int k = q - 1; k >= 0; --k) {  // back substitution, column by column
      Kokkos::single(Kokkos::PerTeam(team), [&]() { sol(k) = sol(k) / lu(k, k); });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](const int i) { sol(i) -= lu(i, k) * sol(k); });
      team.team_barrier();
    }
    int bad = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, q), [&](const int j, int& b) {
      if (!compat::isfinite(sol(j))) b += 1;
    }, bad);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { status() = bad ? solve_non_finite : solve_ok; });
  }
};

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
