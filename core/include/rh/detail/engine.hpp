// The renewable Huber solver, written once against Kokkos and instantiated per execution space and scalar in
// backends/. Implements seed-system §1: the batch objective (§1.4), damped Newton for penalty none (§1.5), the
// LAMM proximal solver for L1 (§1.6), the state commit (§1.7) and the dense-solve fallbacks (§1.8).
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <utility>
#include <vector>

#include "rh/detail/dense_solve.hpp"
#include "rh/detail/engine_base.hpp"
#include "rh/detail/kernels.hpp"
#include "rh/error.hpp"
#include "rh/method.hpp"

namespace rh::detail {

template <class Traits, class S>
class Engine final : public EngineBase {
  using Space = typename Traits::execution_space;
  using memory_space = typename Space::memory_space;
  using Vector = Kokkos::View<S*, memory_space>;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, memory_space>;      // q×q
  using Design = Kokkos::View<S**, typename Space::array_layout, memory_space, Kokkos::MemoryUnmanaged>;
  using Partial = Kokkos::View<S**, Kokkos::LayoutRight, memory_space>;
  using Status = Kokkos::View<int, memory_space>;
  using SumsView = Kokkos::View<Sums8, memory_space>;
  using DoubleVector = Kokkos::View<double*, memory_space>;
  using DoubleMatrix = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  using tuning = Traits;
  static constexpr bool host_accessible = Traits::host;
  static constexpr long long kDesignPad = host_gram_tile;

 public:
  Engine(Space space, int device_id) : space_(std::move(space)), device_id_(device_id) {}

  Diagnostics update(const Batch& batch, const Config& config, bool from_empty) override {
    const long long p = batch.x.cols;
    const long long q = p + (config.fit_intercept ? 1 : 0);
    const long long n = batch.x.rows;
    // Where the solve starts: the committed state, or the empty one (first batch, or fit()).
    const bool empty = from_empty || committed_.n_samples_seen == 0;
    prepare_work(q, config.fit_intercept);
    stage_batch(batch, p, n);
    const double batch_weight = check_batch_values(batch, n);
    has_weights_ = batch.weights != nullptr;

    const double prev_weight = empty ? 0.0 : committed_.weight_sum;
    const double cumulative = prev_weight + batch_weight;
    const bool l1 = config.penalty == Penalty::l1;
    BatchScalars bs;
    bs.n = n;
    bs.inv_n = 1.0 / cumulative;
    bs.h = bandwidth_for(config.bandwidth_scale, cumulative, p, config.tau);
    bs.lambda = lambda_for(l1, config.lambda_scale, config.tau, cumulative, p);
    // Historical L1 subgradient term of §1.4, present only after the first batch.
    bs.hist = (l1 && !empty) ? (prev_weight / cumulative) * committed_.previous_lambda : 0.0;
    ridge_ = config.ridge;
    if (empty) {
      Kokkos::deep_copy(space_, tilde_, S(0));
      Kokkos::deep_copy(space_, info_start_, S(0));
    } else {
      Kokkos::deep_copy(space_, tilde_, committed_.beta);
      Kokkos::deep_copy(space_, info_start_, committed_.info);
    }

    Diagnostics d = l1 ? solve_l1(config, bs) : solve_newton(config, bs);
    d.lambda_value = bs.lambda;
    d.bandwidth = bs.h;

    // J_new = J + Σ w φ_h(r(β_b)) x xᵀ, with the curvature weights of the final β left by the last evaluation.
    gram_gradient(true);
    reduce_assemble(Assemble::commit, bs, info_new_);
    long long bad = 0;
    Kokkos::parallel_reduce("rh::count_non_finite", Kokkos::RangePolicy<Space>(space_, 0, q_ * q_ + q_),
                            CountNonFinite<Vector, Matrix>{cur_, info_new_, q_}, bad);
    if (bad > 0)
      throw Error(Errc::numerical_error,
                  fmt::format("the update produced {} non-finite coefficient or information values; the model "
                              "was left unchanged",
                              bad));
    // Commit: the solved state is swapped in only now that nothing can fail.
    std::swap(committed_.beta, cur_);
    std::swap(committed_.info, info_new_);
    if (static_cast<long long>(cur_.extent(0)) != q_) {  // fit() changed q: the old views are not work views
      cur_ = Vector("rh::beta_work", q_);
      info_new_ = Matrix("rh::information_new", q_, q_);
    }
    committed_.q = q_;
    committed_.p = p;
    committed_.intercept = config.fit_intercept;
    committed_.n_samples_seen = (empty ? 0 : committed_.n_samples_seen) + n;
    committed_.batch_count = (empty ? 0 : committed_.batch_count) + 1;
    committed_.previous_lambda = bs.lambda;
    committed_.weight_sum = cumulative;
    return d;
  }

  void predict(const MatrixRef& x, Memory memory, void* out) override {
    const long long n = x.rows;
    Batch b;
    b.x = x;
    b.memory = memory;
    prepare_work(committed_.q, committed_.intercept);
    stage_batch(b, committed_.p, n);
    check_batch_values(b, n);
    Kokkos::parallel_for("rh::predict", Kokkos::RangePolicy<Space>(space_, 0, n),
                         Predict<S, Design, Vector>{design_, committed_.beta, s_, q_});
    auto pred = Kokkos::subview(s_, Kokkos::make_pair(0LL, n));
    if (memory == Memory::host) {
      check_host_pointer(out, "the prediction output");
      Kokkos::View<S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> dst(static_cast<S*>(out), n);
      Kokkos::deep_copy(space_, dst, pred);
    } else {
      check_device_pointer(out, "the prediction output");
      Kokkos::View<S*, memory_space, Kokkos::MemoryUnmanaged> dst(static_cast<S*>(out), n);
      Kokkos::deep_copy(space_, dst, pred);
    }
    space_.fence();
  }

  double score(const Batch& batch) override {
    const long long n = batch.x.rows;
    prepare_work(committed_.q, committed_.intercept);
    stage_batch(batch, committed_.p, n);
    check_batch_values(batch, n);
    Kokkos::parallel_for("rh::predict", Kokkos::RangePolicy<Space>(space_, 0, n),
                         Predict<S, Design, Vector>{design_, committed_.beta, s_, q_});
    const bool has_w = batch.weights != nullptr;
    Sums8 first, second;
    Kokkos::parallel_reduce("rh::score_mean", Kokkos::RangePolicy<Space>(space_, 0, n),
                            ScoreMoments<S, Vector>{y_, w_, s_, has_w, 0, 0.0}, first);
    const double mean = first.v[1] / first.v[0];
    Kokkos::parallel_reduce("rh::score_moments", Kokkos::RangePolicy<Space>(space_, 0, n),
                            ScoreMoments<S, Vector>{y_, w_, s_, has_w, 1, mean}, second);
    const double ss_tot = second.v[0], ss_res = second.v[1];
    if (ss_tot == 0.0) return ss_res == 0.0 ? 1.0 : 0.0;
    return 1.0 - ss_res / ss_tot;
  }

  State export_state() const override {
    const Committed& c = committed_;
    State st;
    st.n_features = c.p;
    st.fit_intercept = c.intercept;
    st.n_samples_seen = c.n_samples_seen;
    st.batch_count = c.batch_count;
    st.previous_lambda = c.previous_lambda;
    st.weight_sum = c.weight_sum;
    if (c.q == 0) return st;
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.beta);
    auto hj = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.info);
    st.coefficients.assign(hb.data(), hb.data() + c.q);
    st.information.resize(static_cast<size_t>(c.q * c.q));
    for (long long j = 0; j < c.q; ++j)
      for (long long k = 0; k < c.q; ++k) st.information[static_cast<size_t>(j * c.q + k)] = hj(j, k);
    return st;
  }

  void import_state(const State& st) override {
    Committed c;
    c.q = st.n_features > 0 ? st.n_features + (st.fit_intercept ? 1 : 0) : 0;  // an empty state has no q
    c.p = st.n_features;
    c.intercept = st.fit_intercept;
    c.n_samples_seen = st.n_samples_seen;
    c.batch_count = st.batch_count;
    c.previous_lambda = st.previous_lambda;
    c.weight_sum = st.weight_sum;
    // Build the new views first, then swap them in: a failed allocation leaves the old state.
    c.beta = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::beta"), c.q);
    c.info = Matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::information"), c.q, c.q);
    auto hb = Kokkos::create_mirror_view(c.beta);
    auto hj = Kokkos::create_mirror_view(c.info);
    for (long long j = 0; j < c.q; ++j) {
      hb(j) = static_cast<S>(st.coefficients[static_cast<size_t>(j)]);
      for (long long k = 0; k < c.q; ++k) hj(j, k) = static_cast<S>(st.information[static_cast<size_t>(j * c.q + k)]);
    }
    Kokkos::deep_copy(c.beta, hb);
    Kokkos::deep_copy(c.info, hj);
    committed_ = c;
  }

  void reset() override { committed_ = Committed(); }

 private:
  struct BatchScalars {
    long long n = 0;
    double inv_n = 0, h = 0, lambda = 0, hist = 0;
  };
  struct Evaluation {  // F_b at a candidate and the terms the solvers test
    double objective, step_norm, cand_norm, gstep, l1;
    int solve_status;
  };

  // Sizes every q-sized work view for q coefficients (allocating only when q changes).
  void prepare_work(long long q, bool intercept) {
    intercept_ = intercept;
    if (q == q_) return;
    cur_ = Vector("rh::beta_work", q);
    cand_ = Vector("rh::candidate", q);
    tilde_ = Vector("rh::beta_previous", q);
    dir_ = Vector("rh::direction", q);
    grad_ = Vector("rh::gradient", q);
    info_start_ = Matrix("rh::information_previous", q, q);
    info_new_ = Matrix("rh::information_new", q, q);
    hessian_ = Matrix("rh::hessian", q, q);
    lu_ = Matrix("rh::lu", q, q);
    partial_ = Partial();
    design_buffer_ = Vector();  // its row capacity was counted in units of the old q
    terms_ = DoubleMatrix("rh::coefficient_terms", q, 6);
    if (!solve_status_.data()) {
      solve_status_ = Status("rh::solve_status");
      sums_ = SumsView("rh::sums");
      sums_host_ = Kokkos::create_mirror_view(sums_);
    }
    q_ = q;
  }

  // Grows the row workspace to n rows (it never shrinks, so a steady stream allocates nothing).
  void reserve_rows(long long n) {
    if (n * q_ + kDesignPad > static_cast<long long>(design_buffer_.extent(0)) || n > static_cast<long long>(y_.extent(0))) {
      const long long rows = std::max<long long>(n, static_cast<long long>(y_.extent(0)));
      // Padded by one Gram tile: the host Gram path reads rows 16 wide past q (GramGradient::host_block).
      design_buffer_ = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::design"), rows * q_ + kDesignPad);
      Kokkos::deep_copy(Kokkos::subview(design_buffer_, Kokkos::make_pair(rows * q_, rows * q_ + kDesignPad)), S(0));
      y_ = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::y"), rows);
      w_ = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::weights"), rows);
      s_ = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::score_weights"), rows);
      c_ = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::curvature_weights"), rows);
    }
    design_ = Design(design_buffer_.data(), n, q_);
  }

  void check_device_pointer(const void* ptr, const char* what) const {
    Traits::check_device_pointer(ptr, what, device_id_);
  }

  // Copies the caller's X (any layout and leading dimension), y and w into the design workspace, appending the
  // intercept column.
  void stage_batch(const Batch& b, long long p, long long n) {
    reserve_rows(n);
    rows_per_chunk_ = chunk_rows(n);
    chunks_ = (n + rows_per_chunk_ - 1) / rows_per_chunk_;
    if (static_cast<long long>(chunk_values_.extent(0)) < chunks_) {
      chunk_values_ = DoubleVector("rh::chunk_values", chunks_);
      chunk_values_host_ = Kokkos::create_mirror_view(chunk_values_);
    }
    const long long ld = b.x.ld > 0 ? b.x.ld : (b.x.layout == Layout::row_major ? p : n);
    const bool row_major = b.x.layout == Layout::row_major;
    const S* sx = static_cast<const S*>(b.x.data);
    const S* sy = static_cast<const S*>(b.y);
    const S* sw = static_cast<const S*>(b.weights);
    if (b.memory == Memory::device) {
      check_device_pointer(sx, "X");
      if (sy) check_device_pointer(sy, "y");
      if (sw) check_device_pointer(sw, "sample weights");
    }
    if (b.memory == Memory::host) {
      check_host_pointer(sx, "X");
      if (sy) check_host_pointer(sy, "y");
      if (sw) check_host_pointer(sw, "sample weights");
    }
    if (b.memory == Memory::host && !host_accessible) {
      // Host arrays for a space with its own memory: one raw copy of X (as laid out by the caller) to the device,
      // y and w straight into their buffers; the layout change and the intercept column happen on the device.
      const long long span = row_major ? (n - 1) * ld + p : (p - 1) * ld + n;  // elements X spans
      if (static_cast<long long>(raw_x_.extent(0)) < span)
        raw_x_ = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::x_as_given"), span);
      using HostArray = Kokkos::View<const S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
      const auto head = [](auto& v, long long count) { return Kokkos::subview(v, Kokkos::make_pair(0LL, count)); };
      Kokkos::deep_copy(space_, head(raw_x_, span), HostArray(sx, span));
      if (sy) Kokkos::deep_copy(space_, head(y_, n), HostArray(sy, n));
      if (sw) Kokkos::deep_copy(space_, head(w_, n), HostArray(sw, n));
      sx = raw_x_.data();
      sy = sw = nullptr;  // already in place
    }
    Kokkos::parallel_for("rh::stage", Kokkos::RangePolicy<Space>(space_, 0, n),
                         FillDesign<S, Design, Vector>{design_, y_, w_, sx, sy, sw, p, ld, row_major, intercept_});
  }

  // Rejects non-finite values, negative weights and an all-zero weight batch; returns W_b.
  double check_batch_values(const Batch& b, long long n) {
    Sums8 r;
    Kokkos::parallel_reduce("rh::check_batch", Kokkos::RangePolicy<Space>(space_, 0, n),
                            CheckBatch<S, Design, Vector>{design_, y_, w_, q_, b.y != nullptr, b.weights != nullptr}, r);
    if (r.v[0] > 0) throw Error(Errc::invalid_argument, "X must not contain NaN or infinite values");
    if (r.v[1] > 0) throw Error(Errc::invalid_argument, "y must not contain NaN or infinite values");
    if (r.v[2] > 0) throw Error(Errc::invalid_argument, "sample weights must not contain NaN or infinite values");
    if (r.v[3] > 0) throw Error(Errc::invalid_argument, "sample weights must be non-negative");
    if (!b.weights) return static_cast<double>(n);
    Kokkos::parallel_for("rh::weight_sums", Kokkos::TeamPolicy<Space>(space_, static_cast<int>(chunks_), tuning::team_size),
                         ChunkWeightSums<Space, Vector, DoubleVector>{w_, chunk_values_, n, rows_per_chunk_});
    Kokkos::deep_copy(space_, chunk_values_host_, chunk_values_);
    space_.fence();
    double total = 0.0;
    for (long long ch = 0; ch < chunks_; ++ch) total += chunk_values_host_(ch);
    if (!(total > 0)) throw Error(Errc::invalid_argument, "sample weights cannot be all zero");
    return total;
  }

  // Evaluates F_b (§1.4) at cand_, leaving the score and curvature weights of cand_ in s_, c_.
  Evaluation evaluate(const Config& cfg, const BatchScalars& bs, bool has_w) {
    using Rows = EvaluateRows<Space, S, Design, Vector, DoubleVector>;
    Kokkos::parallel_for("rh::evaluate_rows", Kokkos::TeamPolicy<Space>(space_, static_cast<int>(chunks_), tuning::team_size),
                         Rows{design_, y_, w_, s_, c_, cand_, chunk_values_, bs.n, q_, rows_per_chunk_,
                              static_cast<S>(cfg.tau), static_cast<S>(bs.h), has_w});
    using Finish = FinishEvaluation<Space, Vector, Matrix, DoubleVector, DoubleMatrix, Status, SumsView>;
    Kokkos::parallel_for("rh::finish_evaluation", Kokkos::TeamPolicy<Space>(space_, 1, tuning::team_size),
                         Finish{cand_, cur_, tilde_, grad_, info_start_, chunk_values_, terms_, solve_status_, sums_,
                                q_, chunks_, penalized()});
    Kokkos::deep_copy(space_, sums_host_, sums_);  // the one readback of an evaluation
    space_.fence();
    const Sums8& v = sums_host_();
    Evaluation e;
    e.objective = (v.v[slot_loss] + 0.5 * v.v[slot_quad]) * bs.inv_n - bs.hist * v.v[slot_hist];
    e.step_norm = std::sqrt(v.v[slot_step2]);
    e.cand_norm = std::sqrt(v.v[slot_cand2]);
    e.gstep = v.v[slot_gstep];
    e.l1 = v.v[slot_l1];
    e.solve_status = static_cast<int>(v.v[slot_solve_status]);
    return e;
  }

  long long penalized() const { return intercept_ ? q_ - 1 : q_; }

  // cand = S(cur − step·direction, threshold·m): dir_ for Newton, grad_ for the proximal solver.
  void make_candidate(const Vector& direction, S step, S threshold) {
    Kokkos::parallel_for("rh::candidate", Kokkos::RangePolicy<Space>(space_, 0, q_),
                         MakeCandidate<S, Vector>{cand_, cur_, direction, step, threshold, penalized()});
  }

  // Chunk count for the Gram pass: a function of n and q only, so results never depend on the thread count.
  // The per-chunk partial Gram costs chunks·(q²+q) values written and read back each iteration: keep it below
  // a quarter of X (n·q values) where that still leaves min_chunks chunks, and never give a chunk fewer rows
  // than one staging block.
  long long chunk_rows(long long n) const {
    const long long by_size = (n * q_) / (4 * (q_ * q_ + q_));
    long long chunks = std::min(tuning::max_chunks, std::max(tuning::min_chunks, by_size));
    chunks = std::min(chunks, std::max<long long>(1, n / tuning::stage_rows));
    return (n + chunks - 1) / chunks;
  }

  // Per-chunk partial Gram (when `gram`) and data gradient, from the s_, c_ of the last evaluation.
  void gram_gradient(bool gram) {
    const long long n = design_.extent(0);
    // Host spaces use a fixed 16-wide block (vectorized inner loop); device teams shrink the tile for small q.
    using F = GramGradient<Traits, S, Design, Vector, Partial>;
    const int tile = tuning::host ? F::host_tile : static_cast<int>(std::min<long long>(Traits::gram_tile, q_));
    const int tiles = static_cast<int>((q_ + tile - 1) / tile);
    const int pairs = gram ? tiles * (tiles + 1) / 2 : 0;
    const int grad_tiles = tiles;
    if (static_cast<long long>(partial_.extent(0)) < chunks_ || static_cast<long long>(partial_.extent(1)) != q_ * q_ + q_)
      partial_ = Partial(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::partial_sums"),
                         std::max<long long>(chunks_, static_cast<long long>(partial_.extent(0))), q_ * q_ + q_);
    Kokkos::TeamPolicy<Space> policy(space_, static_cast<int>(chunks_) * (pairs + grad_tiles), tuning::team_size);
    policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes(tile, tuning::stage_rows)));
    Kokkos::parallel_for("rh::gram_gradient", policy,
                         F{design_, s_, c_, partial_, n, q_, rows_per_chunk_, tile, tiles, pairs, grad_tiles,
                           tuning::stage_rows});
  }

  void reduce_assemble(Assemble mode, const BatchScalars& bs, const Matrix& out_matrix) {
    // The gradient alone (proximal solver) needs only the last q indices: the Gram partials are stale then.
    const long long first = mode == Assemble::gradient ? q_ * q_ : 0;
    Kokkos::parallel_for("rh::reduce_assemble", Kokkos::RangePolicy<Space>(space_, first, q_ * q_ + q_),
                         ReduceAndAssemble<S, Vector, Matrix, Partial>{partial_, info_start_, out_matrix, grad_, cur_,
                                                                       tilde_, q_, chunks_, penalized(), bs.inv_n,
                                                                       ridge_, bs.hist, mode});
  }

  // Solves hessian_ · dir_ = grad_ by LU on the space. The status comes back with the next evaluation.
  void lu_solve() {
    using F = LuSolve<Traits, Matrix, Vector, Status>;
    const int team = Traits::lu_team_size(q_);
    Kokkos::parallel_for("rh::lu_solve", Kokkos::TeamPolicy<Space>(space_, 1, team),
                         F{hessian_, lu_, grad_, dir_, solve_status_, static_cast<int>(q_)});
  }

  // Replaces dir_ by the minimum-norm solution of hessian_ · dir_ = grad_ (host, see dense_solve.hpp).
  void min_norm_fallback() {
    auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hessian_);
    auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad_);
    std::vector<double> a(static_cast<size_t>(q_ * q_)), b(static_cast<size_t>(q_));
    for (long long j = 0; j < q_; ++j) {
      b[j] = hg(j);
      for (long long k = 0; k < q_; ++k) a[static_cast<size_t>(j * q_ + k)] = hh(j, k);
    }
    const auto x = min_norm_solve(std::move(a), b, static_cast<int>(q_), std::numeric_limits<S>::epsilon());
    auto hd = Kokkos::create_mirror_view(dir_);
    for (long long j = 0; j < q_; ++j) hd(j) = static_cast<S>(x[static_cast<size_t>(j)]);
    Kokkos::deep_copy(dir_, hd);
  }

  // Damped Newton with monotone backtracking (§1.5).
  Diagnostics solve_newton(const Config& cfg, const BatchScalars& bs) {
    const bool has_w = has_weights_;
    Diagnostics d;
    Kokkos::deep_copy(space_, cur_, tilde_);
    Kokkos::deep_copy(space_, cand_, cur_);
    Kokkos::deep_copy(space_, grad_, S(0));
    double f = evaluate(cfg, bs, has_w).objective;
    bool evaluated_at_cur = true;  // s_, c_ hold the weights of cur_
    for (int it = 1; it <= cfg.max_iter; ++it) {
      d.iterations = it;
      gram_gradient(true);
      reduce_assemble(Assemble::newton, bs, hessian_);
      lu_solve();
      bool accepted = false, checked_solve = false;
      Evaluation e{};
      for (double t = 1.0; t >= 1e-8; t *= 0.5) {
        make_candidate(dir_, static_cast<S>(t), S(0));
        e = evaluate(cfg, bs, has_w);
        evaluated_at_cur = false;
        if (!checked_solve) {
          checked_solve = true;
          if (e.solve_status != solve_ok) {  // singular or non-finite LU result: minimum-norm direction
            min_norm_fallback();
            d.used_regularized_fallback = true;
            make_candidate(dir_, static_cast<S>(t), S(0));
            e = evaluate(cfg, bs, has_w);
          }
        }
        if (e.objective <= f) { accepted = true; break; }
      }
      if (!accepted) break;
      std::swap(cur_, cand_);
      evaluated_at_cur = true;
      f = e.objective;
      if (e.step_norm <= cfg.tol * (1.0 + e.cand_norm)) { d.converged = true; break; }
    }
    if (!evaluated_at_cur) {  // the last evaluation was a rejected candidate: re-evaluate at the final β
      Kokkos::deep_copy(space_, cand_, cur_);
      f = evaluate(cfg, bs, has_w).objective;
    }
    d.objective = f;
    return d;
  }

  // LAMM proximal gradient with the majorization test (§1.6).
  Diagnostics solve_l1(const Config& cfg, const BatchScalars& bs) {
    const bool has_w = has_weights_;
    Diagnostics d;
    Kokkos::deep_copy(space_, cur_, tilde_);
    Kokkos::deep_copy(space_, cand_, cur_);
    Kokkos::deep_copy(space_, grad_, S(0));
    Evaluation at_cur = evaluate(cfg, bs, has_w);
    double f = at_cur.objective, l1_cur = at_cur.l1;
    double phi = 1.0;
    bool evaluated_at_cur = true;
    for (int it = 1; it <= cfg.max_iter; ++it) {
      d.iterations = it;
      gram_gradient(false);
      reduce_assemble(Assemble::gradient, bs, hessian_);
      bool accepted = false;
      Evaluation e{};
      for (int attempt = 0; attempt < 40; ++attempt) {
        make_candidate(grad_, static_cast<S>(1.0 / phi), static_cast<S>(bs.lambda / phi));
        e = evaluate(cfg, bs, has_w);
        evaluated_at_cur = false;
        const double bound = f + e.gstep + 0.5 * phi * e.step_norm * e.step_norm;
        if (e.objective <= bound + 1e-12) { accepted = true; break; }
        phi *= 2.0;
      }
      if (!accepted) break;
      std::swap(cur_, cand_);
      evaluated_at_cur = true;
      f = e.objective;
      l1_cur = e.l1;
      phi = std::max(phi / 2.0, 1e-8);
      if (e.step_norm <= cfg.tol * (1.0 + e.cand_norm)) { d.converged = true; break; }
    }
    if (!evaluated_at_cur) {
      Kokkos::deep_copy(space_, cand_, cur_);
      const Evaluation e = evaluate(cfg, bs, has_w);
      f = e.objective;
      l1_cur = e.l1;
    }
    d.objective = f + bs.lambda * l1_cur;
    return d;
  }

  // The committed renewable state (§1.7). Only update()'s last lines and import_state() replace it.
  struct Committed {
    long long q = 0, p = 0;  // q = 0: nothing fitted
    bool intercept = true;
    Vector beta;
    Matrix info;
    long long n_samples_seen = 0, batch_count = 0;
    double previous_lambda = 0.0, weight_sum = 0.0;
  };

  Space space_{};
  int device_id_ = 0;
  Committed committed_;
  long long q_ = 0;        // coefficients of the work views
  bool intercept_ = true;  // of the batch being staged
  bool has_weights_ = false;
  double ridge_ = 0.0;
  long long rows_per_chunk_ = 1, chunks_ = 1;
  // Solver work: β of the current iterate, candidate, previous-batch β̃ and J, direction, gradient.
  Vector cur_, cand_, tilde_, dir_, grad_;
  Matrix info_start_, info_new_, hessian_, lu_;
  Partial partial_;
  Status solve_status_;
  SumsView sums_;
  typename SumsView::HostMirror sums_host_;
  DoubleVector chunk_values_;  // per-chunk loss (evaluation) or weight sums (batch check)
  typename DoubleVector::HostMirror chunk_values_host_;
  DoubleMatrix terms_;
  // Row workspace.
  Vector design_buffer_, y_, w_, s_, c_;
  Design design_;
  Vector raw_x_;  // the caller's host X, copied as laid out, before FillDesign (spaces with their own memory)
};

}  // namespace rh::detail
