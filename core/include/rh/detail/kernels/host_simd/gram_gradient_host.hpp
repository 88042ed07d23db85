// Host SIMD pieces of GramGradient's host path (gram_gradient_host.hpp), in the vectors of a RowBlock.
#pragma once
#include "rh/detail/kernels/gram_gradient.hpp"
#include "rh/detail/kernels/host_simd/row_block.hpp"

namespace rh::detail {

#if RH_ROW_BLOCKS
// A tile pair whose right tile has at most host_narrow_columns columns: the last tile where q is 16m + 1 or
// 16m + 2 (the intercept after 16m features: q = 17, 33, 257). The J × KB sweeps would compute KB columns for
// these K; here the rows stream once, and each of the K columns of the block is accumulated as vectors down the
// left tile. The same products (c_i·x_ij)·x_ik added in row order to each entry's sum: the same bits.
template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R>
template <class Isa, int K>
inline void GramGradient<Traits, S, XView, VView, PView, IView, CView, R>::host_narrow_pair(long long chunk, long long r0, long long m,
                                                                                 bool delta, long long ja, int jmax,
                                                                                 long long kb) const {
  using V = RowBlock<S, Isa>;
  using vec = typename V::vec;
  constexpr int W = V::W, NJ = host_tile / W;
  static_assert(K == 1 || K == 2, "host_narrow_columns is 2");
  vec acc[K][NJ];
  for (int k = 0; k < K; ++k)
    for (int v = 0; v < NJ; ++v)
      for (int e = 0; e < W; ++e) {
        const int j = v * W + e;
        acc[k][v][e] = delta && j < jmax && ja + j <= kb + k ? partial(chunk, (ja + j) * q + kb + k) : S(0);
      }
  const S* base = x.data();
  for (long long e = 0; e < m; ++e) {
    const long long i = row_of(delta, r0, e);
    const S* row = base + i * q;
    const S weight = delta ? dc(i) : c(i);
    const vec ci = weight - vec{}, x0 = row[kb] - vec{};  // broadcasts, as RowBlock::splat forms them
    vec x1{};
    if constexpr (K == 2) x1 = row[kb + 1] - vec{};
    for (int v = 0; v < NJ; ++v) {
      // One vector at a time, loaded straight into a register (an array of them went through the stack, and
      // its halves' stores stalled the reload; docs/performance.md, "Why the code is so").
      vec scaled;
      V::load(row + ja + v * W, scaled);  // up to 15 values past q on the last tile: the buffer's padding
      scaled = ci * scaled;
      acc[0][v] += scaled * x0;
      if constexpr (K == 2) acc[1][v] += scaled * x1;
    }
  }
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < jmax; ++j)
      if (ja + j <= kb + k) partial(chunk, (ja + j) * q + kb + k) = acc[k][j / W][j % W];
}

// host_block's sweeps over one block of rows, for float64: the right tile's rows packed side by side first, and
// the sweeps spelled in vectors of the ISA. In place, rows q values apart fall into few L1 sets where q·8 bytes is
// near a multiple of 2 KiB (q = 257: 16 sets for the block's 128 lines), and the sweeps, which read them again,
// missed L1; packed, the compiler vectorized the plain loop nest with scalar multiplies and lane inserts, hence
// the vectors (docs/performance.md, "What we tried"). float32 keeps the plain loop in place: packed, it gained on
// two shapes and lost on one, and spelled in vectors it lost on all. The same products added to the same sums in the same order.
template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R>
template <class Isa, int J, int KB>
inline void GramGradient<Traits, S, XView, VView, PView, IView, CView, R>::host_sweeps_f64(
    S (&acc)[host_tile][host_tile], const S (&scaled)[host_gram_rows][host_tile], long long e0, long long e1,
    bool delta, long long r0, long long ja, int jmax, long long kb, int kmax) const {
  using V = RowBlock<S, Isa>;
  using vec = typename V::vec;
  constexpr int T = host_tile, NK = KB / V::W;
  S right[host_gram_rows][T];
  for (long long e = e0; e < e1; ++e) {
    const S* row = x.data() + row_of(delta, r0, e) * q + kb;
    for (int kk = 0; kk < T; ++kk) right[e - e0][kk] = row[kk];
  }
  for_each_sweep<J, KB>(ja, jmax, kb, kmax, [&](int j0, int k0) {
    vec reg[J][NK];
    for (int jj = 0; jj < J; ++jj)
      for (int k = 0; k < NK; ++k) V::load(&acc[j0 + jj][k0 + k * V::W], reg[jj][k]);
    for (long long e = 0; e < e1 - e0; ++e) {
      vec xk[NK], l;
      for (int k = 0; k < NK; ++k) V::load(&right[e][k0 + k * V::W], xk[k]);
      for (int jj = 0; jj < J; ++jj) {
        l = scaled[e][j0 + jj] - vec{};  // a broadcast (x − 0 = x for every x, −0 included)
        for (int k = 0; k < NK; ++k) reg[jj][k] += l * xk[k];
      }
    }
    for (int jj = 0; jj < J; ++jj)
      for (int k = 0; k < NK; ++k) V::store(reg[jj][k], &acc[j0 + jj][k0 + k * V::W]);
  });
}
#endif

}  // namespace rh::detail
