// The batch passes of the solver, written once for every execution space as Kokkos functors.
//
// One Newton iteration reads X twice: GramGradient (weighted Gram Σ c_i x_i x_iᵀ and data gradient Σ s_i x_i,
// using the per-row weights s_i = w_i ψ(r_i), c_i = w_i φ(r_i) left behind by the last accepted evaluation) and
// EvaluateRows (residuals, loss, and the new s_i, c_i at the candidate). docs/performance.md counts it.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "rh/detail/compat.hpp"
#include "rh/method.hpp"

namespace rh::detail {

// A fixed-size vector of double sums, reduced with one parallel_reduce and read back with one copy.
template <int N>
struct Sums {
  double v[N];
  KOKKOS_INLINE_FUNCTION Sums() {
    for (int i = 0; i < N; ++i) v[i] = 0.0;
  }
};
using Sums8 = Sums<8>;

// Slots of the Sums8 an evaluation reads back.
enum EvalSlot : int {
  slot_loss = 0,        // Σ w_i ρ_τ(r_i)
  slot_quad = 1,        // δᵀJδ, δ = cand − β̃
  slot_hist = 2,        // Σ m_j sign(β̃_j) δ_j (historical L1 subgradient term)
  slot_step2 = 3,       // ‖cand − β‖²
  slot_cand2 = 4,       // ‖cand‖²
  slot_gstep = 5,       // gᵀ(cand − β)
  slot_l1 = 6,          // Σ m_j |cand_j|
  slot_solve_status = 7 // status of the last dense solve (read back with the same copy)
  // slots 1..6 are FinishEvaluation's six per-coefficient terms, in this order
};

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

// Counts non-finite X/y/w values and negative weights (integers: the order of summation does not matter).
template <class S, class XView, class VView>
struct CheckBatch {
  XView x;
  VView y, w;
  long long q;
  bool has_y, has_w;
  using value_type = Sums8;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i, value_type& acc) const {
    for (long long j = 0; j < q; ++j)
      if (!compat::isfinite(x(i, j))) acc.v[0] += 1.0;
    if (has_y && !compat::isfinite(y(i))) acc.v[1] += 1.0;
    const S wi = has_w ? w(i) : S(1);
    if (!compat::isfinite(wi)) acc.v[2] += 1.0;
    if (wi < S(0)) acc.v[3] += 1.0;
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(RH_REDUCE_VOLATILE value_type& dst,
                                   const RH_REDUCE_VOLATILE value_type& src) const {
    for (int k = 0; k < 8; ++k) dst.v[k] += src.v[k];
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

// Coefficient part of the objective, and the final in-order sums, in one team. Writes the Sums8 that the host
// reads back in one copy (with the status of the last dense solve).
template <class Space, class VView, class MView, class DView, class TView, class StatusView, class SumsView>
struct FinishEvaluation {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView cand, cur, tilde, grad;
  MView info;
  DView chunk_loss;
  TView terms;  // q × 6 per-coefficient terms, summed in order below
  StatusView solve_status;
  SumsView sums;
  long long q, chunks, penalized;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
      const double delta_j = static_cast<double>(cand(j)) - static_cast<double>(tilde(j));
      double j_delta = 0.0;
      for (long long k = 0; k < q; ++k)
        j_delta += static_cast<double>(info(j, k)) * (static_cast<double>(cand(k)) - static_cast<double>(tilde(k)));
      const double step = static_cast<double>(cand(j)) - static_cast<double>(cur(j));
      const double mj = j < penalized ? 1.0 : 0.0;
      terms(j, 0) = delta_j * j_delta;
      terms(j, 1) = mj * sign_of(static_cast<double>(tilde(j))) * delta_j;
      terms(j, 2) = step * step;
      terms(j, 3) = static_cast<double>(cand(j)) * static_cast<double>(cand(j));
      terms(j, 4) = static_cast<double>(grad(j)) * step;
      terms(j, 5) = mj * compat::fabs(static_cast<double>(cand(j)));
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Sums8 out;
      for (long long ch = 0; ch < chunks; ++ch) out.v[slot_loss] += chunk_loss(ch);
      for (long long j = 0; j < q; ++j)
        for (int t = 0; t < 6; ++t) out.v[slot_quad + t] += terms(j, t);
      out.v[slot_solve_status] = solve_status();
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
// Edge of the host Gram path's blocks; the design buffer is padded by this many values (see host_block).
constexpr int host_gram_tile = 16;

template <class Traits, class S, class XView, class VView, class PView>
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

  static size_t scratch_bytes(int tile, int stage_rows) {
    if (Traits::host) return 0;
    return scratch_view::shmem_size(2 * stage_rows * tile) + scratch_view::shmem_size(tile * tile);
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
      host_block(chunk, r0, r1, gram, a, b);
    } else {
      team_block(team, chunk, r0, r1, gram, a, b);
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

  KOKKOS_INLINE_FUNCTION void team_block(const member_type& team, long long chunk, long long r0, long long r1,
                                         bool gram, int a, int b) const {
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
        xa(r * tile + j) = (gram ? c(i) : s(i)) * xa_ij;
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
        if (j < q && k < q && j <= k) partial(chunk, j * q + k) = acc(e);
      } else {
        const long long j = a * tile + e;
        if (j < q) partial(chunk, q * q + j) = acc(e);
      }
    });
  }
};

// What ReduceAndAssemble writes from the summed Gram G and data gradient u.
enum class Assemble : int {
  newton = 0,   // H = (G + J)/N + ridge·I and g
  gradient = 1, // g only (proximal solver)
  commit = 2    // J_new = J + G (the renewable information update, §1.7)
};

// Sums the per-chunk partials in chunk order (deterministic), then forms what `mode` asks for. Index e < q·q is
// matrix entry (j, k), read from the upper triangle so the result is exactly symmetric; e = q·q + j is g_j:
//   g = (−u + J(β − β̃))/N − hist·m∘sign(β̃)      (§1.4)
template <class S, class VView, class MView, class PView>
struct ReduceAndAssemble {
  PView partial;
  MView info, out_matrix;
  VView out_grad, cur, tilde;
  long long q, chunks, penalized;
  double inv_n, ridge, hist;
  Assemble mode;
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
    if (e < q * q) {
      const long long j = e / q, k = e % q;
      const long long lo = j < k ? j : k, hi = j < k ? k : j;
      S g = S(0);
      for (long long ch = 0; ch < chunks; ++ch) g += partial(ch, lo * q + hi);
      if (mode == Assemble::newton)
        out_matrix(j, k) = static_cast<S>((static_cast<double>(g) + static_cast<double>(info(j, k))) * inv_n +
                                          (j == k ? ridge : 0.0));
      else if (mode == Assemble::commit)
        out_matrix(j, k) = info(j, k) + g;
      return;
    }
    if (mode == Assemble::commit) return;
    const long long j = e - q * q;
    S u = S(0);
    for (long long ch = 0; ch < chunks; ++ch) u += partial(ch, q * q + j);
    double j_delta = 0.0;
    for (long long k = 0; k < q; ++k)
      j_delta += static_cast<double>(info(j, k)) * (static_cast<double>(cur(k)) - static_cast<double>(tilde(k)));
    const double mj = j < penalized ? 1.0 : 0.0;
    out_grad(j) = static_cast<S>((j_delta - static_cast<double>(u)) * inv_n -
                                 hist * mj * sign_of(static_cast<double>(tilde(j))));
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

// Weighted moments for R²: pass 0 sums w, w·y; pass 1 (given the weighted mean) sums w(y−ȳ)², w(y−ŷ)².
template <class S, class VView>
struct ScoreMoments {
  VView y, w, pred;
  bool has_w;
  int pass;
  double mean;
  using value_type = Sums8;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i, value_type& acc) const {
    const double wi = has_w ? static_cast<double>(w(i)) : 1.0;
    const double yi = static_cast<double>(y(i));
    if (pass == 0) {
      acc.v[0] += wi;
      acc.v[1] += wi * yi;
    } else {
      const double d = yi - mean, r = yi - static_cast<double>(pred(i));
      acc.v[0] += wi * d * d;
      acc.v[1] += wi * r * r;
    }
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(RH_REDUCE_VOLATILE value_type& dst,
                                   const RH_REDUCE_VOLATILE value_type& src) const {
    for (int k = 0; k < 8; ++k) dst.v[k] += src.v[k];
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
