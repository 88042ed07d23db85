// The LU solve of the Newton system with partial pivoting (dense_solve.hpp), after the Cholesky gave way.
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compat.hpp"
#include "rh/detail/host_isa.hpp"  // host_memory_v
#include "rh/detail/penalty.hpp"  // SolveReport

namespace rh::detail {

// LU with partial pivoting in one team, of any size (the result does not depend on it). After a Cholesky attempt
// (after_cholesky: called by the Cholesky's last team, lu_if_cholesky_gave_way) it runs only when the report says
// the Cholesky gave way.
template <class Traits, class MView, class VView, class ReportView>
struct LuSolve {
  using member_type = typename Kokkos::TeamPolicy<typename Traits::execution_space>::member_type;
  MView a_in, lu;  // a_in is kept intact; lu receives the factors
  VView rhs, sol;
  ReportView report;
  int q;
  bool after_cholesky;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if (after_cholesky && report().method == solve_by_cholesky) return;
    if constexpr (host_memory_v<MView>) {  // one host thread: by rows
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = 0; i < q; ++i)
          for (int j = 0; j < q; ++j) lu(i, j) = a_in(i, j);
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) { lu(e / q, e % q) = a_in(e / q, e % q); });
    }
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
        Kokkos::single(Kokkos::PerTeam(team), [&]() { finish(solve_singular); });
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
    Kokkos::single(Kokkos::PerTeam(team), [&]() { finish(bad ? solve_non_finite : solve_ok); });
  }

 private:
  KOKKOS_INLINE_FUNCTION void finish(int status) const {
    SolveReport r;
    r.status = status;
    r.method = solve_by_lu;
    report() = r;
  }
};

}  // namespace rh::detail
