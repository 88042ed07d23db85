// Definitions of the passes of rh/detail/passes.hpp, for every execution space. Included only by the explicit
// instantiations (rh/detail/instantiate.hpp): everything else links against those.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstring>
#include <functional>
#include <fmt/format.h>
#include <limits>
#include <utility>
#include <vector>

#include "rh/detail/dense_solve.hpp"
#include "rh/detail/engine_base.hpp"  // check_host_pointer
#include "rh/detail/kernels.hpp"
#include "rh/detail/staging_pool.hpp"
#include "rh/detail/passes.hpp"
#include "rh/detail/row_chunks.hpp"

namespace rh::detail {

// After a pass over this process's chunks of a batch spread over processes (Chunks::exchange): the other
// processes' chunks of `values` (chunks × per_chunk values; of each, the `length` values from `offset`, all of it by
// default), so that every process combines all of them in chunk order. A space with memory of its own shares them
// through a host copy. Between the exchange's hold() and flush() the values arrive at flush().
template <class Traits, class View>
void share_chunks(const typename Traits::execution_space& space, const View& values, const Chunks& chunks,
                  long long per_chunk, long long offset = 0, long long length = -1) {
  if (!chunks.exchange) return;
  space.fence();
  const std::size_t value = sizeof(typename View::value_type);
  const auto share = [&](void* data, std::function<void()> then) {
    chunks.exchange->share(data, value * static_cast<std::size_t>(per_chunk), value * static_cast<std::size_t>(offset),
                           value * static_cast<std::size_t>(length < 0 ? per_chunk : length), std::move(then));
  };
  if constexpr (Traits::host) {
    share(values.data(), nullptr);
  } else {
    auto h = Kokkos::create_mirror_view(values);
    Kokkos::deep_copy(space, h, values);
    space.fence();
    share(h.data(), [space, values, h] { Kokkos::deep_copy(space, values, h); });
  }
}
// The shares of `pass` (and of `alongside`, run after it, when given) in one exchange of a spread batch.
template <class Pass, class Alongside>
void in_one_exchange(const Chunks& chunks, bool fuse, Pass&& pass, const Alongside& alongside) {
  const bool held = chunks.exchange && fuse;
  if (held) chunks.exchange->hold();
  pass();
  if (alongside) alongside();
  if (held) chunks.exchange->flush();
}
// Of a chunk's partial row (q² + q values: the Gram, then the gradient), the gradient: all a pass without the Gram
// changes.
inline long long gradient_offset(long long q) { return q * q; }

// rh/detail/row_chunks.hpp: a function of n and q only, so results never depend on the thread count.
template <class Traits, class S>
Chunks Passes<Traits, S>::chunks_for(long long n, long long q) const {
  const ChunkShape shape = row_chunks<Traits>(n, q);
  Chunks c;
  c.rows = shape.rows;
  c.count = shape.count;
  return c;
}

template <class Traits, class S>
typename Passes<Traits, S>::Vector Passes<Traits, S>::design_buffer(long long n, long long q) const {
  const long long pad = host_gram_tile;  // GramGradient::host_block reads rows 16 wide past q
  Vector buffer(uninitialized("rh::design"), n * q + pad);
  Kokkos::deep_copy(space_, Kokkos::subview(buffer, Kokkos::make_pair(n * q, n * q + pad)), S(0));
  return buffer;
}

template <class Traits, class S>
BatchCounts Passes<Traits, S>::stage(const Batch& b, const Rows& rows, HostInput& input) const {
  const long long n = b.x.rows, p = b.x.cols;
  const bool intercept = static_cast<long long>(rows.x.extent(1)) == p + 1;
  const long long ld = b.x.ld > 0 ? b.x.ld : (b.x.layout == Layout::row_major ? p : n);
  const bool row_major = b.x.layout == Layout::row_major;
  const S* sx = static_cast<const S*>(b.x.data);
  const S* sy = static_cast<const S*>(b.y);
  const S* sw = static_cast<const S*>(b.weights);
  const bool has_y = sy != nullptr, has_w = sw != nullptr;
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
    // Host arrays for a space with its own memory: X as laid out by the caller to the device, y and w straight
    // into their buffers, all through the process's pinned staging slots, a chunk at a time so that the host copy
    // of one chunk overlaps the transfers of the ones before; the layout change and the intercept column happen
    // on the device.
    const long long span = row_major ? (n - 1) * ld + p : (p - 1) * ld + n;  // elements X spans
    if (static_cast<long long>(input.device.extent(0)) < span)
      input.device = Vector(uninitialized("rh::x_as_given"), span);
    using Pool = StagingPool<typename Traits::staging_space>;
    const long long chunk = std::max<long long>(1, Traits::staging_chunk_bytes / static_cast<long long>(sizeof(S)));
    Pool::use(static_cast<std::size_t>(chunk) * sizeof(S), [&](char* base) {
      PooledSends<typename Traits::staging_space, execution_space> through_staging{
          space_, base, chunk * static_cast<long long>(sizeof(S))};
      try {
        through_staging(sx, span, input.device);
        if (sy) through_staging(sy, n, rows.y);
        if (sw) through_staging(sw, n, rows.w);
      } catch (...) {
        space_.fence();  // no transfer may still read the pool when it passes to another staging
        throw;
      }
      space_.fence();
    });
    sx = input.device.data();
    sy = sw = nullptr;  // already in place
  }
  BatchCounts counts;
  Kokkos::parallel_reduce("rh::stage", Kokkos::RangePolicy<execution_space>(space_, 0, n),
                          StageRows<S, Design, Vector>{rows.x, rows.y, rows.w, sx, sy, sw, p, ld, row_major, intercept,
                                                       has_y, has_w},
                          counts);
  return counts;
}

template <class Traits, class S>
BatchCheck Passes<Traits, S>::validate(const BatchCounts& counts, const Rows& rows, bool has_w, const Chunks& chunks,
                                       ChunkSums& scratch) const {
  const long long n = rows.x.extent(0);
  BatchCheck out;
  out.counts = counts;
  if (chunks.exchange) chunks.exchange->sum(&out.counts.non_finite_x, 4);  // every process's bad values
  if (any_invalid(out.counts)) return out;
  if (!has_w) {
    out.weight_sum = static_cast<double>(chunks.exchange ? chunks.exchange->total_rows() : n);
    return out;
  }
  scratch.reserve(*this, chunks.count);
  const Chunks mine = chunks.mine();
  Kokkos::parallel_for("rh::weight_sums",
                       Kokkos::TeamPolicy<execution_space>(space_, static_cast<int>(mine.count), Traits::team_size),
                       ChunkWeightSums<execution_space, Vector, DoubleVector>{rows.w, chunks.window(scratch.values, 1),
                                                                              n, chunks.rows});
  share_chunks<Traits>(space_, scratch.values, chunks, 1);
  Kokkos::deep_copy(space_, scratch.host, scratch.values);
  space_.fence();
  double total = 0.0;
  for (long long ch = 0; ch < chunks.count; ++ch) total += scratch.host(ch);
  out.weight_sum = total;
  return out;
}

template <class Traits, class S>
void Passes<Traits, S>::reserve_partial(Partial& partial, const Chunks& chunks, long long q) const {
  if (static_cast<long long>(partial.extent(0)) < chunks.count || static_cast<long long>(partial.extent(1)) != q * q + q)
    partial = Partial(uninitialized("rh::partial_sums"),
                      std::max<long long>(chunks.count, static_cast<long long>(partial.extent(0))), q * q + q);
}

template <class Traits, class S>
void Passes<Traits, S>::gram_gradient(const Rows& rows, const Chunks& chunks, bool with_gram, Partial& partial,
                                      bool with_gradient, const GramRows* changes) const {
  const long long n = rows.x.extent(0), q = rows.x.extent(1);
  const bool delta = changes != nullptr && with_gram;
  const auto launch = [&](auto functor_tag, int tile) {
    using F = typename decltype(functor_tag)::type;
    const int tiles = static_cast<int>((q + tile - 1) / tile);
    const int pairs = with_gram ? tiles * (tiles + 1) / 2 : 0;
    const int grad_tiles = with_gradient ? tiles : 0;
    if (pairs + grad_tiles == 0) return;
    reserve_partial(partial, chunks, q);
    Kokkos::TeamPolicy<execution_space> policy(space_, static_cast<int>(chunks.mine().count) * (pairs + grad_tiles),
                                               Traits::team_size);
    policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes(tile, Traits::stage_rows)));
    Kokkos::parallel_for(delta ? "rh::gram_delta" : "rh::gram_gradient", policy,
                         F{rows.x, rows.s, rows.c, chunks.window(partial, q * q + q), n, q, chunks.rows, tile, tiles,
                           pairs, grad_tiles, Traits::stage_rows, delta, rows.changed,
                           delta ? changes->count : ChunkInts(), rows.dc});
    if (with_gram) share_chunks<Traits>(space_, partial, chunks, q * q + q);
    else share_chunks<Traits>(space_, partial, chunks, q * q + q, gradient_offset(q), q);
  };
  // Host spaces use a fixed 16-wide block (vectorized inner loop); device teams shrink the tile for small q, and
  // for wide q (from two wide tiles on) take the register-tiled path.
  using Narrow = GramGradient<Traits, S, Design, Vector, Partial, Index, ChunkInts>;
  constexpr int wide = Traits::gram_wide_tile;
  if constexpr (wide > 0) {
    if (q >= 2 * wide) {
      launch(Tag<GramGradient<Traits, S, Design, Vector, Partial, Index, ChunkInts, wide / 16>>{}, wide);
      return;
    }
  }
  launch(Tag<Narrow>{}, Traits::host ? Narrow::host_tile : static_cast<int>(std::min<long long>(Traits::gram_tile, q)));
}

template <class Traits, class S>
LineSearch Passes<Traits, S>::line_search(const Rows& rows, const Chunks& chunks, const BatchScalars& bs,
                                          const Coefficients& coef, const Status& solve_status,
                                          LineSearchScratch& scratch, const std::function<void()>& alongside) const {
  const long long n = rows.x.extent(0), q = rows.x.extent(1);
  scratch.reserve(*this, chunks.count, q);
  using SumsView = Kokkos::View<LineSearchSums*, memory_space>;
  Kokkos::parallel_for("rh::line_search_rows",
                       Kokkos::TeamPolicy<execution_space>(space_, static_cast<int>(chunks.mine().count),
                                                           Traits::team_size),
                       LineSearchRows<Traits, S, Design, Vector, SumsView>{
                           rows.x, rows.y, rows.w, rows.r, rows.u, coef.cur, coef.dir,
                           chunks.window(scratch.chunk_sums, 1), n, q, chunks.rows, bs.tau, bs.has_weights});
  in_one_exchange(chunks, static_cast<bool>(alongside),
                  [&] { share_chunks<Traits>(space_, scratch.chunk_sums, chunks, 1); }, alongside);
  using Finish = FinishLineSearch<execution_space, S, Vector, Matrix, SumsView, DoubleVector, Status,
                                  Kokkos::View<LineSearch, memory_space>>;
  Kokkos::TeamPolicy<execution_space> finish(space_, 1, Traits::team_size);
  if (Finish::scratch_bytes() > 0) finish.set_scratch_size(0, Kokkos::PerTeam(Finish::scratch_bytes()));
  Kokkos::parallel_for("rh::line_search_finish", finish,
                       Finish{
                           coef.cur, coef.dir, coef.tilde, coef.cand, coef.info, scratch.chunk_sums, scratch.terms,
                           solve_status, scratch.result, q, chunks.count, bs.inv_n,
                           static_cast<double>(std::numeric_limits<S>::epsilon()), coef.info_symmetric});
  Kokkos::deep_copy(space_, scratch.result_host, scratch.result);  // the one readback of a Newton iteration
  space_.fence();
  return scratch.result_host();
}

template <class Traits, class S>
void Passes<Traits, S>::accept_step(const Rows& rows, const Chunks& chunks, const BatchScalars& bs,
                                    const LineSearch& step, GramRows& changes) const {
  const long long n = rows.x.extent(0);
  Kokkos::parallel_for("rh::accept_step",  // row-side only: nothing to share
                       Kokkos::TeamPolicy<execution_space>(space_, static_cast<int>(chunks.mine().count),
                                                           Traits::team_size),
                       AcceptStep<execution_space, S, Vector, Index, ChunkInts>{
                           rows.r, rows.u, rows.w, rows.s, rows.c, rows.dc, rows.changed, changes.count, changes.age,
                           n, chunks.rows, static_cast<S>(step.t()), static_cast<S>(bs.tau), static_cast<S>(bs.h),
                           bs.has_weights});
}

template <class Traits, class S>
void Passes<Traits, S>::factor_solve(const Matrix& a, const Vector& rhs, const Matrix& factor, const Vector& sol,
                                     const Status& report, bool positive_definite) const {
  const long long q = a.extent(0);
  if (positive_definite) {  // its last launch runs the LU where the Cholesky gives way
    cholesky_solve<Traits>(space_, a, rhs, factor, sol, report, Traits::cholesky_panel(q));
    return;
  }
  Kokkos::parallel_for("rh::lu_solve", Kokkos::TeamPolicy<execution_space>(space_, 1, Traits::lu_team_size(q)),
                       LuSolve<Traits, Matrix, Vector, Status>{a, factor, rhs, sol, report, static_cast<int>(q),
                                                               false});
}

template <class Traits, class S>
void Passes<Traits, S>::min_norm_solve(const Matrix& a, const Vector& rhs, const Vector& sol) const {
  const long long q = a.extent(0);
  const auto ha = to_host(a);
  const auto hb = to_host(rhs);
  std::vector<double> m(static_cast<size_t>(q * q)), b(static_cast<size_t>(q));
  for (long long j = 0; j < q; ++j) {
    b[j] = hb(j);
    for (long long k = 0; k < q; ++k) m[static_cast<size_t>(j * q + k)] = ha(j, k);
  }
  const auto x = ::rh::detail::min_norm_solve(std::move(m), b, static_cast<int>(q), std::numeric_limits<S>::epsilon());
  auto hs = Kokkos::create_mirror_view(sol);
  for (long long j = 0; j < q; ++j) hs(j) = static_cast<S>(x[static_cast<size_t>(j)]);
  Kokkos::deep_copy(space_, sol, hs);
  space_.fence();
}

template <class Traits, class S>
void Passes<Traits, S>::candidate(const Coefficients& coef, const Vector& direction, S step, S threshold,
                                  long long penalized) const {
  Kokkos::parallel_for("rh::candidate", Kokkos::RangePolicy<execution_space>(space_, 0, coef.cand.extent(0)),
                       MakeCandidate<S, Vector>{coef.cand, coef.cur, direction, step, threshold, penalized});
}

template <class Traits, class S>
bool Passes<Traits, S>::exactly_symmetric(const Matrix& a) const {
  const long long q = a.extent(0);
  long long asymmetric = 0;
  const CountAsymmetric<Matrix> count{a, q, Traits::host};
  Kokkos::parallel_reduce("rh::check_symmetry", Kokkos::RangePolicy<execution_space>(space_, 0, count.items()), count,
                          asymmetric);
  return asymmetric == 0;
}

template <class Traits, class S>
long long Passes<Traits, S>::commit(const Partial& partial, const Chunks& chunks, const Matrix& info,
                                    const Vector& beta, const Matrix& info_new) const {
  const long long q = info.extent(0);
  const bool by_rows = Traits::host;
  Kokkos::parallel_for("rh::commit_information",
                       Kokkos::RangePolicy<execution_space>(space_, 0, by_rows ? paired_rows(q) : q * q),
                       CommitInformation<S, Matrix, Partial>{partial, info, info_new, q, chunks.count, by_rows});
  long long bad = 0;
  const CountNonFinite<Vector, Matrix> count{beta, info_new, q, by_rows};
  Kokkos::parallel_reduce("rh::count_non_finite", Kokkos::RangePolicy<execution_space>(space_, 0, count.entries() + q),
                          count, bad);
  return bad;
}

template <class Traits, class S>
void Passes<Traits, S>::score_gram(const Rows& rows, const Chunks& chunks, bool has_w, const Vector& k,
                                   Partial& partial) const {
  Kokkos::parallel_for("rh::squared_scores", Kokkos::RangePolicy<execution_space>(space_, 0, rows.x.extent(0)),
                       SquaredScores<S, Vector>{rows.s, rows.w, k, has_w});
  Rows scored = rows;
  scored.c = k;  // gram_gradient's weights c_i become k_i
  gram_gradient(scored, chunks, true, partial, false, nullptr);
}

template <class Traits, class S>
long long Passes<Traits, S>::commit_score_variance(const Partial& partial, const Chunks& chunks, bool inference,
                                                   const Matrix& score, const Matrix& score_new) const {
  const long long q = score_new.extent(0);
  const bool by_rows = Traits::host;
  Kokkos::parallel_for("rh::commit_score_variance",
                       Kokkos::RangePolicy<execution_space>(space_, 0, by_rows ? paired_rows(q) : q * q),
                       CommitScoreVariance<S, Matrix, Partial>{partial, score, score_new, q, chunks.count, inference,
                                                               by_rows});
  long long bad = 0;
  const CountNonFinite<Vector, Matrix> count{Vector(), score_new, q, by_rows};
  Kokkos::parallel_reduce("rh::count_non_finite", Kokkos::RangePolicy<execution_space>(space_, 0, count.entries()),
                          count, bad);
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
void PenaltyPasses<Traits, S, Penalty>::assemble(bool with_hessian, const Partial& partial, const Chunks& chunks,
                                                 const Coefficients& coef, const BatchScalars& bs,
                                                 const Matrix& hessian, const Scratch* last) const {
  const long long q = coef.cur.extent(0);
  DoubleVector known;  // J(β − β̃) of the last evaluation, when it was at this β
  if constexpr (Traits::host) {
    if (last && last->j_delta_valid && static_cast<long long>(last->delta.extent(0)) == q) {
      bool same = true;  // the bits of δ, so that the product summed from it is this one
      for (long long k = 0; k < q && same; ++k) {
        const double now = static_cast<double>(coef.cur(k)) - static_cast<double>(coef.tilde(k));
        same = std::memcmp(&now, &last->delta(k), sizeof now) == 0;
      }
      if (same) known = last->j_delta;
    }
  }
  using Kernel = ReduceAndAssemble<S, Penalty, Vector, Matrix, Partial, DoubleVector>;
  const bool by_rows = Traits::host;
  const long long items = Kernel::hessian_items(q, by_rows);
  Kokkos::parallel_for("rh::reduce_assemble",
                       Kokkos::RangePolicy<typename Base::execution_space>(base_.space(), 0, with_hessian ? q + items : q),
                       Kernel{partial, coef.info, hessian, coef.grad, coef.cur, coef.tilde, known, q, chunks.count,
                              bs.penalized, bs.inv_n, bs.ridge, bs.historical, by_rows, coef.info_symmetric});
}

template <class Traits, class S, class Penalty>
EvaluationSums<Penalty> PenaltyPasses<Traits, S, Penalty>::evaluate(const Rows& rows, const Chunks& chunks,
                                                                    const BatchScalars& bs, const Coefficients& coef,
                                                                    const Status& solve_status, Scratch& scratch,
                                                                    Partial* gradient, bool row_weights,
                                                                    const std::function<void()>& alongside) const {
  const long long q = rows.x.extent(1);
  scratch.reserve(base_, chunks.count, q);
  if (gradient) base_.reserve_partial(*gradient, chunks, q);
  row_pass(rows, chunks, bs, coef, scratch.chunk_loss.values, gradient, row_weights);
  in_one_exchange(chunks, gradient || alongside,
                  [&] {
                    share_chunks<Traits>(base_.space(), scratch.chunk_loss.values, chunks, 1);
                    if (gradient)
                      share_chunks<Traits>(base_.space(), *gradient, chunks, q * q + q, gradient_offset(q), q);
                  },
                  alongside);
  return finish(chunks, bs, coef, solve_status, scratch, scratch.chunk_loss.values);
}

template <class Traits, class S, class Penalty>
void PenaltyPasses<Traits, S, Penalty>::losses(const Rows& rows, const Chunks& chunks, const BatchScalars& bs,
                                               const Coefficients& coef, const DoubleVector& chunk_loss) const {
  row_pass(rows, chunks, bs, coef, chunk_loss, nullptr, false);
  share_chunks<Traits>(base_.space(), chunk_loss, chunks, 1);
}

template <class Traits, class S, class Penalty>
void PenaltyPasses<Traits, S, Penalty>::row_pass(const Rows& rows, const Chunks& chunks, const BatchScalars& bs,
                                                 const Coefficients& coef, const DoubleVector& chunk_loss,
                                                 Partial* gradient, bool row_weights) const {
  using Space = typename Base::execution_space;
  const long long n = rows.x.extent(0), q = rows.x.extent(1);
  Kokkos::parallel_for("rh::evaluate_rows",
                       Kokkos::TeamPolicy<Space>(base_.space(), static_cast<int>(chunks.mine().count),
                                                 Traits::team_size),
                       EvaluateRows<Traits, S, typename Base::Design, Vector, DoubleVector, Partial>{
                           rows.x, rows.y, rows.w, rows.s, rows.c, coef.cand, chunks.window(chunk_loss, 1),
                           gradient ? chunks.window(*gradient, q * q + q) : Partial(), n, q, chunks.rows,
                           static_cast<S>(bs.tau), static_cast<S>(bs.h), bs.has_weights, gradient != nullptr,
                           row_weights});
}

template <class Traits, class S, class Penalty>
EvaluationSums<Penalty> PenaltyPasses<Traits, S, Penalty>::finish(const Chunks& chunks, const BatchScalars& bs,
                                                                  const Coefficients& coef, const Status& solve_status,
                                                                  Scratch& scratch,
                                                                  const DoubleVector& chunk_loss) const {
  using Space = typename Base::execution_space;
  const long long q = coef.cand.extent(0);
  scratch.reserve(base_, chunks.count, q);
  Kokkos::parallel_for("rh::finish_evaluation", Kokkos::TeamPolicy<Space>(base_.space(), 1, Traits::team_size),
                       FinishEvaluation<Space, Penalty, Vector, Matrix, DoubleVector, Terms, Status, SumsView>{
                           coef.cand, coef.cur, coef.tilde, coef.grad, coef.info, chunk_loss, scratch.delta,
                           scratch.j_delta, scratch.terms, solve_status, scratch.sums, q, chunks.count, bs.penalized,
                           coef.info_symmetric});
  scratch.j_delta_valid = true;
  Kokkos::deep_copy(base_.space(), scratch.sums_host, scratch.sums);  // the one readback of an evaluation
  base_.space().fence();
  return scratch.sums_host();
}

}  // namespace rh::detail
