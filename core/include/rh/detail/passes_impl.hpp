// Definitions of the passes of rh/detail/passes.hpp, for every execution space. Included only by the explicit
// instantiations (rh/detail/instantiate.hpp): everything else links against those.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <utility>
#include <vector>

#include "rh/detail/dense_solve.hpp"
#include "rh/detail/engine_base.hpp"  // check_host_pointer
#include "rh/detail/kernels.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

template <class Traits, class S>
void Passes<Traits, S>::ChunkSums::reserve(long long count) {
  if (static_cast<long long>(values.extent(0)) >= count) return;
  values = DoubleVector("rh::chunk_values", count);
  host = Kokkos::create_mirror_view(values);
}

// The per-chunk partial Gram costs chunks·(q²+q) values written and read back each iteration: keep it below a
// quarter of X (n·q values) where that still leaves min_chunks chunks, and never give a chunk fewer rows than one
// staging block. A function of n and q only, so results never depend on the thread count.
template <class Traits, class S>
Chunks Passes<Traits, S>::chunks_for(long long n, long long q) const {
  const long long by_size = (n * q) / (4 * (q * q + q));
  long long count = std::min(Traits::max_chunks, std::max(Traits::min_chunks, by_size));
  count = std::min(count, std::max<long long>(1, n / Traits::stage_rows));
  Chunks c;
  c.rows = (n + count - 1) / count;
  c.count = (n + c.rows - 1) / c.rows;
  return c;
}

template <class Traits, class S>
typename Passes<Traits, S>::Vector Passes<Traits, S>::design_buffer(long long n, long long q) {
  const long long pad = host_gram_tile;  // GramGradient::host_block reads rows 16 wide past q
  Vector buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::design"), n * q + pad);
  Kokkos::deep_copy(Kokkos::subview(buffer, Kokkos::make_pair(n * q, n * q + pad)), S(0));
  return buffer;
}

template <class Traits, class S>
void Passes<Traits, S>::stage(const Batch& b, const Rows& rows, Vector& raw_x) const {
  const long long n = b.x.rows, p = b.x.cols;
  const bool intercept = static_cast<long long>(rows.x.extent(1)) == p + 1;
  const long long ld = b.x.ld > 0 ? b.x.ld : (b.x.layout == Layout::row_major ? p : n);
  const bool row_major = b.x.layout == Layout::row_major;
  const S* sx = static_cast<const S*>(b.x.data);
  const S* sy = static_cast<const S*>(b.y);
  const S* sw = static_cast<const S*>(b.weights);
  if (b.memory == Memory::device) {
    Traits::check_device_pointer(sx, "X", device_id_);
    if (sy) Traits::check_device_pointer(sy, "y", device_id_);
    if (sw) Traits::check_device_pointer(sw, "sample weights", device_id_);
  }
  if (b.memory == Memory::host) {
    check_host_pointer(sx, "X");
    if (sy) check_host_pointer(sy, "y");
    if (sw) check_host_pointer(sw, "sample weights");
  }
  if (b.memory == Memory::host && !Traits::host) {
    // Host arrays for a space with its own memory: one raw copy of X (as laid out by the caller) to the device,
    // y and w straight into their buffers; the layout change and the intercept column happen on the device.
    const long long span = row_major ? (n - 1) * ld + p : (p - 1) * ld + n;  // elements X spans
    if (static_cast<long long>(raw_x.extent(0)) < span)
      raw_x = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::x_as_given"), span);
    using HostArray = Kokkos::View<const S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
    const auto head = [](const Vector& v, long long count) { return Kokkos::subview(v, Kokkos::make_pair(0LL, count)); };
    Kokkos::deep_copy(space_, head(raw_x, span), HostArray(sx, span));
    if (sy) Kokkos::deep_copy(space_, head(rows.y, n), HostArray(sy, n));
    if (sw) Kokkos::deep_copy(space_, head(rows.w, n), HostArray(sw, n));
    sx = raw_x.data();
    sy = sw = nullptr;  // already in place
  }
  Kokkos::parallel_for("rh::stage", Kokkos::RangePolicy<execution_space>(space_, 0, n),
                       FillDesign<S, Design, Vector>{rows.x, rows.y, rows.w, sx, sy, sw, p, ld, row_major, intercept});
}

template <class Traits, class S>
BatchCheck Passes<Traits, S>::validate(const Rows& rows, bool has_y, bool has_w, const Chunks& chunks,
                                       ChunkSums& scratch) const {
  const long long n = rows.x.extent(0), q = rows.x.extent(1);
  BatchCheck out;
  Kokkos::parallel_reduce("rh::check_batch", Kokkos::RangePolicy<execution_space>(space_, 0, n),
                          CheckBatch<S, Design, Vector>{rows.x, rows.y, rows.w, q, has_y, has_w}, out.counts);
  const BatchCounts& k = out.counts;
  if (k.non_finite_x > 0 || k.non_finite_y > 0 || k.non_finite_w > 0 || k.negative_w > 0) return out;
  if (!has_w) {
    out.weight_sum = static_cast<double>(n);
    return out;
  }
  scratch.reserve(chunks.count);
  Kokkos::parallel_for("rh::weight_sums",
                       Kokkos::TeamPolicy<execution_space>(space_, static_cast<int>(chunks.count), Traits::team_size),
                       ChunkWeightSums<execution_space, Vector, DoubleVector>{rows.w, scratch.values, n, chunks.rows});
  Kokkos::deep_copy(space_, scratch.host, scratch.values);
  space_.fence();
  double total = 0.0;
  for (long long ch = 0; ch < chunks.count; ++ch) total += scratch.host(ch);
  out.weight_sum = total;
  return out;
}

template <class Traits, class S>
void Passes<Traits, S>::gram_gradient(const Rows& rows, const Chunks& chunks, bool with_gram, Partial& partial) const {
  gram_pass(rows, chunks, with_gram, true, false, false, partial);
}

template <class Traits, class S>
void Passes<Traits, S>::score_grams(const Rows& rows, const Chunks& chunks, bool has_w, Partial& partial) const {
  gram_pass(rows, chunks, true, false, true, has_w, partial);
}

template <class Traits, class S>
void Passes<Traits, S>::gram_pass(const Rows& rows, const Chunks& chunks, bool with_gram, bool with_gradient,
                                  bool with_score, bool has_w, Partial& partial) const {
  const long long n = rows.x.extent(0), q = rows.x.extent(1);
  // Host spaces use a fixed 16-wide block (vectorized inner loop); device teams shrink the tile for small q.
  using F = GramGradient<Traits, S, Design, Vector, Partial>;
  const int tile = Traits::host ? F::host_tile : static_cast<int>(std::min<long long>(Traits::gram_tile, q));
  const int tiles = static_cast<int>((q + tile - 1) / tile);
  const int pairs = with_gram ? tiles * (tiles + 1) / 2 : 0;
  const int grad_tiles = with_gradient ? tiles : 0;
  // The host's tile-pair jobs accumulate the squared-score Gram with the φ-Gram; other spaces add jobs for it.
  const int score_pairs = with_score && !Traits::host ? pairs : 0;
  // Never shrunk: the commit's wider rows (with the squared-score Gram) then serve every later pass as they are.
  const long long width = with_score ? 2 * q * q + q : q * q + q;
  if (static_cast<long long>(partial.extent(0)) < chunks.count || static_cast<long long>(partial.extent(1)) < width)
    partial = Partial(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::partial_sums"),
                      std::max<long long>(chunks.count, static_cast<long long>(partial.extent(0))),
                      std::max<long long>(width, static_cast<long long>(partial.extent(1))));
  Kokkos::TeamPolicy<execution_space> policy(space_, static_cast<int>(chunks.count) * (pairs + score_pairs + grad_tiles),
                                             Traits::team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes(tile, Traits::stage_rows)));
  Kokkos::parallel_for(with_score ? "rh::score_grams" : "rh::gram_gradient", policy,
                       F{rows.x, rows.s, rows.c, partial, n, q, chunks.rows, tile, tiles, pairs, grad_tiles,
                         Traits::stage_rows, rows.w, has_w, with_score, score_pairs});
}

template <class Traits, class S>
void Passes<Traits, S>::factor_solve(const Matrix& a, const Vector& rhs, const Matrix& lu, const Vector& sol,
                                     const Status& status) const {
  const long long q = a.extent(0);
  Kokkos::parallel_for("rh::lu_solve", Kokkos::TeamPolicy<execution_space>(space_, 1, Traits::lu_team_size(q)),
                       LuSolve<Traits, Matrix, Vector, Status>{a, lu, rhs, sol, status, static_cast<int>(q)});
}

template <class Traits, class S>
void Passes<Traits, S>::min_norm_solve(const Matrix& a, const Vector& rhs, const Vector& sol) const {
  const long long q = a.extent(0);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rhs);
  std::vector<double> m(static_cast<size_t>(q * q)), b(static_cast<size_t>(q));
  for (long long j = 0; j < q; ++j) {
    b[j] = hb(j);
    for (long long k = 0; k < q; ++k) m[static_cast<size_t>(j * q + k)] = ha(j, k);
  }
  const auto x = ::rh::detail::min_norm_solve(std::move(m), b, static_cast<int>(q), std::numeric_limits<S>::epsilon());
  auto hs = Kokkos::create_mirror_view(sol);
  for (long long j = 0; j < q; ++j) hs(j) = static_cast<S>(x[static_cast<size_t>(j)]);
  Kokkos::deep_copy(sol, hs);
}

template <class Traits, class S>
void Passes<Traits, S>::candidate(const Coefficients& coef, const Vector& direction, S step, S threshold,
                                  long long penalized) const {
  Kokkos::parallel_for("rh::candidate", Kokkos::RangePolicy<execution_space>(space_, 0, coef.cand.extent(0)),
                       MakeCandidate<S, Vector>{coef.cand, coef.cur, direction, step, threshold, penalized});
}

template <class Traits, class S>
long long Passes<Traits, S>::commit(const Partial& partial, const Chunks& chunks, const Matrix& info,
                                    const Vector& beta, const Matrix& info_new) const {
  const long long q = info.extent(0);
  Kokkos::parallel_for("rh::commit_information", Kokkos::RangePolicy<execution_space>(space_, 0, q * q),
                       CommitInformation<S, Matrix, Partial>{partial, info, info_new, q, chunks.count});
  long long bad = 0;
  Kokkos::parallel_reduce("rh::count_non_finite", Kokkos::RangePolicy<execution_space>(space_, 0, q * q + q),
                          CountNonFinite<Vector, Matrix>{beta, info_new, q}, bad);
  return bad;
}

template <class Traits, class S>
long long Passes<Traits, S>::commit_score_variance(const Partial& partial, const Chunks& chunks, bool inference,
                                                   const Matrix& score, const Matrix& score_new) const {
  const long long q = score_new.extent(0);
  Kokkos::parallel_for("rh::commit_score_variance", Kokkos::RangePolicy<execution_space>(space_, 0, q * q),
                       CommitScoreVariance<S, Matrix, Partial>{partial, score, score_new, q, chunks.count, inference});
  long long bad = 0;
  Kokkos::parallel_reduce("rh::count_non_finite", Kokkos::RangePolicy<execution_space>(space_, 0, q * q),
                          CountNonFinite<Vector, Matrix>{Vector(), score_new, q}, bad);
  return bad;
}

template <class Traits, class S>
void Passes<Traits, S>::predict(const Design& x, const Vector& beta, const Vector& out) const {
  Kokkos::parallel_for("rh::predict", Kokkos::RangePolicy<execution_space>(space_, 0, x.extent(0)),
                       Predict<S, Design, Vector>{x, beta, out, static_cast<long long>(x.extent(1))});
}

template <class Traits, class S>
double Passes<Traits, S>::r_squared(const Rows& rows, long long n, bool has_w, const Vector& prediction) const {
  ScoreSums first, second;
  Kokkos::parallel_reduce("rh::score_mean", Kokkos::RangePolicy<execution_space>(space_, 0, n),
                          ScoreMoments<S, Vector>{rows.y, rows.w, prediction, has_w, 0, 0.0}, first);
  const double mean = first.weighted_y / first.weight;
  Kokkos::parallel_reduce("rh::score_moments", Kokkos::RangePolicy<execution_space>(space_, 0, n),
                          ScoreMoments<S, Vector>{rows.y, rows.w, prediction, has_w, 1, mean}, second);
  if (second.total == 0.0) return second.residual == 0.0 ? 1.0 : 0.0;
  return 1.0 - second.residual / second.total;
}

template <class Traits, class S, class Penalty>
void PenaltyPasses<Traits, S, Penalty>::Scratch::reserve(long long chunks, long long q) {
  chunk_loss.reserve(chunks);
  if (static_cast<long long>(terms.extent(0)) != q) terms = Terms("rh::coefficient_terms", q);
  if (!sums.data()) {
    sums = SumsView("rh::sums");
    sums_host = Kokkos::create_mirror_view(sums);
  }
}

template <class Traits, class S, class Penalty>
void PenaltyPasses<Traits, S, Penalty>::assemble(bool with_hessian, const Partial& partial, const Chunks& chunks,
                                                 const Coefficients& coef, const BatchScalars& bs,
                                                 const Matrix& hessian) const {
  const long long q = coef.cur.extent(0);
  Kokkos::parallel_for("rh::reduce_assemble",
                       Kokkos::RangePolicy<typename Base::execution_space>(base_.space(), with_hessian ? 0 : q * q, q * q + q),
                       ReduceAndAssemble<S, Penalty, Vector, Matrix, Partial>{
                           partial, coef.info, hessian, coef.grad, coef.cur, coef.tilde, q, chunks.count,
                           bs.penalized, bs.inv_n, bs.ridge, bs.historical});
}

template <class Traits, class S, class Penalty>
EvaluationSums<Penalty> PenaltyPasses<Traits, S, Penalty>::evaluate(const Rows& rows, const Chunks& chunks,
                                                                    const BatchScalars& bs, const Coefficients& coef,
                                                                    const Status& solve_status, Scratch& scratch) const {
  using Space = typename Base::execution_space;
  using DoubleVector = typename Base::DoubleVector;
  const long long n = rows.x.extent(0), q = rows.x.extent(1);
  scratch.reserve(chunks.count, q);
  Kokkos::parallel_for("rh::evaluate_rows",
                       Kokkos::TeamPolicy<Space>(base_.space(), static_cast<int>(chunks.count), Traits::team_size),
                       EvaluateRows<Space, S, typename Base::Design, Vector, DoubleVector>{
                           rows.x, rows.y, rows.w, rows.s, rows.c, coef.cand, scratch.chunk_loss.values, n, q,
                           chunks.rows, static_cast<S>(bs.tau), static_cast<S>(bs.h), bs.has_weights});
  Kokkos::parallel_for("rh::finish_evaluation", Kokkos::TeamPolicy<Space>(base_.space(), 1, Traits::team_size),
                       FinishEvaluation<Space, Penalty, Vector, Matrix, DoubleVector, Terms, Status, SumsView>{
                           coef.cand, coef.cur, coef.tilde, coef.grad, coef.info, scratch.chunk_loss.values,
                           scratch.terms, solve_status, scratch.sums, q, chunks.count, bs.penalized});
  Kokkos::deep_copy(base_.space(), scratch.sums_host, scratch.sums);  // the one readback of an evaluation
  base_.space().fence();
  return scratch.sums_host();
}

}  // namespace rh::detail
