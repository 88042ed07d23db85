// libFuzzer target: rh::Regressor::set_state on arbitrary states (shapes, counters, values, NaN/Inf, both dtypes,
// intercept or not). Properties: a refused state is an rh::Error invalid_state and leaves the model bit for bit as it
// was; an accepted one is exactly what state() returns afterwards, and the model then takes a batch (or refuses it
// with an rh::Error, unchanged).
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

// A fitted model per dtype and intercept setting, kept across inputs (restored after each).
rh::Regressor& model_of(rh::Dtype dtype, bool intercept) {
  static rh::Regressor* models[2][2] = {};
  rh::Regressor*& m = models[dtype == rh::Dtype::f32][intercept];
  if (!m) {
    rh::Config config;
    config.fit_intercept = intercept;
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

// What a model of `dtype` holds after importing `st`: float32 models keep float values.
rh::State as_held(rh::State st, rh::Dtype dtype) {
  if (dtype == rh::Dtype::f32) {
    for (double& v : st.coefficients) v = static_cast<float>(v);
    for (double& v : st.information) v = static_cast<float>(v);
  }
  return st;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const rh::Dtype dtype = in.ConsumeBool() ? rh::Dtype::f32 : rh::Dtype::f64;
  rh::Regressor& m = model_of(dtype, in.ConsumeBool());
  const rh::State before = m.state();

  rh::State st;
  st.n_features = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(0, 4) : pick_count(in);
  st.fit_intercept = in.ConsumeBool();
  st.n_samples_seen = pick_count(in);
  st.batch_count = pick_count(in);
  st.previous_lambda = pick_value(in);
  st.weight_sum = pick_value(in);
  // Mostly the shape n_features implies, sometimes another one.
  const std::int64_t implied = st.n_features >= 0 && st.n_features <= 8 ? st.n_features + st.fit_intercept : 0;
  const auto q = static_cast<std::size_t>(in.ConsumeBool() ? implied : in.ConsumeIntegralInRange(0, 9));
  const std::size_t q2 = in.ConsumeBool() ? q * q : in.ConsumeIntegralInRange<std::size_t>(0, 81);
  for (std::size_t i = 0; i < q; ++i) st.coefficients.push_back(pick_value(in));
  for (std::size_t i = 0; i < q2; ++i) st.information.push_back(pick_value(in));

  try {
    m.set_state(st);
  } catch (const rh::Error& e) {
    if (e.code() != rh::Errc::invalid_state) rh_fuzz::violated("a refused state is invalid_state", e.what());
    if (!rh_fuzz::same_state(m.state(), before)) rh_fuzz::violated("a refused state leaves the model as it was");
    return 0;
  }
  if (!rh_fuzz::same_state(m.state(), as_held(st, dtype))) rh_fuzz::violated("state() returns the imported state");
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
