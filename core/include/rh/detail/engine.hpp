// The engine of one execution space and dtype: the work views, the transaction (docs/method.md §11) and the
// order of the passes (rh/detail/passes.hpp). The arithmetic is in the passes; the control flow of each solver is
// in its penalty policy (rh/detail/penalties/), written against the named operations of Engine::Solve.
#pragma once
#include <Kokkos_Core.hpp>
#include <fmt/format.h>
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
#include "rh/error.hpp"

namespace rh::detail {

template <class Traits, class S>
class Engine final : public EngineBase {
  using Passes = detail::Passes<Traits, S>;
  using Vector = typename Passes::Vector;
  using Matrix = typename Passes::Matrix;
  using Partial = typename Passes::Partial;
  using Status = typename Passes::Status;
  template <class Penalty>
  using PenaltyPasses = detail::PenaltyPasses<Traits, S, Penalty>;

 public:
  Engine(typename Traits::execution_space space, int device_id)
      : passes_(std::move(space), device_id), device_id_(device_id) {}

  Diagnostics update(const Batch& batch, const Config& config, bool from_empty) override {
    const long long p = batch.x.cols;
    const long long q = p + (config.fit_intercept ? 1 : 0);
    const long long n = batch.x.rows;
    // Where the solve starts: the committed state, or the empty one (first batch, or fit()).
    const bool empty = from_empty || committed_.scalars.n_samples_seen == 0;
    prepare_work(q);
    const double batch_weight = stage_and_validate(batch);
    const double previous_weight = empty ? 0.0 : committed_.scalars.weight_sum;
    const double cumulative = previous_weight + batch_weight;
    const auto& space = passes_.space();
    if (empty) {
      Kokkos::deep_copy(space, coef_.tilde, S(0));
      Kokkos::deep_copy(space, coef_.info, S(0));
    } else {
      Kokkos::deep_copy(space, coef_.tilde, committed_.coefficients);
      Kokkos::deep_copy(space, coef_.info, committed_.information);
    }

    BatchScalars bs;
    const Diagnostics d = with_penalty(config.penalty, [&](auto tag) {
      using Penalty = typename decltype(tag)::type;
      bs.n = n;
      bs.penalized = config.fit_intercept ? q - 1 : q;
      bs.has_weights = batch.weights != nullptr;
      bs.tau = config.tau;
      bs.h = bandwidth_for(config.bandwidth_scale, cumulative, p, config.tau);
      bs.inv_n = 1.0 / cumulative;
      bs.lambda = Penalty::lambda(config, cumulative, p);
      bs.historical = Penalty::historical(config, previous_weight, cumulative, committed_.scalars.previous_lambda);
      bs.ridge = config.ridge;
      Solve<Penalty> solve(*this, bs);
      Diagnostics out = Penalty::solve(solve, config, bs);
      out.lambda_value = bs.lambda;
      out.bandwidth = bs.h;
      return out;
    });

    // J_new = J + Σ w φ_h(r(β_b)) x xᵀ and, with inference, K_new = K + Σ w ψ(r(β_b))² x xᵀ, from the row weights
    // of the final β left by the last evaluation.
    commit_pass(config.inference, bs.has_weights);
    long long bad = passes_.commit(partial_, chunks_, coef_.info, coef_.cur, info_new_);
    if (config.inference) {
      if (empty) Kokkos::deep_copy(space, score_previous_, S(0));
      else Kokkos::deep_copy(space, score_previous_, committed_.score_variance);
    }
    bad += passes_.commit_score_variance(partial_, chunks_, config.inference, score_previous_, score_new_);
    if (bad > 0)
      throw Error(Errc::numerical_error,
                  fmt::format("the update produced {} non-finite coefficient or information values; the model "
                              "was left unchanged",
                              bad));
    // Commit: the solved state is swapped in only now that nothing can fail.
    std::swap(committed_.coefficients, coef_.cur);
    std::swap(committed_.information, info_new_);
    std::swap(committed_.score_variance, score_new_);
    if (static_cast<long long>(coef_.cur.extent(0)) != q_) {  // fit() changed q: the old views are not work views
      coef_.cur = Vector("rh::beta_work", q_);
      info_new_ = Matrix("rh::information_new", q_, q_);
      score_new_ = Matrix("rh::score_variance_new", q_, q_);
    }
    // Each scalar field of the state (RH_STATE_SCALARS) after the batch.
    StateScalars& c = committed_.scalars;
    c.n_features = p;
    c.n_samples_seen = (empty ? 0 : c.n_samples_seen) + n;
    c.batch_count = (empty ? 0 : c.batch_count) + 1;
    c.previous_lambda = bs.lambda;
    c.weight_sum = cumulative;
    c.fit_intercept = config.fit_intercept;
    c.score_variance_batches = config.inference ? (empty ? 0 : c.score_variance_batches) + 1 : 0;
    return d;
  }

  void predict(const MatrixRef& x, Memory memory, void* out) override {
    const long long n = x.rows;
    Batch b;
    b.x = x;
    b.memory = memory;
    prepare_work(committed_.q());
    stage_and_validate(b);
    passes_.predict(rows_.x, committed_.coefficients, rows_.s);
    auto prediction = Kokkos::subview(rows_.s, Kokkos::make_pair(0LL, n));
    const auto& space = passes_.space();
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

  double score(const Batch& batch) override {
    prepare_work(committed_.q());
    stage_and_validate(batch);
    passes_.predict(rows_.x, committed_.coefficients, rows_.s);
    return passes_.r_squared(rows_, batch.x.rows, batch.weights != nullptr, rows_.s);
  }

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

 private:
  // The named operations a penalty's solver is written against: the passes, bound to this engine's work views
  // and to the scalars of the batch.
  template <class Penalty>
  class Solve {
   public:
    Solve(Engine& engine, const BatchScalars& bs) : e_(engine), bs_(bs), passes_(engine.passes_) {
      const auto& space = e_.passes_.space();
      Kokkos::deep_copy(space, e_.coef_.cur, e_.coef_.tilde);  // β starts at β̃
      Kokkos::deep_copy(space, e_.coef_.cand, e_.coef_.cur);
      Kokkos::deep_copy(space, e_.coef_.grad, S(0));
    }
    // F_b at the candidate; leaves the candidate's row weights for the next gram_gradient.
    Evaluation<Penalty> evaluate() {
      auto& scratch = std::get<typename PenaltyPasses<Penalty>::Scratch>(e_.evaluation_scratch_);
      return evaluation_of(passes_.evaluate(e_.rows_, e_.chunks_, bs_, e_.coef_, e_.solve_status_, scratch), bs_);
    }
    // F_b at β itself (after a rejected candidate, so that the row weights are β's again).
    Evaluation<Penalty> evaluate_current() {
      Kokkos::deep_copy(e_.passes_.space(), e_.coef_.cand, e_.coef_.cur);
      return evaluate();
    }
    void gram_gradient(bool with_gram) { e_.passes_.gram_gradient(e_.rows_, e_.chunks_, with_gram, e_.partial_); }
    void assemble(bool with_hessian) { passes_.assemble(with_hessian, e_.partial_, e_.chunks_, e_.coef_, bs_, e_.hessian_); }
    // d = H⁻¹ g; its status comes back with the next evaluation.
    void factor_solve() { e_.passes_.factor_solve(e_.hessian_, e_.coef_.grad, e_.lu_, e_.coef_.dir, e_.solve_status_); }
    void min_norm_direction() { e_.passes_.min_norm_solve(e_.hessian_, e_.coef_.grad, e_.coef_.dir); }
    // cand = β − t·d (the soft threshold at 0 leaves it as is).
    void newton_candidate(double t) {
      e_.passes_.candidate(e_.coef_, e_.coef_.dir, static_cast<S>(t), S(0), bs_.penalized);
    }
    // cand = S(β − step·g, threshold).
    void proximal_candidate(double step, double threshold) {
      e_.passes_.candidate(e_.coef_, e_.coef_.grad, static_cast<S>(step), static_cast<S>(threshold), bs_.penalized);
    }
    void accept() { std::swap(e_.coef_.cur, e_.coef_.cand); }

   private:
    Engine& e_;
    const BatchScalars& bs_;
    PenaltyPasses<Penalty> passes_;
  };

  // The commit's pass over X (docs/method.md §7, §12): the curvature Gram for J and, with inference, the
  // squared-score Gram for K in the same pass (Passes::score_grams); without inference, gram_gradient's Gram.
  void commit_pass(bool inference, bool has_weights) {
    if (inference) passes_.score_grams(rows_, chunks_, has_weights, partial_);
    else passes_.gram_gradient(rows_, chunks_, true, partial_);
  }

  // Sizes every q-sized work view for q coefficients (allocating only when q changes).
  void prepare_work(long long q) {
    if (q == q_) return;
    coef_.cur = Vector("rh::beta_work", q);
    coef_.cand = Vector("rh::candidate", q);
    coef_.tilde = Vector("rh::beta_previous", q);
    coef_.dir = Vector("rh::direction", q);
    coef_.grad = Vector("rh::gradient", q);
    coef_.info = Matrix("rh::information_previous", q, q);
    info_new_ = Matrix("rh::information_new", q, q);
    score_previous_ = Matrix("rh::score_variance_previous", q, q);
    score_new_ = Matrix("rh::score_variance_new", q, q);
    hessian_ = Matrix("rh::hessian", q, q);
    lu_ = Matrix("rh::lu", q, q);
    partial_ = Partial();
    design_buffer_ = Vector();  // its row capacity was counted in units of the old q
    if (!solve_status_.data()) solve_status_ = Status("rh::solve_status");
    q_ = q;
  }

  // Grows the row workspace to n rows (it never shrinks, so a steady stream allocates nothing).
  void reserve_rows(long long n) {
    if (n * q_ + host_gram_tile > static_cast<long long>(design_buffer_.extent(0)) ||
        n > static_cast<long long>(rows_.y.extent(0))) {
      const long long rows = std::max<long long>(n, static_cast<long long>(rows_.y.extent(0)));
      design_buffer_ = Passes::design_buffer(rows, q_);
      rows_.y = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::y"), rows);
      rows_.w = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::weights"), rows);
      rows_.s = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::score_weights"), rows);
      rows_.c = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::curvature_weights"), rows);
    }
    rows_.x = Passes::design_view(design_buffer_, n, q_);
  }

  // Pass 1: the batch into the row workspace, checked; returns its weight W_b.
  double stage_and_validate(const Batch& b) {
    const long long n = b.x.rows;
    reserve_rows(n);
    chunks_ = passes_.chunks_for(n, q_);
    passes_.stage(b, rows_, raw_x_);
    const BatchCheck check = passes_.validate(rows_, b.y != nullptr, b.weights != nullptr, chunks_, weight_sums_);
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

  // A state array to and from the space (views are row-major, so the values are contiguous either way).
  template <class View>
  static void copy_to_host(const View& v, std::vector<double>& out) {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    out.assign(h.data(), h.data() + h.size());
  }
  template <int Rank>
  static ArrayView<Rank> from_host(const std::vector<double>& values, const std::string& label, long long q) {
    ArrayView<Rank> v;
    if constexpr (Rank == 1) v = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), q);
    else v = Matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), q, q);
    auto h = Kokkos::create_mirror_view(v);
    for (size_t i = 0; i < h.size(); ++i) h.data()[i] = static_cast<S>(values[i]);
    Kokkos::deep_copy(v, h);
    return v;
  }

  template <class List>
  struct ScratchOf;
  template <class... P>
  struct ScratchOf<TypeList<P...>> {
    using type = std::tuple<typename PenaltyPasses<P>::Scratch...>;
  };

  Passes passes_;
  int device_id_;
  Committed committed_;
  long long q_ = 0;  // coefficients of the work views
  Chunks chunks_;
  typename Passes::Rows rows_;
  typename Passes::Coefficients coef_;
  Matrix info_new_, hessian_, lu_;
  Matrix score_previous_, score_new_;  // K of the earlier batches and after this one (inference)
  Partial partial_;
  Status solve_status_;
  typename Passes::ChunkSums weight_sums_;
  typename ScratchOf<Penalties>::type evaluation_scratch_;  // one per penalty
  Vector design_buffer_;
  Vector raw_x_;  // the caller's host X, copied as laid out before staging (spaces with their own memory)
};

}  // namespace rh::detail

RH_FOR_EACH_COMPILED_SPACE(RH_ENGINE_INSTANCES, DECLARE)
