// Bad input (docs/method.md §10, §11): each gets a typed error and a message, and leaves the model exactly as it was.
#include <cctype>
#include <limits>

#include "support.hpp"

using namespace rh;
using namespace rh::test;

namespace {

// Runs `call`, expects rh::Error with `code` and a non-empty message, and checks that the state and the last
// diagnostics are unchanged.
template <class F>
void expect_rejected(Regressor& m, Errc code, F&& call) {
  const State before = m.state();
  const bool had_diag = m.fitted();
  Diagnostics diag_before;
  if (had_diag) diag_before = m.diagnostics();
  bool thrown = false;
  try {
    call();
  } catch (const Error& e) {
    thrown = true;
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).size() > 5);
  }
  CHECK(thrown);
  CHECK(same_state(m.state(), before));
  if (had_diag) CHECK(m.diagnostics().iterations == diag_before.iterations);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("invalid configuration values are rejected by name", T, errors_1) {
  const auto bad = [](auto mutate) {
    Config c;
    mutate(c);
    return c;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Config configs[] = {
      bad([](Config& c) { c.tau = 0; }),          bad([&](Config& c) { c.tau = nan; }),
      bad([&](Config& c) { c.tau = inf; }),       bad([](Config& c) { c.penalty = static_cast<Penalty>(7); }),
      bad([](Config& c) { c.lambda_scale = -1; }), bad([](Config& c) { c.bandwidth_scale = 0; }),
      bad([](Config& c) { c.max_iter = 0; }),     bad([](Config& c) { c.tol = 0; }),
      bad([](Config& c) { c.tol = -1e-6; }),      bad([](Config& c) { c.ridge = -1; }),
      bad([&](Config& c) { c.ridge = nan; }),
  };
  CAPTURE(T::name());
  for (const auto& c : configs) {
    CHECK_THROWS_AS(Regressor(T::space, T::dtype, c), Error);
    Regressor m(T::space, T::dtype);
    partial_fit(m, linear_data(20, 2, 1));
    expect_rejected(m, Errc::invalid_argument, [&] { m.set_config(c); });
  }
}
TEST_CASE_TEMPLATE_APPLY(errors_1, Targets);

TEST_CASE_TEMPLATE_DEFINE("bad batches are rejected and leave the model unchanged", T, errors_2) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype);
  const Data good = linear_data(50, 3, 2);
  partial_fit(m, good);
  auto with = [&](auto mutate) {
    Data d = good;
    mutate(d);
    return d;
  };
  SUBCASE("non-finite values") {
    for (double v : {nan, inf, -inf}) {
      const Data dx = with([&](Data& d) { d.x[7] = v; });
      const Data dy = with([&](Data& d) { d.y[3] = v; });
      const Data dw = with([&](Data& d) { d.w.assign(d.n, 1.0); d.w[5] = v; });
      expect_rejected(m, Errc::invalid_argument, [&] { partial_fit(m, dx); });
      expect_rejected(m, Errc::invalid_argument, [&] { partial_fit(m, dy); });
      expect_rejected(m, Errc::invalid_argument, [&] { partial_fit(m, dw); });
      const TypedBatch b = make_batch(dx, T::dtype);
      expect_rejected(m, Errc::invalid_argument, [&] { m.fit(b.batch); });
    }
  }
  SUBCASE("weights: negative, all zero") {
    const Data neg = with([](Data& d) { d.w.assign(d.n, 1.0); d.w[0] = -0.5; });
    const Data zero = with([](Data& d) { d.w.assign(d.n, 0.0); });
    expect_rejected(m, Errc::invalid_argument, [&] { partial_fit(m, neg); });
    expect_rejected(m, Errc::invalid_argument, [&] { partial_fit(m, zero); });
  }
  SUBCASE("shapes: empty batch, no columns, column count changes, bad leading dimension") {
    TypedBatch b = make_batch(good, T::dtype);
    Batch empty = b.batch;
    empty.x.rows = 0;
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(empty); });
    Batch no_cols = b.batch;
    no_cols.x.cols = 0;
    no_cols.x.ld = 0;
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(no_cols); });
    const Data wider = linear_data(50, 4, 3);
    expect_rejected(m, Errc::invalid_argument, [&] { partial_fit(m, wider); });
    const TypedBatch wb = make_batch(wider, T::dtype);
    std::vector<double> out(50);
    expect_rejected(m, Errc::invalid_argument, [&] { m.predict(wb.batch.x, out.data(), T::dtype); });
    Batch bad_ld = b.batch;
    bad_ld.x.ld = 2;  // < 3 columns, row-major
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(bad_ld); });
    Batch huge = b.batch;
    huge.x.rows = std::numeric_limits<std::int64_t>::max() / 2;
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(huge); });
  }
  SUBCASE("pointers, enums, dtypes and memory") {
    TypedBatch b = make_batch(good, T::dtype);
    Batch no_x = b.batch;
    no_x.x.data = nullptr;
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(no_x); });
    Batch no_y = b.batch;
    no_y.y = nullptr;
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(no_y); });
    Batch other_dtype = b.batch;
    other_dtype.dtype = T::dtype == Dtype::f64 ? Dtype::f32 : Dtype::f64;
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(other_dtype); });
    Batch bad_layout = b.batch;
    bad_layout.x.layout = static_cast<Layout>(9);
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(bad_layout); });
    Batch bad_memory = b.batch;
    bad_memory.memory = static_cast<Memory>(5);
    expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(bad_memory); });
    if (T::Traits::host) {  // a host space has no device memory: the claim is refused, not guessed
      Batch device = b.batch;
      device.memory = Memory::device;
      expect_rejected(m, Errc::invalid_argument, [&] { m.partial_fit(device); });
    }
    expect_rejected(m, Errc::invalid_argument, [&] { m.predict(b.batch.x, nullptr, T::dtype); });
  }
  SUBCASE("inconsistent states are refused by set_state") {
    State s = m.state();
    State wrong_q = s;
    wrong_q.coefficients.pop_back();
    expect_rejected(m, Errc::invalid_state, [&] { m.set_state(wrong_q); });
    State non_finite = s;
    non_finite.information[1] = nan;
    expect_rejected(m, Errc::invalid_state, [&] { m.set_state(non_finite); });
    State negative = s;
    negative.n_samples_seen = -1;
    expect_rejected(m, Errc::invalid_state, [&] { m.set_state(negative); });
    State no_weight = s;
    no_weight.weight_sum = 0;
    expect_rejected(m, Errc::invalid_state, [&] { m.set_state(no_weight); });
    State intercept = s;
    intercept.fit_intercept = false;
    intercept.coefficients.pop_back();
    intercept.information.resize(9);
    expect_rejected(m, Errc::invalid_state, [&] { m.set_state(intercept); });
  }
}
TEST_CASE_TEMPLATE_APPLY(errors_2, Targets);

TEST_CASE_TEMPLATE_DEFINE("a model that was never fitted refuses predict, score and diagnostics", T, errors_3) {
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype);
  const TypedBatch b = make_batch(linear_data(10, 2, 4), T::dtype);
  std::vector<double> out(10);
  expect_rejected(m, Errc::invalid_state, [&] { m.predict(b.batch.x, out.data(), T::dtype); });
  expect_rejected(m, Errc::invalid_state, [&] { m.score(b.batch); });
  CHECK_THROWS_AS(m.diagnostics(), Error);
}
TEST_CASE_TEMPLATE_APPLY(errors_3, Targets);

TEST_CASE("an unknown penalty is an error, never another penalty") {
  int count = 0;  // the penalties are 0, 1, ... (RH_PENALTY_POLICIES)
  while (penalty_known(static_cast<Penalty>(count))) ++count;
  REQUIRE(count >= 2);
  CHECK(std::string(penalty_name(static_cast<Penalty>(count))) == "unknown");
  CHECK(std::string(penalty_name(static_cast<Penalty>(7))) == "unknown");
  CHECK_FALSE(penalty_known(static_cast<Penalty>(-1)));
  for (int v = 0; v < count; ++v) {
    const auto penalty = static_cast<Penalty>(v);
    const std::string name = penalty_name(penalty);
    CAPTURE(name);
    CHECK(penalty_from_name(name) == penalty);
    // Names are exact: another spelling of one is no name.
    std::string upper = name, capitalized = name;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    capitalized[0] = upper[0];
    CHECK_THROWS_AS(penalty_from_name(upper), Error);
    CHECK_THROWS_AS(penalty_from_name(capitalized), Error);
  }
  for (const char* name : {"", "no_such_penalty"}) {
    CAPTURE(name);
    CHECK_THROWS_AS(penalty_from_name(name), Error);
  }
  Config c;
  c.penalty = static_cast<Penalty>(count);
  CHECK_THROWS_AS(validate(c), Error);
}

TEST_CASE("spaces that are not compiled and bad enums are refused at construction") {
  for (Space s : known_spaces()) {
    if (space_compiled(s)) continue;
    try {
      Regressor m(s, Dtype::f64);
      FAIL("constructed a model on a space that is not compiled");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::unavailable);
    }
  }
  CHECK_THROWS_AS(Regressor(static_cast<Space>(42), Dtype::f64), Error);
  CHECK(std::string(space_name(static_cast<Space>(42))) == "unknown");
  CHECK_THROWS_AS(space_from_name("hip"), Error);
  for (Space s : known_spaces()) CHECK(space_from_name(space_name(s)) == s);
  CHECK_THROWS_AS(Regressor(Space::serial, static_cast<Dtype>(3)), Error);
  CHECK_THROWS_AS(Regressor(Space::serial, Dtype::f64, Config(), -1), Error);
}
