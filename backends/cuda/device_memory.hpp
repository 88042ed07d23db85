// How a test obtains caller-owned device memory on this space (tests/abi/device_pointer_test.cpp), and what the perf
// worker's records say of the device (perf/rh_perf_worker.cpp): the raw runtime calls a C caller would make, kept
// here so that no test or tool names the vendor runtime. Every device space provides one.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

namespace rh::backends::cuda {

struct DeviceMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
  }
  static bool to_device(void* dst, const void* src, std::size_t bytes) {
    return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  static bool to_host(void* dst, const void* src, std::size_t bytes) {
    return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess;
  }
  static void release(void* p) { cudaFree(p); }

  // The first device and how many there are; nothing when none is present.
  struct Description {
    std::string name, compute_capability;
    std::size_t memory_mib;
    int driver_version, runtime_version, devices;
  };
  static std::optional<Description> describe() {
    int count = 0, driver = 0, runtime = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) return std::nullopt;
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    return Description{prop.name, std::to_string(prop.major) + "." + std::to_string(prop.minor),
                       prop.totalGlobalMem >> 20, driver, runtime, count};
  }
};

}  // namespace rh::backends::cuda
