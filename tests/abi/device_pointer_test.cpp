// The C ABI's device-pointer path on a space with its own memory (built for each such compiled space, RH_TEST_SPACE
// names it; its label is the space's): X, y and
// weights in device memory give the same state as host input, bitwise; predict writes into device memory; and
// the memory space is checked both ways, leaving the model unchanged. Prints "abi device pointers passed".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "rh/rh.h"
#include RH_DEVICE_MEMORY_HEADER  // backends/<space>/device_memory.hpp: allocation and copies the caller makes

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s (%s)\n", what, rh_last_error());
    ++failures;
  }
}

std::vector<double> state_of(rh_model* m) {
  rh_state st;
  RH_STRUCT_INIT(&st);
  check(rh_model_get_state(m, &st) == RH_SUCCESS, "get_state sizes");
  std::vector<double> all(static_cast<size_t>(st.coefficients_length + st.information_length));
  st.coefficients = all.data();
  st.information = all.data() + st.coefficients_length;
  check(rh_model_get_state(m, &st) == RH_SUCCESS, "get_state");
  return all;
}

using Device = RH_DEVICE_MEMORY;

double* to_device(const std::vector<double>& v) {
  void* p = Device::allocate(v.size() * sizeof(double));
  check(p != nullptr, "device allocation");
  check(p && Device::to_device(p, v.data(), v.size() * sizeof(double)), "copy to the device");
  return static_cast<double*>(p);
}

// The RH_SPACE_* code of the space under test, found by name in the library's list.
int32_t space_under_test() {
  const char* name = std::getenv("RH_TEST_SPACE");
  int32_t count = 0;
  check(name && rh_space_count(&count) == RH_SUCCESS, "RH_TEST_SPACE and rh_space_count");
  for (int32_t i = 0; name && i < count; ++i) {
    rh_space_info info;
    RH_STRUCT_INIT(&info);
    check(rh_space_get(i, &info) == RH_SUCCESS, "rh_space_get");
    if (std::strcmp(info.name, name) == 0) return info.space;
  }
  check(false, "the space under test is compiled");
  return 0;
}

}  // namespace

int main() {
  const int64_t n = 3000, p = 7;
  std::mt19937_64 rng(77);
  std::normal_distribution<double> normal;
  std::vector<double> x(static_cast<size_t>(n * p)), y(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = 0.4 + x[i * p] - 0.5 * x[i * p + 3] + 0.2 * normal(rng) + (i % 101 == 0 ? 30.0 : 0.0);
    w[i] = 0.5 + static_cast<double>(i % 3);
  }
  rh_config cfg;
  RH_STRUCT_INIT(&cfg);
  rh_config_init(&cfg);
  cfg.space = space_under_test();
  rh_model *from_host = nullptr, *from_device = nullptr;
  check(rh_model_create(RH_ABI_VERSION, &cfg, &from_host) == RH_SUCCESS, "create");
  check(rh_model_create(RH_ABI_VERSION, &cfg, &from_device) == RH_SUCCESS, "create");

  rh_batch host;
  RH_STRUCT_INIT(&host);
  host.x = x.data();
  host.y = y.data();
  host.weights = w.data();
  host.rows = n;
  host.cols = p;
  host.layout = RH_LAYOUT_ROW_MAJOR;
  host.dtype = RH_DTYPE_F64;
  host.memory = RH_MEMORY_HOST;
  rh_batch device = host;
  double *dx = to_device(x), *dy = to_device(y), *dw = to_device(w);
  device.x = dx;
  device.y = dy;
  device.weights = dw;
  device.memory = RH_MEMORY_DEVICE;

  check(rh_model_partial_fit(from_host, &host, nullptr) == RH_SUCCESS, "partial_fit host");
  check(rh_model_partial_fit(from_device, &device, nullptr) == RH_SUCCESS, "partial_fit device");
  const std::vector<double> want = state_of(from_host), got = state_of(from_device);
  check(want == got, "device input gives the host-input state bitwise");

  std::vector<double> pred_host(static_cast<size_t>(n)), pred_back(static_cast<size_t>(n));
  double* dout = to_device(pred_host);
  check(rh_model_predict(from_host, &host, pred_host.data(), n) == RH_SUCCESS, "predict host");
  check(rh_model_predict(from_device, &device, dout, n) == RH_SUCCESS, "predict into device memory");
  check(Device::to_host(pred_back.data(), dout, n * sizeof(double)), "copy back");
  check(pred_back == pred_host, "device predictions equal host predictions");

  rh_batch lie = host;  // host arrays claimed as device memory
  lie.memory = RH_MEMORY_DEVICE;
  check(rh_model_partial_fit(from_device, &lie, nullptr) == RH_INVALID_ARGUMENT, "host memory claimed as device");
  rh_batch reverse = device;  // device arrays claimed as host memory
  reverse.memory = RH_MEMORY_HOST;
  check(rh_model_partial_fit(from_device, &reverse, nullptr) == RH_INVALID_ARGUMENT, "device memory claimed as host");
  check(state_of(from_device) == got, "rejected batches leave the model unchanged");

  for (double* p : {dx, dy, dw, dout}) Device::release(p);
  rh_model_destroy(from_host);
  rh_model_destroy(from_device);
  if (failures) return 1;
  std::printf("abi device pointers passed\n");
  return 0;
}
