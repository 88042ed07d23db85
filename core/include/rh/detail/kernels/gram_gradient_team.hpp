// GramGradient's team paths (spaces with their own memory): a scratch tile per entry (team_block, R = 1), or
// R×R register blocks for wide q (register_block), both from rows staged in team scratch (stage_tiles).
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/kernels/gram_gradient.hpp"

namespace rh::detail {

template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R>
KOKKOS_INLINE_FUNCTION void GramGradient<Traits, S, XView, VView, PView, IView, CView, R>::team_block(const member_type& team, long long chunk,
                                                                                   long long r0, long long r1, bool gram,
                                                                                   int a, int b) const {
  scratch_view xa(team.team_scratch(0), stage_rows * tile);
  scratch_view xb(team.team_scratch(0), stage_rows * tile);
  scratch_view acc(team.team_scratch(0), tile * tile);
  const long long list = gram ? listed(chunk) : static_cast<long long>(gram_all_rows);
  const bool delta = list != gram_all_rows;
  const long long rows = delta ? list : r1 - r0;
  if (rows == 0) return;  // nothing changed: the partial stays (the whole team returns)
  const int entries = gram ? tile * tile : tile;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, entries), [&](const int e) {
    const long long j = a * tile + e / tile, k = b * tile + e % tile;
    acc(e) = delta && j < q && k < q && j <= k ? partial(chunk, j * q + k) : S(0);
  });
  for (long long base = 0; base < rows; base += stage_rows) {
    const int m = static_cast<int>(rows - base < stage_rows ? rows - base : stage_rows);
    team.team_barrier();
    stage_tiles(team, xa, xb, r0, base, m, gram, delta, a, b);  // coalesced: consecutive threads read consecutive rows
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, entries), [&](const int e) {
      S sum = S(0);
      if (gram) {
        const int j = e / tile, k = e % tile;
        for (int r = 0; r < m; ++r) sum += xa(r * tile + j) * xb(r * tile + k);
      } else {
        for (int r = 0; r < m; ++r) sum += xa(r * tile + e);
      }
      acc(e) += sum;
    });
  }
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, entries), [&](const int e) {
    if (gram) {
      const long long j = a * tile + e / tile, k = b * tile + e % tile;
      if (j < q && k < q && j <= k) partial(chunk, j * q + k) = acc(e);
    } else {
      const long long j = a * tile + e;
      if (j < q) partial(chunk, q * q + j) = acc(e);
    }
  });
}

// Staging of the chunk's rows [base, base + m) (counted from its first row r0, or from its list of changed rows
// for the delta Gram) of the two column tiles (a and b), weighted by c_i, Δc_i or s_i.
template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R>
KOKKOS_INLINE_FUNCTION void GramGradient<Traits, S, XView, VView, PView, IView, CView, R>::stage_tiles(const member_type& team, const scratch_view& xa,
                                                                                    const scratch_view& xb, long long r0,
                                                                                    long long base, int m, bool gram,
                                                                                    bool delta, int a, int b) const {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * tile), [&](const int e) {
    const int r = e % m, j = e / m;
    const long long i = row_of(delta, r0, base + r), ca = a * tile + j, cb = b * tile + j;
    const S xa_ij = ca < q ? x(i, ca) : S(0);
    xa(r * tile + j) = (gram ? (delta ? dc(i) : c(i)) : s(i)) * xa_ij;
    if (gram) xb(r * tile + j) = cb < q ? x(i, cb) : S(0);
  });
}

// Wide q: tile = 16R, the team a 16×16 grid, thread (ty, tx) owning entries (ty + 16u, tx + 16v), u, v < R, in
// registers. A warp reads 16 consecutive values of xb (no bank conflict) and two of xa (broadcast).
template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R>
KOKKOS_INLINE_FUNCTION void GramGradient<Traits, S, XView, VView, PView, IView, CView, R>::register_block(const member_type& team, long long chunk,
                                                                                       long long r0, long long r1,
                                                                                       bool gram, int a, int b) const {
  constexpr int E = 16;
  static_assert(Traits::team_size == E * E, "the register-tiled Gram needs teams of 16×16 threads");
  scratch_view xa(team.team_scratch(0), stage_rows * tile);
  scratch_view xb(team.team_scratch(0), stage_rows * tile);
  const int t = team.team_rank(), ty = t / E, tx = t % E;
  const long long list = gram ? listed(chunk) : static_cast<long long>(gram_all_rows);
  const bool delta = list != gram_all_rows;
  const long long rows = delta ? list : r1 - r0;
  if (rows == 0) return;  // nothing changed: the partial stays (the whole team returns)
  S acc[R][R] = {};
  if (delta)  // the delta Gram adds to the chunk's partial
    for (int u = 0; u < R; ++u)
      for (int v = 0; v < R; ++v) {
        const long long j = a * tile + ty + E * u, k = b * tile + tx + E * v;
        if (j < q && k < q && j <= k) acc[u][v] = partial(chunk, j * q + k);
      }
  for (long long base = 0; base < rows; base += stage_rows) {
    const int m = static_cast<int>(rows - base < stage_rows ? rows - base : stage_rows);
    team.team_barrier();
    stage_tiles(team, xa, xb, r0, base, m, gram, delta, a, b);
    team.team_barrier();
    if (gram) {
      S sum[R][R] = {};
      for (int r = 0; r < m; ++r) {
        S va[R], vb[R];
        for (int u = 0; u < R; ++u) va[u] = xa(r * tile + ty + E * u);
        for (int v = 0; v < R; ++v) vb[v] = xb(r * tile + tx + E * v);
        for (int u = 0; u < R; ++u)
          for (int v = 0; v < R; ++v) sum[u][v] += va[u] * vb[v];
      }
      for (int u = 0; u < R; ++u)
        for (int v = 0; v < R; ++v) acc[u][v] += sum[u][v];
    } else if (t < tile) {
      S sum = S(0);
      for (int r = 0; r < m; ++r) sum += xa(r * tile + t);
      acc[0][0] += sum;
    }
  }
  if (gram) {
    for (int u = 0; u < R; ++u)
      for (int v = 0; v < R; ++v) {
        const long long j = a * tile + ty + E * u, k = b * tile + tx + E * v;
        if (j < q && k < q && j <= k) partial(chunk, j * q + k) = acc[u][v];
      }
  } else if (t < tile) {
    const long long j = a * tile + t;
    if (j < q) partial(chunk, q * q + j) = acc[0][0];
  }
}

}  // namespace rh::detail
