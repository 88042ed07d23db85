// The engine of one execution space and dtype: the work views, the transaction (docs/method.md §11) and the
// order of the passes (rh/detail/passes.hpp). The arithmetic is in the passes; the control flow of each solver is
// in its penalty policy (rh/detail/penalties/), written against the named operations of Engine::Solve; where a batch
// runs (threads, stalls) and whether its memory fits is rh/detail/placement.hpp's.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>
#include <utility>

#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/engine_base.hpp"
#include "rh/detail/instances.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/passes.hpp"
#include "rh/detail/penalties.hpp"
#include "rh/detail/placement.hpp"
#include "rh/detail/thread_choice.hpp"
#include "rh/error.hpp"

namespace rh::detail {

template <class Traits, class S>
class Engine final : public EngineBase {
  using Passes = detail::Passes<Traits, S>;
  using Vector = typename Passes::Vector;
  using Matrix = typename Passes::Matrix;
  using Partial = typename Passes::Partial;
  using DoubleVector = typename Passes::DoubleVector;
  using Status = typename Passes::Status;
  template <class Penalty>
  using PenaltyPasses = detail::PenaltyPasses<Traits, S, Penalty>;

 public:
  // The space that runs a batch on the calling thread alone over the same views (Traits::calling_thread), when
  // there is one; without one, AloneTraits is Traits and nothing runs alone.
  using AloneTraits = std::conditional_t<std::is_void_v<typename Traits::calling_thread>, Traits,
                                         typename Traits::calling_thread>;
  static constexpr bool can_run_alone = !std::is_same_v<AloneTraits, Traits>;
  using AlonePasses = detail::Passes<AloneTraits, S>;
  static_assert(std::is_same_v<typename AlonePasses::Views, typename Passes::Views>,
                "the calling thread's passes work on this space's views");

  Engine(typename Traits::execution_space space, int device_id)
      : passes_(std::move(space), device_id), alone_(alone_instance(passes_), device_id), device_id_(device_id) {}

  // A batch runs on this space's instance, or, where the measurements say so, on the calling thread alone
  // (rh/detail/placement.hpp); both give the same bits. A batch that the threads stalled is given up before its
  // commit and runs again alone.
  Diagnostics update(const Batch& batch, const Config& config, bool from_empty) override {
    // Spread over processes, every process must make the same collective calls: a batch runs where it starts,
    // unwatched (an abandoned attempt would be a second sequence of them on one process).
    if (exchange_) return *update_on(passes_, batch, config, from_empty);
    return placed(batch.x.rows, [&](const auto& run) { return update_on(run, batch, config, from_empty); });
  }

  // One model of a host space's model group (rh/detail/group/engine.hpp): its rows (y and the weights already checked
  // by the group) staged and solved from β̃ = beta and J = info with the group's batch scalars, as update() stages,
  // solves and places a batch; β_b and J_b written over beta and info only when X and all else is finite and no
  // minimum-norm fallback was taken (a group refuses it). The engine's own state is not used.
  struct ModelUpdate { Diagnostics diagnostics; bool written = false, min_norm = false, bad_x = false; };
  ModelUpdate update_model(const Batch& rows, const Config& config, const BatchScalars& bs, S* beta, S* info) {
    ModelUpdate out;
    const auto on = [&](const auto& run) { return update_model_on(run, rows, config, bs, beta, info, out); };
    out.diagnostics = placed(rows.x.rows, on);
    return out;
  }
  // Room for a model of n rows and q coefficients, before a group solves any (update_model only grows it): a model
  // too large for the memory limit fails the group's call before any model is written.
  void reserve_model(long long n, long long q) {
    calling_thread_section([&] { prepare_work(n, q); });
  }

 private:
  // on(run) (a std::optional<Diagnostics>: nothing when the threads stalled it) for a batch of n rows, placed.
  template <class On>
  Diagnostics placed(long long n, On&& on) {
    if constexpr (can_run_alone) {
      bool alone = placement_.starts_alone(passes_.space());
      ThreadChoice::Clock start = ThreadChoice::now();
      std::optional<Diagnostics> d;
      if (!alone) {
        d = placement_.on_threads(start, [&] { return on(passes_); });
        alone = !d;
      }
      if (alone) d = on(alone_);  // alone, nothing watches: always a result
      placement_.record(alone, start, static_cast<double>(n) * static_cast<double>(d->iterations + 1));
      d->calling_thread_only = alone;
      return *d;
    } else {
      return *on(passes_);
    }
  }

  // The transaction of one batch on `run`'s passes: stage, solve, commit. Nothing, and nothing committed, when the
  // threads stalled it (Placement::stalled).
  template <class Run>
  std::optional<Diagnostics> update_on(const Run& run, const Batch& given, const Config& config, bool from_empty) {
    const long long p = given.x.cols;
    const long long q = p + (config.fit_intercept ? 1 : 0);
    const long long n = exchange_ ? exchange_->total_rows() : given.x.rows;  // the batch's rows, every process's
    // Where the solve starts: the committed state, or the empty one (first batch, or fit()).
    const bool empty = from_empty || committed_.scalars.n_samples_seen == 0;
    if (!empty && committed_.scalars.n_samples_seen >= max_state_count - n)
      throw Error(Errc::invalid_argument, fmt::format("the model has seen {} samples: {} more would reach 2^62, the "
                                                      "largest count a state may hold",
                                                      committed_.scalars.n_samples_seen, n));
    // Spread over processes, this process stages the rows of its own chunks (ChunkExchange::own_rows).
    Chunks chunks = run.chunks_for(n, q);
    Batch batch = given;
    if (exchange_) {
      chunks.exchange = exchange_;
      batch = exchange_->own_rows(given, chunks);
    }
    if (exchange_) {  // a process that cannot hold its rows fails every process, before anything else is shared
      std::optional<Error> failed;
      try {
        prepare_work(batch.x.rows, q);
        reserve_full_step();
      } catch (const Error& e) {
        failed = e;
      } catch (const std::exception& e) {
        failed = Error(Errc::allocation_failed, fmt::format("allocating the work views: {}", e.what()));
      }
      exchange_->agree(failed ? &*failed : nullptr);
    } else {
      calling_thread_section([&] { prepare_work(n, q); });
    }
    if (placement_.stalled()) return {};  // (after the allocation; a calling thread's first batch found its clocks)
    const double batch_weight = stage_and_validate(run, batch, chunks);
    if (placement_.stalled()) return {};
    const double previous_weight = empty ? 0.0 : committed_.scalars.weight_sum;
    const double cumulative = previous_weight + batch_weight;
    // N_b and 1/N_b scale every term of F_b: both must be finite (weights whose running sum overflows, or so small
    // that its inverse does, are refused before the solve).
    if (!std::isfinite(cumulative) || !std::isfinite(1.0 / cumulative))
      throw Error(Errc::invalid_argument,
                  fmt::format("the cumulative sample weight N_b = {} + {} = {} is out of range: N_b and 1/N_b must be "
                              "finite; scale the sample weights",
                              previous_weight, batch_weight, cumulative));
    calling_thread_section([&] {  // coefficient-sized work: not worth a launch, and a barrier, on the threads
      const auto& own = calling_thread_passes();
      if (empty) {
        Kokkos::deep_copy(own.space(), coef_.tilde, S(0));
        Kokkos::deep_copy(own.space(), coef_.info, S(0));
      } else {
        own.copy(coef_.tilde, committed_.coefficients);
        own.copy(coef_.info, committed_.information);
      }
      coef_.info_symmetric = own.exactly_symmetric(coef_.info);
    });

    BatchScalars bs{n, config.fit_intercept ? q - 1 : q, batch.weights != nullptr, config.tau,
                    bandwidth_for(config.bandwidth_scale, cumulative, p, config.tau), 1.0 / cumulative};
    with_penalty(config.penalty, [&](auto tag) {
      using Penalty = typename decltype(tag)::type;
      bs.lambda = Penalty::lambda(config, cumulative, p);
      bs.historical = Penalty::historical(config, previous_weight, cumulative, committed_.scalars.previous_lambda);
    });
    bs.ridge = config.ridge;
    const Diagnostics d = solve_staged(run, config, bs);
    if (placement_.found_stalled()) return {};  // the solver stopped at a checkpoint: nothing to commit

    if (!std::isfinite(d.objective))
      throw Error(Errc::numerical_error,
                  fmt::format("the batch objective F_b is {} (the loss of the batch overflows); the model was left "
                              "unchanged",
                              d.objective));
    // J_new = J + Σ w φ_h(r(β_b)) x xᵀ and, with inference, K_new = K + Σ w ψ(r(β_b))² x xᵀ (docs/method.md §7,
    // §12), both from the row weights at the final β.
    commit_gram(run);
    long long bad = run.commit(partial_, chunks_, coef_.info, coef_.cur, info_new_);
    if (config.inference) {
      if (empty) Kokkos::deep_copy(run.space(), score_previous_, S(0));
      else run.copy(score_previous_, committed_.score_variance);
      // The last line search's u = X·d is spent by now: it carries k_i = w_i ψ(r_i)² into the squared-score Gram.
      run.score_gram(rows_, chunks_, bs.has_weights, rows_.u, score_partial_);
    }
    bad += run.commit_score_variance(score_partial_, chunks_, config.inference, score_previous_, score_new_);
    if (bad > 0)
      throw Error(Errc::numerical_error,
                  fmt::format("the update produced {} non-finite coefficient or information (J) values; the model "
                              "was left unchanged",
                              bad));
    // The committed views become work views at the swap; when their shape is not q's (the first batch, or fit()
    // changing q), new work views are made first, so that nothing after the swap can fail.
    const bool same_shape = static_cast<long long>(committed_.coefficients.extent(0)) == q_;
    const auto& alloc = calling_thread_passes();
    Vector beta_work = same_shape ? committed_.coefficients : Vector(alloc.zeroed("rh::beta_work"), q_);
    Matrix info_work = same_shape ? committed_.information : Matrix(alloc.zeroed("rh::information_new"), q_, q_);
    Matrix score_work = static_cast<long long>(committed_.score_variance.extent(0)) == q_
                            ? committed_.score_variance
                            : Matrix(alloc.zeroed("rh::score_variance_new"), q_, q_);
    // Commit: the solved state is swapped in only now that nothing can fail.
    committed_.coefficients = std::exchange(coef_.cur, std::move(beta_work));
    committed_.information = std::exchange(info_new_, std::move(info_work));
    committed_.score_variance = std::exchange(score_new_, std::move(score_work));
    committed_.scalars = scalars_after_batch(committed_.scalars, empty, p, n, bs.lambda, cumulative, config);
    return d;
  }

  // The penalty's solver over the staged batch from β̃ = coef_.tilde and J = coef_.info, with the batch's scalars.
  template <class Run>
  Diagnostics solve_staged(const Run& run, const Config& config, const BatchScalars& bs) {
    return with_penalty(config.penalty, [&](auto tag) {
      using Penalty = typename decltype(tag)::type;
      Solve<Run, Penalty> solve(*this, run, bs);
      Diagnostics out = Penalty::solve(solve, config, bs);
      out.lambda_value = bs.lambda;
      out.bandwidth = bs.h;
      return out;
    });
  }

  template <class Run>
  std::optional<Diagnostics> update_model_on(const Run& run, const Batch& rows, const Config& config,
                                             const BatchScalars& bs, S* beta, S* info, ModelUpdate& out) {
    const long long q = rows.x.cols + (config.fit_intercept ? 1 : 0);
    calling_thread_section([&] { prepare_work(rows.x.rows, q); });
    chunks_ = run.chunks_for(rows.x.rows, q);
    out.bad_x = run.stage(rows, rows_, host_input_).non_finite_x > 0;
    if (placement_.stalled()) return {};
    if (out.bad_x) return Diagnostics();
    calling_thread_section([&] {
      const auto& own = calling_thread_passes();
      own.copy(coef_.tilde, Vector(beta, q));
      own.copy(coef_.info, Matrix(info, q, q));
      coef_.info_symmetric = own.exactly_symmetric(coef_.info);
    });
    const long long fallbacks = solve_counts_.min_norm;
    const Diagnostics d = solve_staged(run, config, bs);
    if (placement_.found_stalled()) return {};  // nothing written: the model runs again alone
    out.min_norm = solve_counts_.min_norm != fallbacks;
    if (out.min_norm || !std::isfinite(d.objective)) return d;
    commit_gram(run);
    if (run.commit(partial_, chunks_, coef_.info, coef_.cur, info_new_) > 0) return d;
    run.copy(Vector(beta, q), coef_.cur);
    run.copy(Matrix(info, q, q), info_new_);
    run.space().fence();
    out.written = true;
    return d;
  }

 public:
  void predict(const MatrixRef& x, Memory memory, void* out) override {
    with_chosen([&](const auto& run) { predict_on(run, x, memory, out); });
  }
  // On the space's own instance always: R²'s sums are reduced per thread (Kokkos' own reduction), so they differ
  // by rounding between thread counts, unlike the solver's chunked sums.
  double score(const Batch& batch) override {
    prepare_work(batch.x.rows, committed_.q());
    stage_and_validate(passes_, batch);
    passes_.predict(rows_.x, committed_.coefficients, rows_.s);
    return passes_.r_squared(rows_, batch.x.rows, batch.weights != nullptr, rows_.s);
  }

 private:
  // f(the passes of the current choice): prediction (one value per row, the same bits either way) follows the
  // batches, without a probe or a measurement of its own.
  template <class F>
  void with_chosen(F&& f) {
    if constexpr (can_run_alone) {
      if (placement_.chosen_alone()) return f(alone_);
    }
    f(passes_);
  }
  template <class Run>
  void predict_on(const Run& run, const MatrixRef& x, Memory memory, void* out) {
    const long long n = x.rows;
    Batch b;
    b.x = x;
    b.memory = memory;
    prepare_work(n, committed_.q());
    stage_and_validate(run, b);
    run.predict(rows_.x, committed_.coefficients, rows_.s);
    auto prediction = Kokkos::subview(rows_.s, Kokkos::make_pair(0LL, n));
    const auto& space = run.space();
    if (memory == Memory::host) {
      check_host_pointer(out, "the prediction output");
      Kokkos::View<S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> dst(static_cast<S*>(out), n);
      Kokkos::deep_copy(space, dst, prediction);
    } else {
      Traits::check_device_pointer(out, "the prediction output", device_id_);
      Kokkos::View<S*, typename Passes::memory_space, Kokkos::MemoryUnmanaged> dst(static_cast<S*>(out), n);
      Kokkos::deep_copy(space, dst, prediction);
    }
    space.fence();
  }

 public:

  State export_state() const override {
    State st;
    static_cast<StateScalars&>(st) = committed_.scalars;
    if (committed_.q() == 0) return st;
#define RH_EXPORT_ARRAY(name, rank, since) copy_to_host(committed_.name, st.name);
    RH_STATE_ARRAYS(RH_EXPORT_ARRAY)
#undef RH_EXPORT_ARRAY
    return st;
  }

  void import_state(const State& st) override {  // validated by the caller
    Committed c;
    c.scalars = st;
    // Build the new views first, then swap them in: a failed allocation leaves the old state.
#define RH_IMPORT_ARRAY(name, rank, since) c.name = from_host<rank>(st.name, "rh::" #name, c.q());
    RH_STATE_ARRAYS(RH_IMPORT_ARRAY)
#undef RH_IMPORT_ARRAY
    committed_ = std::move(c);
  }

  void reset() override { committed_ = Committed(); }
  void set_exchange(ChunkExchange* exchange) override { exchange_ = exchange; }

  // How the Newton systems of this engine were solved so far (docs/method.md §8): the tests' evidence that the
  // Cholesky path is taken where it should be, and that the fallbacks are taken where they must be.
  struct SolveCounts {
    long long cholesky = 0;  // directions from the Cholesky
    long long lu = 0;        // from LU (no Cholesky asked, or it gave way), usable or not
    long long min_norm = 0;  // minimum-norm fallbacks after a failed LU
  };
  const SolveCounts& solve_counts() const { return solve_counts_; }
  // Where the next batch runs (rh/detail/thread_choice.hpp); only a space with a calling_thread space ever runs
  // alone.
  ThreadChoice& thread_choice() { return placement_.choice(); }

 private:
  // The named operations a penalty's solver is written against: the passes, bound to this engine's work views
  // and to the scalars of the batch.
  template <class Run, class Penalty>
  class Solve {
   public:
    Solve(Engine& engine, const Run& run, const BatchScalars& bs)
        : e_(engine), run_(run), bs_(bs), passes_(run) {
      e_.calling_thread_section([&] {  // coefficient- and chunk-sized
        const auto& own = e_.calling_thread_passes();
        Kokkos::deep_copy(own.space(), e_.coef_.cur, e_.coef_.tilde);  // β starts at β̃
        Kokkos::deep_copy(own.space(), e_.coef_.cand, e_.coef_.cur);
        Kokkos::deep_copy(own.space(), e_.coef_.grad, S(0));
        e_.gram_rows_.reset(own, e_.chunks_.count);
      });
      e_.gram_state_ = GramState::stale;
      e_.full_step_.ready = false;
      scratch().j_delta_valid = false;  // J is this batch's now
    }
    // True once a checkpoint (evaluate, newton_system, line_search) found the batch's threads stalled: every
    // operation is then a no-op, and the solver returns at once; the engine runs the batch again alone.
    bool stopped() const { return e_.placement_.found_stalled(); }
    // F_b at the candidate; leaves the candidate's row weights for the next gram_gradient and, with `gradient`,
    // its data gradient for the next assemble(false).
    Evaluation<Penalty> evaluate(bool gradient = false) {
      if (e_.placement_.stalled()) return {};
      e_.full_step_.ready = false;  // the row weights move to the candidate
      return evaluation_of(passes_.evaluate(e_.rows_, e_.chunks_, bs_, e_.coef_, e_.solve_status_, scratch(),
                                            gradient ? &e_.partial_ : nullptr),
                           bs_);
    }
    // evaluate(), the first of a Newton solve, whose Newton system comes next: spread over processes, the Gram
    // and gradient there are formed from the evaluation's row weights and cross processes in its exchange
    // (newton_system then only assembles); on one process, evaluate().
    Evaluation<Penalty> evaluate_before_system() {
      if (!e_.exchange_ || e_.placement_.stalled()) return evaluate();
      e_.full_step_.ready = false;
      return evaluation_of(passes_.evaluate(e_.rows_, e_.chunks_, bs_, e_.coef_, e_.solve_status_, scratch(), nullptr,
                                            true, [this] { gram_at_current(); }),
                           bs_);
    }
    // F_b at β itself (after a rejected candidate, so that the row weights are β's again).
    Evaluation<Penalty> evaluate_current() {
      if (stopped()) return {};
      Kokkos::deep_copy(run_.space(), e_.coef_.cand, e_.coef_.cur);
      return evaluate();
    }
    void assemble(bool with_hessian) {
      passes_.assemble(with_hessian, e_.partial_, e_.chunks_, e_.coef_, bs_, e_.hessian_, &scratch());
    }
    // The Newton system at β: its Gram from every row (first iteration of a batch) or the last one plus the
    // curvature changes of the accepted step (the delta Gram), the data gradient, then H and g.
    // (Spread over processes, the Gram at β is often current already: formed beside the evaluation at the start
    // or the line search that chose a full step.)
    void newton_system() {
      if (e_.placement_.stalled()) return;
      if (e_.gram_state_ != GramState::current) gram_at_current();
      assemble(true);
    }
    // d = H⁻¹ g, by Cholesky first when the ridge makes H positive definite (docs/method.md §8); its report comes
    // back with the next line search.
    void factor_solve() {
      if (stopped()) return;
      e_.calling_thread_section([&] {
        e_.calling_thread_passes().factor_solve(e_.hessian_, e_.coef_.grad, e_.factor_, e_.coef_.dir,
                                                e_.solve_status_, bs_.ridge > 0);
      });
      solve_pending_ = true;
    }
    void min_norm_direction() {
      if (stopped()) return;
      e_.calling_thread_section(
          [&] { e_.calling_thread_passes().min_norm_solve(e_.hessian_, e_.coef_.grad, e_.coef_.dir); });
      ++e_.solve_counts_.min_norm;
    }
    // Every step β − t·d priced from one pass, the first acceptable one chosen and written to the candidate.
    // Spread over processes, the full step t = 1 is taken ahead on the row side, with the Gram and gradient
    // there, and those partials cross processes with the line search's sums: when the full step is accepted the
    // next Newton system needs no exchange of its own (one per iteration); otherwise they are dropped.
    LineSearch line_search() {
      if (e_.placement_.stalled()) return {};  // no step accepted
      std::function<void()> full_step;
      if (e_.exchange_) full_step = [&] { e_.take_full_step_ahead(run_, bs_); };
      const LineSearch ls =
          run_.line_search(e_.rows_, e_.chunks_, bs_, e_.coef_, e_.solve_status_, e_.line_search_, full_step);
      undecided_ = ls.undecided;
      fetched_first_ = 0;
      fetched_last_ = -1;
      if (solve_pending_) {  // the first line search after a factor_solve brings its report
        solve_pending_ = false;
        ++(ls.solve_method == solve_by_cholesky ? e_.solve_counts_.cholesky : e_.solve_counts_.lu);
      }
      return ls;
    }
    // F_b at β − t·d evaluated directly (a pass over X at the candidate, which it leaves in cand), for the
    // steps a line search leaves undecided; the row weights stay β's.
    // Spread over processes, the row passes of these direct evaluations are made ahead, several to an exchange
    // (fetch): F_b(β) with the first undecided step, then twice as many steps each time the last fetch is spent.
    Evaluation<Penalty> evaluate_step(int step) {
      if (stopped()) return {};
      if (e_.exchange_ && (step < fetched_first_ || step > fetched_last_)) {
        const int count = std::max(1, 2 * (fetched_last_ - fetched_first_ + 1));
        fetch(false, step, std::min(step + count - 1, line_search_steps - 1));
      }
      LineSearch ls;
      ls.step = step;
      run_.candidate(e_.coef_, e_.coef_.dir, static_cast<S>(ls.t()), S(0), bs_.penalized);
      if (e_.exchange_) return fetched(1 + step);
      return evaluate_keeping_weights();
    }
    // F_b at β by the same direct pass as evaluate_step, the row weights untouched: what the undecided steps are
    // compared with. Both sides of the test then come from one kind of evaluation, as in the reference, so a step
    // too small to move β in the dtype compares equal and is accepted (converged); the line search's own F_b(β)
    // differs from a direct pass by rounding (on CUDA the two kernels reduce in different orders), which in float32
    // can exceed a tiny step's change and reject every step.
    Evaluation<Penalty> evaluate_unmoved() {
      if (stopped()) return {};
      if (e_.exchange_ && undecided_ >= 0) fetch(true, undecided_, undecided_);
      Kokkos::deep_copy(run_.space(), e_.coef_.cand, e_.coef_.cur);
      if (e_.exchange_ && undecided_ >= 0) return fetched(0);
      return evaluate_keeping_weights();
    }
    // β ← the accepted candidate β − t·d (in cand), with its row weights; the Gram now lags by this step's
    // curvature changes.
    void accept_step(int step) {
      if (stopped()) return;
      if (step == 0 && e_.full_step_.ready) {  // taken ahead: the same row weights and Gram, already exchanged
        e_.adopt_full_step();
        accept();
        e_.gram_state_ = GramState::current;
        return;
      }
      e_.full_step_.ready = false;
      LineSearch ls;
      ls.step = step;
      run_.accept_step(e_.rows_, e_.chunks_, bs_, ls, e_.gram_rows_);
      accept();
      e_.gram_state_ = GramState::pending;
    }
    // cand = S(β − step·g, threshold).
    void proximal_candidate(double step, double threshold) {
      if (stopped()) return;
      run_.candidate(e_.coef_, e_.coef_.grad, static_cast<S>(step), static_cast<S>(threshold), bs_.penalized);
    }
    void accept() { std::swap(e_.coef_.cur, e_.coef_.cand); }

   private:
    // F_b at the candidate by a direct pass that leaves the row weights as they are (β's).
    Evaluation<Penalty> evaluate_keeping_weights() {
      return evaluation_of(passes_.evaluate(e_.rows_, e_.chunks_, bs_, e_.coef_, e_.solve_status_, scratch(), nullptr,
                                            false),
                           bs_);
    }
    // The Gram and data gradient at β into partial_: from every row when stale, else the last Gram plus the
    // curvature changes of the accepted step (the delta Gram).
    void gram_at_current() {
      run_.gram_gradient(e_.rows_, e_.chunks_, true, e_.partial_, true,
                         e_.gram_state_ == GramState::stale ? nullptr : &e_.gram_rows_);
      e_.gram_state_ = GramState::current;
    }
    typename PenaltyPasses<Penalty>::Scratch& scratch() {
      return std::get<typename PenaltyPasses<Penalty>::Scratch>(e_.evaluation_scratch_);  // shared by both runs
    }
    // Spread over processes: the chunk losses of the direct evaluations of F_b(β) (slot 0, with `unmoved`) and of
    // steps first … last (slot 1 + k) in one exchange; each is finished when the solver asks for it.
    void fetch(bool unmoved, int first, int last) {
      auto& slots = e_.fetched_losses_;
      slots.resize(1 + line_search_steps);
      const auto slot = [&](int i) -> const DoubleVector& {
        if (static_cast<long long>(slots[i].extent(0)) < e_.chunks_.count)
          slots[i] = DoubleVector(run_.uninitialized("rh::fetched_losses"), e_.chunks_.count);
        return slots[i];
      };
      e_.exchange_->hold();
      if (unmoved) {
        Kokkos::deep_copy(run_.space(), e_.coef_.cand, e_.coef_.cur);
        passes_.losses(e_.rows_, e_.chunks_, bs_, e_.coef_, slot(0));
      }
      for (int k = first; k <= last; ++k) {
        LineSearch ls;
        ls.step = k;
        run_.candidate(e_.coef_, e_.coef_.dir, static_cast<S>(ls.t()), S(0), bs_.penalized);
        passes_.losses(e_.rows_, e_.chunks_, bs_, e_.coef_, slot(1 + k));
      }
      e_.exchange_->flush();
      fetched_first_ = first;
      fetched_last_ = last;
    }
    // F_b at the candidate from the losses fetched into slot i.
    Evaluation<Penalty> fetched(int i) {
      return evaluation_of(passes_.finish(e_.chunks_, bs_, e_.coef_, e_.solve_status_, scratch(),
                                          e_.fetched_losses_[i]),
                           bs_);
    }

    Engine& e_;
    const Run& run_;  // the passes the batch runs on
    const BatchScalars& bs_;
    detail::PenaltyPasses<typename Run::traits, S, Penalty> passes_;
    bool solve_pending_ = false;  // a factor_solve whose report no evaluation has read yet
    int undecided_ = -1;  // the last line search's first undecided step
    int fetched_first_ = 0, fetched_last_ = -1;  // the steps whose losses fetch() brought (none: last < first)
  };

  // What partial_ holds of the Gram at the current β (docs/method.md §4 and §7).
  enum class GramState {
    stale,    // nothing of this batch at β (the proximal solver forms no Gram)
    current,  // the Gram at β (the last Newton system's, and no step was accepted after it)
    pending,  // the Gram before the last accepted step: gram_rows_ lists the rows whose curvature changed
  };
  // The commit's Gram Σ w φ(r(β_b)) x xᵀ per chunk (docs/method.md §7), in partial_: the last Newton system's as
  // it is, or plus one delta pass over the rows the last accepted step changed, or from every row. The one place
  // the commit forms its Gram; a commit that needs another weighted pass over every row takes the `stale` branch.
  template <class Run>
  void commit_gram(const Run& run) {
    switch (gram_state_) {
      case GramState::current: break;
      case GramState::pending: run.gram_gradient(rows_, chunks_, true, partial_, false, &gram_rows_); break;
      case GramState::stale: run.gram_gradient(rows_, chunks_, true, partial_, false); break;
    }
  }

  // Spread over processes: the row side of the full Newton step t = 1 (AcceptStep on copies of r, c and the
  // chunks' ages) and the Gram and gradient there (from a copy of this process's partials at β), as accept_step
  // and the next newton_system would form them; their shares wait for the line search's exchange.
  template <class Run>
  void take_full_step_ahead(const Run& run, const BatchScalars& bs) {
    const long long n = rows_.x.extent(0);
    const auto first = Kokkos::make_pair(0LL, n);
    FullStep& f = full_step_;
    run.copy(Kokkos::subview(f.rows.r, first), Kokkos::subview(rows_.r, first));
    run.copy(Kokkos::subview(f.rows.c, first), Kokkos::subview(rows_.c, first));
    if (f.gram_rows.age.extent(0) != gram_rows_.age.extent(0)) {
      using ChunkInts = typename Passes::ChunkInts;
      f.gram_rows.count = ChunkInts(run.uninitialized("rh::full_step_count"), gram_rows_.count.extent(0));
      f.gram_rows.age = ChunkInts(run.uninitialized("rh::full_step_age"), gram_rows_.age.extent(0));
    }
    run.copy(f.gram_rows.age, gram_rows_.age);
    typename Passes::Rows ahead = rows_;
    ahead.r = f.rows.r;
    ahead.s = f.rows.s;
    ahead.c = f.rows.c;
    ahead.dc = f.rows.dc;
    ahead.changed = f.rows.changed;
    LineSearch full;
    full.step = 0;  // t = 1
    run.accept_step(ahead, chunks_, bs, full, f.gram_rows);
    run.reserve_partial(f.partial, chunks_, q_);
    const long long per_chunk = q_ * q_ + q_;
    run.copy(chunks_.window(f.partial, per_chunk), chunks_.window(partial_, per_chunk));
    run.gram_gradient(ahead, chunks_, true, f.partial, true, &f.gram_rows);
    f.ready = true;
  }
  // The full step taken ahead becomes the row side and the Gram at β.
  void adopt_full_step() {
    FullStep& f = full_step_;
    std::swap(rows_.r, f.rows.r);
    std::swap(rows_.s, f.rows.s);
    std::swap(rows_.c, f.rows.c);
    std::swap(rows_.dc, f.rows.dc);
    std::swap(rows_.changed, f.rows.changed);
    std::swap(gram_rows_.count, f.gram_rows.count);
    std::swap(gram_rows_.age, f.gram_rows.age);
    std::swap(partial_, f.partial);
    f.ready = false;
  }

  // Checks that the views for n rows of q coefficients fit (require_memory) before anything is allocated.
  void check_size(long long n, long long q) const {
    // (at least one row: a process whose share of a spread batch is empty still holds the coefficient views)
    const long long rows = std::max<long long>({n, static_cast<long long>(rows_.y.extent(0)), 1});
    const double need = footprint_bytes<Traits, S>(static_cast<double>(rows), static_cast<double>(q),
                                                   static_cast<double>(passes_.chunks_for(rows, q).count));
    const double held = q_ > 0 ? footprint_bytes<Traits, S>(static_cast<double>(rows_.y.extent(0)),
                                                            static_cast<double>(q_),
                                                            static_cast<double>(partial_.extent(0)))
                               : 0.0;
    require_memory<Traits>(q, rows, need, held, device_id_);
  }

  // Readies the work views for n rows of q coefficients: checks the size first, then allocates every new view
  // before any is swapped in, so that a failed allocation leaves the engine exactly as it was.
  // New views come from calling_thread_passes().
  void prepare_work(long long n, long long q) {
    const auto& alloc = calling_thread_passes();
    const bool grows = q != q_ || n > static_cast<long long>(rows_.y.extent(0)) ||
                       n * q + host_gram_tile > static_cast<long long>(design_buffer_.extent(0));
    if (grows) check_size(n, q);  // only when something will be allocated (on a device it asks the driver)
    if (q != q_) {
      typename Passes::Coefficients coef;
      coef.cur = Vector(alloc.zeroed("rh::beta_work"), q);
      coef.cand = Vector(alloc.zeroed("rh::candidate"), q);
      coef.tilde = Vector(alloc.zeroed("rh::beta_previous"), q);
      coef.dir = Vector(alloc.zeroed("rh::direction"), q);
      coef.grad = Vector(alloc.zeroed("rh::gradient"), q);
      coef.info = Matrix(alloc.zeroed("rh::information_previous"), q, q);
      Matrix info_new(alloc.zeroed("rh::information_new"), q, q);
      Matrix score_previous(alloc.zeroed("rh::score_variance_previous"), q, q);
      Matrix score_new(alloc.zeroed("rh::score_variance_new"), q, q);
      Matrix hessian(alloc.zeroed("rh::hessian"), q, q);
      Matrix factor(alloc.zeroed("rh::factor"), q, q);
      Status status = solve_status_.data() ? solve_status_ : Status(alloc.zeroed("rh::solve_status"));
      coef_ = std::move(coef);
      info_new_ = std::move(info_new);
      score_previous_ = std::move(score_previous);
      score_new_ = std::move(score_new);
      score_partial_ = Partial();
      hessian_ = std::move(hessian);
      factor_ = std::move(factor);
      solve_status_ = std::move(status);
      partial_ = Partial();
      design_buffer_ = Vector();  // its row capacity was counted in units of the old q
      q_ = q;
    }
    reserve_rows(n);
  }

  // Spread over processes: the row views of the full step taken ahead, as many rows as the row workspace (in
  // the update's collectively agreed allocation, so that no process fails alone later).
  void reserve_full_step() {
    const auto& alloc = calling_thread_passes();
    const long long rows = static_cast<long long>(rows_.y.extent(0));
    if (static_cast<long long>(full_step_.rows.r.extent(0)) == rows) return;
    typename Passes::Rows ahead;
    ahead.r = Vector(alloc.uninitialized("rh::full_step_residuals"), rows);
    ahead.s = Vector(alloc.uninitialized("rh::full_step_score_weights"), rows);
    ahead.c = Vector(alloc.uninitialized("rh::full_step_curvature_weights"), rows);
    ahead.dc = Vector(alloc.uninitialized("rh::full_step_curvature_changes"), rows);
    ahead.changed = typename Passes::Index(alloc.uninitialized("rh::full_step_changed_rows"), rows);
    full_step_.rows = std::move(ahead);
    full_step_.ready = false;
  }

  // Grows the row workspace to n rows (it never shrinks, so a steady stream allocates nothing); all or nothing.
  void reserve_rows(long long n) {
    const auto& alloc = calling_thread_passes();
    if (n * q_ + host_gram_tile > static_cast<long long>(design_buffer_.extent(0)) ||
        n > static_cast<long long>(rows_.y.extent(0))) {
      const long long rows = std::max<long long>(n, static_cast<long long>(rows_.y.extent(0)));
      Vector design = alloc.design_buffer(rows, q_);
      typename Passes::Rows grown;
      grown.y = Vector(alloc.uninitialized("rh::y"), rows);
      grown.w = Vector(alloc.uninitialized("rh::weights"), rows);
      grown.s = Vector(alloc.uninitialized("rh::score_weights"), rows);
      grown.c = Vector(alloc.uninitialized("rh::curvature_weights"), rows);
      grown.r = Vector(alloc.uninitialized("rh::residuals"), rows);
      grown.u = Vector(alloc.uninitialized("rh::direction_rows"), rows);
      grown.dc = Vector(alloc.uninitialized("rh::curvature_changes"), rows);
      grown.changed = typename Passes::Index(alloc.uninitialized("rh::changed_rows"), rows);
      design_buffer_ = std::move(design);
      rows_ = std::move(grown);
    }
    rows_.x = Passes::design_view(design_buffer_, n, q_);
  }

  // Pass 1: the batch into the row workspace, counted and checked; returns its weight W_b (every process's, when
  // the chunks are spread over processes).
  template <class Run>
  double stage_and_validate(const Run& run, const Batch& b) {
    return stage_and_validate(run, b, run.chunks_for(b.x.rows, q_));
  }
  template <class Run>
  double stage_and_validate(const Run& run, const Batch& b, const Chunks& chunks) {
    chunks_ = chunks;
    const BatchCounts counts = run.stage(b, rows_, host_input_);
    const BatchCheck check = run.validate(counts, rows_, b.weights != nullptr, chunks_, weight_sums_);
    require_valid(check);
    return check.weight_sum;
  }

  // The committed renewable state (docs/method.md §7): the scalar fields of RH_STATE_SCALARS, and each array of
  // RH_STATE_ARRAYS as a view on the space. Only update()'s last lines and import_state() replace it.
  template <int Rank>
  using ArrayView = std::conditional_t<Rank == 1, Vector, Matrix>;
  struct Committed {
    StateScalars scalars;
#define RH_COMMITTED_ARRAY(name, rank, since) ArrayView<rank> name;
    RH_STATE_ARRAYS(RH_COMMITTED_ARRAY)
#undef RH_COMMITTED_ARRAY
    long long q() const { return scalars.n_features > 0 ? scalars.n_features + (scalars.fit_intercept ? 1 : 0) : 0; }
  };

  // A state array to and from the space, on the engine's instance (views are row-major, so the values are
  // contiguous either way).
  template <class View>
  void copy_to_host(const View& v, std::vector<double>& out) const {
    const auto h = passes_.to_host(v);
    out.assign(h.data(), h.data() + h.size());
  }
  template <int Rank>
  ArrayView<Rank> from_host(const std::vector<double>& values, const std::string& label, long long q) const {
    ArrayView<Rank> v;
    if constexpr (Rank == 1) v = Vector(passes_.uninitialized(label), q);
    else v = Matrix(passes_.uninitialized(label), q, q);
    auto h = Kokkos::create_mirror_view(v);
    for (size_t i = 0; i < h.size(); ++i) h.data()[i] = static_cast<S>(values[i]);
    Kokkos::deep_copy(passes_.space(), v, h);
    passes_.space().fence();
    return v;
  }

  template <class List>
  struct ScratchOf;
  template <class... P>
  struct ScratchOf<TypeList<P...>> {
    using type = std::tuple<typename PenaltyPasses<P>::Scratch...>;
  };

  // The passes on the calling thread alone where the engine has them (else this space's), whichever way a batch
  // runs. New views come from them (they are q- and chunk-sized; the row buffers are not initialized, so a batch on
  // the threads still touches them first), and so does a host space's dense solve, which is sequential
  // (HostTraits): neither waits for the threads on a loaded machine, nor wakes them for nothing.
  const auto& calling_thread_passes() const {
    if constexpr (can_run_alone) return alone_;
    else return passes_;
  }
  // Runs f, work on calling_thread_passes(), within a batch (Placement::calling_thread_section).
  template <class F>
  void calling_thread_section(F&& f) {
    placement_.calling_thread_section(passes_.space(), std::forward<F>(f));
  }

  // The instance the calling thread alone runs on (Traits::calling_thread's), or this space's own when there is none.
  static typename AloneTraits::execution_space alone_instance(const Passes& passes) {
    if constexpr (can_run_alone) return AloneTraits::instance(0);
    else return passes.space();
  }

  Passes passes_;
  AlonePasses alone_;  // the same passes on the calling thread alone (unused when !can_run_alone)
  Placement<Traits> placement_;  // where the batches run (unused when !can_run_alone)
  ChunkExchange* exchange_ = nullptr;  // the batches' rows spread over processes (rh/detail/chunk_exchange.hpp)
  int device_id_;
  Committed committed_;
  long long q_ = 0;  // coefficients of the work views
  Chunks chunks_;
  typename Passes::Rows rows_;
  typename Passes::Coefficients coef_;
  Matrix info_new_, hessian_, factor_;
  Matrix score_previous_, score_new_;  // K of the earlier batches and after this one (inference)
  Partial score_partial_;              // per chunk: the squared-score Gram Σ w ψ² x xᵀ of the commit (inference)
  Partial partial_;
  GramState gram_state_ = GramState::stale;
  typename Passes::GramRows gram_rows_;
  // Spread over processes: the full Newton step taken ahead by the last line search (take_full_step_ahead).
  struct FullStep {
    typename Passes::Rows rows;  // r, s, c, dc, changed at β − d
    typename Passes::GramRows gram_rows;
    Partial partial;  // the Gram and gradient at β − d, every process's chunks
    bool ready = false;  // of the last line search's direction, the row weights at β unchanged since
  } full_step_;
  std::vector<DoubleVector> fetched_losses_;  // Solve::fetch's chunk losses, one view per slot
  typename Passes::LineSearchScratch line_search_;
  Status solve_status_;
  SolveCounts solve_counts_;
  typename Passes::ChunkSums weight_sums_;
  typename ScratchOf<Penalties>::type evaluation_scratch_;  // one per penalty
  Vector design_buffer_;
  typename Passes::HostInput host_input_;  // host arrays on their way to a space with its own memory
};

}  // namespace rh::detail

RH_FOR_EACH_COMPILED_SPACE(RH_ENGINE_INSTANCES, DECLARE)
