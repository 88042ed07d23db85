// Regression tests for the engine items of issue 15 (1: sums that overflow, 2: atomic allocation, 3: size and thread
// bounds). Each failed on main at edf27c6 (the statuses and effects are written beside each case): run there with
//   build/cpu/tests/abi/rh_abi_tests --test-suite=engine_limits
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "abi_test_support.hpp"
#include "common/os.hpp"

using namespace abi_test;

namespace {

constexpr std::int64_t kRows = 40, kCols = 3;

Snapshot fitted_snapshot(rh_model* m) {
  partial_fit(m, make_data(kRows, kCols, 1), RH_DTYPE_F64);
  return snapshot(m);
}


}  // namespace

TEST_SUITE("engine_limits") {

// Item 1. On main: the batch sum +Inf passed `!(total > 0)`; the solve then failed (RH_NUMERICAL_ERROR) or committed
// weight_sum = +Inf.
TEST_CASE("weights whose batch sum overflows are refused before anything is committed") {
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

TEST_CASE("a cumulative weight sum that would overflow is refused") {
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

// Item 2. On main: RH_DEVICE_ERROR ("Kokkos failed to allocate"), and the work views were left inconsistent (the next
// partial_fit failed too). The memory limit is lifted so that the allocation itself is tried and fails.
TEST_CASE("an allocation that fails is RH_ALLOCATION_FAILED and the model stays usable") {
  struct NoLimit {
    NoLimit() { REQUIRE(rh_set_memory_limit(std::numeric_limits<std::uint64_t>::max()) == RH_SUCCESS); }
    ~NoLimit() { rh_set_memory_limit(0); }
  } no_limit;
  Model m;
  const Snapshot before = fitted_snapshot(m);
  // J alone would be 128 TiB, beyond a 47-bit user address space: no overcommit setting lets it be mapped (at 2^20,
  // 8 TiB, a machine that overcommits mapped it and the process was killed while Kokkos zeroed it).
  const std::int64_t p = std::int64_t{1} << 22;
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
  // A host space tries the allocation and Kokkos refuses it; a space that reports its free memory (CUDA) refuses
  // it before allocating, with the same status.
  const std::string message = rh_last_error();
  CHECK((message.find("allocate") != std::string::npos || message.find(" free") != std::string::npos));
  CHECK(snapshot(m) == before);
  partial_fit(m, make_data(kRows, kCols, 4), RH_DTYPE_F64);  // still usable
}

// Item 3. On main: p = 1e8 allocated about 3.9 GB before an error (RH_DEVICE_ERROR). Reads 0.8 GB of zero pages of X (calloc: no
// memory is committed for them).
TEST_CASE("a huge p is refused before the engine allocates for it") {
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
  const long long rss_before = test_os::peak_memory_kib();
  const rh_status s = rh_model_fit(m, &b, nullptr);
  CHECK((s == RH_INVALID_ARGUMENT || s == RH_ALLOCATION_FAILED));
  CHECK(test_os::peak_memory_kib() - rss_before < 100 * 1024);  // the engine allocated nothing sized by p
  CHECK(snapshot(m) == before);
  std::free(x);
}

// Item 3. On main: the process ended inside Kokkos' OpenMP start-up ("libgomp: Thread creation failed"). Refused
// whether the runtime runs already or not.
TEST_CASE("an absurd host thread count is refused") {
  CHECK(rh_init(RH_ABI_VERSION, 100000, -1) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_last_error()).find("host_threads 100000") != std::string::npos);
  rh_config c = make_config();
  c.host_threads = 100000;
  rh_model* m = nullptr;
  CHECK(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_INVALID_ARGUMENT);
  CHECK(m == nullptr);
}

// Item 3: the memory limit is the caller's to set; a model that would need more is refused before it allocates, and
// the limit applies to every call that would grow the model (here a predict with many rows).
TEST_CASE("the memory limit refuses what would exceed it, and 0 restores the default") {
  std::uint64_t default_limit = 0;
  REQUIRE(rh_get_memory_limit(&default_limit) == RH_SUCCESS);
  CHECK(default_limit > 0);
  Model m;
  const Snapshot before = fitted_snapshot(m);
  REQUIRE(rh_set_memory_limit(64 * 1024) == RH_SUCCESS);  // 64 KiB: the fitted model fits, 4000 more rows do not
  const Data wide = make_data(4000, kCols, 5);
  Arrays a;
  const rh_batch b = make_batch(wide, RH_DTYPE_F64, a);
  std::vector<double> out(4000);
  CHECK(rh_model_predict(m, &b, out.data(), 4000) == RH_ALLOCATION_FAILED);
  CHECK(std::string(rh_last_error()).find("memory limit") != std::string::npos);
  CHECK(rh_model_partial_fit(m, &b, nullptr) == RH_ALLOCATION_FAILED);
  CHECK(snapshot(m) == before);
  REQUIRE(rh_set_memory_limit(0) == RH_SUCCESS);
  std::uint64_t restored = 0;
  REQUIRE(rh_get_memory_limit(&restored) == RH_SUCCESS);
  CHECK(restored == default_limit);
  CHECK(rh_model_predict(m, &b, out.data(), 4000) == RH_SUCCESS);
  CHECK(rh_get_memory_limit(nullptr) == RH_INVALID_ARGUMENT);
}

// Item 1: N_b must stay finite and so must 1/N_b; weights so small that 1/N_b overflows are refused too.
TEST_CASE("weights whose total is too small to invert are refused") {
  Model m;
  Data d = make_data(kRows, kCols, 7, true);
  for (double& w : d.w) w = 1e-320;  // subnormal: W_b > 0, 1/W_b = +Inf
  Arrays a;
  const rh_batch b = make_batch(d, RH_DTYPE_F64, a);
  CHECK(rh_model_partial_fit(m, &b, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_last_error()).find("1/N_b") != std::string::npos);
}

}  // TEST_SUITE
