// The Kokkos functors of the solver's passes (rh/detail/passes.hpp), written once for every execution space.
//
// One Newton iteration reads X twice: GramGradient (data gradient Σ s_i x_i over every row, and the weighted Gram
// Σ c_i x_i x_iᵀ over every row or only over the rows whose curvature weight changed) and LineSearchRows (r = y − Xβ
// and u = X·d, from which every step of the line search is priced without reading X again). AcceptStep then moves
// the row weights s_i = w_i ψ(r_i), c_i = w_i φ(r_i) to the accepted step. An L1 iteration reads X once per
// majorization attempt (EvaluateRows, which also sums the candidate's gradient). docs/performance.md counts it.
#pragma once
#include <Kokkos_Core.hpp>
#include <cfloat>
#include <type_traits>

#include "rh/detail/compat.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/method.hpp"
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

// cand = S(cur − step·dir, threshold·m): a damped Newton step (threshold 0) or a proximal step.
template <class S, class VView>
struct MakeCandidate {
  VView cand, cur, dir;
  S step, threshold;
  long long penalized;  // coefficients [0, penalized) carry the L1 penalty; the intercept does not
  KOKKOS_INLINE_FUNCTION void operator()(const long long j) const {
    const S v = cur(j) - step * dir(j);
    cand(j) = j < penalized ? soft_threshold(v, threshold) : v;
  }
};

// x_iᵀv, and with Line also x_iᵀv2 and Σ_j |x_ij v_j| beside it (the line search's pass): eight partial sums per
// product, term j always in lane j mod 8, the lanes combined in a fixed order. Every space and every path below
// rounds the same way for any thread count. Two paths compute exactly these sums:
//  - row_lanes: the lanes as arrays, for any layout and any compiler (device code, MSVC).
//  - row_vectors: the lanes as GNU vectors of the host ISA's width (GCC, Clang; host code, row-major X). GCC 12 vectorizes
//    row_lanes' block loop across blocks instead (stride-8 loads and shuffles): 2.5-4x slower at q = 91 (f64-f32).
// tests/unit/test_formulas.cpp checks both against the lanes summed one term at a time, to the bit.
constexpr int row_lanes_count = 8;

template <class S>
struct RowDots {
  S dot = S(0), dot2 = S(0), magnitude = S(0);
};

template <class S>
KOKKOS_INLINE_FUNCTION S combine_lanes(const S (&a)[row_lanes_count]) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Term x_j·v_j (and x_j·v2_j, |x_j·v_j|) into lane l.
template <bool Line, class S>
KOKKOS_INLINE_FUNCTION void add_to_lane(S (&a)[row_lanes_count], S (&b)[row_lanes_count], S (&m)[row_lanes_count],
                                        int l, S xj, S vj, S v2j) {
  const S xv = xj * vj;
  a[l] += xv;
  if constexpr (Line) {
    b[l] += xj * v2j;
    m[l] += xv < S(0) ? -xv : xv;
  }
}

template <bool Line, class S, class At>
KOKKOS_INLINE_FUNCTION RowDots<S> row_lanes(const At& at, long long q) {
  constexpr int L = row_lanes_count;
  S a[L] = {}, b[L] = {}, m[L] = {};
  long long j = 0;
  for (; j + L <= q; j += L)
    for (int l = 0; l < L; ++l) add_to_lane<Line>(a, b, m, l, at.x(j + l), at.v(j + l), at.v2(j + l));
  for (int l = 0; j < q; ++j, ++l) add_to_lane<Line>(a, b, m, l, at.x(j), at.v(j), at.v2(j));
  return {combine_lanes(a), combine_lanes(b), combine_lanes(m)};
}

#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define RH_ROW_VECTORS 1
// The same lanes in vectors of Isa::vector_bytes (at most the 8 lanes): each lane still its own sum.
template <bool Line, class S, class Isa>
inline RowDots<S> row_vectors(const S* row, const S* v, const S* v2, long long q) {
  constexpr int L = row_lanes_count;
  constexpr int bytes = L * sizeof(S) < Isa::vector_bytes ? L * sizeof(S) : Isa::vector_bytes;
  constexpr int W = bytes / static_cast<int>(sizeof(S)), NV = L / W;
  typedef S vec __attribute__((vector_size(bytes)));
  vec a[NV] = {}, b[NV] = {}, m[NV] = {};
  const auto block = [&](const S* xs, const S* vs, const S* v2s) {
    for (int k = 0; k < NV; ++k) {
      vec x, p;
      __builtin_memcpy(&x, xs + k * W, bytes);  // an unaligned vector load
      __builtin_memcpy(&p, vs + k * W, bytes);
      const vec xv = x * p;
      a[k] += xv;
      if constexpr (Line) {
        vec p2;
        __builtin_memcpy(&p2, v2s + k * W, bytes);
        b[k] += x * p2;
        m[k] += xv < S(0) ? -xv : xv;
      }
    }
  };
  long long j = 0;
  for (; j + L <= q; j += L) block(row + j, v + j, v2 + j);
  S la[L], lb[L], lm[L];
  for (int l = 0; l < L; ++l) {
    la[l] = a[l / W][l % W];
    lb[l] = b[l / W][l % W];
    lm[l] = m[l / W][l % W];
  }
  // The last, partial block lane by lane: the same sums in the same order. (Filling vectors from scalars on the
  // stack instead stalled every row on store-to-load forwarding.)
  for (int l = 0; j < q; ++j, ++l) add_to_lane<Line>(la, lb, lm, l, row[j], v[j], v2[j]);
  return {combine_lanes(la), combine_lanes(lb), combine_lanes(lm)};
}
#else
#define RH_ROW_VECTORS 0
#endif

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

template <class XView, class VView>
struct RowViews {
  const XView& xs;
  const VView &vs, &v2s;
  long long i;
  KOKKOS_INLINE_FUNCTION auto x(long long j) const { return xs(i, j); }
  KOKKOS_INLINE_FUNCTION auto v(long long j) const { return vs(j); }
  KOKKOS_INLINE_FUNCTION auto v2(long long j) const { return v2s(j); }
};

template <bool Line, class S, class Isa, class XView, class VView>
KOKKOS_INLINE_FUNCTION void row_dots(const XView& x, long long i, const VView& v, const VView& v2, long long q,
                                     S& out, S& out2, S& magnitude) {
  RowDots<S> d;
#if RH_ROW_VECTORS
  if constexpr (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value)
    d = row_vectors<Line, S, Isa>(&x(i, 0), v.data(), v2.data(), q);
  else
#endif
    d = row_lanes<Line, S>(RowViews<XView, VView>{x, v, v2, i}, q);
  out = d.dot;
  out2 = d.dot2;
  magnitude = d.magnitude;
}
template <class S, class Isa, class XView, class VView>
KOKKOS_INLINE_FUNCTION S row_dot(const XView& x, long long i, const VView& v, long long q) {
  S out, unused, unused_too;
  row_dots<false, S, Isa>(x, i, v, v, q, out, unused, unused_too);
  return out;
}

// Row part of the objective at a candidate, over fixed row chunks (one team per chunk): residuals, Σ w ρ(r)
// per chunk, and the per-row score and curvature weights. Fixed chunks summed in order (FinishEvaluation) make
// the loss independent of the thread count, which matters because the line search compares losses that differ
// in the last bits near convergence. With `gradient`, the same pass also writes the chunk's Σ s_i x_i (the data
// gradient at the candidate, in row order like GramGradient's) to the gradient part of `partial`, so an accepted
// L1 candidate needs no second pass for the next iteration's gradient.
template <class Traits, class S, class XView, class VView, class DView, class PView>
struct EvaluateRows {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  XView x;
  VView y, w, s, c, cand;
  DView chunk_loss;
  PView partial;  // chunks × (q² + q); written only with `gradient`
  long long n, q, rows_per_chunk;
  S tau, h;
  bool has_w, gradient;
  bool weights;  // write s_i, c_i (false: the objective only, the row weights stay those of the current point)
  template <class Isa = BaselineIsa>
  KOKKOS_INLINE_FUNCTION S row(long long i, double& acc) const {
    const S r = y(i) - row_dot<S, Isa>(x, i, cand, q);
    const S wi = has_w ? w(i) : S(1);
    acc += static_cast<double>(wi * huber_loss(r, tau));
    const S si = wi * huber_score(r, tau);
    if (weights) {
      s(i) = si;
      c(i) = wi * smoothed_curvature(r, tau, h);
    }
    return si;
  }
#if RH_ROW_BLOCKS
  // row() for the block's W rows, as vectors (the same operations on each row, in S), and their gradient terms: the
  // loss summed in row order, and g[j] += s_i·x_ij row after row for each j (g's vector kept across the block).
  template <class Block>
  void row_block(const Block& b, long long i, double& acc, S* g) const {
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
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long chunk = team.league_rank();
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    double loss = 0.0;
    if constexpr (Traits::host) {  // one thread per chunk: the gradient is an axpy per row while it is in cache
      run_host_isa([&](auto isa) {
        using Isa = decltype(isa);
        S* g = gradient ? &partial(chunk, q * q) : nullptr;
        if (g)
          for (long long j = 0; j < q; ++j) g[j] = S(0);
        long long i = r0;
#if RH_ROW_BLOCKS
        if constexpr (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value) {
          const RowBlock<S, Isa> block(cand.data(), cand.data(), q);
          for (; i + block.rows <= r1; i += block.rows) row_block(block, i, loss, g);
        }
#endif
        for (; i < r1; ++i) {
          const S si = row<Isa>(i, loss);
          if (g) {
            const S* xi = &x(i, 0);
            for (long long j = 0; j < q; ++j) g[j] += si * xi[j];
          }
        }
      });
    } else {
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1),
                              [&](const long long i, double& acc) { row(i, acc); }, loss);
      if (gradient) {
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
          S g = S(0);
          for (long long i = r0; i < r1; ++i) g += s(i) * x(i, j);
          partial(chunk, q * q + j) = g;
        });
      }
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_loss(chunk) = loss; });
  }
};

// J(j,k) where one thread per j loops over k. A device with an exactly symmetric J reads J(k,j), the same value:
// its threads j then read adjacent entries of row k (coalesced) instead of entries q apart. A host thread reads
// row j, in order. reads_j_transposed is that choice, the one rule of every kernel that calls j_entry.
KOKKOS_INLINE_FUNCTION bool reads_j_transposed(bool info_symmetric, bool host) { return info_symmetric && !host; }
template <class MView>
KOKKOS_INLINE_FUNCTION double j_entry(const MView& info, bool transposed, long long j, long long k) {
  return static_cast<double>(transposed ? info(k, j) : info(j, k));
}

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
#endif

// The row pass of a Newton line search (one team per chunk): r = y − x·β and u = x·d per row (kept for AcceptStep)
// and the chunk's LineSearchSums, from which FinishLineSearch prices every step without reading X again.
template <class Traits, class S, class XView, class VView, class SumsView>
struct LineSearchRows {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  XView x;
  VView y, w, r, u, beta, dir;
  SumsView chunk_sums;
  long long n, q, rows_per_chunk;
  double tau;
  bool has_w;
  template <class Isa = BaselineIsa>
  KOKKOS_INLINE_FUNCTION void row(long long i, LineSearchSums& acc) const {
    S fit, step, magnitude;
    row_dots<true, S, Isa>(x, i, beta, dir, q, fit, step, magnitude);
    const S ri = y(i) - fit;
    r(i) = ri;
    u(i) = step;
    const S wi = has_w ? w(i) : S(1);
    acc.add_row(static_cast<double>(wi), static_cast<double>(ri), static_cast<double>(step), tau,
                static_cast<double>(wi * huber_loss(ri, static_cast<S>(tau))),
                static_cast<double>(magnitude) + compat::fabs(static_cast<double>(y(i))));
  }
#if RH_ROW_BLOCKS
  // row() for the block's W rows: the dot products and residuals as vectors, then add_row row after row.
  template <class Block>
  void row_block(const Block& b, long long i, LineSearchSums& acc) const {
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
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long chunk = team.league_rank();
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    LineSearchSums sums;
    if constexpr (Traits::host) {  // one thread per chunk: rows in order
      run_host_isa([&](auto isa) {
        using Isa = decltype(isa);
        long long i = r0;
#if RH_ROW_BLOCKS
        if constexpr (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value) {
          const RowBlock<S, Isa> block(beta.data(), dir.data(), q);
          for (; i + block.rows <= r1; i += block.rows) row_block(block, i, sums);
        }
#endif
        for (; i < r1; ++i) row<Isa>(i, sums);
      });
    } else {
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1),
                              [&](const long long i, LineSearchSums& acc) { row(i, acc); }, sums);
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_sums(chunk) = sums; });
  }
};

// The decision of a Newton line search, in one team (docs/method.md §5): F_b(β − t·d) for t = 1, ½, …, 2⁻²⁶ from
// the chunks' LineSearchSums (in chunk order) and the quadratic term ½δᵀJδ with δ = β − β̃ − t·d, which is
// ½δ₀ᵀJδ₀ − ½t(dᵀJδ₀ + δ₀ᵀJd) + ½t²·dᵀJd; the first step whose F_b does not exceed F_b(β) is accepted, its candidate
// β − t·d written to `cand` (as MakeCandidate would), and the LineSearch result left for the one readback.
template <class Space, class S, class VView, class MView, class SumsView, class DView, class StatusView,
          class ResultView>
struct FinishLineSearch {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView cur, dir, tilde, cand;
  MView info;
  SumsView chunk_sums;
  DView terms;  // 3 per coefficient: δ₀ⱼ(Jδ₀)ⱼ, dⱼ(Jδ₀)ⱼ + δ₀ⱼ(Jd)ⱼ, dⱼ(Jd)ⱼ
  StatusView solve_status;
  ResultView result;
  long long q, chunks;
  double inv_n, eps;    // eps: machine epsilon of the dtype S
  bool info_symmetric;  // J(j,k) == J(k,j) everywhere (j_entry)
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const bool transposed = reads_j_transposed(info_symmetric, host_memory_v<Space>);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
      double j_delta = 0.0, j_dir = 0.0;
      for (long long k = 0; k < q; ++k) {
        const double jk = j_entry(info, transposed, j, k);
        j_delta += jk * (static_cast<double>(cur(k)) - static_cast<double>(tilde(k)));
        j_dir += jk * static_cast<double>(dir(k));
      }
      const double delta = static_cast<double>(cur(j)) - static_cast<double>(tilde(j)), d = static_cast<double>(dir(j));
      terms(3 * j) = delta * j_delta;
      terms(3 * j + 1) = d * j_delta + delta * j_dir;
      terms(3 * j + 2) = d * j_dir;
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      LineSearchSums total;
      for (long long ch = 0; ch < chunks; ++ch) total += chunk_sums(ch);
      double quad = 0.0, cross = 0.0, dir_quad = 0.0;
      for (long long j = 0; j < q; ++j) {
        quad += terms(3 * j);
        cross += terms(3 * j + 1);
        dir_quad += terms(3 * j + 2);
      }
      LineSearch out;
      const double at_current = total.base + 0.5 * quad;
      out.objective_current = at_current * inv_n;
      // How far a direct evaluation of F_b (a pass over X at the rounded candidate, as the reference computes it)
      // can land from these values: its residuals' rounding (ε of the dtype, about √q of it per row, through ψ)
      // and the double sums. A step whose F_b differs from F_b(β) by more is decided here as any direct
      // evaluation would decide it; from the first one that does not, direct evaluations decide (the host).
      const double margin = (8.0 * eps * compat::sqrt(static_cast<double>(q) * total.noise) +
                             8.0 * DBL_EPSILON * compat::sqrt(static_cast<double>(q + chunks)) *
                                 (compat::fabs(total.base) + compat::fabs(quad))) * inv_n;
      double t = 1.0;
      for (int k = 0; k < line_search_steps; ++k, t *= 0.5) {
        const double change = (t * total.linear + 0.5 * t * t * total.square + total.crossing[k]) +
                              (-0.5 * t * cross + 0.5 * t * t * dir_quad);
        const double f = (at_current + change) * inv_n;
        if (f - out.objective_current < -margin) {
          out.step = k;
          out.objective = f;
          break;
        }
        if (!(f - out.objective_current > margin)) {  // within rounding (or not a number): not decided here
          out.undecided = k;
          break;
        }
      }
      out.solve_status = solve_status().status;
      out.solve_method = solve_status().method;
      result() = out;
    });
    team.team_barrier();
    const int step = result().step;
    if (step < 0) return;
    const S t = static_cast<S>(1.0 / static_cast<double>(1LL << step));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) { cand(j) = cur(j) - t * dir(j); });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      double step2 = 0.0, cand2 = 0.0;
      for (long long j = 0; j < q; ++j) {
        const double c = static_cast<double>(cand(j)), e = c - static_cast<double>(cur(j));
        step2 += e * e;
        cand2 += c * c;
      }
      result().step2 = step2;
      result().cand2 = cand2;
    });
  }
};

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

// Coefficient part of the objective, and the final in-order sums, in one team: the EvaluationSums that the host
// reads back in one copy (with the status of the last dense solve). Each coefficient's terms are written to
// `terms` first and summed in coefficient order, so the sums do not depend on the team size. (Jδ)_j is left in
// `j_delta` for the next gradient (ReduceAndAssemble) when the candidate is accepted.
template <class Space, class Penalty, class VView, class MView, class DView, class TView, class StatusView,
          class SumsView>
struct FinishEvaluation {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView cand, cur, tilde, grad;
  MView info;
  DView chunk_loss;
  DView delta;    // q: β_cand − β̃ in double, formed once instead of once per entry of J
  DView j_delta;  // q: (Jδ)_j = Σ_k J(j,k)·δ_k, each over k in order
  TView terms;    // q EvaluationSums<Penalty>: one coefficient's terms each
  StatusView solve_status;
  SumsView sums;
  long long q, chunks, penalized;
  bool info_symmetric;  // J(j,k) == J(k,j) everywhere: a host may sum over J's rows, a device read them (j_entry)
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long k) {
      delta(k) = static_cast<double>(cand(k)) - static_cast<double>(tilde(k));
    });
    team.team_barrier();
    long long first = 0;  // (Jδ)_j of j < first are formed by the host path below
    if constexpr (host_memory_v<Space>) {
      // One host thread. Σ_k J(j,k)·δ_k for every j at once, k after k: each sum still runs over k in order from
      // 0.0, so it is the same sum, now over rows of J (contiguous: vectors across j) instead of q dependent
      // chains (q = 257: 0.017-0.024 ms per evaluation, 4-10 % of a wide L1 stream).
      if (info_symmetric) {
        double* out = j_delta.data();
        run_host_isa([&](auto) {
          for (long long j = 0; j < q; ++j) out[j] = 0.0;
          for (long long k = 0; k < q; ++k) {
            const double dk = delta(k);
            const auto* row = &info(k, 0);
            for (long long j = 0; j < q; ++j) out[j] += static_cast<double>(row[j]) * dk;
          }
        });
        first = q;
      } else {  // eight coefficients' sums side by side, each over k in order
        constexpr int G = 8;
        for (; first + G <= q; first += G) {
          double sums_j[G] = {};
          for (long long k = 0; k < q; ++k) {
            const double dk = delta(k);
            for (int e = 0; e < G; ++e) sums_j[e] += static_cast<double>(info(first + e, k)) * dk;
          }
          for (int e = 0; e < G; ++e) j_delta(first + e) = sums_j[e];
        }
      }
    }
    const bool transposed = reads_j_transposed(info_symmetric, host_memory_v<Space>);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, q), [&](const long long j) {
      double sum = 0.0;
      for (long long k = 0; k < q; ++k) sum += j_entry(info, transposed, j, k) * delta(k);
      j_delta(j) = sum;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
      CoefficientInputs c;
      c.cand = static_cast<double>(cand(j));
      c.cur = static_cast<double>(cur(j));
      c.tilde = static_cast<double>(tilde(j));
      c.grad = static_cast<double>(grad(j));
      c.delta = c.cand - c.tilde;
      c.step = c.cand - c.cur;
      c.penalized = j < penalized ? 1.0 : 0.0;
      EvaluationSums<Penalty> t;
      t.quad = c.delta * j_delta(j);
      t.step2 = c.step * c.step;
      t.cand2 = c.cand * c.cand;
      Penalty::coefficient_terms(c, t.penalty);
      terms(j) = t;
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      EvaluationSums<Penalty> out;
      for (long long ch = 0; ch < chunks; ++ch) out.loss += chunk_loss(ch);
      for (long long j = 0; j < q; ++j) out.add_terms(terms(j));
      out.solve_status = solve_status().status;
      out.solve_method = solve_status().method;
      sums() = out;
    });
  }
};

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
    double sum = 0.0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1),
                            [&](const long long i, double& acc) { acc += static_cast<double>(w(i)); }, sum);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_sum(team.league_rank()) = sum; });
  }
};

// Per-chunk partial sums of the weighted Gram Σ c_i x_i x_iᵀ (upper tile pairs) and of the data gradient
// Σ s_i x_i. League = chunks × (tile pairs + gradient tiles). Each entry is a sum over the chunk's rows in row
// order; chunks are summed in order by ReduceAndAssemble, so the result does not depend on the thread count.
// With `use_changes` (the delta Gram), a chunk whose AcceptStep listed its changed rows (count ≥ 0) adds
// Σ Δc_i x_i x_iᵀ over those rows, in row order, to its partial Gram instead of recomputing it: within a batch
// φ is flat (0 or 1) outside the ramps τ ± h, so few rows change once the iterates settle.
//  - Spaces with their own memory (one 256-thread team per job): the team stages `stage_rows` rows of its two
//    column tiles in scratch (coalesced reads of column-major X) and each thread owns one entry of the block
//    (R = 1, tiles of up to 16), or for wide q an R×R block of a 16R × 16R tile held in registers (R > 1: 2R
//    scratch loads per R² multiply-adds instead of 2 per 1). Every entry is the same sum in the same order
//    either way (per staged block of rows from zero, then added to the entry), so R changes no result.
//  - Host spaces (one thread per team): the block is accumulated one output row at a time in registers,
//    reading row-major X directly, so the inner loop is a contiguous, vectorizable axpy.

template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R = 1>
struct GramGradient {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using scratch_view = Kokkos::View<S*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int host_tile = host_gram_tile;  // compile-time, so the accumulators stay in registers
  XView x;
  VView s, c;
  PView partial;  // chunks × (q·q + q)
  long long n, q, rows_per_chunk;
  int tile, tiles, pairs, grad_tiles, stage_rows;
  bool use_changes;  // the delta Gram: `changed`, `count` and `dc` below are read
  IView changed;     // row indices listed per chunk from its first row (AcceptStep)
  CView count;       // per chunk: listed rows, or gram_all_rows
  VView dc;          // per row: Δc_i of the last accepted step

  static size_t scratch_bytes(int tile, int stage_rows) {
    if (Traits::host) return 0;
    const size_t staged = scratch_view::shmem_size(stage_rows * tile);  // per column tile
    return 2 * staged + (R == 1 ? scratch_view::shmem_size(tile * tile) : 0);
  }

  // The rows a Gram job of this chunk reads: every row (weight c_i) or the listed ones (weight Δc_i).
  KOKKOS_INLINE_FUNCTION long long listed(long long chunk) const {
    return use_changes ? static_cast<long long>(count(chunk)) : static_cast<long long>(gram_all_rows);
  }
  KOKKOS_INLINE_FUNCTION long long row_of(bool delta, long long r0, long long e) const {
    return delta ? static_cast<long long>(changed(r0 + e)) : r0 + e;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int per_chunk = pairs + grad_tiles;
    const long long chunk = team.league_rank() / per_chunk;
    const int job = team.league_rank() % per_chunk;
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    const bool gram = job < pairs;
    int a = 0, b = 0;
    if (gram) {  // decode the upper tile pair (a, b), a ≤ b, of this job
      int rest = job;
      while (rest >= tiles - a) { rest -= tiles - a; ++a; }
      b = a + rest;
    } else {
      a = job - pairs;
    }
    if constexpr (Traits::host) {
      run_host_isa([&](auto isa) { host_block<decltype(isa)>(chunk, r0, r1, gram, a, b); });
    } else if constexpr (R == 1) {
      team_block(team, chunk, r0, r1, gram, a, b);
    } else {
      register_block(team, chunk, r0, r1, gram, a, b);
    }
  }

  // Host path (tile = host_tile, row-major X). Blocks of 4 output rows × 16 columns stay in registers while the
  // chunk's rows stream past: 64 multiply-adds per row for 16 + 4 loads. Rows are read 16 wide even where q ends
  // inside the tile (the extra lanes are discarded); the engine pads the design buffer so the last row can be.
  template <class Isa>
  KOKKOS_INLINE_FUNCTION void host_block(long long chunk, long long r0, long long r1, bool gram, int a, int b) const {
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

#if RH_ROW_BLOCKS
  // A tile pair whose right tile has at most host_narrow_columns columns: the last tile where q is 16m + 1 or
  // 16m + 2 (the intercept after 16m features: q = 17, 33, 257). The J × KB sweeps would compute KB columns for
  // these K; here the rows stream once, and each of the K columns of the block is accumulated as vectors down the
  // left tile. The same products (c_i·x_ij)·x_ik added in row order to each entry's sum: the same bits.
  template <class Isa, int K>
  void host_narrow_pair(long long chunk, long long r0, long long m, bool delta, long long ja, int jmax,
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
        // its halves' stores stalled the reload: 1.2 ms per wide float64 launch).
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
  // missed L1; packed, GCC 12 vectorized the plain loop nest with scalar multiplies and lane inserts, hence the
  // vectors. gram_gradient per launch, OpenMP on 2 threads: wide 6.4–6.6 → 5.4–5.7 ms, reference 5.2 → 4.8–4.95,
  // streaming 2.38 → 2.2–2.3. (float32 keeps the plain loop in place: packed, it gained on two shapes and lost on
  // one, and spelled in vectors it lost on all.) The same products added to the same sums in the same order.
  template <class Isa, int J, int KB>
  void host_sweeps_f64(S (&acc)[host_tile][host_tile], const S (&scaled)[host_gram_rows][host_tile], long long e0,
                       long long e1, bool delta, long long r0, long long ja, int jmax, long long kb, int kmax) const {
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

  // The J × KB sweeps of a tile pair's block that hold entries on or above the diagonal: f(j0, k0) for each.
  template <int J, int KB, class F>
  KOKKOS_INLINE_FUNCTION static void for_each_sweep(long long ja, int jmax, long long kb, int kmax, const F& f) {
    for (int j0 = 0; j0 < jmax; j0 += J) {
      if (ja + j0 > kb + kmax - 1) break;  // the rest of this block lies below the diagonal
      for (int k0 = 0; k0 < kmax; k0 += KB) {
        if (kb + k0 + KB - 1 < ja + j0) continue;  // every entry of these columns lies below the diagonal
        f(j0, k0);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void team_block(const member_type& team, long long chunk, long long r0, long long r1,
                                         bool gram, int a, int b) const {
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
  KOKKOS_INLINE_FUNCTION void stage_tiles(const member_type& team, const scratch_view& xa, const scratch_view& xb,
                                          long long r0, long long base, int m, bool gram, bool delta, int a,
                                          int b) const {
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
  KOKKOS_INLINE_FUNCTION void register_block(const member_type& team, long long chunk, long long r0, long long r1,
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
};

// k_i = w_i ψ(r_i)², from the score weight s_i = w_i ψ(r_i) and w_i (s_i·(s_i/w_i): no overflow for large w_i).
template <class S>
KOKKOS_INLINE_FUNCTION S squared_score_weight(S s, S w, bool has_w) {
  if (!has_w) return s * s;
  return w > S(0) ? s * (s / w) : S(0);
}

// The row weights of the squared-score Gram Σ k_i x_i x_iᵀ (docs/method.md §12): k_i = w_i ψ(r_i)².
template <class S, class VView>
struct SquaredScores {
  VView s, w, k;
  bool has_w;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i) const {
    k(i) = squared_score_weight(s(i), has_w ? w(i) : S(1), has_w);
  }
};

// Entry (j, k) of the summed Gram G: the per-chunk partials in chunk order (deterministic), read from the upper
// triangle so that G is exactly symmetric.
template <class S, class PView>
KOKKOS_INLINE_FUNCTION S gram_entry(const PView& partial, long long chunks, long long q, long long j, long long k) {
  const long long lo = j < k ? j : k, hi = j < k ? k : j;
  S g = S(0);
  for (long long ch = 0; ch < chunks; ++ch) g += partial(ch, lo * q + hi);
  return g;
}

// Host: row j of G's upper triangle, each entry the chunks' partials summed in chunk order as gram_entry sums them,
// but chunk after chunk along the row; f(k, g_jk) for k = j … q − 1. With the rows taken in pairs (p, q − 1 − p) every
// index of a launch over (q + 1) / 2 has the same work. One entry at a time instead is a chain of loads from `chunks`
// matrices, the lower triangle's q values apart: 0.6-0.7 ms per launch at q = 257, 16 chunks.
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

// The Newton system from the summed Gram G and data gradient u (docs/method.md §4, §5). Index e < hessian_items
// builds H = (G + J)/N + ridge·I; e = hessian_items + j is g_j = (−u + J(β − β̃))_j/N plus the penalty's term. The
// gradient alone (proximal solver) launches only the last q indices: the Gram partials are stale then. A device
// takes one entry (j, k) per index, in row order (coalesced); a host two rows of G's upper triangle (gram_upper_row),
// writing both H(j, k) and H(k, j). Every entry is the same sum in the same order either way.
template <class S, class Penalty, class VView, class MView, class PView, class DView>
struct ReduceAndAssemble {
  PView partial;
  MView info, hessian;
  VView grad, cur, tilde;
  DView known_j_delta;  // J(β − β̃) as the last evaluation summed it, when that was at this β; else empty
  long long q, chunks, penalized;
  double inv_n, ridge, historical;
  bool by_rows;         // host
  bool info_symmetric;  // J(j,k) == J(k,j) everywhere (j_entry)
  KOKKOS_INLINE_FUNCTION static long long hessian_items(long long q, bool by_rows) {
    return by_rows ? paired_rows(q) : q * q;
  }
  KOKKOS_INLINE_FUNCTION S entry(double g, long long j, long long k) const {
    return static_cast<S>((g + static_cast<double>(info(j, k))) * inv_n + (j == k ? ridge : 0.0));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
    const long long items = hessian_items(q, by_rows);
    if (e < items) {
#ifndef __CUDA_ARCH__  // (by_rows is for hosts; device code need not carry gram_upper_row's row buffer)
      if (by_rows) {
        for_gram_row_pair<S>(partial, chunks, q, e, [&](long long j, long long k, S g) {
          hessian(j, k) = entry(static_cast<double>(g), j, k);
        });
        return;
      }
#endif
      const long long j = e / q, k = e % q;
      hessian(j, k) = entry(static_cast<double>(gram_entry<S>(partial, chunks, q, j, k)), j, k);
      return;
    }
    const long long j = e - items;
    S u = S(0);
    for (long long ch = 0; ch < chunks; ++ch) u += partial(ch, q * q + j);
    double j_delta = 0.0;
    if (known_j_delta.extent(0) != 0) {
      j_delta = known_j_delta(j);  // the same sum, in the same order (FinishEvaluation)
    } else {
      const bool transposed = reads_j_transposed(info_symmetric, by_rows);  // by_rows: a host
      for (long long k = 0; k < q; ++k)
        j_delta += j_entry(info, transposed, j, k) * (static_cast<double>(cur(k)) - static_cast<double>(tilde(k)));
    }
    const double mj = j < penalized ? 1.0 : 0.0;
    grad(j) = static_cast<S>(
        Penalty::gradient((j_delta - static_cast<double>(u)) * inv_n, historical, mj, static_cast<double>(tilde(j))));
  }
};

// The renewable information update J_new = J + G (docs/method.md §7), G from the curvature weights at the final β.
template <class S, class MView, class PView>
struct CommitInformation {
  PView partial;
  MView info, info_new;
  long long q, chunks;
  bool by_rows;  // host: over paired_rows(q) indices, as ReduceAndAssemble; device: over q·q entries
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
#ifndef __CUDA_ARCH__
    if (by_rows) {
      for_gram_row_pair<S>(partial, chunks, q, e,
                           [&](long long j, long long k, S g) { info_new(j, k) = info(j, k) + g; });
      return;
    }
#endif
    const long long j = e / q, k = e % q;
    info_new(j, k) = info(j, k) + gram_entry<S>(partial, chunks, q, j, k);
  }
};

// The score variance update K_new = K + Σ w ψ(r)² x xᵀ (docs/method.md §12) with inference, from the per-chunk
// squared-score Gram of the commit (score_gram); K_new = 0 without inference (K is kept only while inference is on).
template <class S, class MView, class PView>
struct CommitScoreVariance {
  PView partial;
  MView score, score_new;
  long long q, chunks;
  bool inference;
  bool by_rows;  // as CommitInformation
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
#ifndef __CUDA_ARCH__
    if (by_rows && inference) {
      for_gram_row_pair<S>(partial, chunks, q, e,
                           [&](long long j, long long k, S g) { score_new(j, k) = score(j, k) + g; });
      return;
    }
    if (by_rows) {  // without inference the partials are not formed: zeros only
      for_paired_rows(e, q, [&](long long j) {
        for (long long k = j; k < q; ++k) score_new(j, k) = score_new(k, j) = S(0);
      });
      return;
    }
#endif
    const long long j = e / q, k = e % q;
    score_new(j, k) = inference ? score(j, k) + gram_entry<S>(partial, chunks, q, j, k) : S(0);
  }
};

// out_i = x_iᵀβ.
template <class S, class XView, class VView>
struct Predict {
  XView x;
  VView beta, out;
  long long q;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i) const {
    S fit = S(0);
    for (long long j = 0; j < q; ++j) fit += x(i, j) * beta(j);
    out(i) = fit;
  }
};

template <class S, class VView>
struct ScoreMoments {
  VView y, w, pred;
  bool has_w;
  int pass;
  double mean;
  using value_type = ScoreSums;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i, value_type& acc) const {
    const double wi = has_w ? static_cast<double>(w(i)) : 1.0;
    const double yi = static_cast<double>(y(i));
    if (pass == 0) {
      acc.weight += wi;
      acc.weighted_y += wi * yi;
    } else {
      const double d = yi - mean, r = yi - static_cast<double>(pred(i));
      acc.total += wi * d * d;
      acc.residual += wi * r * r;
    }
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(RH_REDUCE_VOLATILE value_type& dst,
                                   const RH_REDUCE_VOLATILE value_type& src) const {
    dst.weight += src.weight;
    dst.weighted_y += src.weighted_y;
    dst.total += src.total;
    dst.residual += src.residual;
  }
};

// Non-finite count of the solved state (β and J) before it is committed: indices [0, entries) are J's entries, or
// on a host (by_rows) its rows (no index decode: host_memory_v), and the q after them β's.
template <class VView, class MView>
struct CountNonFinite {
  VView beta;
  MView info;
  long long q;
  bool by_rows;
  KOKKOS_INLINE_FUNCTION long long entries() const { return by_rows ? q : q * q; }
  KOKKOS_INLINE_FUNCTION void operator()(const long long e, long long& bad) const {
    if (e >= entries()) {
      if (!compat::isfinite(beta(e - entries()))) ++bad;
    } else if (by_rows) {
      for (long long k = 0; k < q; ++k)
        if (!compat::isfinite(info(e, k))) ++bad;
    } else if (!compat::isfinite(info(e / q, e % q))) {
      ++bad;
    }
  }
};

}  // namespace rh::detail
