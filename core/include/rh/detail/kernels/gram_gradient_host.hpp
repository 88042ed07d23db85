// GramGradient's host path (one thread per team, row-major X): register blocks of the tile pair's block.
#pragma once
#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/gram_gradient.hpp"
#include "rh/detail/kernels/host_simd/row_block.hpp"

namespace rh::detail {

// Host path (tile = host_tile, row-major X). Blocks of 4 output rows × 16 columns stay in registers while the
// chunk's rows stream past: 64 multiply-adds per row for 16 + 4 loads. Rows are read 16 wide even where q ends
// inside the tile (the extra lanes are discarded); the engine pads the design buffer so the last row can be.
template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R>
template <class Isa>
KOKKOS_INLINE_FUNCTION void GramGradient<Traits, S, XView, VView, PView, IView, CView, R>::host_block(long long chunk, long long r0, long long r1,
                                                                                   bool gram, int a, int b) const {
  static_assert(std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value,
                "the host Gram path reads row-major X");
  constexpr int T = host_tile, J = 4, KB = static_cast<int>(2 * Isa::vector_bytes / sizeof(S));
  static_assert(T % KB == 0, "a sweep covers whole columns of the block");
  const S* base = x.data();
  const long long ja = a * static_cast<long long>(T), kb = b * static_cast<long long>(T);
  const int jmax = static_cast<int>(q - ja < T ? q - ja : T);
  const int kmax = static_cast<int>(q - kb < T ? q - kb : T);
  if (!gram) {
    S acc[T] = {};
    for (long long i = r0; i < r1; ++i) {
      const S* row = base + i * q + ja;
      const S si = s(i);
      for (int k = 0; k < T; ++k) acc[k] += si * row[k];
    }
    for (int k = 0; k < jmax; ++k) partial(chunk, q * q + ja + k) = acc[k];
    return;
  }
  const long long list = listed(chunk);
  const bool delta = list != gram_all_rows;
  const long long m = delta ? list : r1 - r0;
  if (m == 0) return;  // nothing changed: the partial stays
#if RH_ROW_BLOCKS
  if (kmax <= host_narrow_columns) {
    if (kmax == 1)
      host_narrow_pair<Isa, 1>(chunk, r0, m, delta, ja, jmax, kb);
    else
      host_narrow_pair<Isa, host_narrow_columns>(chunk, r0, m, delta, ja, jmax, kb);
    return;
  }
#endif
  // The whole T × T block of this tile pair accumulates in `acc` (on the stack, in L1); J × KB entries of it at
  // a time (two vectors of the ISA per output row) sit in registers while a block of host_gram_rows rows streams
  // past: they fit in the 16 vector registers of x86-64, where J × T spilled to memory on every row. Each block of rows is read from memory once per tile pair and from L1 for the other (J, KB) sweeps,
  // however tall the chunk. Each entry still adds its rows' products in row order to one accumulator, so the
  // result is the same to the bit.
  S acc[T][T] = {};
  if (delta)
    for (int j = 0; j < jmax; ++j)
      for (int k = 0; k < kmax; ++k)
        if (ja + j <= kb + k) acc[j][k] = partial(chunk, (ja + j) * q + kb + k);
  for (long long e0 = 0; e0 < m; e0 += host_gram_rows) {
    const long long e1 = e0 + host_gram_rows < m ? e0 + host_gram_rows : m;
    // The block's rows of the left tile scaled by their weights, once: the sweeps below broadcast them from memory
    // (a load) instead of forming c_i·x_ij in every sweep (a multiply and a shuffle per value on the FP pipes).
    S scaled[host_gram_rows][T];
    for (long long e = e0; e < e1; ++e) {
      const long long i = row_of(delta, r0, e);
      const S* left = base + i * q + ja;
      const S ci = delta ? dc(i) : c(i);
      for (int jj = 0; jj < T; ++jj) scaled[e - e0][jj] = ci * left[jj];
    }
#if RH_ROW_BLOCKS
    if constexpr (sizeof(S) == 8) {
      host_sweeps_f64<Isa, J, KB>(acc, scaled, e0, e1, delta, r0, ja, jmax, kb, kmax);
      continue;
    }
#endif
    for_each_sweep<J, KB>(ja, jmax, kb, kmax, [&](int j0, int k0) {
      S reg[J][KB];
      for (int jj = 0; jj < J; ++jj)
        for (int kk = 0; kk < KB; ++kk) reg[jj][kk] = acc[j0 + jj][k0 + kk];
      for (long long e = e0; e < e1; ++e) {
        const S* row = base + row_of(delta, r0, e) * q;
        const S* lhs = &scaled[e - e0][j0];
        for (int kk = 0; kk < KB; ++kk) {
          const S xk = row[kb + k0 + kk];
          for (int jj = 0; jj < J; ++jj) reg[jj][kk] += lhs[jj] * xk;
        }
      }
      for (int jj = 0; jj < J; ++jj)
        for (int kk = 0; kk < KB; ++kk) acc[j0 + jj][k0 + kk] = reg[jj][kk];
    });
  }
  for (int j = 0; j < jmax; ++j)
    for (int k = 0; k < kmax; ++k)
      if (ja + j <= kb + k) partial(chunk, (ja + j) * q + kb + k) = acc[j][k];
}

}  // namespace rh::detail
