// The C ABI's device-pointer path on the CUDA space (built only when CUDA is compiled; label cuda): X, y and
// weights in device memory give the same state as host input, bitwise; predict writes into device memory; and
// the memory space is checked both ways, leaving the model unchanged. Prints "abi device pointers passed".
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "rh/rh.h"

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

double* to_device(const std::vector<double>& v) {
  void* p = nullptr;
  check(cudaMalloc(&p, v.size() * sizeof(double)) == cudaSuccess, "cudaMalloc");
  check(cudaMemcpy(p, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
  return static_cast<double*>(p);
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
  cfg.space = RH_SPACE_CUDA;
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
  check(cudaMemcpy(pred_back.data(), dout, n * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
  check(pred_back == pred_host, "device predictions equal host predictions");

  rh_batch lie = host;  // host arrays claimed as device memory
  lie.memory = RH_MEMORY_DEVICE;
  check(rh_model_partial_fit(from_device, &lie, nullptr) == RH_INVALID_ARGUMENT, "host memory claimed as device");
  rh_batch reverse = device;  // device arrays claimed as host memory
  reverse.memory = RH_MEMORY_HOST;
  check(rh_model_partial_fit(from_device, &reverse, nullptr) == RH_INVALID_ARGUMENT, "device memory claimed as host");
  check(state_of(from_device) == got, "rejected batches leave the model unchanged");

  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dw);
  cudaFree(dout);
  rh_model_destroy(from_host);
  rh_model_destroy(from_device);
  if (failures) return 1;
  std::printf("abi device pointers passed\n");
  return 0;
}
