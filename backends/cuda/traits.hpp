// Kokkos::Cuda: device memory, 256-thread teams, and the CUDA runtime's view of caller pointers. The only file
// of the project that calls the CUDA runtime.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "rh/detail/compat.hpp"
#include "rh/error.hpp"
#include "rh/types.hpp"
#if RH_CUDA_CUSOLVER
#include "toolkit_cholesky.hpp"
#endif

namespace rh::backends::cuda {

struct Traits {
  using execution_space = Kokkos::Cuda;
  static constexpr Space id = Space::cuda;
  static constexpr bool host = false;
  using calling_thread = void;
  static constexpr int team_size = 256;
  static constexpr int gram_tile = 16;    // 16×16 entries: one per thread of a 256-thread team
  // From q = 128 on, 64×64 tiles with a 4×4 block of entries per thread in registers: the narrow path is bound by
  // its 2 scratch loads per multiply-add (docs/performance.md, "Why the code is so"), this one does 0.5.
  static constexpr int gram_wide_tile = 64;
  static constexpr int stage_rows = 32;   // rows of a tile pair staged in team scratch at a time
  // A warp pair per model: threads for the entries of its small systems (q ≤ 64) and of its row sums.
  static constexpr int group_team_size = 64;
  // Row chunks (see HostTraits): 128 teams of 256 threads fill the SMs of a data-centre GPU (132 on an H100/H200).
  static constexpr long long min_chunks = 16;
  static constexpr long long max_chunks = 128;
  // Host arrays reach the device through pinned memory (several times faster than from pageable memory,
  // docs/evidence/h200.md), 4 MiB at a time: the host copy of one chunk overlaps
  // the transfers of the ones before, through the process's pool of pinned slots (rh/detail/staging_pool.hpp;
  // a buffer pinned per model made cold streams slower than pageable copies, docs/evidence/h200.md).
  using staging_space = Kokkos::CudaHostPinnedSpace;
  static constexpr long long staging_chunk_bytes = 4LL << 20;
  // The LU team: one thread per matrix entry, in whole warps, at most a block of 1024.
  static int lu_team_size(long long q) {
    const long long entries = ((q * q + 31) / 32) * 32;
    return static_cast<int>(entries < 32 ? 32 : (entries > 1024 ? 1024 : entries));
  }
  // Up to q = 320 the whole Cholesky runs in one team (rh::cholesky_team, when its panel fits in team scratch),
  // above in panels of 8 rows, each factored by one thread with the trailing updates over many teams: the one team
  // is faster up to there and slower beyond (rh_solve_bench, docs/evidence/h200.md).
  static int cholesky_panel(long long q) { return q <= 320 ? static_cast<int>(q) : 8; }
  // The opt-in A/B build RH_CUDA_CUSOLVER factors and solves with the toolkit's cuSOLVER instead
  // (toolkit_cholesky.hpp); the report and the LU fallback stay ours.
#if RH_CUDA_CUSOLVER
  using toolkit_cholesky = ToolkitCholesky;
#endif

  // Asked before Kokkos starts (a CUDA build cannot start Kokkos without a GPU): 0 when none is usable.
  static int device_count() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return devices;
  }
  static int concurrency() { return compat::concurrency(Kokkos::Cuda()); }

  // Kokkos drives one CUDA device per process: the one chosen when it was initialized.
  static Kokkos::Cuda instance(int device_id) {
    const Kokkos::Cuda space;
    if (device_id != space.cuda_device())
      throw Error(Errc::unavailable, fmt::format("CUDA device {} was requested, but this process runs Kokkos on "
                                                 "device {} (set it with rh::initialize_runtime or rh_init)",
                                                 device_id, space.cuda_device()));
    return space;
  }

  // Every engine runs on the default instance: calls on CUDA models are serialized by the library.
  static constexpr bool independent_instances = false;

  // Free memory of the device Kokkos runs on (the engine's, checked by instance()), asked before allocating.
  static std::uint64_t available_memory(int /*device_id*/) {
    std::size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t err = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::device_error, fmt::format("cudaMemGetInfo failed: {}", cudaGetErrorString(err)));
    }
    return free_bytes;
  }

  // Memory passed as device memory must be CUDA device (or managed) memory on the engine's device.
  static void check_device_pointer(const void* ptr, const char* what, int device_id) {
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

  // Device memory read as host memory would crash the host loop; CUDA can tell us first.
  static void check_host_pointer(const void* ptr, const char* what) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
      cudaGetLastError();  // an unregistered host pointer is fine; clear the error the query left behind
      return;
    }
    if (attr.type == cudaMemoryTypeDevice)
      throw Error(Errc::invalid_argument,
                  fmt::format("{} was passed as host memory but CUDA reports it as device memory", what));
  }
};

}  // namespace rh::backends::cuda
