// Inference from the renewable summaries (docs/method.md §12) through the C++ API, on the space RH_TEST_SPACE:
// K against a sequential reference, the covariance and what follows from it, the errors that say why inference is
// unavailable, and a small Monte-Carlo coverage study (the full one is tools/inference/study, docs/inference.md).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cpp_test_support.hpp"
#include "doctest/doctest.h"
#include "rh/checkpoint.hpp"
#include "rh/regressor.hpp"

using cpp_test::failure_of;
using cpp_test::same_bits;
using cpp_test::space_under_test;

namespace {

// A stream from y = x·β + 0.3 + Student-t(3) noise, p features ~ N(0, 1) (std::mt19937_64: the same on every
// platform with one standard library), optionally with frequency weights 0, 1, 2, 3.
struct Stream {
  long long p = 0;
  std::vector<std::vector<double>> x, y, w;
};

Stream make_stream(long long p, const std::vector<long long>& rows, std::uint64_t seed, bool weighted = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::student_t_distribution<double> noise(3.0);
  Stream s;
  s.p = p;
  for (long long n : rows) {
    std::vector<double> x, y, w;
    for (long long i = 0; i < n; ++i) {
      double yi = 0.3 + noise(rng);
      for (long long j = 0; j < p; ++j) {
        const double v = normal(rng);
        x.push_back(v);
        yi += v * (j % 2 ? -0.5 : 1.0);
      }
      y.push_back(yi);
      if (weighted) w.push_back(static_cast<double>(i % 4));
    }
    s.x.push_back(x);
    s.y.push_back(y);
    s.w.push_back(w);
  }
  return s;
}

template <class S>
std::vector<S> as(const std::vector<double>& v) {
  return std::vector<S>(v.begin(), v.end());
}

// Streams every batch; returns the state after each.
template <class S>
std::vector<rh::State> stream_through(rh::Regressor& model, const Stream& s) {
  std::vector<rh::State> states;
  for (size_t b = 0; b < s.x.size(); ++b) {
    const auto x = as<S>(s.x[b]), y = as<S>(s.y[b]), w = as<S>(s.w[b]);
    const long long n = static_cast<long long>(s.y[b].size());
    model.partial_fit(rh::host_batch(x.data(), y.data(), n, s.p, w.empty() ? nullptr : w.data()));
    states.push_back(model.state());
  }
  return states;
}

rh::Config inference_config() {
  rh::Config c;
  c.inference = true;
  c.tol = 1e-10;
  return c;
}

// J⁻¹ K J⁻¹ by Gauss-Jordan elimination with partial pivoting (not the library's Cholesky).
std::vector<double> reference_covariance(const rh::State& st) {
  const size_t q = st.coefficients.size();
  std::vector<double> a = st.information, inv(q * q, 0.0);
  for (size_t i = 0; i < q; ++i) inv[i * q + i] = 1.0;
  for (size_t c = 0; c < q; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < q; ++r)
      if (std::fabs(a[r * q + c]) > std::fabs(a[piv * q + c])) piv = r;
    for (size_t k = 0; k < q; ++k) {
      std::swap(a[c * q + k], a[piv * q + k]);
      std::swap(inv[c * q + k], inv[piv * q + k]);
    }
    const double d = a[c * q + c];
    for (size_t k = 0; k < q; ++k) {
      a[c * q + k] /= d;
      inv[c * q + k] /= d;
    }
    for (size_t r = 0; r < q; ++r) {
      if (r == c) continue;
      const double f = a[r * q + c];
      for (size_t k = 0; k < q; ++k) {
        a[r * q + k] -= f * a[c * q + k];
        inv[r * q + k] -= f * inv[c * q + k];
      }
    }
  }
  std::vector<double> out(q * q, 0.0);
  for (size_t i = 0; i < q; ++i)
    for (size_t j = 0; j < q; ++j)
      for (size_t m = 0; m < q; ++m)
        for (size_t l = 0; l < q; ++l) out[i * q + j] += inv[i * q + m] * st.score_variance[m * q + l] * inv[l * q + j];
  return out;
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::fmax(m, std::fabs(x));
  return m;
}

template <class S>
void check_score_variance_against_reference() {
  const Stream s = make_stream(3, {300, 41, 7, 200}, 11, true);
  rh::Regressor model(space_under_test(), rh::dtype_of<S>(), inference_config());
  const std::vector<rh::State> states = stream_through<S>(model, s);
  // K_b = Σ over batches c ≤ b of Σ_i w_i ψ_τ(y_i − x_iᵀβ_c)² x_i x_iᵀ, in double, rows in order, from the inputs as
  // the model saw them (rounded to S) and each batch's committed β_c.
  const size_t q = 4;
  std::vector<double> k(q * q, 0.0);
  const double tau = inference_config().tau;
  for (size_t b = 0; b < states.size(); ++b) {
    const auto x = as<S>(s.x[b]), y = as<S>(s.y[b]), w = as<S>(s.w[b]);
    for (size_t i = 0; i < y.size(); ++i) {
      double xi[4] = {x[i * 3], x[i * 3 + 1], x[i * 3 + 2], 1.0};
      double r = y[i];
      for (size_t j = 0; j < q; ++j) r -= xi[j] * states[b].coefficients[j];
      const double psi = std::fmax(-tau, std::fmin(tau, r));
      for (size_t j = 0; j < q; ++j)
        for (size_t l = 0; l < q; ++l) k[j * q + l] += w[i] * psi * psi * xi[j] * xi[l];
    }
    CHECK(states[b].score_variance_batches == static_cast<std::int64_t>(b + 1));
    // float64: rounding of n·q-term sums (observed ≤ 1e-14 relative to max|K|); float32: the row weights and sums
    // in float (ε_f32 = 6e-8, 550 rows: observed ≤ 2e-6). Planting ψ in place of ψ² moves K by > 10 %.
    const double tol = (std::is_same_v<S, float> ? 2e-5 : 1e-12) * max_abs(k);
    for (size_t e = 0; e < q * q; ++e) CHECK(std::fabs(states[b].score_variance[e] - k[e]) <= tol);
  }
}

}  // namespace

TEST_CASE("K is the sum of w·ψ(r)²·x·xᵀ at each batch's β (float64)") { check_score_variance_against_reference<double>(); }
TEST_CASE("K is the sum of w·ψ(r)²·x·xᵀ at each batch's β (float32)") { check_score_variance_against_reference<float>(); }

TEST_CASE("inference on changes neither β nor J, bit for bit") {
  const Stream s = make_stream(20, {500, 64, 3, 120}, 12, true);
  for (rh::Dtype dtype : {rh::Dtype::f64, rh::Dtype::f32}) {
    rh::Config off = inference_config();
    off.inference = false;
    rh::Regressor with(space_under_test(), dtype, inference_config()), without(space_under_test(), dtype, off);
    const auto a = dtype == rh::Dtype::f64 ? stream_through<double>(with, s) : stream_through<float>(with, s);
    const auto b = dtype == rh::Dtype::f64 ? stream_through<double>(without, s) : stream_through<float>(without, s);
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(same_bits(a[i].coefficients, b[i].coefficients));
      CHECK(same_bits(a[i].information, b[i].information));
      CHECK(max_abs(a[i].score_variance) > 0);
      CHECK(max_abs(b[i].score_variance) == 0);  // K is kept only with inference
      CHECK(b[i].score_variance_batches == 0);
    }
  }
}

TEST_CASE("covariance, standard errors, z, p-values and intervals") {
  const Stream s = make_stream(3, {400, 250}, 13);
  rh::Regressor model(space_under_test(), rh::Dtype::f64, inference_config());
  const rh::State st = stream_through<double>(model, s).back();
  const std::vector<double> cov = model.covariance(), ref = reference_covariance(st);
  const size_t q = st.coefficients.size();
  for (size_t e = 0; e < q * q; ++e) CHECK(std::fabs(cov[e] - ref[e]) <= 1e-12 * max_abs(ref));
  for (size_t j = 0; j < q; ++j)
    for (size_t l = 0; l < q; ++l) CHECK(cov[j * q + l] == cov[l * q + j]);
  const auto se = model.standard_errors(), z = model.z_statistics(), p = model.p_values();
  const rh::ConfidenceIntervals ci = model.confidence_intervals(0.95), ci99 = model.confidence_intervals(0.99);
  CHECK(ci.level == 0.95);
  for (size_t j = 0; j < q; ++j) {
    CHECK(se[j] == std::sqrt(cov[j * q + j]));
    CHECK(z[j] == st.coefficients[j] / se[j]);
    CHECK(p[j] == doctest::Approx(std::erfc(std::fabs(z[j]) / std::sqrt(2.0))).epsilon(1e-15));
    // Φ⁻¹(0.975) and Φ⁻¹(0.995) to 16 digits (SciPy's ndtri).
    CHECK((ci.upper[j] - ci.lower[j]) / (2 * se[j]) == doctest::Approx(1.959963984540054).epsilon(1e-14));
    CHECK((ci99.upper[j] - ci99.lower[j]) / (2 * se[j]) == doctest::Approx(2.5758293035489004).epsilon(1e-14));
    CHECK((ci.upper[j] + ci.lower[j]) / 2 == doctest::Approx(st.coefficients[j]).epsilon(1e-15));
  }
  // Far tail, at a level that double holds exactly: Φ⁻¹(1 − 2⁻⁴¹) = 7.14355203435218933 (mpmath, 30 digits).
  const rh::ConfidenceIntervals tail = model.confidence_intervals(1 - std::ldexp(1.0, -40));
  CHECK((tail.upper[0] - tail.lower[0]) / (2 * se[0]) == doctest::Approx(7.143552034352189).epsilon(1e-14));
}

TEST_CASE("inference says why it is unavailable") {
  const Stream s = make_stream(2, {100}, 14);
  rh::Config off = inference_config();
  off.inference = false;
  rh::Regressor plain(space_under_test(), rh::Dtype::f64, off);
  stream_through<double>(plain, s);
  auto [code, message] = failure_of([&] { plain.covariance(); });
  CHECK(code == rh::Errc::unavailable);
  CHECK(message.find("inference is off") != std::string::npos);

  rh::Config l1 = inference_config();
  l1.penalty = rh::Penalty::l1;
  std::tie(code, message) = failure_of([&] { rh::validate(l1); });
  CHECK(code == rh::Errc::invalid_argument);
  CHECK(message.find("post-selection") != std::string::npos);
  l1.inference = false;
  rh::Regressor lasso(space_under_test(), rh::Dtype::f64, l1);
  stream_through<double>(lasso, s);
  std::tie(code, message) = failure_of([&] { lasso.standard_errors(); });
  CHECK(code == rh::Errc::unavailable);
  CHECK(message.find("post-selection") != std::string::npos);

  rh::Regressor fresh(space_under_test(), rh::Dtype::f64, inference_config());
  CHECK(failure_of([&] { fresh.p_values(); }).first == rh::Errc::invalid_state);
  stream_through<double>(fresh, s);
  for (double level : {0.0, 1.0, -0.5, 1.5, std::nan("")})
    CHECK(failure_of([&] { fresh.confidence_intervals(level); }).first == rh::Errc::invalid_argument);

  // A state without K (from a model without inference, or a checkpoint of format 1): unavailable until a reset.
  rh::Regressor resumed(space_under_test(), rh::Dtype::f64, inference_config());
  resumed.set_state(plain.state());
  std::tie(code, message) = failure_of([&] { resumed.confidence_intervals(); });
  CHECK(code == rh::Errc::unavailable);
  CHECK(message.find("holds 0 of the 1 batches") != std::string::npos);
  stream_through<double>(resumed, s);  // continuing does not help: K still lacks the first batch
  std::tie(code, message) = failure_of([&] { resumed.z_statistics(); });
  CHECK(message.find("holds 1 of the 2 batches") != std::string::npos);
  resumed.reset();
  stream_through<double>(resumed, s);
  CHECK(resumed.standard_errors().size() == 3);
}

TEST_CASE("a singular J is a numerical_error that names the coefficient") {
  // Column 2 = 2 × column 1: J is singular.
  std::vector<double> x, y;
  for (int i = 0; i < 50; ++i) {
    const double t = i * 0.1 - 2.5;
    x.insert(x.end(), {t, 2 * t});
    y.push_back(1.5 * t + 0.2 + (i % 3 - 1) * 0.1);
  }
  rh::Config c = inference_config();
  c.ridge = 0.0;
  rh::Regressor model(space_under_test(), rh::Dtype::f64, c);
  model.partial_fit(rh::host_batch(x.data(), y.data(), 50, 2));
  const auto [code, message] = failure_of([&] { model.covariance(); });
  CHECK(code == rh::Errc::numerical_error);
  CHECK(message.find("not positive definite") != std::string::npos);
}

// docs/method.md §12, "An imported K": symmetric within q·ε·max K(j,j) (the last ulp step inside is taken, the next
// refused) and a non-negative diagonal; a model's own K is exactly symmetric.
TEST_CASE("an imported K: symmetric within rounding, with a non-negative diagonal") {
  const Stream s = make_stream(3, {200, 150}, 21);
  rh::Regressor model(space_under_test(), rh::Dtype::f64, inference_config());
  stream_through<double>(model, s);
  const rh::State own = model.state();
  const long long q = 4;
  double largest = 0;
  for (long long j = 0; j < q; ++j) {
    largest = std::max(largest, own.score_variance[j * q + j]);
    for (long long k = 0; k < q; ++k) CHECK(own.score_variance[j * q + k] == own.score_variance[k * q + j]);
  }
  const double tolerance = q * std::numeric_limits<double>::epsilon() * largest;
  rh::State inside = own;
  double& k01 = inside.score_variance[1];
  const double k10 = inside.score_variance[q];
  while (std::nextafter(k01, INFINITY) - k10 <= tolerance) k01 = std::nextafter(k01, INFINITY);
  REQUIRE(k01 != k10);
  model.set_state(inside);
  CHECK(same_bits(model.state().score_variance, inside.score_variance));
  for (double se : model.standard_errors()) CHECK((se > 0 && std::isfinite(se)));

  rh::State outside = inside;
  outside.score_variance[1] = std::nextafter(k01, INFINITY);
  auto [code, message] = failure_of([&] { model.set_state(outside); });
  CHECK(code == rh::Errc::invalid_state);
  CHECK(message.find("score_variance is not symmetric: K(0,1)") != std::string::npos);
  CHECK(same_bits(model.state().score_variance, inside.score_variance));

  rh::State negative = own;
  negative.score_variance[q + 1] = -std::numeric_limits<double>::denorm_min();
  std::tie(code, message) = failure_of([&] { model.set_state(negative); });
  CHECK(code == rh::Errc::invalid_state);
  CHECK(message.find("K(1,1) is -4.94066e-324") != std::string::npos);
}

TEST_CASE("fit() and reset() start K over") {
  const Stream s = make_stream(3, {200, 150}, 15);
  rh::Regressor a(space_under_test(), rh::Dtype::f64, inference_config());
  rh::Regressor b(space_under_test(), rh::Dtype::f64, inference_config());
  stream_through<double>(a, s);
  a.fit(rh::host_batch(s.x[1].data(), s.y[1].data(), 150, 3));
  b.partial_fit(rh::host_batch(s.x[1].data(), s.y[1].data(), 150, 3));
  CHECK(same_bits(a.state().score_variance, b.state().score_variance));
  CHECK(a.state().score_variance_batches == 1);
  CHECK(same_bits(a.covariance(), b.covariance()));
}

TEST_CASE("a checkpoint of format 1 loads with K unavailable until the model is reset") {
  const std::string path = std::string(RH_CHECKPOINT_SAMPLES) + "/checkpoint_v1_l1_f64.rhck";
  const rh::Checkpoint cp = rh::read_checkpoint_file(path);
  REQUIRE(cp.format_version == 1);
  // The sample holds an L1 model; as penalty none (what a user resuming an unpenalized model does) it is a state
  // without K.
  rh::Regressor model(space_under_test(), rh::Dtype::f64, inference_config());
  model.set_state(cp.state);
  const auto [code, message] = failure_of([&] { model.covariance(); });
  CHECK(code == rh::Errc::unavailable);
  CHECK(message.find("format 1") != std::string::npos);
  // Loading it keeps the model's inference setting where the checkpoint's penalty allows it (not for l1).
  rh::load_checkpoint_file(model, path);
  CHECK(!model.config().inference);
}

// Coverage of nominal 95 % intervals over 400 replicated streams of y = x·β + 0.3 + t(3) noise (3 batches of 400
// rows, p = 2): the full study (docs/inference.md) uses 2,000 streams per law. With 400 streams the binomial standard
// error of a 95 % coverage is 1.1 %, so [0.92, 0.98] is ±2.75 of it; the seed is fixed, so the result is
// deterministic. Standard errors scaled by 0.85 or 1.2 (planted in the library) give 90 % or 98.5 % and fail.
TEST_CASE("95 % intervals cover the true coefficients (small Monte-Carlo study)") {
  const int streams = 400;
  const double truth[3] = {1.0, -0.5, 0.3};
  int covered[3] = {0, 0, 0};
  for (int r = 0; r < streams; ++r) {
    const Stream s = make_stream(2, {400, 400, 400}, 1000 + static_cast<std::uint64_t>(r));
    rh::Regressor model(space_under_test(), rh::Dtype::f64, inference_config());
    stream_through<double>(model, s);
    const rh::ConfidenceIntervals ci = model.confidence_intervals(0.95);
    for (int j = 0; j < 3; ++j) covered[j] += ci.lower[j] <= truth[j] && truth[j] <= ci.upper[j];
  }
  for (int j = 0; j < 3; ++j) {
    const double coverage = static_cast<double>(covered[j]) / streams;
    MESSAGE("coefficient " << j << ": coverage " << coverage);
    CHECK(coverage >= 0.92);
    CHECK(coverage <= 0.98);
  }
}
