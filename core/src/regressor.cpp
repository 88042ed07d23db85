// rh::Regressor: host-side validation and dispatch to the engine of the chosen space. No numerics here.
#include "rh/regressor.hpp"

#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <new>
#include <string>

#include "guarded.hpp"
#include "inference.hpp"
#include "platform.hpp"
#include "rh/detail/engine_base.hpp"

namespace rh {

namespace {

std::atomic<std::uint64_t> memory_limit_bytes{0};  // 0: the default

constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int64_t>::max() / 4;

}  // namespace

void set_memory_limit(std::uint64_t bytes) { memory_limit_bytes = bytes; }

std::uint64_t memory_limit() {
  const std::uint64_t set = memory_limit_bytes;
  if (set > 0) return set;
  const std::uint64_t physical = platform::physical_memory_bytes();
  return physical > 0 ? physical : std::numeric_limits<std::uint64_t>::max();
}

Regressor::Regressor(Space space, Dtype dtype, const Config& config, int device_id)
    : space_(space), dtype_(dtype), device_id_(device_id), config_(config) {
  validate(config);
  if (dtype != Dtype::f32 && dtype != Dtype::f64)
    throw Error(Errc::invalid_argument, fmt::format("unknown dtype enum value {}", static_cast<int>(dtype)));
  if (device_id < 0) throw Error(Errc::invalid_argument, fmt::format("device id must be >= 0 (got {})", device_id));
  initialize_runtime();
  engine_ = guarded("creating the engine", [&] { return detail::make_engine(space, dtype, device_id); });
}

Regressor::~Regressor() = default;
Regressor::Regressor(Regressor&&) noexcept = default;
Regressor& Regressor::operator=(Regressor&&) noexcept = default;

detail::EngineBase& Regressor::engine(const char* what) const {
  if (!engine_)
    throw Error(Errc::invalid_state,
                fmt::format("{}: this Regressor was moved from; assign a new one to it before using it", what));
  return *engine_;
}

void Regressor::set_config(const Config& config) {
  engine("set_config");
  validate(config);
  config_ = config;
  reset();
}

void Regressor::reset() {
  engine("reset").reset();
  n_features_ = 0;
  fit_intercept_ = config_.fit_intercept;
  diagnostics_.reset();
}

void Regressor::check_batch_shape(const Batch& b, bool first_batch, const char* what) const {
  auto bad = [what](const std::string& m) { throw Error(Errc::invalid_argument, fmt::format("{}: {}", what, m)); };
  if (b.dtype != Dtype::f32 && b.dtype != Dtype::f64) bad(fmt::format("unknown dtype enum value {}", static_cast<int>(b.dtype)));
  if (b.dtype != dtype_)
    bad(fmt::format("the data is {} but the model is {}", dtype_name(b.dtype), dtype_name(dtype_)));
  if (b.memory != Memory::host && b.memory != Memory::device)
    bad(fmt::format("unknown memory enum value {}", static_cast<int>(b.memory)));
  if (b.x.layout != Layout::row_major && b.x.layout != Layout::col_major)
    bad(fmt::format("unknown layout enum value {}", static_cast<int>(b.x.layout)));
  if (b.x.rows <= 0)
    bad(fmt::format("found array with {} sample(s) (shape=({}, {})) while a minimum of 1 is required", b.x.rows,
                    b.x.rows, b.x.cols));
  if (b.x.cols <= 0)
    bad(fmt::format("{} feature(s) (shape=({}, {})) while a minimum of 1 is required", b.x.cols, b.x.rows, b.x.cols));
  if (!b.x.data) bad("X is a null pointer");
  const std::int64_t tight = b.x.layout == Layout::row_major ? b.x.cols : b.x.rows;
  if (b.x.ld != 0 && b.x.ld < tight)
    bad(fmt::format("leading dimension {} is smaller than {} for this layout", b.x.ld, tight));
  const std::int64_t ld = b.x.ld != 0 ? b.x.ld : tight;
  const std::int64_t other = b.x.layout == Layout::row_major ? b.x.rows : b.x.cols;
  if (other > kMaxIndex / ld || b.x.rows > kMaxIndex / (b.x.cols + 1))
    bad(fmt::format("shape ({}, {}) with leading dimension {} overflows the index range", b.x.rows, b.x.cols, ld));
  if (!first_batch && n_features_ > 0 && b.x.cols != n_features_)
    bad(fmt::format("X has {} features, but the model is expecting {} features as input", b.x.cols, n_features_));
}

void Regressor::check_fitted(const char* what) const {
  if (!fitted())
    throw Error(Errc::invalid_state, fmt::format("{}: call fit or partial_fit before using this estimator", what));
}

const Diagnostics& Regressor::partial_fit(const Batch& batch) {
  detail::EngineBase& e = engine("partial_fit");
  check_batch_shape(batch, false, "partial_fit");
  if (!batch.y) throw Error(Errc::invalid_argument, "partial_fit: y is a null pointer");
  if (n_features_ > 0 && fit_intercept_ != config_.fit_intercept)
    throw Error(Errc::invalid_state, "partial_fit: the state's fit_intercept differs from the configuration");
  const Diagnostics d = guarded("partial_fit", [&] { return e.update(batch, config_, false); });
  n_features_ = batch.x.cols;
  fit_intercept_ = config_.fit_intercept;
  diagnostics_ = d;
  return *diagnostics_;
}

const Diagnostics& Regressor::fit(const Batch& batch) {
  detail::EngineBase& e = engine("fit");
  check_batch_shape(batch, true, "fit");
  if (!batch.y) throw Error(Errc::invalid_argument, "fit: y is a null pointer");
  const Diagnostics d = guarded("fit", [&] { return e.update(batch, config_, true); });
  n_features_ = batch.x.cols;
  fit_intercept_ = config_.fit_intercept;
  diagnostics_ = d;
  return *diagnostics_;
}

void Regressor::check_predict(const MatrixRef& x, Dtype out_dtype, Memory memory) const {
  engine("predict");
  check_fitted("predict");
  Batch b;
  b.x = x;
  b.y = nullptr;
  b.dtype = out_dtype;
  b.memory = memory;
  check_batch_shape(b, false, "predict");
}

void Regressor::output_allocation_failed(std::int64_t rows) {
  throw Error(Errc::allocation_failed, fmt::format("predict: no memory for {} predictions", rows));
}

void Regressor::predict(const MatrixRef& x, void* out, Dtype out_dtype, Memory memory) {
  check_predict(x, out_dtype, memory);
  if (!out) throw Error(Errc::invalid_argument, "predict: the output is a null pointer");
  guarded("predict", [&] { engine_->predict(x, memory, out); });
}

double Regressor::score(const Batch& batch) {
  engine("score");
  check_fitted("score");
  check_batch_shape(batch, false, "score");
  if (!batch.y) throw Error(Errc::invalid_argument, "score: y is a null pointer");
  return guarded("score", [&] { return engine_->score(batch); });
}

const Diagnostics& Regressor::diagnostics() const {
  engine("diagnostics");
  if (!diagnostics_) throw Error(Errc::invalid_state, "no batch has been processed");
  return *diagnostics_;
}

State Regressor::state() const {
  const detail::EngineBase& e = engine("state");
  return guarded("state", [&] { return e.export_state(); });
}

void Regressor::set_state(const State& st) {
  detail::EngineBase& e = engine("set_state");
  validate_state(st, dtype_);
  if (st.n_features > 0 && st.fit_intercept != config_.fit_intercept)
    throw Error(Errc::invalid_state, fmt::format("set_state: the state has fit_intercept={} but the configuration "
                                                 "has fit_intercept={}",
                                                 st.fit_intercept, config_.fit_intercept));
  guarded("set_state", [&] { e.import_state(complete_state(st)); });
  n_features_ = st.n_features;
  fit_intercept_ = st.fit_intercept;
  diagnostics_.reset();
}

State Regressor::inference_state(const char* what) const {
  engine(what);
  if (config_.penalty != Penalty::none)
    throw Error(Errc::unavailable, fmt::format("{}: no inference with penalty {}: {}", what,
                                               penalty_name(config_.penalty), inference_penalty_reason));
  if (!config_.inference)
    throw Error(Errc::unavailable, fmt::format("{}: inference is off; create the model with Config::inference = "
                                               "true (rh_config.inference = 1) so that it keeps the score variance K",
                                               what));
  check_fitted(what);
  State st = state();
  if (st.score_variance_batches != st.batch_count)
    throw Error(Errc::unavailable,
                fmt::format("{}: the score variance K holds {} of the {} batches (the state came from a checkpoint of "
                            "format 1 or from a model without inference); it cannot be rebuilt from the summaries: "
                            "reset the model and fit the stream again",
                            what, st.score_variance_batches, st.batch_count));
  return st;
}

std::vector<double> Regressor::covariance() const {
  return detail::sandwich_covariance(inference_state("covariance"));
}

void Regressor::estimates(const char* what, std::vector<double>& beta, std::vector<double>& se) const {
  State st = inference_state(what);
  const std::vector<double> cov = detail::sandwich_covariance(st);
  const size_t q = st.coefficients.size();
  se.resize(q);
  for (size_t j = 0; j < q; ++j) se[j] = std::sqrt(cov[j * q + j]);
  beta = std::move(st.coefficients);
}

std::vector<double> Regressor::standard_errors() const {
  std::vector<double> beta, se;
  estimates("standard_errors", beta, se);
  return se;
}

std::vector<double> Regressor::z_statistics() const {
  std::vector<double> beta, se;
  estimates("z_statistics", beta, se);
  for (size_t j = 0; j < beta.size(); ++j) beta[j] /= se[j];
  return beta;
}

std::vector<double> Regressor::p_values() const {
  std::vector<double> beta, se;
  estimates("p_values", beta, se);
  for (size_t j = 0; j < beta.size(); ++j) beta[j] = detail::two_sided_p_value(beta[j] / se[j]);
  return beta;
}

ConfidenceIntervals Regressor::confidence_intervals(double level) const {
  if (!(level > 0.0 && level < 1.0))
    throw Error(Errc::invalid_argument,
                fmt::format("confidence_intervals: level must be between 0 and 1, exclusive (got {})", level));
  std::vector<double> beta, se;
  estimates("confidence_intervals", beta, se);
  const double z = detail::normal_quantile(0.5 + 0.5 * level);
  ConfidenceIntervals out;
  out.level = level;
  out.lower.resize(beta.size());
  out.upper.resize(beta.size());
  for (size_t j = 0; j < beta.size(); ++j) {
    out.lower[j] = beta[j] - z * se[j];
    out.upper[j] = beta[j] + z * se[j];
  }
  return out;
}

}  // namespace rh
