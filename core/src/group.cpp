// rh::RegressorGroup: validation of the group batch as a whole and of each model's rows, the per-model scalars
// (docs/method.md §3, §7) and dispatch to the group engine of the chosen space. No numerics here.
#include "rh/group.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "guarded.hpp"
#include "rh/detail/engine_base.hpp"  // max_state_count
#include "rh/detail/group/engine_base.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/penalties.hpp"

namespace rh {

namespace {

// Why a model's own rows cannot be used (empty: they can), from the engine's check of them (what the single
// model's pass 1 checks, docs/method.md §10: finite X, y and weights, weights ≥ 0 and not all 0).
std::string why_not(const detail::GroupRowCheck& c) {
  switch (c.problem) {
    case detail::bad_x: return fmt::format("X must not contain NaN or infinite values (row {} of the batch)", c.row);
    case detail::bad_y: return fmt::format("y must not contain NaN or infinite values (row {} of the batch)", c.row);
    case detail::bad_weight:
      return fmt::format("sample weights must not contain NaN or infinite values (row {} of the batch)", c.row);
    case detail::negative_weight: return fmt::format("sample weights must be non-negative (row {} of the batch)", c.row);
    default: break;
  }
  if (!(c.weight > 0)) return "sample weights cannot be all zero";
  return {};
}

}  // namespace

RegressorGroup::RegressorGroup(Space space, Dtype dtype, const Config& config, std::int64_t n_models,
                               std::int64_t p, int device_id)
    : space_(space), dtype_(dtype), config_(config), n_models_(n_models), p_(p), device_id_(device_id) {
  validate(config);
  if (dtype != Dtype::f32 && dtype != Dtype::f64)
    throw Error(Errc::invalid_argument, fmt::format("unknown dtype enum value {}", static_cast<int>(dtype)));
  if (n_models < 1)
    throw Error(Errc::invalid_argument, fmt::format("a model group needs at least 1 model, got {}", n_models));
  if (p < 1) throw Error(Errc::invalid_argument, fmt::format("a model group needs p ≥ 1 features, got {}", p));
  const std::int64_t q = p + (config.fit_intercept ? 1 : 0);
  if (q > group_max_coefficients)
    throw Error(Errc::invalid_argument,
                fmt::format("a model group holds models of at most {} coefficients (q = p + intercept), got {}; "
                            "fit wider models with rh::Regressor",
                            group_max_coefficients, q));
  if (!detail::group_solves(config.penalty))
    throw Error(Errc::unavailable,
                fmt::format("penalty {} is not available in a model group yet", penalty_name(config.penalty)));
  if (config.inference)
    throw Error(Errc::unavailable, "inference is not available in a model group yet");
  if (static_cast<double>(n_models) * static_cast<double>(q) * static_cast<double>(q) * 2.0 *
          (dtype == Dtype::f64 ? 8.0 : 4.0) >
      static_cast<double>(memory_limit()))
    throw Error(Errc::allocation_failed,
                fmt::format("a group of {} models of {} coefficients exceeds the memory limit of {} bytes", n_models,
                            q, memory_limit()));
  if (device_id < 0) throw Error(Errc::invalid_argument, fmt::format("device id must be >= 0 (got {})", device_id));
  initialize_runtime();  // as a Regressor does: a group may be the process's first object
  engine_ = guarded("creating the model group", [&] {
    return detail::make_group_engine(space, dtype, device_id, n_models, p, config.fit_intercept);
  });
  const auto models = static_cast<size_t>(n_models);
  scalars_.assign(models, StateScalars());
  diagnostics_.assign(models, std::nullopt);
  status_.assign(models, std::nullopt);
  messages_.assign(models, std::string());
}

RegressorGroup::~RegressorGroup() = default;
RegressorGroup::RegressorGroup(RegressorGroup&&) noexcept = default;
RegressorGroup& RegressorGroup::operator=(RegressorGroup&&) noexcept = default;

detail::GroupEngineBase& RegressorGroup::engine(const char* what) const {
  if (!engine_) throw Error(Errc::invalid_state, fmt::format("{}: this RegressorGroup was moved from", what));
  return *engine_;
}

void RegressorGroup::check_model(std::int64_t m, const char* what) const {
  engine(what);
  if (m < 0 || m >= n_models_)
    throw Error(Errc::invalid_argument, fmt::format("{}: model {} is out of range [0, {})", what, m, n_models_));
}

void RegressorGroup::check_batch(const GroupBatch& b, const char* what, bool with_y) const {
  engine(what);
  auto bad = [what](const std::string& m) { throw Error(Errc::invalid_argument, fmt::format("{}: {}", what, m)); };
  if (b.dtype != dtype_)
    bad(fmt::format("the data is {} but the group is {}", dtype_name(b.dtype), dtype_name(dtype_)));
  if (b.memory != Memory::host && b.memory != Memory::device)
    bad(fmt::format("unknown memory enum value {}", static_cast<int>(b.memory)));
  if (b.x.layout != Layout::row_major && b.x.layout != Layout::col_major)
    bad(fmt::format("unknown layout enum value {}", static_cast<int>(b.x.layout)));
  if (b.x.rows < 0) bad(fmt::format("{} rows", b.x.rows));
  if (b.x.cols != p_)
    bad(fmt::format("X has {} features, but the group is expecting {} features as input", b.x.cols, p_));
  if (!b.offsets) bad("the row offsets are a null pointer");
  if (b.x.rows > 0 && !b.x.data) bad("X is a null pointer");
  if (with_y && b.x.rows > 0 && !b.y) bad("y is a null pointer");
  const std::int64_t tight = b.x.layout == Layout::row_major ? b.x.cols : b.x.rows;
  if (b.x.ld != 0 && b.x.ld < tight) bad(fmt::format("leading dimension {} is smaller than {} for this layout", b.x.ld, tight));
  const std::int64_t max_rows = std::numeric_limits<std::int32_t>::max();  // the team kernels index rows by int ranges
  if (b.x.rows > max_rows / (b.x.cols + 1)) bad(fmt::format("{} rows of {} features are too many", b.x.rows, b.x.cols));
  if (b.offsets[0] != 0) bad(fmt::format("the row offsets start at {}, not 0", b.offsets[0]));
  for (std::int64_t m = 0; m < n_models_; ++m)
    if (b.offsets[m + 1] < b.offsets[m])
      bad(fmt::format("the row offsets decrease at model {} ({} after {})", m, b.offsets[m + 1], b.offsets[m]));
  if (b.offsets[n_models_] != b.x.rows)
    bad(fmt::format("the row offsets end at {}, but X has {} rows", b.offsets[n_models_], b.x.rows));
}

std::int64_t RegressorGroup::partial_fit(const GroupBatch& b) {
  check_batch(b, "partial_fit", true);
  const auto checks = guarded("partial_fit", [&] { return engine("partial_fit").stage_and_check(b); });
  std::vector<detail::GroupTask> tasks;
  std::vector<double> weights;  // W_b of each task's rows
  std::vector<std::optional<Errc>> status(status_);
  std::vector<std::string> messages(messages_);
  for (std::int64_t m = 0; m < n_models_; ++m) {
    const std::int64_t r0 = b.offsets[m], r1 = b.offsets[m + 1];
    if (r0 == r1) continue;  // untouched, its last status included
    const auto mi = static_cast<size_t>(m);
    status[mi].reset();
    messages[mi].clear();
    const double weight = checks[mi].weight;
    std::string why = why_not(checks[mi]);
    const StateScalars& s = scalars_[mi];
    const double previous = s.weight_sum, cumulative = previous + weight;
    if (why.empty() && s.n_samples_seen >= detail::max_state_count - (r1 - r0))
      why = fmt::format("the model has seen {} samples: {} more would reach 2^62", s.n_samples_seen, r1 - r0);
    if (why.empty() && (!std::isfinite(cumulative) || !std::isfinite(1.0 / cumulative)))
      why = fmt::format("the cumulative sample weight N_b = {} + {} = {} is out of range: N_b and 1/N_b must be "
                        "finite; scale the sample weights",
                        previous, weight, cumulative);
    if (!why.empty()) {
      status[mi] = Errc::invalid_argument;
      messages[mi] = fmt::format("partial_fit: model {}: {}; the model was left unchanged", m, why);
      continue;
    }
    detail::GroupTask t;
    t.model = m;
    t.r0 = r0;
    t.r1 = r1;
    t.inv_n = 1.0 / cumulative;
    t.h = detail::bandwidth_for(config_.bandwidth_scale, cumulative, p_, config_.tau);
    detail::with_penalty(config_.penalty, [&](auto tag) {
      using P = typename decltype(tag)::type;
      t.lambda = P::lambda(config_, cumulative, p_);
      t.historical = P::historical(config_, s.n_samples_seen == 0 ? 0.0 : previous, cumulative, s.previous_lambda);
    });
    tasks.push_back(t);
    weights.push_back(weight);
  }
  std::vector<detail::GroupOutcome> outcomes;
  if (!tasks.empty())
    outcomes = guarded("partial_fit", [&] { return engine("partial_fit").update(tasks, config_); });
  std::int64_t committed = 0;
  for (size_t k = 0; k < tasks.size(); ++k) {
    const detail::GroupTask& t = tasks[k];
    const detail::GroupOutcome& o = outcomes[k];
    const auto mi = static_cast<size_t>(t.model);
    if (o.status == detail::group_bad_x) {  // a host space checks X as it forms the model's rows
      detail::GroupRowCheck bad;
      bad.row = o.bad_row;
      bad.problem = detail::bad_x;
      status[mi] = Errc::invalid_argument;
      messages[mi] = fmt::format("partial_fit: model {}: {}; the model was left unchanged", t.model, why_not(bad));
      continue;
    }
    if (o.status != detail::group_ok) {
      status[mi] = Errc::numerical_error;
      messages[mi] = o.status == detail::group_singular
                         ? fmt::format("partial_fit: model {}: the Newton system is singular and the minimum-norm "
                                       "fallback is not available in a model group yet (set ridge > 0); the model "
                                       "was left unchanged",
                                       t.model)
                         : fmt::format("partial_fit: model {}: the update produced a non-finite coefficient, "
                                       "information (J) value or objective ({}); the model was left unchanged",
                                       t.model, o.objective);
      continue;
    }
    Diagnostics d;
    d.iterations = o.iterations;
    d.converged = o.converged != 0;
    d.objective = o.objective;
    d.bandwidth = t.h;
    d.lambda_value = t.lambda;
    StateScalars& s = scalars_[mi];
    s = detail::scalars_after_batch(s, s.n_samples_seen == 0, p_, t.r1 - t.r0, t.lambda,
                                    s.weight_sum + weights[k], config_);
    diagnostics_[mi] = d;
    ++committed;
  }
  status_ = std::move(status);
  messages_ = std::move(messages);
  return committed;
}

void RegressorGroup::predict(const GroupBatch& x, void* out, Dtype out_dtype) {
  check_batch(x, "predict", false);
  if (out_dtype != dtype_)
    throw Error(Errc::invalid_argument, fmt::format("predict: the output is {} but the group is {}",
                                                    dtype_name(out_dtype), dtype_name(dtype_)));
  if (x.x.rows > 0 && !out) throw Error(Errc::invalid_argument, "predict: the output is a null pointer");
  for (std::int64_t m = 0; m < n_models_; ++m)
    if (x.offsets[m + 1] > x.offsets[m] && !fitted(m))
      throw Error(Errc::invalid_state,
                  fmt::format("predict: model {} has rows but was never fitted: call partial_fit with rows for it "
                              "first",
                              m));
  if (x.x.rows == 0) return;
  guarded("predict", [&] { engine("predict").predict(x, out); });
}

bool RegressorGroup::fitted(std::int64_t m) const {
  check_model(m, "fitted");
  return scalars_[static_cast<size_t>(m)].n_features > 0;
}

State RegressorGroup::state(std::int64_t m) const {
  check_model(m, "state");
  State st;
  static_cast<StateScalars&>(st) = scalars_[static_cast<size_t>(m)];
  if (st.n_features == 0) return st;
  guarded("state", [&] { engine("state").export_arrays(m, st.coefficients, st.information); });
  st.score_variance.assign(st.information.size(), 0.0);
  return st;
}

const Diagnostics& RegressorGroup::diagnostics(std::int64_t m) const {
  check_model(m, "diagnostics");
  const auto& d = diagnostics_[static_cast<size_t>(m)];
  if (!d)
    throw Error(Errc::invalid_state,
                fmt::format("diagnostics: model {} has no committed batch: call partial_fit with rows for it first", m));
  return *d;
}

std::optional<Errc> RegressorGroup::status(std::int64_t m) const {
  check_model(m, "status");
  return status_[static_cast<size_t>(m)];
}

const std::string& RegressorGroup::status_message(std::int64_t m) const {
  check_model(m, "status_message");
  return messages_[static_cast<size_t>(m)];
}

void RegressorGroup::set_state(std::int64_t m, const State& st) {
  check_model(m, "set_state");
  validate_state(st, dtype_);
  if (st.n_features != 0 && st.n_features != p_)
    throw Error(Errc::invalid_state, fmt::format("set_state: model {}: the state has {} features, but the group's "
                                                 "models have {}",
                                                 m, st.n_features, p_));
  if (st.n_features > 0 && st.fit_intercept != config_.fit_intercept)
    throw Error(Errc::invalid_state, fmt::format("set_state: model {}: the state has fit_intercept={} but the "
                                                 "configuration has fit_intercept={}",
                                                 m, st.fit_intercept, config_.fit_intercept));
  const State full = complete_state(st);
  if (full.score_variance_batches != 0 ||
      std::any_of(full.score_variance.begin(), full.score_variance.end(), [](double v) { return v != 0.0; }))
    throw Error(Errc::invalid_state, fmt::format("set_state: model {}: a model group keeps no score variance K "
                                                 "(inference is not available in a group): give K as zeros, held by "
                                                 "no batch",
                                                 m));
  guarded("set_state", [&] { engine("set_state").import_arrays(m, full.coefficients, full.information); });
  const auto mi = static_cast<size_t>(m);
  scalars_[mi] = static_cast<const StateScalars&>(full);
  diagnostics_[mi].reset();
  status_[mi].reset();
  messages_[mi].clear();
}

void RegressorGroup::reset(std::int64_t m) { set_state(m, State()); }

}  // namespace rh
