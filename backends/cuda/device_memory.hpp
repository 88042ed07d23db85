// How a test obtains caller-owned device memory on this space (tests/abi/device_pointer_test.cpp): the raw runtime
// calls a C caller would make, kept here so that no test names the vendor runtime. Every device space provides one.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

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
};

}  // namespace rh::backends::cuda
