// Every checkpoint format version ever written still loads: the committed samples of tests/checkpoints/ decode to
// the values they were written from, continue a stream, and the current version is still written byte for byte.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "common/same_state.hpp"
#include "rh/checkpoint.hpp"
#include "rh/regressor.hpp"

namespace {

// Each sample of tests/checkpoints/: what it was written from, and by which library.
std::map<std::string, rh::Checkpoint> expected_samples() {
  std::map<std::string, rh::Checkpoint> out;
  // Written by renewable-huber 0.1.0 at commit 69ab12a (format 1), rh::encode_checkpoint: penalty l1, float64, a
  // fitted state with q = 3 and exactly representable values.
  rh::Checkpoint a;
  a.config.tau = 1.5;
  a.config.penalty = rh::Penalty::l1;
  a.config.lambda_scale = 0.5;
  a.config.bandwidth_scale = 2.0;
  a.config.fit_intercept = true;
  a.config.max_iter = 50;
  a.config.tol = 1e-7;
  a.config.ridge = 0.0;
  a.dtype = rh::Dtype::f64;
  a.state.n_features = 2;
  a.state.fit_intercept = true;
  a.state.coefficients = {0.5, -1.25, 2.0};
  a.state.information = {4.0, 0.5, 1.0, 0.5, 3.0, -0.25, 1.0, -0.25, 2.0};
  a.state.n_samples_seen = 40;
  a.state.batch_count = 2;
  a.state.previous_lambda = 0.125;
  a.state.weight_sum = 37.5;
  out["checkpoint_v1_l1_f64.rhck"] = a;
  // Written by the same library: penalty none, float32, no intercept, the empty state.
  rh::Checkpoint b;
  b.config.fit_intercept = false;
  b.dtype = rh::Dtype::f32;
  out["checkpoint_v1_empty_f32.rhck"] = b;
  // Format 2, written from docs/abi.md's layout of format 2 by a Python script (struct + zlib.crc32) while format 2
  // was added; the test checks that rh::encode_checkpoint writes the same bytes: penalty none, inference on,
  // float64, q = 3, K held by both batches.
  rh::Checkpoint c = a;
  c.config.penalty = rh::Penalty::none;
  c.config.lambda_scale = 1.0;
  c.config.inference = true;
  c.state.previous_lambda = 0.0;
  c.state.score_variance_batches = 2;
  c.state.score_variance = {2.0, 0.25, 0.5, 0.25, 1.5, -0.125, 0.5, -0.125, 1.0};
  out["checkpoint_v2_inference_f64.rhck"] = c;
  // Format 1 has no K: its states read K as zeros of their shape, held by none of their batches.
  for (auto& [name, cp] : out)
    if (name.rfind("checkpoint_v1_", 0) == 0) {
      const size_t q = cp.state.coefficients.size();
      cp.state.score_variance.assign(q * q, 0.0);
    }
  return out;
}

std::vector<std::uint8_t> bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::uint32_t version_of(const std::vector<std::uint8_t>& bytes) {
  REQUIRE(bytes.size() >= 12);
  return static_cast<std::uint32_t>(bytes[8]) | static_cast<std::uint32_t>(bytes[9]) << 8 |
         static_cast<std::uint32_t>(bytes[10]) << 16 | static_cast<std::uint32_t>(bytes[11]) << 24;
}

bool same_config(const rh::Config& a, const rh::Config& b) {
  return a.tau == b.tau && a.penalty == b.penalty && a.lambda_scale == b.lambda_scale &&
         a.bandwidth_scale == b.bandwidth_scale && a.fit_intercept == b.fit_intercept && a.max_iter == b.max_iter &&
         a.tol == b.tol && a.ridge == b.ridge && a.inference == b.inference;
}

}  // namespace

TEST_CASE("every checkpoint format version ever written loads") {
  const auto expected = expected_samples();
  std::map<std::uint32_t, int> samples_per_version;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(RH_CHECKPOINT_SAMPLES)) {
    if (entry.path().extension() != ".rhck") continue;
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    ++files;
    const auto want = expected.find(name);
    REQUIRE_MESSAGE(want != expected.end(), "a sample without expected values in this test");
    const std::vector<std::uint8_t> bytes = bytes_of(entry.path());
    const std::uint32_t version = version_of(bytes);
    ++samples_per_version[version];

    const rh::Checkpoint cp = rh::read_checkpoint_file(entry.path().string());
    CHECK(cp.dtype == want->second.dtype);
    CHECK(same_config(cp.config, want->second.config));
    CHECK(rh::test::same_state(cp.state, want->second.state));
    // The version this library writes is still written byte for byte.
    if (version == rh::checkpoint_format_version) CHECK(rh::encode_checkpoint(cp) == bytes);

    // The model it describes continues its stream on the space under test.
    const char* space = std::getenv("RH_TEST_SPACE");
    rh::Regressor model(rh::space_from_name(space ? space : "serial"), cp.dtype);
    rh::load_checkpoint(model, bytes.data(), bytes.size());
    CHECK(rh::test::same_state(model.state(), want->second.state));
    // Written back through this system's file code, the sample (committed from Linux) is the same bytes: under wine,
    // checkpoints go from Linux to Windows and back unchanged.
    if (version == rh::checkpoint_format_version) {
      const std::filesystem::path copy = std::filesystem::temp_directory_path() / ("rh-written-back-" + name);
      rh::save_checkpoint_file(model, copy.string());
      CHECK(bytes_of(copy) == bytes);
      std::filesystem::remove(copy);
    }
    const long long p = cp.state.n_features > 0 ? cp.state.n_features : 3;
    std::vector<double> x(static_cast<size_t>(10 * p)), y(10);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * static_cast<double>(i % 7) - 0.3;
    for (size_t i = 0; i < y.size(); ++i) y[i] = 0.5 * static_cast<double>(i % 3);
    if (cp.dtype == rh::Dtype::f64) {
      model.partial_fit(rh::host_batch(x.data(), y.data(), 10, p));
    } else {
      const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
      model.partial_fit(rh::host_batch(xf.data(), yf.data(), 10, p));
    }
    CHECK(model.state().n_samples_seen == cp.state.n_samples_seen + 10);
  }
  CHECK(files == static_cast<int>(expected.size()));
  for (std::uint32_t v = rh::oldest_checkpoint_format_version; v <= rh::checkpoint_format_version; ++v) {
    CAPTURE(v);
    CHECK_MESSAGE(samples_per_version[v] > 0, "no sample of this format version under tests/checkpoints/");
  }
}
