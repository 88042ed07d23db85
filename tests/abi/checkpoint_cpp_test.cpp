// The checkpoint format through the C++ API (rh/checkpoint.hpp): the same bytes as the C ABI, for C++ users.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "common/same_state.hpp"
#include "doctest/doctest.h"
#include "rh/checkpoint.hpp"
#include "rh/regressor.hpp"

namespace {

rh::Space space_under_test() {
  const char* s = std::getenv("RH_TEST_SPACE");
  return rh::space_from_name(s ? s : "serial");
}

struct Batch {
  std::vector<double> x, y;
  std::int64_t rows, cols;
};

Batch make_batch(std::int64_t rows, std::int64_t cols, unsigned seed) {
  Batch b{{}, {}, rows, cols};
  std::srand(seed);
  for (std::int64_t i = 0; i < rows; ++i) {
    double yi = 0.5;
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = std::rand() / static_cast<double>(RAND_MAX) - 0.5;
      b.x.push_back(v);
      yi += v * static_cast<double>(j + 1);
    }
    b.y.push_back(yi + (i % 9 == 4 ? 5.0 : 0.01 * (std::rand() / static_cast<double>(RAND_MAX))));
  }
  return b;
}

template <class S>
void feed(rh::Regressor& m, const Batch& b) {
  const std::vector<S> x(b.x.begin(), b.x.end()), y(b.y.begin(), b.y.end());
  m.partial_fit(rh::host_batch(x.data(), y.data(), b.rows, b.cols));
}

bool same(const rh::State& a, const rh::State& b) { return rh::test::same_state(a, b); }

bool same(const rh::Config& a, const rh::Config& b) {
  return a.tau == b.tau && a.penalty == b.penalty && a.lambda_scale == b.lambda_scale &&
         a.bandwidth_scale == b.bandwidth_scale && a.fit_intercept == b.fit_intercept && a.max_iter == b.max_iter &&
         a.tol == b.tol && a.ridge == b.ridge;
}

rh::Errc error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const rh::Error& e) {
    return e.code();
  }
  FAIL("no rh::Error was thrown");
  return rh::Errc::internal_error;
}

}  // namespace

TEST_CASE("encode and decode are inverse, bit for bit") {
  rh::Config config;
  config.penalty = rh::Penalty::l1;
  config.tau = 0.75;
  rh::Regressor m(space_under_test(), rh::Dtype::f64, config);
  feed<double>(m, make_batch(40, 3, 1));
  const rh::Checkpoint cp{m.config(), m.dtype(), m.state()};
  const std::vector<std::uint8_t> bytes = rh::encode_checkpoint(cp);
  CHECK(bytes == rh::save_checkpoint(m));
  const rh::Checkpoint back = rh::decode_checkpoint(bytes.data(), bytes.size());
  CHECK(back.dtype == rh::Dtype::f64);
  CHECK(back.config.tau == 0.75);
  CHECK(back.config.penalty == rh::Penalty::l1);
  CHECK(same(back.state, cp.state));
  CHECK(rh::encode_checkpoint(back) == bytes);
}

TEST_CASE("continuing after load_checkpoint equals never stopping, both dtypes") {
  const Batch b1 = make_batch(50, 4, 2), b2 = make_batch(60, 4, 3);
  SUBCASE("float64") {
    rh::Regressor straight(space_under_test(), rh::Dtype::f64), saved(space_under_test(), rh::Dtype::f64);
    feed<double>(straight, b1);
    feed<double>(straight, b2);
    feed<double>(saved, b1);
    const auto bytes = rh::save_checkpoint(saved);
    rh::Config different;
    different.max_iter = 3;
    rh::Regressor resumed(space_under_test(), rh::Dtype::f64, different);
    rh::load_checkpoint(resumed, bytes.data(), bytes.size());
    CHECK(resumed.config().max_iter == 100);
    feed<double>(resumed, b2);
    CHECK(same(resumed.state(), straight.state()));
  }
  SUBCASE("float32, through a file") {
    rh::Regressor straight(space_under_test(), rh::Dtype::f32), saved(space_under_test(), rh::Dtype::f32);
    feed<float>(straight, b1);
    feed<float>(straight, b2);
    feed<float>(saved, b1);
    rh::save_checkpoint_file(saved, "cpp_f32.rhckpt");
    rh::Regressor resumed(space_under_test(), rh::Dtype::f32);
    rh::load_checkpoint_file(resumed, "cpp_f32.rhckpt");
    feed<float>(resumed, b2);
    CHECK(same(resumed.state(), straight.state()));
    CHECK(rh::read_checkpoint_file("cpp_f32.rhckpt").dtype == rh::Dtype::f32);
    std::remove("cpp_f32.rhckpt");
  }
}

TEST_CASE("a failed load leaves the Regressor as it was") {
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  feed<double>(m, make_batch(30, 2, 4));
  const rh::State before = m.state();
  const rh::Config config_before = m.config();
  rh::Regressor other(space_under_test(), rh::Dtype::f64);
  feed<double>(other, make_batch(30, 2, 5));
  std::vector<std::uint8_t> bytes = rh::save_checkpoint(other);
  bytes[150] ^= 1;
  CHECK(error_of([&] { rh::load_checkpoint(m, bytes.data(), bytes.size()); }) == rh::Errc::corrupt_data);
  bytes[150] ^= 1;
  CHECK(error_of([&] { rh::load_checkpoint(m, bytes.data(), bytes.size() - 1); }) == rh::Errc::corrupt_data);
  rh::Regressor f32(space_under_test(), rh::Dtype::f32);
  CHECK(error_of([&] { rh::load_checkpoint(f32, bytes.data(), bytes.size()); }) == rh::Errc::invalid_argument);
  CHECK(error_of([&] { rh::load_checkpoint_file(m, "does/not/exist.rhckpt"); }) == rh::Errc::invalid_argument);
  CHECK(same(m.state(), before));
  CHECK(same(m.config(), config_before));
  CHECK(m.diagnostics().iterations >= 1);  // the last batch's diagnostics survive too
}

TEST_CASE("encode refuses what it could not decode") {
  rh::Checkpoint cp;
  cp.config.tau = -1;
  CHECK(error_of([&] { rh::encode_checkpoint(cp); }) == rh::Errc::invalid_argument);
  cp.config = rh::Config();
  cp.state.n_features = 2;  // no coefficients
  CHECK(error_of([&] { rh::encode_checkpoint(cp); }) == rh::Errc::invalid_state);
  cp.state = rh::State();
  cp.state.n_features = 1;
  cp.state.fit_intercept = true;
  cp.state.coefficients = {0.1, 0.2};
  cp.state.information = {1, 0, 0, 1};
  cp.state.n_samples_seen = 3;
  cp.state.batch_count = 1;
  cp.state.weight_sum = 3;
  cp.dtype = rh::Dtype::f32;  // 0.1 is not a float
  CHECK(error_of([&] { rh::encode_checkpoint(cp); }) == rh::Errc::invalid_state);
  cp.dtype = rh::Dtype::f64;
  CHECK(rh::encode_checkpoint(cp).size() == 148 + 16 + 32);
}

TEST_CASE("a file with more bytes than it declares is read no further than needed") {
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  feed<double>(m, make_batch(20, 2, 6));
  std::vector<std::uint8_t> bytes = rh::save_checkpoint(m);
  bytes.resize(bytes.size() + 300000, 0);  // several read chunks of trailing data
  if (std::FILE* f = std::fopen("cpp_trailing.rhckpt", "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  CHECK(error_of([&] { rh::read_checkpoint_file("cpp_trailing.rhckpt"); }) == rh::Errc::corrupt_data);
  std::remove("cpp_trailing.rhckpt");
}
