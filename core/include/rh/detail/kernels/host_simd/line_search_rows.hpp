// Host SIMD: LineSearchRows' rows W at a time in the vectors of a RowBlock (kernels/line_search.hpp), and the
// crossing rows' steps in vectors of doubles.
#pragma once
#include "rh/detail/kernels/host_simd/row_block.hpp"
#include "rh/detail/kernels/line_search.hpp"

namespace rh::detail {

#if RH_ROW_BLOCKS
// LineSearchSums::add_crossing with the steps in the lanes of a RowBlock<double, Isa>'s vectors: w·(ρ(r + t_k·u) −
// ρ(r)) by the same operations (RowBlock::loss), each added to crossing[k] as the scalar loop adds it (t_k = 2⁻ᵏ
// exactly, as its halving gives). A crossing row's 27 steps are otherwise 27 dependent rounds of branches.
template <class DoubleBlock>
void add_crossing_steps(LineSearchSums& acc, double w, double r, double u, double tau) {
  using D = typename DoubleBlock::vec;
  constexpr int lanes = DoubleBlock::W;
  const double at_r = huber_loss(r, tau);
  const D rv = r - D{}, uv = u - D{}, wv = w - D{}, at = at_r - D{};
  int k = 0;
  double t0 = 1.0;
  for (; k + lanes <= line_search_steps; k += lanes) {
    D t = {}, loss = {};
    for (int e = 0; e < lanes; ++e, t0 *= 0.5) t[e] = t0;
    DoubleBlock::loss(rv + t * uv, tau, loss);
    D sum;
    __builtin_memcpy(&sum, &acc.crossing[k], sizeof sum);
    sum += wv * (loss - at);
    __builtin_memcpy(&acc.crossing[k], &sum, sizeof sum);
  }
  for (; k < line_search_steps; ++k, t0 *= 0.5) acc.crossing[k] += w * (huber_loss(r + t0 * u, tau) - at_r);
}

// row() for the block's W rows: the dot products and residuals as vectors, then add_row row after row.
template <class Traits, class S, class XView, class VView, class SumsView>
template <class Block>
inline void LineSearchRows<Traits, S, XView, VView, SumsView>::row_block(const Block& b, long long i,
                                                                         LineSearchSums& acc) const {
  using vec = typename Block::vec;
  vec fit, step, magnitude, yv, wv, ri, loss;
  b.template dots<true>(&x(i, 0), q, fit, step, magnitude);
  Block::load(&y(i), yv);
  Block::weights(has_w ? &w(i) : nullptr, wv);
  ri = yv - fit;
  Block::store(ri, &r(i));
  Block::store(step, &u(i));
  Block::loss(ri, static_cast<S>(tau), loss);
  loss = wv * loss;
  // add_row for each row, its terms computed DW rows at a time in vectors of doubles.
  constexpr int DW = Block::double_lanes;
  using dvec = typename Block::dvec;
  const dvec tau_d = tau - dvec{};
#pragma GCC unroll 4
  for (int g = 0; g < Block::W; g += DW) {
    dvec dw = {}, dr = {}, du = {}, dmag = {};
    for (int e = 0; e < DW; ++e) {
      dw[e] = static_cast<double>(wv[g + e]);
      dr[e] = static_cast<double>(ri[g + e]);
      du[e] = static_cast<double>(step[g + e]);
      dmag[e] = static_cast<double>(magnitude[g + e]) + compat::fabs(static_cast<double>(yv[g + e]));
    }
    const typename LineSearchSums::RowTerms<dvec> t(dw, dr, du, tau_d, dmag);
    for (int e = 0; e < DW; ++e) {
      acc.add_terms(static_cast<double>(loss[g + e]), t.linear[e], t.square[e], t.noise[e]);
      if (t.crosses[e]) add_crossing_steps<typename Block::DoubleBlock>(acc, dw[e], dr[e], du[e], tau);
    }
  }
}
#endif

}  // namespace rh::detail
