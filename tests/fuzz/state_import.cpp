// libFuzzer target: rh::Regressor::set_state on arbitrary states (shapes, counters, values, NaN/Inf, K absent, any or
// symmetric, both dtypes, intercept or not, inference or not). Properties: a refused state is an rh::Error
// invalid_state and leaves the model bit for bit as it was; an accepted one is exactly what state() returns afterwards;
// with inference, every inference call then gives finite values and variances > 0 or fails with numerical_error; and
// the model then takes a batch (or refuses it with an rh::Error, unchanged).
#include <cmath>
#include <cstdint>
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_support.hpp"
#include "rh/regressor.hpp"

namespace {

constexpr std::int64_t kRows = 6, kCols = 2;
const double kX[kRows * kCols] = {1, -2, 0.5, 3, -1, 1, 2, 2, -0.5, 0, 4, -3};
const double kY[kRows] = {1, 2, -1, 0.5, 3, 10};
const float kXf[kRows * kCols] = {1, -2, 0.5f, 3, -1, 1, 2, 2, -0.5f, 0, 4, -3};
const float kYf[kRows] = {1, 2, -1, 0.5f, 3, 10};

void feed(rh::Regressor& m, rh::Dtype dtype) {
  if (dtype == rh::Dtype::f64)
    m.partial_fit(rh::host_batch(kX, kY, kRows, kCols));
  else
    m.partial_fit(rh::host_batch(kXf, kYf, kRows, kCols));
}

// A fitted model per dtype, intercept and inference setting, kept across inputs (restored after each).
rh::Regressor& model_of(rh::Dtype dtype, bool intercept, bool inference) {
  static rh::Regressor* models[2][2][2] = {};
  rh::Regressor*& m = models[dtype == rh::Dtype::f32][intercept][inference];
  if (!m) {
    rh::Config config;
    config.fit_intercept = intercept;
    config.inference = inference;
    m = new rh::Regressor(rh::Space::serial, dtype, config);  // lives until the process ends
    feed(*m, dtype);
  }
  return *m;
}

std::int64_t pick_count(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: return 0;
    case 1: return in.ConsumeIntegralInRange<std::int64_t>(-2, 40);
    case 2: return in.PickValueInArray<std::int64_t>({INT64_MIN, INT64_MAX, -1, std::int64_t{1} << 40});
    default: return in.ConsumeIntegral<std::int64_t>();
  }
}

double pick_value(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: return 0.0;
    case 1: return static_cast<double>(in.ConsumeIntegralInRange(-4, 4)) / 2;
    default: {  // any bit pattern: NaN, Inf, subnormals, values beyond float's range
      const std::uint64_t bits = in.ConsumeIntegral<std::uint64_t>();
      double v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
  }
}

// A value for a scalar field of the state, by its type: a count, a double, a flag.
void pick_into(FuzzedDataProvider& in, std::int64_t& v) { v = pick_count(in); }
void pick_into(FuzzedDataProvider& in, double& v) { v = pick_value(in); }
void pick_into(FuzzedDataProvider& in, bool& flag) { flag = in.ConsumeBool(); }

// K: absent, q2 values of any kind, or q×q mirrored (its diagonal mostly ≥ 0), then perhaps one entry spoiled: an
// off-diagonal one moved by one ulp (within rounding unless K is tiny) or by 1, or a diagonal one negated.
void pick_score_variance(FuzzedDataProvider& in, rh::State& st, std::size_t q, std::size_t q2) {
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0: return;
    case 1:
      for (std::size_t i = 0; i < q2; ++i) st.score_variance.push_back(pick_value(in));
      break;
    default:
      st.score_variance.assign(q * q, 0.0);
      for (std::size_t i = 0; i < q; ++i)
        for (std::size_t j = i; j < q; ++j) {
          const double v = pick_value(in);
          st.score_variance[i * q + j] = st.score_variance[j * q + i] = i == j && in.ConsumeBool() ? std::fabs(v) : v;
        }
  }
  if (q < 2 || st.score_variance.size() != q * q) return;
  const std::size_t i = in.ConsumeIntegralInRange<std::size_t>(0, q - 1);
  const std::size_t j = (i + 1 + in.ConsumeIntegralInRange<std::size_t>(0, q - 2)) % q;
  double& off = st.score_variance[i * q + j];
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 1: off = std::nextafter(off, INFINITY); break;
    case 2: off += 1; break;
    case 3: st.score_variance[i * q + i] = -st.score_variance[i * q + i]; break;
    default: break;
  }
}

// Inference on an imported state: finite values and variances > 0, or numerical_error (docs/method.md §12).
void check_inference(const rh::Regressor& m) {
  try {
    const std::vector<double> cov = m.covariance(), se = m.standard_errors(), z = m.z_statistics(),
                              p = m.p_values();
    const rh::ConfidenceIntervals ci = m.confidence_intervals(0.95);
    const std::size_t q = se.size();
    for (double v : cov)
      if (!std::isfinite(v)) rh_fuzz::violated("a covariance is finite");
    for (std::size_t j = 0; j < q; ++j) {
      if (!(cov[j * q + j] > 0)) rh_fuzz::violated("a variance is > 0");
      if (!(se[j] > 0 && std::isfinite(se[j]))) rh_fuzz::violated("a standard error is finite and > 0");
      if (std::isnan(z[j])) rh_fuzz::violated("a z statistic is a number");  // ±inf: β/se beyond double's range
      if (!(p[j] >= 0 && p[j] <= 1)) rh_fuzz::violated("a p-value is in [0, 1]");
      if (!(std::isfinite(ci.lower[j]) && std::isfinite(ci.upper[j]) && ci.lower[j] <= ci.upper[j]))
        rh_fuzz::violated("a confidence interval is finite");
    }
  } catch (const rh::Error& e) {
    if (e.code() != rh::Errc::numerical_error) rh_fuzz::violated("inference fails only with numerical_error", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const rh::Dtype dtype = in.ConsumeBool() ? rh::Dtype::f32 : rh::Dtype::f64;
  const bool intercept = in.ConsumeBool();

  rh::State st;
  // Every scalar field of the list (rh/types.hpp) by its type; then n_features mostly small, so that the arrays'
  // shapes can match it.
#define RH_PICK_SCALAR(type, name, init, since) pick_into(in, st.name);
  RH_STATE_SCALARS(RH_PICK_SCALAR)
#undef RH_PICK_SCALAR
  if (in.ConsumeBool()) st.n_features = in.ConsumeIntegralInRange<std::int64_t>(0, 4);
  // Mostly the shape n_features implies, sometimes another one.
  const std::int64_t implied = st.n_features >= 0 && st.n_features <= 8 ? st.n_features + st.fit_intercept : 0;
  const auto q = static_cast<std::size_t>(in.ConsumeBool() ? implied : in.ConsumeIntegralInRange(0, 9));
  const std::size_t q2 = in.ConsumeBool() ? q * q : in.ConsumeIntegralInRange<std::size_t>(0, 81);
  for (std::size_t i = 0; i < q; ++i) st.coefficients.push_back(pick_value(in));
  for (std::size_t i = 0; i < q2; ++i) st.information.push_back(pick_value(in));
  pick_score_variance(in, st, q, q2);
  // Mostly what K can hold: no batch (K absent or inference off) or every batch (inference on since the first).
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0: st.score_variance_batches = 0; break;
    case 1: st.score_variance_batches = st.batch_count; break;
    default: break;  // as picked
  }
  rh::Regressor& m = model_of(dtype, intercept, in.ConsumeBool());
  const rh::State before = m.state();

  try {
    m.set_state(st);
  } catch (const rh::Error& e) {
    if (e.code() != rh::Errc::invalid_state) rh_fuzz::violated("a refused state is invalid_state", e.what());
    if (!rh_fuzz::same_state(m.state(), before)) rh_fuzz::violated("a refused state leaves the model as it was");
    return 0;
  }
  // Absent K is held as zeros; a float32 model holds floats, and validate_state refuses any other value.
  if (!rh_fuzz::same_state(m.state(), rh::complete_state(st))) rh_fuzz::violated("state() returns the imported state");
  if (m.fitted() && m.config().inference && st.score_variance_batches == st.batch_count) check_inference(m);
  if (m.fitted()) {
    const rh::State imported = m.state();
    try {
      feed(m, dtype);
    } catch (const rh::Error&) {
      if (!rh_fuzz::same_state(m.state(), imported)) rh_fuzz::violated("a refused batch leaves the model as it was");
    }
  }
  m.set_state(before);
  return 0;
}
