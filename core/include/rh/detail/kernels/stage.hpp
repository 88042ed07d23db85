// The stage pass (rh/detail/passes.hpp Passes::stage): the caller's arrays into the design buffer in one read,
// with what validation refuses counted on the way, and the batch's weight summed over fixed row chunks.
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compat.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// Pass 1 in one read of the caller's arrays: fills the design matrix (and y, w) from any layout and leading
// dimension and, in the same pass, counts what validation refuses (non-finite X/y/w values, negative weights). Runs
// on any space that can read the source pointers; a null src_y / src_w means that y / w are already in place (the
// copy of host arrays to a space with its own memory) and are only counted.
template <class S, class XView, class VView>
struct StageRows {
  XView x;
  VView y, w;
  const S* src_x;
  const S* src_y;
  const S* src_w;
  long long p, ld;
  bool row_major, intercept, has_y, has_w;
  using value_type = BatchCounts;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i, value_type& acc) const {
    int bad_x = 0;  // an integer count keeps the copy loop free of floating-point accumulation
    for (long long j = 0; j < p; ++j) {
      const S v = row_major ? src_x[i * ld + j] : src_x[j * ld + i];
      x(i, j) = v;
      bad_x += compat::isfinite(v) ? 0 : 1;
    }
    if (intercept) x(i, p) = S(1);
    acc.non_finite_x += bad_x;
    if (has_y) {
      const S yi = src_y ? src_y[i] : y(i);
      if (src_y) y(i) = yi;
      if (!compat::isfinite(yi)) acc.non_finite_y += 1.0;
    }
    if (has_w) {
      const S wi = src_w ? src_w[i] : w(i);
      if (src_w) w(i) = wi;
      if (!compat::isfinite(wi)) acc.non_finite_w += 1.0;
      if (wi < S(0)) acc.negative_w += 1.0;
    }
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(RH_REDUCE_VOLATILE value_type& dst,
                                   const RH_REDUCE_VOLATILE value_type& src) const {
    dst.non_finite_x += src.non_finite_x;
    dst.non_finite_y += src.non_finite_y;
    dst.non_finite_w += src.non_finite_w;
    dst.negative_w += src.negative_w;
  }
};

// Σ w_i over rows [r0, r1) in double by one team reduction: a chunk's part of W_b. Its bits depend on the team's
// size, so the single model (ChunkWeightSums) and a device group (GroupCheckRows) call it with teams of
// Traits::team_size and get the same W_b.
template <class Member, class VView>
KOKKOS_INLINE_FUNCTION double team_weight_sum(const Member& team, const VView& w, long long r0, long long r1) {
  double sum = 0.0;
  Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1),
                          [&](const long long i, double& acc) { acc += static_cast<double>(w(i)); }, sum);
  return sum;
}

// Σ w_i over fixed row chunks (one team per chunk), for a batch weight independent of the thread count.
template <class Space, class VView, class DView>
struct ChunkWeightSums {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView w;
  DView chunk_sum;
  long long n, rows_per_chunk;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long r0 = team.league_rank() * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    const double sum = team_weight_sum(team, w, r0, r1);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_sum(team.league_rank()) = sum; });
  }
};

}  // namespace rh::detail
