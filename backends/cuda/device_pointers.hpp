// Kokkos::Cuda accepts caller memory that CUDA reports as device (or managed) memory on the engine's device.
#pragma once
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "rh/detail/engine.hpp"

namespace rh::detail {

template <>
struct DevicePointers<Kokkos::Cuda> {
  static constexpr bool supported = true;
  static void check(const void* ptr, const char* what, int device_id) {
    cudaPointerAttributes attr{};
    const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear the sticky error of a failed query
      throw Error(Errc::invalid_argument, fmt::format("{} is not a CUDA pointer ({})", what, cudaGetErrorString(err)));
    }
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
      throw Error(Errc::invalid_argument,
                  fmt::format("{} was passed as device memory but CUDA reports it as host memory", what));
    if (attr.device != device_id)
      throw Error(Errc::invalid_argument,
                  fmt::format("{} lives on CUDA device {}, but the model runs on device {}", what, attr.device, device_id));
  }
};

}  // namespace rh::detail
