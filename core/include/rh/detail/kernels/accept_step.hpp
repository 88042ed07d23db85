// The accept-step pass (Passes::accept_step): the accepted Newton step on the row side, and the lists of
// changed rows from which the next Gram pass may take the delta Gram (kernels/gram_gradient.hpp).
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/method.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// The accepted Newton step on the row side (one team per chunk): r ← r + t·u, and the row weights s_i, c_i there;
// Δc_i = c_new − c_old, the chunk's rows with Δc_i ≠ 0 listed in row order from its first row, and the chunk's
// choice for the next Gram pass: those rows only (added to its partial Gram), or every row when they are many
// (gram_delta_max_fraction) or after gram_delta_max_age updates in a row.
template <class Space, class S, class VView, class IView, class CView>
struct AcceptStep {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView r, u, w, s, c, dc;
  IView changed;      // n: row indices, listed per chunk
  CView count, age;   // per chunk (GramRows)
  long long n, rows_per_chunk;
  S t, tau, h;
  bool has_w;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long chunk = team.league_rank();
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r0, r1), [&](const long long i) {
      const S ri = r(i) + t * u(i);
      const S wi = has_w ? w(i) : S(1);
      const S ci = wi * smoothed_curvature(ri, tau, h);
      r(i) = ri;
      s(i) = wi * huber_score(ri, tau);
      dc(i) = ci - c(i);
      c(i) = ci;
    });
    team.team_barrier();
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, r0, r1), [&](const long long i, int& before, const bool last) {
      const int flag = dc(i) != S(0) ? 1 : 0;
      if (last && flag) changed(r0 + before) = i;
      before += flag;
      if (last && i == r1 - 1) count(chunk) = before;  // the chunk's total, decided on below
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      const int m = count(chunk);
      const bool all = m > gram_delta_max_fraction * static_cast<double>(r1 - r0) || age(chunk) >= gram_delta_max_age;
      count(chunk) = all ? gram_all_rows : m;
      age(chunk) = all ? 0 : age(chunk) + (m > 0 ? 1 : 0);
    });
  }
};

}  // namespace rh::detail
