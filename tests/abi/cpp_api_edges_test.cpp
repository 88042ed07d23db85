// Edges of the C++ API that a hostile or careless caller reaches (issue 15, items 6 and 7): every one is an rh::Error
// with a specific code and message, never a standard-library exception or undefined behaviour.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cpp_test_support.hpp"
#include "doctest/doctest.h"
#include "rh/regressor.hpp"

using cpp_test::failure_of;
using cpp_test::same_bits;
using cpp_test::space_under_test;

namespace {

// 30 rows of y = 1 + x0 - 2 x1 with a little deterministic noise.
struct Data {
  std::vector<double> x, y;
  static constexpr std::int64_t rows = 30, cols = 2;
  Data() {
    for (std::int64_t i = 0; i < rows; ++i) {
      const double a = static_cast<double>(i % 7) - 3.0, b = static_cast<double>((i * 5) % 11) / 4.0;
      x.push_back(a);
      x.push_back(b);
      y.push_back(1.0 + a - 2.0 * b + 0.01 * static_cast<double>(i % 3));
    }
  }
  rh::Batch batch() const { return rh::host_batch(x.data(), y.data(), rows, cols); }
};

// The state a valid export of a model that has seen nothing but knows p = 2 (with intercept) would have.
rh::State empty_state_with_features() {
  rh::State st;
  st.n_features = 2;
  st.fit_intercept = true;
  st.coefficients.assign(3, 0.0);
  st.information.assign(9, 0.0);
  return st;
}

}  // namespace

TEST_CASE("set_state refuses an empty state (n_samples_seen = 0) that has content") {
  const Data d;
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  m.partial_fit(d.batch());
  const rh::State before = m.state();
  const std::string message =
      "invalid state: an empty state (n_samples_seen = 0) must have zero coefficients, information, "
      "score_variance, and previous_lambda";
  const std::vector<std::pair<const char*, std::function<void(rh::State&)>>> spoils = {
      {"a coefficient", [](rh::State& s) { s.coefficients[1] = 0.5; }},
      {"an information value", [](rh::State& s) { s.information[4] = 2.0; }},
      {"a score variance value", [](rh::State& s) { s.score_variance.assign(9, 0.0), s.score_variance[2] = 1.0; }},
      {"previous_lambda", [](rh::State& s) { s.previous_lambda = 0.1; }},
  };
  for (const auto& spoil : spoils) {
    CAPTURE(spoil.first);
    rh::State st = empty_state_with_features();
    spoil.second(st);
    const auto failure = failure_of([&] { m.set_state(st); });
    CHECK(failure.first == rh::Errc::invalid_state);
    CHECK(failure.second == message);
    const rh::State after = m.state();
    CHECK(same_bits(after.coefficients, before.coefficients));
    CHECK(same_bits(after.information, before.information));
    CHECK(after.n_samples_seen == before.n_samples_seen);
  }
}

TEST_CASE("an empty state with features is accepted and the next batch starts from zero") {
  const Data d;
  rh::Regressor imported(space_under_test(), rh::Dtype::f64), fresh(space_under_test(), rh::Dtype::f64);
  imported.set_state(empty_state_with_features());
  CHECK(imported.n_features() == 2);
  imported.partial_fit(d.batch());
  fresh.partial_fit(d.batch());
  CHECK(same_bits(imported.coefficients(), fresh.coefficients()));
  CHECK(same_bits(imported.state().information, fresh.state().information));
}

TEST_CASE("a float32 model refuses a state it could not hold exactly") {
  const Data d;
  const std::vector<float> x(d.x.begin(), d.x.end()), y(d.y.begin(), d.y.end());
  rh::Regressor m(space_under_test(), rh::Dtype::f32);
  m.partial_fit(rh::host_batch(x.data(), y.data(), Data::rows, Data::cols));
  const rh::State before = m.state();
  // 1e300 would become +Inf inside the model (and its checkpoint could no longer be saved); 0.1 would be rounded.
  for (double value : {1e300, 0.1}) {
    CAPTURE(value);
    rh::State st = before;
    st.coefficients[0] = value;
    const auto coefficient = failure_of([&] { m.set_state(st); });
    CHECK(coefficient.first == rh::Errc::invalid_state);
    CHECK(coefficient.second == "invalid state: a float32 state holds a value of coefficients that is not a float");
    st = before;
    st.information[4] = value;
    const auto information = failure_of([&] { m.set_state(st); });
    CHECK(information.first == rh::Errc::invalid_state);
    CHECK(information.second == "invalid state: a float32 state holds a value of information that is not a float");
    CHECK(same_bits(m.state().coefficients, before.coefficients));
    CHECK(same_bits(m.state().information, before.information));
  }
  rh::State floats = before;
  floats.coefficients[0] = 0.5;
  m.set_state(floats);  // float values are held exactly
  CHECK(m.state().coefficients[0] == 0.5);
}

TEST_CASE("predict<S>(x, rows, cols) validates the shape before it allocates the output") {
  const Data d;
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  m.partial_fit(d.batch());
  for (std::int64_t rows : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{-(std::int64_t{1} << 62)}}) {
    CAPTURE(rows);
    const auto failure = failure_of([&] { m.predict<double>(d.x.data(), rows, 2); });
    CHECK(failure.first == rh::Errc::invalid_argument);
    CHECK(failure.second.rfind("predict: found array with", 0) == 0);
  }
  const auto wrong_cols = failure_of([&] { m.predict<double>(d.x.data(), 3, -2); });
  CHECK(wrong_cols.first == rh::Errc::invalid_argument);
  // A valid shape whose output cannot be allocated (2^59 doubles): a clean allocation failure, before X is read.
  if (cpp_test::operator_new_can_fail) {
    const auto huge = failure_of([&] { m.predict<double>(d.x.data(), std::int64_t{1} << 59, 2); });
    CHECK(huge.first == rh::Errc::allocation_failed);
    CHECK(huge.second == "predict: no memory for 576460752303423488 predictions");
  }
  CHECK(m.predict<double>(d.x.data(), 4, 2).size() == 4);
}

TEST_CASE("a moved-from Regressor is an invalid_state error on every use, and can be assigned again") {
  const Data d;
  rh::Regressor source(space_under_test(), rh::Dtype::f64);
  source.partial_fit(d.batch());
  const std::vector<double> coefficients = source.coefficients();
  rh::Regressor target = std::move(source);
  CHECK(same_bits(target.coefficients(), coefficients));

  CHECK_FALSE(source.fitted());  // NOLINT(bugprone-use-after-move): what this test is about
  CHECK(source.n_features() == 0);
  std::vector<double> out(4);
  const rh::State st = target.state();
  const std::vector<std::pair<const char*, std::function<void()>>> uses = {
      {"partial_fit", [&] { source.partial_fit(d.batch()); }},
      {"fit", [&] { source.fit(d.batch()); }},
      {"predict", [&] { source.predict(rh::host_matrix(d.x.data(), 4, 2), out.data(), rh::Dtype::f64); }},
      {"predict", [&] { source.predict<double>(d.x.data(), 4, 2); }},
      {"score", [&] { source.score(d.batch()); }},
      {"diagnostics", [&] { source.diagnostics(); }},
      {"state", [&] { source.state(); }},
      {"state", [&] { source.coefficients(); }},
      {"set_state", [&] { source.set_state(st); }},
      {"reset", [&] { source.reset(); }},
      {"set_config", [&] { source.set_config(rh::Config()); }},
  };
  for (const auto& use : uses) {
    CAPTURE(use.first);
    const auto failure = failure_of(use.second);
    CHECK(failure.first == rh::Errc::invalid_state);
    CHECK(failure.second ==
          std::string(use.first) + ": this Regressor was moved from; assign a new one to it before using it");
  }
  source = rh::Regressor(space_under_test(), rh::Dtype::f64);
  source.partial_fit(d.batch());
  CHECK(same_bits(source.coefficients(), coefficients));
}

// Issue 15, item 8: with Kokkos >= 4 a host-space Regressor runs on an execution-space instance of its own and may be
// used from any thread; Regressors on several threads (none of them the one that initialized Kokkos) run at once
// and each ends bit for bit where it ends alone. The other spaces, and every space with Kokkos 3.4, share one
// instance (docs/abi.md, "Threading").
TEST_CASE("Regressors on threads of their own give each thread's result alone, where the space allows it") {
  rh::SpaceInfo info{};
  for (const rh::SpaceInfo& s : rh::compiled_spaces())
    if (s.space == space_under_test()) info = s;
  const bool kokkos4 = rh::kokkos_version().rfind("3.", 0) != 0;
  // docs/abi.md, "Threading": with Kokkos >= 4 the spaces whose models get instances of their own, Serial and OpenMP.
  CHECK(info.concurrent_models == (kokkos4 && (info.space == rh::Space::serial || info.space == rh::Space::openmp)));
  CHECK(info.own_memory == rh::space_has_own_memory(info.space));
  if (!info.concurrent_models) return;
  constexpr int kThreads = 4, kBatches = 5;
  // Thread t's stream: the batch of Data with y shifted by t and the batch index.
  const auto stream = [](int t) {
    Data d;
    rh::Regressor m(space_under_test(), rh::Dtype::f64);
    for (int b = 0; b < kBatches; ++b) {
      for (double& y : d.y) y += 0.25 * t - 0.1 * b;
      m.partial_fit(d.batch());
    }
    return m.state();
  };
  std::vector<rh::State> alone, together(kThreads);
  for (int t = 0; t < kThreads; ++t) alone.push_back(stream(t));
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([&, t] {
      try {
        together[static_cast<std::size_t>(t)] = stream(t);
      } catch (const std::exception& e) {
        problems[static_cast<std::size_t>(t)] = e.what();
      }
    });
  for (std::thread& w : workers) w.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(problems[static_cast<std::size_t>(t)].empty());
    CHECK(same_bits(together[static_cast<std::size_t>(t)].coefficients, alone[static_cast<std::size_t>(t)].coefficients));
    CHECK(same_bits(together[static_cast<std::size_t>(t)].information, alone[static_cast<std::size_t>(t)].information));
    CHECK(together[static_cast<std::size_t>(t)].weight_sum == alone[static_cast<std::size_t>(t)].weight_sum);
  }
}
