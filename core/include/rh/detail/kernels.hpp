// The Kokkos functors of the solver's passes (rh/detail/passes.hpp), written once for every execution space.
//
// One Newton iteration reads X twice: GramGradient (weighted Gram Σ c_i x_i x_iᵀ and data gradient Σ s_i x_i,
// using the per-row weights s_i = w_i ψ(r_i), c_i = w_i φ(r_i) left behind by the last accepted evaluation) and
// EvaluateRows (residuals, loss, and the new s_i, c_i at the candidate). docs/performance.md counts it.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "rh/detail/compat.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// Fills the design matrix (and y, w) from a caller's array with arbitrary layout and leading dimension.
// Runs on any space that can read the source pointer.
template <class S, class XView, class VView>
struct FillDesign {
  XView x;
  VView y, w;
  const S* src_x;
  const S* src_y;
  const S* src_w;
  long long p, ld;
  bool row_major, intercept;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i) const {
    for (long long j = 0; j < p; ++j) x(i, j) = row_major ? src_x[i * ld + j] : src_x[j * ld + i];
    if (intercept) x(i, p) = S(1);
    if (src_y) y(i) = src_y[i];
    if (src_w) w(i) = src_w[i];
  }
};

// Counts non-finite X/y/w values and negative weights.
template <class S, class XView, class VView>
struct CheckBatch {
  XView x;
  VView y, w;
  long long q;
  bool has_y, has_w;
  using value_type = BatchCounts;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i, value_type& acc) const {
    for (long long j = 0; j < q; ++j)
      if (!compat::isfinite(x(i, j))) acc.non_finite_x += 1.0;
    if (has_y && !compat::isfinite(y(i))) acc.non_finite_y += 1.0;
    const S wi = has_w ? w(i) : S(1);
    if (!compat::isfinite(wi)) acc.non_finite_w += 1.0;
    if (wi < S(0)) acc.negative_w += 1.0;
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

// Row part of the objective at a candidate, over fixed row chunks (one team per chunk): residuals, Σ w ρ(r)
// per chunk, and the per-row score and curvature weights. Fixed chunks summed in order (FinishEvaluation) make
// the loss independent of the thread count, which matters because the line search compares losses that differ
// in the last bits near convergence.
template <class Space, class S, class XView, class VView, class DView>
struct EvaluateRows {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  XView x;
  VView y, w, s, c, cand;
  DView chunk_loss;
  long long n, q, rows_per_chunk;
  S tau, h;
  bool has_w;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long r0 = team.league_rank() * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    double loss = 0.0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1), [&](const long long i, double& acc) {
      S fit = S(0);
      for (long long j = 0; j < q; ++j) fit += x(i, j) * cand(j);
      const S r = y(i) - fit;
      const S wi = has_w ? w(i) : S(1);
      acc += static_cast<double>(wi * huber_loss(r, tau));
      s(i) = wi * huber_score(r, tau);
      c(i) = wi * smoothed_curvature(r, tau, h);
    }, loss);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_loss(team.league_rank()) = loss; });
  }
};

// Coefficient part of the objective, and the final in-order sums, in one team: the EvaluationSums that the host
// reads back in one copy (with the status of the last dense solve). Each coefficient's terms are written to
// `terms` first and summed in coefficient order, so the sums do not depend on the team size.
template <class Space, class Penalty, class VView, class MView, class DView, class TView, class StatusView,
          class SumsView>
struct FinishEvaluation {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView cand, cur, tilde, grad;
  MView info;
  DView chunk_loss;
  TView terms;  // q EvaluationSums<Penalty>: one coefficient's terms each
  StatusView solve_status;
  SumsView sums;
  long long q, chunks, penalized;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
      CoefficientInputs c;
      c.cand = static_cast<double>(cand(j));
      c.cur = static_cast<double>(cur(j));
      c.tilde = static_cast<double>(tilde(j));
      c.grad = static_cast<double>(grad(j));
      c.delta = c.cand - c.tilde;
      double j_delta = 0.0;
      for (long long k = 0; k < q; ++k)
        j_delta += static_cast<double>(info(j, k)) * (static_cast<double>(cand(k)) - static_cast<double>(tilde(k)));
      c.step = c.cand - c.cur;
      c.penalized = j < penalized ? 1.0 : 0.0;
      EvaluationSums<Penalty> t;
      t.quad = c.delta * j_delta;
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
      out.solve_status = solve_status();
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
//  - Spaces with their own memory (one 256-thread team per job): the team stages `stage_rows` rows of its two
//    column tiles in scratch (coalesced reads of column-major X) and each thread owns one entry of the block.
//  - Host spaces (one thread per team): the block is accumulated one output row at a time in registers,
//    reading row-major X directly, so the inner loop is a contiguous, vectorizable axpy.
// The commit's pass with inference (docs/method.md §12) adds the squared-score Gram Σ k_i x_i x_iᵀ,
// k_i = w_i ψ(r_i)², at offset q² + q of `partial`, and computes no gradient: on the host each tile-pair job
// accumulates both Grams from one read of each row (host_score_block); a space with its own memory runs the k
// tile pairs as `score_pairs` more jobs of the same launch.

// k_i = w_i ψ(r_i)², from the score weight s_i = w_i ψ(r_i) and w_i (s_i·(s_i/w_i): no overflow for large w_i).
template <class S>
KOKKOS_INLINE_FUNCTION S squared_score_weight(S s, S w, bool has_w) {
  if (!has_w) return s * s;
  return w > S(0) ? s * (s / w) : S(0);
}

template <class Traits, class S, class XView, class VView, class PView>
struct GramGradient {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using scratch_view = Kokkos::View<S*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int host_tile = host_gram_tile;  // compile-time, so the accumulators stay in registers
  XView x;
  VView s, c;
  PView partial;  // chunks × (q·q + q), or × (2·q·q + q) with the squared-score Gram
  long long n, q, rows_per_chunk;
  int tile, tiles, pairs, grad_tiles, stage_rows;
  VView w;              // the weights, read for k_i only
  bool has_w = false;
  bool score = false;   // also the squared-score Gram (the commit's pass with inference)
  int score_pairs = 0;  // its tile-pair jobs per chunk when they are separate jobs (spaces with their own memory)

  static size_t scratch_bytes(int tile, int stage_rows) {
    if (Traits::host) return 0;
    return scratch_view::shmem_size(2 * stage_rows * tile) + scratch_view::shmem_size(tile * tile);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int per_chunk = pairs + score_pairs + grad_tiles;
    const long long chunk = team.league_rank() / per_chunk;
    const int job = team.league_rank() % per_chunk;
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    const bool score_job = job >= pairs && job < pairs + score_pairs;  // a separate squared-score tile pair
    const bool gram = job < pairs + score_pairs;
    int a = 0, b = 0;
    if (gram) {  // decode the upper tile pair (a, b), a ≤ b, of this job
      int rest = score_job ? job - pairs : job;
      while (rest >= tiles - a) { rest -= tiles - a; ++a; }
      b = a + rest;
    } else {
      a = job - pairs - score_pairs;
    }
    if constexpr (Traits::host) {
      if (gram && score) host_score_block(chunk, r0, r1, a, b);
      else host_block(chunk, r0, r1, gram, a, b);
    } else {
      team_block(team, chunk, r0, r1, gram, score_job, a, b);
    }
  }

  // Host path (tile = host_tile, row-major X). Blocks of 4 output rows × 16 columns stay in registers while the
  // chunk's rows stream past: 64 multiply-adds per row for 16 + 4 loads. Rows are read 16 wide even where q ends
  // inside the tile (the extra lanes are discarded); the engine pads the design buffer so the last row can be.
  KOKKOS_INLINE_FUNCTION void host_block(long long chunk, long long r0, long long r1, bool gram, int a, int b) const {
    static_assert(std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value,
                  "the host Gram path reads row-major X");
    constexpr int T = host_tile, J = 4;
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
    for (int j0 = 0; j0 < jmax; j0 += J) {
      if (ja + j0 > kb + kmax - 1) break;  // the rest of this block lies below the diagonal
      S acc[J][T] = {};
      for (long long i = r0; i < r1; ++i) {
        const S* row = base + i * q;
        const S ci = c(i);
        S lhs[J];
        for (int jj = 0; jj < J; ++jj) lhs[jj] = ci * row[ja + j0 + jj];
        for (int k = 0; k < T; ++k) {
          const S xk = row[kb + k];
          for (int jj = 0; jj < J; ++jj) acc[jj][k] += lhs[jj] * xk;
        }
      }
      for (int jj = 0; jj < J && j0 + jj < jmax; ++jj) {
        const long long j = ja + j0 + jj;
        for (int k = 0; k < kmax; ++k)
          if (j <= kb + k) partial(chunk, j * q + kb + k) = acc[jj][k];
      }
    }
  }

  // Host path of the commit's pass with inference: the block of both Grams for the tile pair (a, b), 2 output rows
  // of each per register block (the registers of host_block's 4), so each row of X is read once for both. Each
  // entry is the same sum, in the same order, as host_block's: J is bitwise what the pass without inference gives.
  KOKKOS_INLINE_FUNCTION void host_score_block(long long chunk, long long r0, long long r1, int a, int b) const {
    static_assert(std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value,
                  "the host Gram path reads row-major X");
    constexpr int T = host_tile, J = 2;
    const S* base = x.data();
    const long long ja = a * static_cast<long long>(T), kb = b * static_cast<long long>(T);
    const int jmax = static_cast<int>(q - ja < T ? q - ja : T);
    const int kmax = static_cast<int>(q - kb < T ? q - kb : T);
    const long long score_offset = q * q + q;
    for (int j0 = 0; j0 < jmax; j0 += J) {
      if (ja + j0 > kb + kmax - 1) break;  // the rest of this block lies below the diagonal
      S acc[J][T] = {}, acc_score[J][T] = {};
      for (long long i = r0; i < r1; ++i) {
        const S* row = base + i * q;
        const S ci = c(i), ki = squared_score_weight(s(i), has_w ? w(i) : S(1), has_w);
        S lhs[J], lhs_score[J];
        for (int jj = 0; jj < J; ++jj) {
          lhs[jj] = ci * row[ja + j0 + jj];
          lhs_score[jj] = ki * row[ja + j0 + jj];
        }
        for (int k = 0; k < T; ++k) {
          const S xk = row[kb + k];
          for (int jj = 0; jj < J; ++jj) {
            acc[jj][k] += lhs[jj] * xk;
            acc_score[jj][k] += lhs_score[jj] * xk;
          }
        }
      }
      for (int jj = 0; jj < J && j0 + jj < jmax; ++jj) {
        const long long j = ja + j0 + jj;
        for (int k = 0; k < kmax; ++k)
          if (j <= kb + k) {
            partial(chunk, j * q + kb + k) = acc[jj][k];
            partial(chunk, score_offset + j * q + kb + k) = acc_score[jj][k];
          }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void team_block(const member_type& team, long long chunk, long long r0, long long r1,
                                         bool gram, bool score_job, int a, int b) const {
    scratch_view xa(team.team_scratch(0), stage_rows * tile);
    scratch_view xb(team.team_scratch(0), stage_rows * tile);
    scratch_view acc(team.team_scratch(0), tile * tile);
    const int entries = gram ? tile * tile : tile;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, entries), [&](const int e) { acc(e) = S(0); });
    for (long long base = r0; base < r1; base += stage_rows) {
      const int m = static_cast<int>(r1 - base < stage_rows ? r1 - base : stage_rows);
      team.team_barrier();
      // Consecutive threads read consecutive rows of one column: coalesced for column-major X.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * tile), [&](const int e) {
        const int r = e % m, j = e / m;
        const long long i = base + r, ca = a * tile + j, cb = b * tile + j;
        const S xa_ij = ca < q ? x(i, ca) : S(0);
        const S weight = score_job ? squared_score_weight(s(i), has_w ? w(i) : S(1), has_w) : (gram ? c(i) : s(i));
        xa(r * tile + j) = weight * xa_ij;
        if (gram) xb(r * tile + j) = cb < q ? x(i, cb) : S(0);
      });
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
        if (j < q && k < q && j <= k) partial(chunk, (score_job ? q * q + q : 0) + j * q + k) = acc(e);
      } else {
        const long long j = a * tile + e;
        if (j < q) partial(chunk, q * q + j) = acc(e);
      }
    });
  }
};

// Entry (j, k) of the summed Gram G: the per-chunk partials in chunk order (deterministic), read from the upper
// triangle so that G is exactly symmetric.
// `offset`: where the Gram starts in a row of `partial` (q² + q for the squared-score Gram).
template <class S, class PView>
KOKKOS_INLINE_FUNCTION S gram_entry(const PView& partial, long long chunks, long long q, long long j, long long k,
                                    long long offset = 0) {
  const long long lo = j < k ? j : k, hi = j < k ? k : j;
  S g = S(0);
  for (long long ch = 0; ch < chunks; ++ch) g += partial(ch, offset + lo * q + hi);
  return g;
}

// The Newton system from the summed Gram G and data gradient u (docs/method.md §4, §5). Index e < q·q is entry
// (j, k) of H = (G + J)/N + ridge·I; e = q·q + j is g_j = (−u + J(β − β̃))_j/N plus the penalty's term. The
// gradient alone (proximal solver) launches only the last q indices: the Gram partials are stale then.
template <class S, class Penalty, class VView, class MView, class PView>
struct ReduceAndAssemble {
  PView partial;
  MView info, hessian;
  VView grad, cur, tilde;
  long long q, chunks, penalized;
  double inv_n, ridge, historical;
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
    if (e < q * q) {
      const long long j = e / q, k = e % q;
      const S g = gram_entry<S>(partial, chunks, q, j, k);
      hessian(j, k) = static_cast<S>((static_cast<double>(g) + static_cast<double>(info(j, k))) * inv_n +
                                     (j == k ? ridge : 0.0));
      return;
    }
    const long long j = e - q * q;
    S u = S(0);
    for (long long ch = 0; ch < chunks; ++ch) u += partial(ch, q * q + j);
    double j_delta = 0.0;
    for (long long k = 0; k < q; ++k)
      j_delta += static_cast<double>(info(j, k)) * (static_cast<double>(cur(k)) - static_cast<double>(tilde(k)));
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
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
    const long long j = e / q, k = e % q;
    info_new(j, k) = info(j, k) + gram_entry<S>(partial, chunks, q, j, k);
  }
};

// The score variance update K_new = K + Σ w ψ(r)² x xᵀ (docs/method.md §12) with inference, from the
// squared-score Gram of the commit's pass; K_new = 0 without inference (K is kept only while inference is on).
template <class S, class MView, class PView>
struct CommitScoreVariance {
  PView partial;
  MView score, score_new;
  long long q, chunks;
  bool inference;
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
    const long long j = e / q, k = e % q;
    score_new(j, k) = inference ? score(j, k) + gram_entry<S>(partial, chunks, q, j, k, q * q + q) : S(0);
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

// Non-finite count of the solved state (β and J) before it is committed.
template <class VView, class MView>
struct CountNonFinite {
  VView beta;
  MView info;
  long long q;
  KOKKOS_INLINE_FUNCTION void operator()(const long long e, long long& bad) const {
    if (e < q * q) {
      if (!compat::isfinite(info(e / q, e % q))) ++bad;
    } else if (!compat::isfinite(beta(e - q * q))) {
      ++bad;
    }
  }
};

}  // namespace rh::detail
