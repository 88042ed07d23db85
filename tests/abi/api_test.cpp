// The C ABI's contract apart from bad input: versions, defaults, spaces, the model lifecycle, what each call
// computes, the last-error rules and the threading rules.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <set>
#include <thread>

#include "abi_test_support.hpp"
#include "common/os.hpp"
#include "rh/known_spaces.hpp"  // the generated list of every space the library knows

using namespace abi_test;

namespace {

std::vector<double> exported_coefficients(const rh_model* m) { return snapshot(m).coefficients; }

// State of a three-batch stream, exported bit for bit.
Snapshot stream(std::int32_t dtype, std::uint64_t seed) {
  Model m(dtype);
  for (std::uint64_t b = 0; b < 3; ++b) partial_fit(m, make_data(50, 5, seed + b), dtype);
  return snapshot(m);
}

}  // namespace

TEST_SUITE("api") {

TEST_CASE("compile-time and runtime versions agree") {
  CHECK(rh_abi_version() == RH_ABI_VERSION);
  CHECK(RH_ABI_VERSION_MAJOR_OF(rh_abi_version()) == RH_ABI_VERSION_MAJOR);
  CHECK(RH_ABI_VERSION_MINOR_OF(rh_abi_version()) == RH_ABI_VERSION_MINOR);
  const std::string expected = std::to_string(RH_VERSION_MAJOR) + "." + std::to_string(RH_VERSION_MINOR) + "." +
                               std::to_string(RH_VERSION_PATCH);
  CHECK(std::string(rh_library_version()) == expected);
}

TEST_CASE("every status has its own string") {
  std::set<std::string> seen;
  for (rh_status s = RH_SUCCESS; s <= RH_INTERNAL_ERROR; ++s) {
    const std::string text = rh_status_string(s);
    CHECK(!text.empty());
    CHECK(text != "unknown status");
    seen.insert(text);
  }
  CHECK(seen.size() == 10);
  CHECK(std::string(rh_status_string(RH_SUCCESS)) == "success");
  CHECK(std::string(rh_status_string(RH_CORRUPT_DATA)) == "corrupt data");
  CHECK(std::string(rh_status_string(-1)) == "unknown status");
  CHECK(std::string(rh_status_string(10)) == "unknown status");
}

TEST_CASE("rh_config_init fills the documented defaults and leaves a newer caller's fields alone") {
  struct {
    rh_config c;
    unsigned char tail[8];
  } bigger;
  std::memset(&bigger, 0x77, sizeof bigger);
  bigger.c.abi_version = RH_ABI_VERSION;
  bigger.c.struct_size = sizeof bigger;
  REQUIRE(rh_config_init(&bigger.c) == RH_SUCCESS);
  const rh_config& c = bigger.c;
  CHECK(c.abi_version == RH_ABI_VERSION);
  CHECK(c.struct_size == sizeof bigger);
  CHECK(c.tau == 1.345);
  CHECK(c.lambda_scale == 1.0);
  CHECK(c.bandwidth_scale == 1.0);
  CHECK(c.tol == 1e-6);
  CHECK(c.ridge == 1e-8);
  CHECK(c.penalty == RH_PENALTY_NONE);
  CHECK(c.fit_intercept == 1);
  CHECK(c.max_iter == 100);
  CHECK(c.dtype == RH_DTYPE_F64);
  CHECK(c.device_id == 0);
  CHECK(c.host_threads == 0);
  CHECK(c.reserved0 == 0);
  rh_space_info first;
  RH_STRUCT_INIT(&first);
  REQUIRE(rh_space_get(0, &first) == RH_SUCCESS);
  CHECK(c.space == first.space);
  for (unsigned char byte : bigger.tail) CHECK(byte == 0x77);
}

TEST_CASE("compiled spaces") {
  std::int32_t count = 0;
  REQUIRE(rh_space_count(&count) == RH_SUCCESS);
  REQUIRE(count >= 1);
  std::int32_t previous = 0;
  bool under_test = false;
  for (std::int32_t i = 0; i < count; ++i) {
    rh_space_info info;
    RH_STRUCT_INIT(&info);
    REQUIRE(rh_space_get(i, &info) == RH_SUCCESS);
    CHECK(info.space > previous);  // RH_SPACE_* order
    previous = info.space;
    REQUIRE(std::memchr(info.name, '\0', sizeof info.name) != nullptr);  // NUL-terminated
    const std::string name = info.name;
    std::string known;  // the name of its code in the generated list of spaces
    bool own_memory = false;
#define RH_KNOWN_SPACE_NAME(space_name, NAME, space_own_memory) \
  if (info.space == RH_SPACE_##NAME) known = #space_name, own_memory = space_own_memory;
    RH_FOR_EACH_KNOWN_SPACE(RH_KNOWN_SPACE_NAME)
#undef RH_KNOWN_SPACE_NAME
    CHECK(name == known);
    CHECK(info.own_memory == (own_memory ? 1 : 0));
    if (!info.own_memory) CHECK(info.device_count == 1);
    CHECK(info.concurrency >= 1);
    CHECK(info.reserved0 == 0);
    CHECK(info.reserved1 == 0);
    // A caller of ABI 1.1 passes 40 bytes: the fields of 1.2 are not written.
    rh_space_info older;
    std::memset(&older, 0xAB, sizeof older);
    older.abi_version = RH_MAKE_ABI_VERSION(1, 1);
    older.struct_size = 40;
    REQUIRE(rh_space_get(i, &older) == RH_SUCCESS);
    CHECK(older.space == info.space);
    CHECK(older.own_memory == static_cast<std::int32_t>(0xABABABABu));
    under_test = under_test || info.space == space_under_test();
  }
  CHECK(under_test);
  CHECK(rh_init(RH_ABI_VERSION, 3, -1) == RH_SUCCESS);  // already started: succeeds, changes nothing
}

TEST_CASE("rh_space_name and rh_penalty_name: every known value, and nothing else") {
  const char* name = nullptr;
  std::int32_t value = 1;
#define RH_CHECK_SPACE_NAME(space_name, NAME, own_memory)         \
  CHECK(value == RH_SPACE_##NAME);                                \
  REQUIRE(rh_space_name(value++, &name) == RH_SUCCESS);           \
  CHECK(std::string(name) == #space_name);
  RH_FOR_EACH_KNOWN_SPACE(RH_CHECK_SPACE_NAME)
#undef RH_CHECK_SPACE_NAME
  CHECK(rh_space_name(value, &name) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_last_error()) ==
        "rh_space_name: unknown execution space enum value " + std::to_string(value));
  CHECK(rh_space_name(0, &name) == RH_INVALID_ARGUMENT);
  CHECK(rh_space_name(1, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_last_error()) == "rh_space_name: name is a NULL pointer");

  // Every penalty it names is one a model accepts, each under a name of its own; the first value it refuses, the
  // model refuses too.
  std::set<std::string> names;
  for (value = 1; rh_penalty_name(value, &name) == RH_SUCCESS; ++value) {
    CHECK(names.insert(name).second);
    rh_config c = make_config(RH_DTYPE_F64, value);
    rh_model* m = nullptr;
    CHECK(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
    rh_model_destroy(m);
  }
  CHECK(value >= 3);
  CHECK(std::string(rh_last_error()) == "rh_penalty_name: unknown penalty enum value " + std::to_string(value));
  rh_config unknown = make_config(RH_DTYPE_F64, value);
  rh_model* m = nullptr;
  CHECK(rh_model_create(RH_ABI_VERSION, &unknown, &m) == RH_INVALID_ARGUMENT);
  CHECK(rh_penalty_name(0, &name) == RH_INVALID_ARGUMENT);
}

TEST_CASE("create, get_config, destroy") {
  rh_config c = make_config(RH_DTYPE_F32, RH_PENALTY_L1);
  c.tau = 2.5;
  c.max_iter = 17;
  c.fit_intercept = 0;
  c.host_threads = 2;
  rh_model* m = nullptr;
  REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
  REQUIRE(m != nullptr);
  CHECK(std::string(rh_model_last_error(m)).empty());
  rh_config got;
  RH_STRUCT_INIT(&got);
  REQUIRE(rh_model_get_config(m, &got) == RH_SUCCESS);
  CHECK(std::memcmp(&got, &c, sizeof c) == 0);
  CHECK(rh_model_destroy(m) == RH_SUCCESS);
  CHECK(rh_model_destroy(m) == RH_INVALID_ARGUMENT);  // twice is an error, never a double free
  // A caller of a newer minor version is served as long as its new fields are zero.
  rh_config newer = make_config();
  newer.abi_version = RH_MAKE_ABI_VERSION(RH_ABI_VERSION_MAJOR, RH_ABI_VERSION_MINOR + 1);
  REQUIRE(rh_model_create(newer.abi_version, &newer, &m) == RH_SUCCESS);
  CHECK(rh_model_destroy(m) == RH_SUCCESS);
}

TEST_CASE("handles are unique tokens") {
  std::set<rh_model*> handles;
  for (int i = 0; i < 20; ++i) {
    rh_model* m = nullptr;
    const rh_config c = make_config();
    REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
    CHECK(handles.insert(m).second);
    REQUIRE(rh_model_destroy(m) == RH_SUCCESS);
  }
}

TEST_CASE("fit, predict, score, diagnostics, reset") {
  Model m;
  const Data d = make_data(80, 3, 7);
  Arrays a;
  const rh_batch b = make_batch(d, RH_DTYPE_F64, a);
  rh_diagnostics diag;
  RH_STRUCT_INIT(&diag);
  REQUIRE(rh_model_partial_fit(m, &b, &diag) == RH_SUCCESS);
  CHECK(diag.iterations >= 1);
  CHECK(diag.converged == 1);
  CHECK(diag.bandwidth > 0);
  CHECK(diag.reserved0 == 0);
  rh_diagnostics again;
  RH_STRUCT_INIT(&again);
  REQUIRE(rh_model_diagnostics(m, &again) == RH_SUCCESS);
  CHECK(std::memcmp(&diag, &again, sizeof diag) == 0);

  // predict is X·β with the intercept last.
  const std::vector<double> beta = exported_coefficients(m);
  REQUIRE(beta.size() == 4);
  std::vector<double> out(static_cast<std::size_t>(d.rows) + 1, -1.0);
  REQUIRE(rh_model_predict(m, &b, out.data(), static_cast<std::int64_t>(out.size())) == RH_SUCCESS);
  for (std::int64_t i = 0; i < d.rows; ++i) {
    double want = beta[3];
    for (std::int64_t j = 0; j < 3; ++j) want += d.x[static_cast<std::size_t>(i * 3 + j)] * beta[static_cast<std::size_t>(j)];
    CHECK(out[static_cast<std::size_t>(i)] == doctest::Approx(want).epsilon(1e-12));
  }
  CHECK(out.back() == -1.0);  // nothing written past `rows`

  // score is the ordinary R² = 1 − SS_res / SS_tot of those predictions.
  double mean = 0, ss_res = 0, ss_tot = 0;
  for (double v : d.y) mean += v / static_cast<double>(d.rows);
  for (std::size_t i = 0; i < d.y.size(); ++i) {
    ss_res += (d.y[i] - out[i]) * (d.y[i] - out[i]);
    ss_tot += (d.y[i] - mean) * (d.y[i] - mean);
  }
  double r2 = -5;
  REQUIRE(rh_model_score(m, &b, &r2) == RH_SUCCESS);
  CHECK(r2 == doctest::Approx(1.0 - ss_res / ss_tot).epsilon(1e-10));

  // fit = reset + this batch.
  const Data other = make_data(60, 2, 8);
  Arrays a2;
  const rh_batch b2 = make_batch(other, RH_DTYPE_F64, a2);
  REQUIRE(rh_model_fit(m, &b2, nullptr) == RH_SUCCESS);
  Model fresh;
  partial_fit(fresh, other, RH_DTYPE_F64);
  CHECK(snapshot(m) == snapshot(fresh));

  REQUIRE(rh_model_reset(m) == RH_SUCCESS);
  const Snapshot reset = snapshot(m);
  CHECK(reset.scalars.n_features == 0);
  CHECK(reset.diagnostics_status == RH_INVALID_STATE);
  CHECK(rh_model_predict(m, &b, out.data(), d.rows) == RH_INVALID_STATE);
}

TEST_CASE("get_state and set_state: two-call sizing, exact round trip") {
  Model m(RH_DTYPE_F32, RH_PENALTY_L1);
  partial_fit(m, make_data(70, 4, 9, true), RH_DTYPE_F32);
  rh_state s;
  RH_STRUCT_INIT(&s);
  REQUIRE(rh_model_get_state(m, &s) == RH_SUCCESS);  // lengths only
  CHECK(s.coefficients_length == 5);
  CHECK(s.information_length == 25);
  CHECK(s.n_features == 4);
  CHECK(s.n_samples_seen == 70);
  CHECK(s.batch_count == 1);
  CHECK(s.fit_intercept == 1);
  CHECK(s.previous_lambda > 0);
  std::vector<double> coef(8, 99.0), info(30, 99.0);
  s.coefficients = coef.data();
  s.information = info.data();
  s.coefficients_length = 8;  // capacities may exceed what is needed
  s.information_length = 30;
  REQUIRE(rh_model_get_state(m, &s) == RH_SUCCESS);
  CHECK(s.coefficients_length == 5);
  CHECK(coef[5] == 99.0);
  CHECK(info[25] == 99.0);
  for (int i = 0; i < 5; ++i) CHECK(static_cast<double>(static_cast<float>(coef[static_cast<std::size_t>(i)])) == coef[static_cast<std::size_t>(i)]);

  Model copy(RH_DTYPE_F32, RH_PENALTY_L1);
  REQUIRE(rh_model_set_state(copy, &s) == RH_SUCCESS);
  Snapshot a = snapshot(m), b = snapshot(copy);
  CHECK(b.diagnostics_status == RH_INVALID_STATE);  // an imported state has no last batch
  b.diagnostics_status = a.diagnostics_status;
  b.diagnostics = a.diagnostics;
  CHECK(a == b);
  // Both continue identically.
  const Data next = make_data(40, 4, 10, true);
  partial_fit(m, next, RH_DTYPE_F32);
  partial_fit(copy, next, RH_DTYPE_F32);
  CHECK(snapshot(m) == snapshot(copy));
}

TEST_CASE("layouts and leading dimensions are addressing only") {
  const Data d = make_data(33, 4, 12);
  Model row, col, padded;
  partial_fit(row, d, RH_DTYPE_F64);
  // Column-major, tight and with a padded leading dimension whose padding is NaN (never read).
  for (const std::int64_t ld : {std::int64_t{0}, d.rows + 5}) {
    const std::int64_t stride = ld ? ld : d.rows;
    std::vector<double> x(static_cast<std::size_t>(stride * d.cols), std::numeric_limits<double>::quiet_NaN());
    for (std::int64_t i = 0; i < d.rows; ++i)
      for (std::int64_t j = 0; j < d.cols; ++j)
        x[static_cast<std::size_t>(j * stride + i)] = d.x[static_cast<std::size_t>(i * d.cols + j)];
    Arrays a;
    rh_batch b = make_batch(d, RH_DTYPE_F64, a);
    b.x = x.data();
    b.layout = RH_LAYOUT_COL_MAJOR;
    b.ld = ld;
    REQUIRE(rh_model_partial_fit(ld ? padded : col, &b, nullptr) == RH_SUCCESS);
  }
  CHECK(snapshot(row) == snapshot(col));
  CHECK(snapshot(row) == snapshot(padded));
}

TEST_CASE("last-error messages: cleared by success, per thread, per model") {
  Model m;
  rh_diagnostics d;
  RH_STRUCT_INIT(&d);
  REQUIRE(rh_model_diagnostics(m, &d) == RH_INVALID_STATE);
  const std::string failure = rh_last_error();
  CHECK(failure.rfind("rh_model_diagnostics: ", 0) == 0);
  CHECK(failure == rh_model_last_error(m));
  // Another thread has its own message, and its failures do not overwrite this thread's.
  std::string other_before, other_after;
  std::thread([&] {
    other_before = rh_last_error();
    std::int32_t* null_count = nullptr;
    rh_space_count(null_count);
    other_after = rh_last_error();
  }).join();
  CHECK(other_before.empty());
  CHECK(other_after.rfind("rh_space_count: ", 0) == 0);
  CHECK(failure == rh_last_error());
  // Failures elsewhere do not touch this model's message; a success on it clears both.
  rh_space_count(nullptr);
  CHECK(failure == rh_model_last_error(m));
  partial_fit(m, make_data(30, 2, 13), RH_DTYPE_F64);
  CHECK(std::string(rh_last_error()).empty());
  CHECK(std::string(rh_model_last_error(m)).empty());
}

TEST_CASE("different handles on different threads give the sequential results") {
  constexpr int threads = 4;
  std::vector<Snapshot> expected;
  for (int t = 0; t < threads; ++t) expected.push_back(stream(t % 2 ? RH_DTYPE_F32 : RH_DTYPE_F64, 1000 + 10 * t));
  std::vector<Snapshot> got(threads);
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      // doctest assertions are not thread-safe: record, then check on the main thread.
      const std::int32_t dtype = t % 2 ? RH_DTYPE_F32 : RH_DTYPE_F64;
      rh_config c;
      RH_STRUCT_INIT(&c);
      rh_config_init(&c);
      c.dtype = dtype;
      c.space = space_under_test();
      for (int round = 0; round < 3; ++round) {
        rh_model* m = nullptr;
        if (rh_model_create(RH_ABI_VERSION, &c, &m) != RH_SUCCESS) { ++failures; return; }
        for (std::uint64_t b = 0; b < 3; ++b) {
          const Data d = make_data(50, 5, 1000 + 10 * static_cast<std::uint64_t>(t) + b);
          Arrays a;
          const rh_batch batch = make_batch(d, dtype, a);
          if (rh_model_partial_fit(m, &batch, nullptr) != RH_SUCCESS) ++failures;
        }
        rh_state s;
        RH_STRUCT_INIT(&s);
        std::vector<double> coef(6), info(36);
        s.coefficients = coef.data();
        s.information = info.data();
        s.coefficients_length = 6;
        s.information_length = 36;
        if (rh_model_get_state(m, &s) != RH_SUCCESS) ++failures;
        if (round == 2) {
          got[static_cast<std::size_t>(t)].coefficients = coef;
          got[static_cast<std::size_t>(t)].information = info;
        }
        if (rh_model_destroy(m) != RH_SUCCESS) ++failures;
      }
    });
  for (auto& th : pool) th.join();
  CHECK(failures == 0);
  for (int t = 0; t < threads; ++t) {
    CAPTURE(t);
    CHECK(got[static_cast<std::size_t>(t)].coefficients == expected[static_cast<std::size_t>(t)].coefficients);
    CHECK(got[static_cast<std::size_t>(t)].information == expected[static_cast<std::size_t>(t)].information);
  }
}

TEST_CASE("a forked child gets an error instead of waiting for a runtime thread it does not have") {
  Model started;  // the runtime thread exists in the parent
  static rh_config c;
  c = make_config();
  int status = -1;
  const bool forked = test_os::run_forked(
      [] {
        rh_model* m = nullptr;
        const rh_status s = rh_model_create(RH_ABI_VERSION, &c, &m);
        return s == RH_INVALID_STATE && std::strstr(rh_last_error(), "fork") != nullptr ? 0 : 1;
      },
      &status);
  if (!forked) MESSAGE("no fork() on this system");
  else CHECK(status == 0);
}

}  // TEST_SUITE

TEST_SUITE("api") {

// A caller compiled against ABI 1.0 passes the shorter rh_config (80 bytes) and rh_state (88 bytes): the library reads
// the fields appended since as 0 (inference off, no K) and never writes past the caller's struct_size.
TEST_CASE("structs of ABI minor 0 are served: fields appended since are neither read nor written") {
  constexpr std::size_t config_1_0 = offsetof(rh_config, inference), state_1_0 = offsetof(rh_state, score_variance);
  static_assert(config_1_0 == 80 && state_1_0 == 88, "the sizes of minor 0 (docs/abi.md)");
  rh_config c;
  std::memset(&c, 0x77, sizeof c);
  c.abi_version = RH_MAKE_ABI_VERSION(1, 0);
  c.struct_size = config_1_0;
  REQUIRE(rh_config_init(&c) == RH_SUCCESS);
  CHECK(c.inference == 0x77777777);  // beyond the caller's struct: untouched
  CHECK(c.reserved1 == 0x77777777);
  c.space = space_under_test();
  rh_model* m = nullptr;
  REQUIRE_MESSAGE(rh_model_create(RH_MAKE_ABI_VERSION(1, 0), &c, &m) == RH_SUCCESS, rh_last_error());
  partial_fit(m, make_data(60, 3, 77), RH_DTYPE_F64);
  double out[16];
  CHECK(rh_model_standard_errors(m, out, 16) == RH_UNAVAILABLE);  // created without inference
  CHECK(std::string(rh_last_error()).find("inference is off") != std::string::npos);

  rh_state s;
  std::memset(&s, 0x55, sizeof s);
  s.abi_version = RH_MAKE_ABI_VERSION(1, 0);
  s.struct_size = state_1_0;
  std::vector<double> coef(4), info(16);
  s.coefficients = coef.data();
  s.information = info.data();
  s.coefficients_length = 4;
  s.information_length = 16;
  s.reserved0 = 0;
  REQUIRE_MESSAGE(rh_model_get_state(m, &s) == RH_SUCCESS, rh_last_error());
  CHECK(s.score_variance_length == 0x5555555555555555);  // not written
  CHECK(s.score_variance_batches == 0x5555555555555555);

  // The 88-byte state installs into a model with inference: it has no K, so inference waits for a reset.
  rh_config ci = make_config();
  ci.inference = 1;
  Model with(ci);
  REQUIRE_MESSAGE(rh_model_set_state(with, &s) == RH_SUCCESS, rh_last_error());
  CHECK(rh_model_covariance(with, out, 16) == RH_UNAVAILABLE);
  CHECK(std::string(rh_last_error()).find("holds 0 of the 1 batches") != std::string::npos);
  REQUIRE(rh_model_reset(with) == RH_SUCCESS);
  partial_fit(with, make_data(60, 3, 77), RH_DTYPE_F64);
  CHECK(rh_model_covariance(with, out, 16) == RH_SUCCESS);
  CHECK(rh_model_destroy(m) == RH_SUCCESS);
}

TEST_CASE("the inference functions agree with each other and check their outputs") {
  rh_config c = make_config();
  c.inference = 1;
  Model m(c);
  partial_fit(m, make_data(200, 3, 78), RH_DTYPE_F64);
  partial_fit(m, make_data(150, 3, 79), RH_DTYPE_F64);
  std::vector<double> cov(16), se(4), z(4), p(4), lower(4), upper(4), beta(4), info(16), k(16);
  REQUIRE(rh_model_covariance(m, cov.data(), 16) == RH_SUCCESS);
  REQUIRE(rh_model_standard_errors(m, se.data(), 4) == RH_SUCCESS);
  REQUIRE(rh_model_z_statistics(m, z.data(), 4) == RH_SUCCESS);
  REQUIRE(rh_model_p_values(m, p.data(), 4) == RH_SUCCESS);
  REQUIRE(rh_model_confidence_intervals(m, 0.9, lower.data(), upper.data(), 4) == RH_SUCCESS);
  rh_state s;
  RH_STRUCT_INIT(&s);
  s.coefficients = beta.data();
  s.information = info.data();
  s.score_variance = k.data();
  s.coefficients_length = 4;
  s.information_length = s.score_variance_length = 16;
  REQUIRE(rh_model_get_state(m, &s) == RH_SUCCESS);
  CHECK(s.score_variance_batches == 2);
  for (int j = 0; j < 4; ++j) {
    CHECK(se[j] == std::sqrt(cov[j * 5]));
    CHECK(z[j] == beta[j] / se[j]);
    CHECK(p[j] == doctest::Approx(std::erfc(std::fabs(z[j]) / std::sqrt(2.0))).epsilon(1e-15));
    CHECK((upper[j] - lower[j]) / (2 * se[j]) == doctest::Approx(1.6448536269514722).epsilon(1e-14));
  }
  std::vector<double> untouched(4, -1.0);
  CHECK(rh_model_standard_errors(m, untouched.data(), 3) == RH_INVALID_ARGUMENT);  // q = 4
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](double v) { return v == -1.0; }));
  CHECK(rh_model_covariance(m, cov.data(), -1) == RH_INVALID_ARGUMENT);
  CHECK(rh_model_p_values(m, nullptr, 4) == RH_INVALID_ARGUMENT);
  CHECK(rh_model_confidence_intervals(m, 0.0, lower.data(), upper.data(), 4) == RH_INVALID_ARGUMENT);
  CHECK(rh_model_confidence_intervals(m, 0.9, lower.data(), nullptr, 4) == RH_INVALID_ARGUMENT);

  // A state set without K (score_variance NULL) with a count of batches is inconsistent.
  rh_state no_k = s;
  no_k.score_variance = nullptr;
  Model other(c);
  CHECK(rh_model_set_state(other, &no_k) == RH_INVALID_STATE);
  no_k.score_variance_batches = 0;
  CHECK(rh_model_set_state(other, &no_k) == RH_SUCCESS);
  CHECK(rh_model_z_statistics(other, z.data(), 4) == RH_UNAVAILABLE);

  rh_config l1 = make_config(RH_DTYPE_F64, RH_PENALTY_L1);
  l1.inference = 1;
  rh_model* refused = nullptr;
  CHECK(rh_model_create(RH_ABI_VERSION, &l1, &refused) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_last_error()).find("post-selection") != std::string::npos);
  CHECK(refused == nullptr);
}

}  // TEST_SUITE
