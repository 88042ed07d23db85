// Regression tests for the engine items of issue 15 (1: weight sums that overflow, 2: atomic allocation, 3: size and
// thread bounds). They FAIL on the current engine, which the second part of issue 15 changes, so every case is
// skipped by default and the suite has no ctest entry yet. Run them by hand with
//   build/cpu/tests/abi/rh_abi_tests --test-suite=engine_limits --no-skip
// and give the suite its ctest entry (tests/abi/CMakeLists.txt) together with the fix.
#include <cstdlib>
#include <sys/resource.h>
#include <vector>

#include "abi_test_support.hpp"

using namespace abi_test;

namespace {

constexpr std::int64_t kRows = 40, kCols = 3;

Snapshot fitted_snapshot(rh_model* m) {
  partial_fit(m, make_data(kRows, kCols, 1), RH_DTYPE_F64);
  return snapshot(m);
}

long peak_rss_kib() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

TEST_SUITE("engine_limits") {

// Item 1. Today: the batch sum +Inf passes `!(total > 0)`; the solve then fails or commits weight_sum = +Inf.
TEST_CASE("weights whose batch sum overflows are refused before anything is committed" * doctest::skip()) {
  Model m;
  const Snapshot before = fitted_snapshot(m);
  Data d = make_data(kRows, kCols, 2, true);
  for (double& w : d.w) w = 1e308;  // each finite, the sum is not
  Arrays a;
  const rh_batch b = make_batch(d, RH_DTYPE_F64, a);
  CHECK(rh_model_partial_fit(m, &b, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_last_error()).find("weight") != std::string::npos);
  CHECK(snapshot(m) == before);
}

TEST_CASE("a cumulative weight sum that would overflow is refused" * doctest::skip()) {
  Model m;
  Snapshot s = fitted_snapshot(m);
  rh_state st = s.scalars;
  st.coefficients = s.coefficients.data();
  st.information = s.information.data();
  st.weight_sum = 1.7e308;  // finite, valid
  REQUIRE(rh_model_set_state(m, &st) == RH_SUCCESS);
  const Snapshot before = snapshot(m);
  Data d = make_data(kRows, kCols, 3, true);
  for (double& w : d.w) w = 1e307;  // the batch sum 4e308 overflows too; with 1.7e308 before, certainly
  Arrays a;
  const rh_batch b = make_batch(d, RH_DTYPE_F64, a);
  CHECK(rh_model_partial_fit(m, &b, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(snapshot(m) == before);
}

// Item 2. Today: RH_DEVICE_ERROR ("Kokkos failed to allocate"), and the work views may be left inconsistent.
TEST_CASE("an allocation that fails is RH_ALLOCATION_FAILED and the model stays usable" * doctest::skip()) {
  Model m;
  const Snapshot before = fitted_snapshot(m);
  const std::int64_t p = std::int64_t{1} << 20;  // J alone would be 8 TiB
  std::vector<double> x(static_cast<std::size_t>(p), 0.5), y(1, 1.0);
  rh_batch b;
  RH_STRUCT_INIT(&b);
  b.x = x.data();
  b.y = y.data();
  b.rows = 1;
  b.cols = p;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = RH_DTYPE_F64;
  b.memory = RH_MEMORY_HOST;
  CHECK(rh_model_fit(m, &b, nullptr) == RH_ALLOCATION_FAILED);
  CHECK(snapshot(m) == before);
  partial_fit(m, make_data(kRows, kCols, 4), RH_DTYPE_F64);  // still usable
}

// Item 3. Today: p = 1e8 allocates about 3.9 GB before an error. Reads 0.8 GB of zero pages of X (calloc: no
// memory is committed for them).
TEST_CASE("a huge p is refused before the engine allocates for it" * doctest::skip()) {
  Model m;
  const Snapshot before = fitted_snapshot(m);
  const std::int64_t p = 100000000;
  double* x = static_cast<double*>(std::calloc(static_cast<std::size_t>(p), sizeof(double)));
  REQUIRE(x);
  double y = 1.0;
  rh_batch b;
  RH_STRUCT_INIT(&b);
  b.x = x;
  b.y = &y;
  b.rows = 1;
  b.cols = p;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = RH_DTYPE_F64;
  b.memory = RH_MEMORY_HOST;
  const long rss_before = peak_rss_kib();
  const rh_status s = rh_model_fit(m, &b, nullptr);
  CHECK((s == RH_INVALID_ARGUMENT || s == RH_ALLOCATION_FAILED));
  CHECK(peak_rss_kib() - rss_before < 100 * 1024);  // the engine allocated nothing sized by p
  CHECK(snapshot(m) == before);
  std::free(x);
}

// Item 3. Today: the process ends inside Kokkos' OpenMP start-up. Run alone (the runtime must not be started yet).
TEST_CASE("an absurd host thread count is refused" * doctest::skip()) {
  CHECK(rh_init(RH_ABI_VERSION, 100000, -1) == RH_INVALID_ARGUMENT);
}

}  // TEST_SUITE
