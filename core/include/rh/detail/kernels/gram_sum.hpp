// Reads of the summed Gram G from the per-chunk partials, in chunk order: entry by entry (any space) or by
// rows of its upper triangle (hosts).
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/host_isa.hpp"  // paired_rows
#include "rh/detail/kernels/in_order.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// Entry (j, k) of the summed Gram G: the per-chunk partials in chunk order (deterministic), read from the upper
// triangle so that G is exactly symmetric.
template <class S, class PView>
KOKKOS_INLINE_FUNCTION S gram_entry(const PView& partial, long long chunks, long long q, long long j, long long k) {
  const long long lo = j < k ? j : k, hi = j < k ? k : j;
  return sum_in_order<S>(chunks, [&](long long ch) { return partial(ch, lo * q + hi); });
}

// Device launches over G's upper triangle: rows p and q − 1 − p folded into one row of q + 1 entries (row p's q − p,
// then row q − 1 − p's p + 1), so that consecutive indices take consecutive entries of a row (coalesced reads of
// the partials) and the triangle is read once. upper_pair_entries(q) indices; entry e is (j, k), k ≥ j, or none
// (false: the second half of the middle row when q is odd).
KOKKOS_INLINE_FUNCTION long long upper_pair_entries(long long q) { return paired_rows(q) * (q + 1); }
KOKKOS_INLINE_FUNCTION bool upper_pair_entry(long long e, long long q, long long& j, long long& k) {
  const long long p = e / (q + 1), col = e % (q + 1);
  if (col < q - p) {
    j = p;
    k = p + col;
    return true;
  }
  j = q - 1 - p;
  k = j + (col - (q - p));
  return j != p;
}

// Host: row j of G's upper triangle, each entry the chunks' partials summed in chunk order as gram_entry sums them,
// but chunk after chunk along the row; f(k, g_jk) for k = j … q − 1. With the rows taken in pairs (p, q − 1 − p) every
// index of a launch over (q + 1) / 2 has the same work. One entry at a time instead is a chain of loads from `chunks`
// matrices, the lower triangle's q values apart, and much slower (docs/performance.md, "Why the code is so").
template <class S, class PView, class F>
KOKKOS_INLINE_FUNCTION void gram_upper_row(const PView& partial, long long chunks, long long q, long long j, const F& f) {
  constexpr int B = 256;  // columns per segment
  S g[B];
  for (long long k0 = j; k0 < q; k0 += B) {
    const int m = static_cast<int>(q - k0 < B ? q - k0 : B);
    for (int t = 0; t < m; ++t) g[t] = S(0);
    for (long long ch = 0; ch < chunks; ++ch) {
      const S* row = &partial(ch, j * q + k0);
      for (int t = 0; t < m; ++t) g[t] += row[t];
    }
    for (int t = 0; t < m; ++t) f(k0 + t, g[t]);
  }
}
// Host: G's entries of rows p and q − 1 − p of its upper triangle (gram_upper_row), each given to f(j, k, g_jk) at
// (j, k) and at its mirror (k, j): a launch over paired_rows(q) indices covers the whole q × q matrix once.
template <class S, class PView, class F>
KOKKOS_INLINE_FUNCTION void for_gram_row_pair(const PView& partial, long long chunks, long long q, long long p,
                                              const F& f) {
  for_paired_rows(p, q, [&](long long j) {
    gram_upper_row<S>(partial, chunks, q, j, [&](long long k, S g) {
      f(j, k, g);
      if (k != j) f(k, j, g);
    });
  });
}

}  // namespace rh::detail
