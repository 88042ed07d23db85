// Host SIMD: EvaluateRows' rows W at a time in the vectors of a RowBlock (kernels/evaluation.hpp).
#pragma once
#include "rh/detail/kernels/evaluation.hpp"
#include "rh/detail/kernels/host_simd/row_block.hpp"

namespace rh::detail {

#if RH_ROW_BLOCKS
// row() for the block's W rows, as vectors (the same operations on each row, in S), and their gradient terms: the
// loss summed in row order, and g[j] += s_i·x_ij row after row for each j (g's vector kept across the block).
template <class Traits, class S, class XView, class VView, class DView, class PView>
template <class Block>
inline void EvaluateRows<Traits, S, XView, VView, DView, PView>::row_block(const Block& b, long long i, double& acc,
                                                                         S* g) const {
  using vec = typename Block::vec;
  constexpr int W = Block::W;
  const S* x0 = &x(i, 0);
  vec d, unused, yv, wv, r, loss, si;
  b.template dots<false>(x0, q, d, unused, unused);
  Block::load(&y(i), yv);
  Block::weights(has_w ? &w(i) : nullptr, wv);
  r = yv - d;
  Block::loss(r, tau, loss);
  loss = wv * loss;
  for (int e = 0; e < W; ++e) acc += static_cast<double>(loss[e]);
  Block::score(r, tau, si);
  si = wv * si;
  if (weights) {
    vec ci;
    Block::curvature(r, tau, h, ci);
    ci = wv * ci;
    Block::store(si, &s(i));
    Block::store(ci, &c(i));
  }
  if (!g) return;
  long long j = 0;
  for (; j + W <= q; j += W) {
    vec gj = {}, xs = {}, se = {};
    Block::load(g + j, gj);
    for (int e = 0; e < W; ++e) {
      Block::load(x0 + e * q + j, xs);
      Block::splat(si[e], se);
      gj += se * xs;
    }
    Block::store(gj, g + j);
  }
  for (; j < q; ++j)
    for (int e = 0; e < W; ++e) g[j] += si[e] * x0[e * q + j];
}
#endif

}  // namespace rh::detail
