// The group engine of one execution space and dtype: the group's β and J on the space, the staging of a ragged
// batch, and the one launch per update (rh/detail/group/solve.hpp) and per prediction.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/engine.hpp"
#include "rh/detail/group/engine_base.hpp"
#include "rh/detail/instances.hpp"
#include "rh/detail/group/solve.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/row_dots.hpp"
#include "rh/detail/kernels/stage.hpp"
#include "rh/detail/row_chunks.hpp"
#include "rh/detail/staging_pool.hpp"

namespace rh::detail {

// A model's row check (a team per model): the first row with a problem and that row's first problem, as the
// single model's pass 1 sees them, and W_b in double as the single model's validate sums a batch's: each row chunk
// (rh/detail/row_chunks.hpp) by team_weight_sum with teams of Traits::team_size threads (as ChunkWeightSums), then
// the chunks in order, so W_b, λ and the bandwidth have a Regressor's bits on the same space.
template <class Traits, class S>
struct GroupCheckRows {  // a namespace-level functor: CUDA cannot launch a private nested type
  using Space = typename Traits::execution_space;
  using Mem = typename Space::memory_space;
  Kokkos::View<S**, Kokkos::LayoutRight, Mem> x;
  Kokkos::View<S*, Mem> y, w;
  Kokkos::View<std::int64_t*, Mem> offsets;
  Kokkos::View<GroupRowCheck*, Mem> checks;
  long long p, q;
  bool has_w;
  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<Space>::member_type& team) const {
    const long long m = team.league_rank(), r0 = offsets(m), r1 = offsets(m + 1);
    long long first = LLONG_MAX;  // row * 8 + problem: the smallest is the first row's first problem
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1), [&](const long long i, long long& lo) {
      int problem = rows_ok;
      for (long long j = 0; j < p && problem == rows_ok; ++j)
        if (!compat::isfinite(x(i, j))) problem = bad_x;
      if (problem == rows_ok && !compat::isfinite(y(i))) problem = bad_y;
      if (problem == rows_ok && has_w && !compat::isfinite(w(i))) problem = bad_weight;
      if (problem == rows_ok && has_w && w(i) < S(0)) problem = negative_weight;
      if (problem != rows_ok && i * 8 + problem < lo) lo = i * 8 + problem;
    }, Kokkos::Min<long long>(first));
    double weight = static_cast<double>(r1 - r0);  // without weights: 1 + 1 + ... in double, exactly
    if (has_w) {
      weight = 0.0;
      const long long chunk = row_chunks<Traits>(r1 - r0, q).rows;
      for (long long c0 = r0; c0 < r1; c0 += chunk)
        weight += team_weight_sum(team, w, c0, c0 + chunk < r1 ? c0 + chunk : r1);
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      GroupRowCheck c;
      if (first != LLONG_MAX) {
        c.row = first / 8;
        c.problem = static_cast<int>(first % 8);
      }
      c.weight = weight;
      checks(m) = c;
    });
  }
};

// The space whose single-model engine solves a host group's models one after another: the space's own where its
// engine can run a batch on the calling thread alone (OpenMP: each model then runs where a Regressor's batch would),
// else Serial where it is compiled (Threads: a pool launch per pass would cost small models more than the pass;
// every host space has the same row chunks and kernels, so the same bits), else the space's own.
template <class Traits, class List = CompiledSpaces>
struct GroupModelSpace {
  using type = Traits;
};
template <class Traits, class First, class... Rest>
struct GroupModelSpace<Traits, TypeList<First, Rest...>> {
  using type = std::conditional_t<First::id == Space::serial && Traits::host &&
                                      std::is_void_v<typename Traits::calling_thread>,
                                  First, typename GroupModelSpace<Traits, TypeList<Rest...>>::type>;
};

// A host space's check of each model's y and weights in the caller's arrays (a team of one thread per model), as
// GroupCheckRows checks them (y, then the weight's finiteness and sign), with W_b summed in double as the engine's
// validate sums a batch's (each row chunk in row order, then the chunks in order: a Regressor's W_b); X is checked
// as update stages each model's rows (group_bad_x), except up to a row with a problem here, where X's comes first.
// `rows` is the StageRows of the batch (its source arrays and layout).
template <class Traits, class S>
struct GroupHostChecks {
  using Space = typename Traits::execution_space;
  using Mem = typename Space::memory_space;
  StageRows<S, Kokkos::View<S**, Kokkos::LayoutRight, Mem>, Kokkos::View<S*, Mem>> rows;
  const std::int64_t* offsets;
  GroupRowCheck* checks;
  long long q;
  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<Space>::member_type& team) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      const long long m = team.league_rank(), r0 = offsets[m], r1 = offsets[m + 1];
      const long long chunk = row_chunks<Traits>(r1 - r0, q).rows;
      GroupRowCheck c;
      double weight = 0.0, part = 0.0;
      for (long long i = r0; i < r1; ++i) {
        const S wi = rows.has_w ? rows.src_w[i] : S(1);
        const int problem = !compat::isfinite(rows.src_y[i]) ? bad_y
                            : !compat::isfinite(wi)          ? bad_weight
                            : wi < S(0)                      ? negative_weight
                                                             : rows_ok;
        if (problem != rows_ok && c.row < 0) {
          c.row = i;
          c.problem = problem;
        }
        if (i > r0 && (i - r0) % chunk == 0) {
          weight += part;
          part = 0.0;
        }
        if (rows.has_w) part += static_cast<double>(wi);
      }
      weight += part;
      for (long long i = r0; i <= c.row && c.problem != bad_x; ++i)
        for (long long j = 0; j < rows.p; ++j)
          if (!compat::isfinite(rows.row_major ? rows.src_x[i * rows.ld + j] : rows.src_x[j * rows.ld + i])) {
            c.row = i;
            c.problem = bad_x;
            break;
          }
      c.weight = rows.has_w ? weight : static_cast<double>(r1 - r0);  // 1 + 1 + ... in double, exactly
      checks[m] = c;
    });
  }
};

template <class Traits, class S>
class GroupEngine final : public GroupEngineBase {
  using Newton = GroupNewton<Traits, S>;
  using Space = typename Traits::execution_space;
  using Mem = typename Space::memory_space;
  using Vector = Kokkos::View<S*, Mem>;
  using Rows = Kokkos::View<S**, Kokkos::LayoutRight, Mem>;
  using Matrices = Kokkos::View<S***, Kokkos::LayoutRight, Mem>;
  // A host space solves the group's models one after another (update_on_host) with the single-model engine of
  // ModelTraits, and runs its own checks and allocations on the calling thread (CallingTraits: the engine's
  // calling_thread space, or its own). A space with its own memory solves in its team kernel.
  using ModelTraits = typename GroupModelSpace<Traits>::type;
  using CallingTraits = std::conditional_t<!Traits::host || std::is_void_v<typename ModelTraits::calling_thread>,
                                           ModelTraits, typename ModelTraits::calling_thread>;
  using CallingSpace = typename CallingTraits::execution_space;
  struct NoModelEngine {};
  using ModelEngine = std::conditional_t<Traits::host, Engine<ModelTraits, S>, NoModelEngine>;
  // Where Kokkos has independent instances (>= 4, rh/detail/compat.hpp) and the calling thread's space is one of
  // its own beside the group's (OpenMP's and Threads' Serial), update_on_host spreads the models over as many
  // workers as the space has threads, each with the single-model engine of that space on its own instance
  // (WorkerEngine): a model then runs on its worker's thread alone, as a Regressor's batch may run on the calling
  // thread (the same bits). Kokkos 3.4 has one Serial scratch per process: models run one after another there.
  static constexpr bool spreads_models = Traits::host && compat::independent_instances &&
                                         CallingTraits::independent_instances &&
                                         !std::is_same_v<CallingTraits, Traits>;
  using WorkerEngine = std::conditional_t<spreads_models, Engine<CallingTraits, S>, NoModelEngine>;
  static CallingSpace calling_space_for(const Space& space, int device_id) {
    if constexpr (Traits::host) return CallingTraits::instance(device_id);
    else return space;
  }

 public:
  GroupEngine(Space space, int device_id, long long n_models, long long p, bool fit_intercept)
      : space_(std::move(space)), calling_space_(calling_space_for(space_, device_id)), device_id_(device_id),
        q_(p + (fit_intercept ? 1 : 0)), p_(p),
        beta_(zeroed("rh::group_beta"), n_models, q_), info_(zeroed("rh::group_information"), n_models, q_, q_),
        info_new_(zeroed("rh::group_information_new"), Traits::host ? 0 : n_models, q_, q_),  // the team kernel's
        offsets_("rh::group_offsets", n_models + 1) {}

  std::vector<GroupRowCheck> stage_and_check(const GroupBatch& batch) override {
    const auto rows = stage(batch, !Traits::host);  // a host space's engine stages each model's rows in update
    const long long models = static_cast<long long>(beta_.extent(0));
    grow(checks_, models, "rh::group_row_checks");
    std::vector<GroupRowCheck> out(static_cast<size_t>(models));
    const Kokkos::View<GroupRowCheck*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> out_view(out.data(), out.size());
    if constexpr (Traits::host) {  // on the calling thread; update stages each model's rows for its solve
      host_batch_ = batch;
      Kokkos::parallel_for("rh::group_check", Kokkos::TeamPolicy<CallingSpace>(calling_space_, static_cast<int>(models), 1),
                           GroupHostChecks<CallingTraits, S>{rows, batch.offsets, out.data(), q_});
      calling_space_.fence();
    } else {
      Kokkos::deep_copy(space_, offsets_,
                        Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(batch.offsets,
                                                                                                     models + 1));
      Kokkos::parallel_for("rh::group_check",
                           Kokkos::TeamPolicy<Space>(space_, static_cast<int>(models), Traits::team_size),
                           GroupCheckRows<Traits, S>{x_, y_, w_, offsets_, checks_, p_, q_, has_w_});
      Kokkos::deep_copy(space_, out_view, Kokkos::subview(checks_, Kokkos::make_pair(0LL, models)));
      space_.fence();
    }
    return out;
  }

  std::vector<GroupOutcome> update(const std::vector<GroupTask>& tasks, const Config& config) override {
    if constexpr (Traits::host) {
      return update_on_host(tasks, config);
    } else {  // the team kernel: one launch for every model
      const long long n_tasks = static_cast<long long>(tasks.size());
      grow(tasks_, n_tasks, "rh::group_tasks");
      grow(outcomes_, n_tasks, "rh::group_outcomes");
      Kokkos::deep_copy(space_, Kokkos::subview(tasks_, Kokkos::make_pair(0LL, n_tasks)),
                        Kokkos::View<const GroupTask*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(tasks.data(), tasks.size()));
      Newton k;
      k.x = x_;
      k.y = y_;
      k.w = w_;
      k.s = s_;
      k.c = c_;
      k.beta = beta_;
      k.info = info_;
      k.info_new = info_new_;
      k.tasks = tasks_;
      k.outcomes = outcomes_;
      k.q = static_cast<int>(q_);
      k.max_iter = config.max_iter;
      k.has_w = has_w_;
      k.l1 = config.penalty == Penalty::l1;
      k.penalized = p_;  // every feature; the intercept (q > p) never
      k.tau = config.tau;
      k.tol = config.tol;
      k.ridge = config.ridge;
      const int league = static_cast<int>(n_tasks);
      typename Newton::Policy probe(space_, league, Kokkos::AUTO);
      const auto layout = Newton::layout(k.q, team_size(), probe.scratch_size_max(0), Newton::scratch_budget);
      k.level = layout.level;
      k.tile_rows = layout.tile_rows;
      k.shared_area = layout.shared_area;
      typename Newton::Policy policy(space_, league, team_size());
      policy.set_scratch_size(0, Kokkos::PerTeam(layout.level0));
      if (layout.level1 > 0) policy.set_scratch_size(1, Kokkos::PerTeam(layout.level1));
      Kokkos::parallel_for("rh::group_newton", policy, k);
      std::vector<GroupOutcome> out(tasks.size());
      Kokkos::View<GroupOutcome*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(out.data(), out.size());
      Kokkos::deep_copy(space_, h, Kokkos::subview(outcomes_, Kokkos::make_pair(0LL, n_tasks)));
      space_.fence();
      return out;
    }
  }

  void predict(const GroupBatch& x, void* out) override {
    stage(x);
    const long long n = x.x.rows;
    std::vector<long long> model_of(static_cast<size_t>(n));
    const long long models = static_cast<long long>(beta_.extent(0));
    for (long long m = 0; m < models; ++m)
      for (long long i = x.offsets[m]; i < x.offsets[m + 1]; ++i) model_of[static_cast<size_t>(i)] = m;
    Kokkos::View<long long*, Mem> models_view("rh::group_row_models", n);
    Kokkos::deep_copy(space_, models_view,
                      Kokkos::View<const long long*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(model_of.data(), n));
    Vector result("rh::group_prediction", n);
    const auto xs = x_;
    const auto beta = beta_;
    const long long q = q_;
    Kokkos::parallel_for("rh::group_predict", Kokkos::RangePolicy<Space>(space_, 0, n),
                         KOKKOS_LAMBDA(const long long i) {
                           const auto b = Kokkos::subview(beta, models_view(i), Kokkos::ALL());
                           result(i) = row_dot<S, BaselineIsa>(xs, i, b, q);
                         });
    Kokkos::deep_copy(space_, Kokkos::View<S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(static_cast<S*>(out), n),
                      result);
    space_.fence();
  }

  void export_arrays(long long m, std::vector<double>& beta, std::vector<double>& info) const override {
    const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(beta_, m, Kokkos::ALL()));
    const auto j = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(info_, m, Kokkos::ALL(), Kokkos::ALL()));
    beta.assign(static_cast<size_t>(q_), 0.0);
    info.assign(static_cast<size_t>(q_ * q_), 0.0);
    for (long long a = 0; a < q_; ++a) {
      beta[static_cast<size_t>(a)] = static_cast<double>(b(a));
      for (long long e = 0; e < q_; ++e) info[static_cast<size_t>(a * q_ + e)] = static_cast<double>(j(a, e));
    }
  }

  void import_arrays(long long m, const std::vector<double>& beta, const std::vector<double>& info) override {
    const auto b_dst = Kokkos::subview(beta_, m, Kokkos::ALL());
    const auto j_dst = Kokkos::subview(info_, m, Kokkos::ALL(), Kokkos::ALL());
    auto b = Kokkos::create_mirror_view(b_dst);
    auto j = Kokkos::create_mirror_view(j_dst);
    for (long long a = 0; a < q_; ++a) {
      b(a) = beta.empty() ? S(0) : static_cast<S>(beta[static_cast<size_t>(a)]);
      for (long long e = 0; e < q_; ++e)
        j(a, e) = info.empty() ? S(0) : static_cast<S>(info[static_cast<size_t>(a * q_ + e)]);
    }
    Kokkos::deep_copy(space_, b_dst, b);
    Kokkos::deep_copy(space_, j_dst, j);
    space_.fence();
  }

 private:
  static int team_size() { return Traits::group_team_size; }
  // A new view's allocation, zeroed: on a host space by the calling thread (update_on_host launches nothing on
  // the space's threads).
  auto zeroed(const char* label) const {
    if constexpr (Traits::host) return Kokkos::view_alloc(calling_space_, std::string(label));
    else return Kokkos::view_alloc(std::string(label));
  }

  // A host space: each task's model solved by the single-model engine from the model's β and J, its rows staged by
  // the engine from the caller's arrays right before its solve: the engine's passes, solvers and sums, and where it
  // runs them, so every β and J has the bits of a Regressor fed the model's rows (docs/api.md "Model groups"), and a
  // model costs what a Regressor's batch costs, less the Regressor's own calls. Where the space spreads models
  // (spreads_models) and has at least as many models with rows as threads, its threads each take models
  // (spread_on_host); else one engine (ModelEngine, reused) solves them one after another, each where a Regressor's
  // batch would run (a model then has every thread of the space, as it would alone). Every engine first makes room
  // for the largest model, so that the memory limit refuses the call before any model is written (errors of the
  // whole call change nothing).
  std::vector<GroupOutcome> update_on_host(const std::vector<GroupTask>& tasks, const Config& config) {
    std::vector<GroupOutcome> out(tasks.size());
    long long most_rows = 0;
    for (const GroupTask& t : tasks) most_rows = std::max(most_rows, t.r1 - t.r0);
    if constexpr (spreads_models) {
      const size_t threads = static_cast<size_t>(std::max(1, compat::concurrency(space_)));
      if (threads > 1 && tasks.size() >= threads) {
        spread_on_host(tasks, config, most_rows, threads, out);
        return out;
      }
    }
    if constexpr (Traits::host) {
      if (!model_engine_) model_engine_ = std::make_unique<ModelEngine>(ModelTraits::instance(device_id_), device_id_);
      model_engine_->reserve_model(most_rows, q_);
      for (size_t k = 0; k < tasks.size(); ++k) solve_on_host(*model_engine_, tasks[k], config, out[k]);
    }
    return out;
  }

  // The tasks' models solved by `workers` workers: the calling thread and workers − 1 threads started here and joined
  // before it returns, each with its own single-model engine (WorkerEngine) on its own instance, taking the next
  // model from a shared counter (models differ in rows). A worker touches only its engine, the counter, the outcomes
  // of its tasks and their models' rows of beta_ and info_ (each model is in one task), and its own failure slot;
  // the caller's arrays are only read. A worker's error leaves its model as it was and stops the handing out; once
  // every worker has joined, the error of the earliest failed task is rethrown here.
  void spread_on_host(const std::vector<GroupTask>& tasks, const Config& config, long long most_rows, size_t workers,
                      std::vector<GroupOutcome>& out) {
    if constexpr (spreads_models) {
      while (worker_engines_.size() < workers)
        worker_engines_.push_back(std::make_unique<WorkerEngine>(CallingTraits::instance(device_id_), device_id_));
      for (size_t w = 0; w < workers; ++w) worker_engines_[w]->reserve_model(most_rows, q_);
      std::atomic<size_t> next{0};
      std::atomic<bool> failed{false};
      struct Failure {
        size_t task = SIZE_MAX;
        std::exception_ptr error;
      };
      std::vector<Failure> failures(workers);
      const auto work = [&](size_t w) noexcept {
        for (size_t k; !failed.load() && (k = next.fetch_add(1)) < tasks.size();) {
          try {
            solve_on_host(*worker_engines_[w], tasks[k], config, out[k]);
          } catch (...) {
            failures[w] = {k, std::current_exception()};
            failed = true;
          }
        }
      };
      std::vector<std::thread> threads;
      threads.reserve(workers - 1);
      try {
        for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
      } catch (const std::system_error&) {  // no more threads: those started and the caller share the models
      }
      work(0);
      for (std::thread& t : threads) t.join();
      const Failure* first = nullptr;
      for (const Failure& f : failures)
        if (f.error && (!first || f.task < first->task)) first = &f;
      if (first) std::rethrow_exception(first->error);
    }
  }

  // One task's model solved by `engine` (update_on_host), its outcome in o.
  template <class ModelEngineType>
  void solve_on_host(ModelEngineType& engine, const GroupTask& t, const Config& config, GroupOutcome& o) {
    const GroupBatch& b = host_batch_;
    const bool row_major = b.x.layout == Layout::row_major;
    const long long ld = b.x.ld != 0 ? b.x.ld : (row_major ? p_ : b.x.rows);
    const S* x = static_cast<const S*>(b.x.data);
    const S* w = static_cast<const S*>(b.weights);
    Batch rows;  // the model's rows of the caller's arrays
    rows.x = MatrixRef{row_major ? x + t.r0 * ld : x + t.r0, t.r1 - t.r0, p_, ld, b.x.layout};
    rows.y = static_cast<const S*>(b.y) + t.r0;
    rows.weights = w ? w + t.r0 : nullptr;
    rows.dtype = b.dtype;
    BatchScalars bs;
    bs.n = t.r1 - t.r0;
    bs.penalized = p_;  // every feature; the intercept (q > p) never
    bs.has_weights = w != nullptr;
    bs.tau = config.tau;
    bs.h = t.h;
    bs.inv_n = t.inv_n;
    bs.lambda = t.lambda;
    bs.historical = t.historical;
    bs.ridge = config.ridge;
    const auto u = engine.update_model(rows, config, bs, &beta_(t.model, 0), &info_(t.model, 0, 0));
    if (u.bad_x) {  // its first row with a NaN or infinite value in X
      o.status = group_bad_x;
      for (long long i = t.r0; i < t.r1 && o.bad_row < 0; ++i)
        for (long long j = 0; j < p_ && o.bad_row < 0; ++j)
          if (!std::isfinite(row_major ? x[i * ld + j] : x[j * ld + i])) o.bad_row = i;
      return;
    }
    o.iterations = u.diagnostics.iterations;
    o.converged = u.diagnostics.converged ? 1 : 0;
    o.objective = u.diagnostics.objective;
    o.status = u.min_norm ? group_singular : u.written ? group_ok : group_non_finite;
  }

  template <class View>
  void grow(View& v, long long n, const char* label) {
    if (static_cast<long long>(v.extent(0)) < n) v = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
  }

  // The batch's rows as design rows (features, then 1 for the intercept), y and the weights, on the space: host
  // arrays for a space with its own memory go as laid out through the process's pinned staging slots (X in one
  // piece, y and w straight into their buffers), then a kernel forms the design rows; a host space's kernel and
  // a device batch's read the caller's arrays in place. The buffers only grow. Returns that kernel's functor; with
  // `form` false it is not run (a host space's update runs it model by model).
  StageRows<S, Rows, Vector> stage(const GroupBatch& b, bool form = true) {
    const long long n = b.x.rows, p = b.x.cols;
    const bool row_major = b.x.layout == Layout::row_major;
    const long long ld = b.x.ld != 0 ? b.x.ld : (row_major ? p : n);
    const S* sx = static_cast<const S*>(b.x.data);
    const S* sy = static_cast<const S*>(b.y);
    const S* sw = static_cast<const S*>(b.weights);
    if (b.memory == Memory::device) {
      if (n > 0) Traits::check_device_pointer(sx, "X", device_id_);
      if (sy) Traits::check_device_pointer(sy, "y", device_id_);
      if (sw) Traits::check_device_pointer(sw, "sample weights", device_id_);
    } else {
      if (n > 0) Traits::check_host_pointer(sx, "X");
      if (sy) Traits::check_host_pointer(sy, "y");
      if (sw) Traits::check_host_pointer(sw, "sample weights");
    }
    has_w_ = sw != nullptr;
    // A host space's stage_and_check only describes the batch: its update reads the caller's arrays in place.
    if ((form || !Traits::host) && n > static_cast<long long>(y_.extent(0))) {
      x_ = Rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("rh::group_x")), n, q_);
      y_ = Vector("rh::group_y", n);
      w_ = Vector("rh::group_w", n);
      s_ = Vector("rh::group_score_weights", n);
      c_ = Vector("rh::group_curvature_weights", n);
    }
    if (n == 0) return StageRows<S, Rows, Vector>{x_, y_, w_, sx, sy, sw, p, ld, row_major, q_ > p_, false, false};
    if (b.memory == Memory::host && !Traits::host) {
      const long long span = row_major ? (n - 1) * ld + p : (p - 1) * ld + n;  // elements X spans
      grow(x_given_, span, "rh::group_x_as_given");
      using Pool = StagingPool<typename Traits::staging_space>;
      const long long chunk = std::max<long long>(1, Traits::staging_chunk_bytes / static_cast<long long>(sizeof(S)));
      Pool::use(static_cast<std::size_t>(chunk) * sizeof(S), [&](char* base) {
        PooledSends<typename Traits::staging_space, Space> send{space_, base, chunk * static_cast<long long>(sizeof(S))};
        try {
          send(sx, span, x_given_);
          if (sy) send(sy, n, y_);
          if (sw) send(sw, n, w_);
        } catch (...) {
          space_.fence();  // no transfer may still read the pool when it passes to another staging
          throw;
        }
        space_.fence();
      });
      sx = x_given_.data();
      sy = sw = nullptr;  // already in place
    }
    const StageRows<S, Rows, Vector> rows{x_, y_, w_, sx, sy, sw, p, ld, row_major, q_ > p_, b.y != nullptr, has_w_};
    BatchCounts unused;  // the group checks each model's rows itself (GroupCheckRows)
    if (form) Kokkos::parallel_reduce("rh::group_stage", Kokkos::RangePolicy<Space>(space_, 0, n), rows, unused);
    return rows;
  }

  Space space_;
  CallingSpace calling_space_;  // a host space's calling thread (update_on_host); space_ elsewhere
  int device_id_;
  long long q_, p_;
  Rows beta_;
  Matrices info_, info_new_;
  Rows x_;
  GroupBatch host_batch_;  // a host space's batch checked last (update_on_host reads its arrays)
  Vector y_, w_, s_, c_;
  Vector x_given_;  // host X as laid out by the caller, on a space with its own memory
  bool has_w_ = false;  // of the batch staged last
  Kokkos::View<std::int64_t*, Mem> offsets_;
  Kokkos::View<GroupRowCheck*, Mem> checks_;
  Kokkos::View<GroupTask*, Mem> tasks_;
  Kokkos::View<GroupOutcome*, Mem> outcomes_;
  std::unique_ptr<ModelEngine> model_engine_;  // a host space's (update_on_host)
  std::vector<std::unique_ptr<WorkerEngine>> worker_engines_;  // one per worker, where the space spreads the models
};

template <class Traits>
std::unique_ptr<GroupEngineBase> make_group_engine_for(Dtype dtype, int device_id, long long n_models, long long p,
                                                       bool fit_intercept) {
  auto space = Traits::instance(device_id);
  if (dtype == Dtype::f32)
    return std::make_unique<GroupEngine<Traits, float>>(space, device_id, n_models, p, fit_intercept);
  return std::make_unique<GroupEngine<Traits, double>>(space, device_id, n_models, p, fit_intercept);
}

}  // namespace rh::detail

// The group engine and its factory, as an X-macro arm like those of rh/detail/instances.hpp: backends/
// instantiate.cpp.in defines them once per space, every other translation unit sees them as extern.
#define RH_GROUP_INSTANCES(name, TRAITS, MODE)                                 \
  RH_INSTANCE_##MODE template class ::rh::detail::GroupEngine<TRAITS, float>;  \
  RH_INSTANCE_##MODE template class ::rh::detail::GroupEngine<TRAITS, double>; \
  RH_INSTANCE_##MODE template std::unique_ptr<::rh::detail::GroupEngineBase>   \
      rh::detail::make_group_engine_for<TRAITS>(Dtype, int, long long, long long, bool);
RH_FOR_EACH_COMPILED_SPACE(RH_GROUP_INSTANCES, DECLARE)
