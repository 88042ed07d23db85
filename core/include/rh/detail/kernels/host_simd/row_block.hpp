// Host SIMD (GCC, Clang; host code, not NVCC): the dot products of W consecutive rows at once, and the row
// formulas lane by lane. Defines RH_ROW_BLOCKS (0 where this path is not compiled).
#pragma once
#include <type_traits>

#include "rh/detail/kernels/host_simd/row_vectors.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

#if RH_ROW_VECTORS && !defined(__NVCC__)
#define RH_ROW_BLOCKS 1
// Row blocks (host code, row-major X): the dot products x_iᵀv of W consecutive rows at once, W the lanes of one
// vector of the ISA, so that the rows' scalar work (residual, loss, weights) is vector work too. Each row's eight
// lanes are summed as row_vectors sums them (its partial last block under a lane mask); then the 8·W lanes of the
// block are combined by summing adjacent pairs (even + odd lanes) three times, which is combine_lanes' tree
// ((0+1)+(2+3))+((4+5)+(6+7)) for every row at once: the same bits as row_dot, one vector out.
// The masked last block loads whole vectors, up to 7 values past a row's q: the design buffer is padded for it.
template <class S, class Isa>
struct RowBlock {
  static constexpr int L = row_lanes_count;
  static constexpr int bytes = L * sizeof(S) < Isa::vector_bytes ? L * sizeof(S) : Isa::vector_bytes;
  static constexpr int W = bytes / static_cast<int>(sizeof(S)), NV = L / W;
  static constexpr int rows = W;
  static constexpr int double_lanes = Isa::vector_bytes / 8 < W ? Isa::vector_bytes / 8 : W;
  typedef double dvec __attribute__((vector_size(double_lanes * 8)));  // the line search's terms, in double
  using DoubleBlock = RowBlock<double, Isa>;  // its vectors are dvec: the line search's formulas in double
  static_assert(L <= host_gram_tile, "the masked last block reads up to L - 1 values past the design's end");
  typedef S vec __attribute__((vector_size(bytes)));
  typedef std::conditional_t<sizeof(S) == 8, long long, int> lane_int;
  typedef lane_int mask __attribute__((vector_size(bytes)));

  const S *v, *v2;
  long long q, full;          // full: the terms in whole blocks of L
  vec v_tail[NV] = {}, v2_tail[NV] = {};  // v's and v2's last, partial block, zero past q
  mask in_tail[NV] = {};                  // its lanes that hold terms

  RowBlock(const S* v_, const S* v2_, long long q_) : v(v_), v2(v2_), q(q_), full(q_ - q_ % L) {
    for (int k = 0; k < NV; ++k)
      for (int e = 0; e < W; ++e) {
        const long long j = full + k * W + e;
        v_tail[k][e] = j < q ? v[j] : S(0);
        v2_tail[k][e] = j < q ? v2[j] : S(0);
        in_tail[k][e] = j < q ? -1 : 0;
      }
  }
  static void load(const S* p, vec& out) { __builtin_memcpy(&out, p, bytes); }  // unaligned
  static void store(const vec& in, S* p) { __builtin_memcpy(p, &in, bytes); }
  static void splat(S s, vec& out) { out = s - vec{}; }  // a broadcast: x − 0 = x for every x, −0 included
  static void weights(const S* w, vec& out) {  // the rows' weights, 1 without
    if (w)
      load(w, out);
    else
      splat(S(1), out);
  }
  // [a0+a1, a2+a3, …, b0+b1, b2+b3, …]
  static void pair_sums(const vec& a, const vec& b, vec& out) {
#if defined(__clang__)
    if constexpr (W == 2) out = __builtin_shufflevector(a, b, 0, 2) + __builtin_shufflevector(a, b, 1, 3);
    else if constexpr (W == 4)
      out = __builtin_shufflevector(a, b, 0, 2, 4, 6) + __builtin_shufflevector(a, b, 1, 3, 5, 7);
    else
      out = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14) +
            __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
#else
    if constexpr (W == 2) out = __builtin_shuffle(a, b, mask{0, 2}) + __builtin_shuffle(a, b, mask{1, 3});
    else if constexpr (W == 4)
      out = __builtin_shuffle(a, b, mask{0, 2, 4, 6}) + __builtin_shuffle(a, b, mask{1, 3, 5, 7});
    else
      out = __builtin_shuffle(a, b, mask{0, 2, 4, 6, 8, 10, 12, 14}) +
            __builtin_shuffle(a, b, mask{1, 3, 5, 7, 9, 11, 13, 15});
#endif
  }
  static void combine(vec (&lanes)[W * NV], vec& out) {  // 8 lanes per row → 4 → 2 → 1
    static_assert(W * NV == 8, "a block holds the 8 lanes of each of its W rows in 8 vectors");
    for (int m = 0; m < 4; ++m) pair_sums(lanes[2 * m], lanes[2 * m + 1], lanes[m]);
    for (int m = 0; m < 2; ++m) pair_sums(lanes[2 * m], lanes[2 * m + 1], lanes[m]);
    pair_sums(lanes[0], lanes[1], out);
  }
  // For the W rows starting at x0, ld values apart: dot[r] = x_rᵀv and, with Line (the line search's pass),
  // dot2[r] = x_rᵀv2 and magnitude[r] = Σ_j |x_rj v_j| (row_dots' three sums).
  template <bool Line>
  void dots(const S* x0, long long ld, vec& dot, vec& dot2, vec& magnitude) const {
    vec a[W * NV] = {}, b[W * NV] = {}, m[W * NV] = {};  // row r's lane k·W + e in a[r·NV + k][e]
    const auto add = [&](int at, const vec& xs, const vec& vk, const vec& v2k) {
      const vec xv = xs * vk;
      a[at] += xv;
      if constexpr (Line) {
        b[at] += xs * v2k;
        m[at] += xv < S(0) ? -xv : xv;
      }
    };
    // Row after row, in memory order: reading the W rows side by side instead was slower wherever the pass is
    // bound by memory (f64 at q = 91 and q = 257), the hardware's prefetchers following one stream better than W.
#pragma GCC unroll 8
    for (int r = 0; r < W; ++r) {
      const S* x = x0 + r * ld;
      for (long long j = 0; j < full; j += L)
#pragma GCC unroll 8
        for (int k = 0; k < NV; ++k) {
          vec xs, vk;
          load(x + j + k * W, xs);
          load(v + j + k * W, vk);
          vec v2k = vk;
          if constexpr (Line) load(v2 + j + k * W, v2k);
          add(r * NV + k, xs, vk, v2k);
        }
      if (full < q)
#pragma GCC unroll 8
        for (int k = 0; k < NV; ++k) {  // lanes past q keep their sums (and their zeros' signs)
          const int at = r * NV + k;
          const vec a0 = a[at], b0 = b[at], m0 = m[at];
          vec xs;
          load(x + full + k * W, xs);
          add(at, xs, v_tail[k], v2_tail[k]);
          a[at] = in_tail[k] ? a[at] : a0;
          if constexpr (Line) {
            b[at] = in_tail[k] ? b[at] : b0;
            m[at] = in_tail[k] ? m[at] : m0;
          }
        }
    }
    combine(a, dot);
    if constexpr (Line) {
      combine(b, dot2);
      combine(m, magnitude);
    }
  }
  // huber_loss, huber_score and smoothed_curvature of rh/detail/method.hpp, lane by lane: the same operations in S.
  static void loss(const vec& r, S tau, vec& out) {
    const vec a = r < S(0) ? -r : r;
    out = a <= tau ? S(0.5) * r * r : tau * a - S(0.5) * tau * tau;
  }
  static void score(const vec& r, S tau, vec& out) {
    vec lo, hi;
    splat(-tau, lo);
    splat(tau, hi);
    out = r < -tau ? lo : (r > tau ? hi : r);
  }
  static void curvature(const vec& r, S tau, S h, vec& out) {
    if (h > tau) h = tau;
    const vec a = r < S(0) ? -r : r;
    vec one, zero;
    splat(S(1), one);
    splat(S(0), zero);
    const vec ramp = S(0.5) - (a - tau) / (S(2) * h);
    out = a < tau - h ? one : (a > tau + h ? zero : ramp);
  }
};
#else
#define RH_ROW_BLOCKS 0
#endif

}  // namespace rh::detail
