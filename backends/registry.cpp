// Which execution spaces this build has, Kokkos start-up, and the engine factory over them.
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>

#include "rh/detail/compat.hpp"
#include "rh/detail/engine_base.hpp"
#include "rh/regressor.hpp"

namespace rh {
namespace detail {
#if defined(KOKKOS_ENABLE_SERIAL)
std::unique_ptr<EngineBase> make_serial_engine(Dtype, int);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
std::unique_ptr<EngineBase> make_openmp_engine(Dtype, int);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
std::unique_ptr<EngineBase> make_cuda_engine(Dtype, int);
#endif
}  // namespace detail

namespace {
std::mutex init_mutex;
bool initialized_by_us = false;

void finalize_at_exit() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
}
}  // namespace

void initialize_runtime(const RuntimeOptions& options) {
  std::lock_guard<std::mutex> lock(init_mutex);
  if (Kokkos::is_initialized()) return;  // the host program (or an earlier call) owns the configuration
  if (initialized_by_us)  // Kokkos cannot be initialized twice in one process
    throw Error(Errc::invalid_state, "Kokkos was already finalized; the library cannot be used any more");
  try {
    compat::initialize_kokkos(options.num_threads, options.device_id);
  } catch (const std::exception& e) {  // e.g. a CUDA build on a machine without a usable GPU driver
    throw Error(Errc::unavailable, fmt::format("Kokkos could not be initialized: {}", e.what()));
  }
  std::atexit(finalize_at_exit);
  initialized_by_us = true;
}

std::vector<SpaceInfo> compiled_spaces() {
  initialize_runtime();
  std::vector<SpaceInfo> out;
#if defined(KOKKOS_ENABLE_SERIAL)
  out.push_back({Space::serial, "serial", 1, 1});
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  out.push_back({Space::openmp, "openmp", compat::concurrency(Kokkos::OpenMP()), 1});
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  out.push_back({Space::cuda, "cuda", compat::concurrency(Kokkos::Cuda()), device_count(Space::cuda)});
#endif
  return out;
}

bool space_compiled(Space space) {
  switch (space) {
#if defined(KOKKOS_ENABLE_SERIAL)
    case Space::serial: return true;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    case Space::openmp: return true;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    case Space::cuda: return true;
#endif
    default: return false;
  }
}

int device_count(Space space) {
  if (!space_compiled(space)) return 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (space == Space::cuda) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return devices;
  }
#endif
  return 1;
}

std::string kokkos_version() {
  return fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100);
}

void detail::check_host_pointer(const void* ptr, const char* what) {
#if defined(KOKKOS_ENABLE_CUDA)
  // Device memory read as host memory would crash the host loop; CUDA can tell us first.
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();  // an unregistered host pointer is fine; clear the error the query left behind
    return;
  }
  if (attr.type == cudaMemoryTypeDevice)
    throw Error(Errc::invalid_argument,
                fmt::format("{} was passed as host memory but CUDA reports it as device memory", what));
#else
  (void)ptr;
  (void)what;
#endif
}

std::unique_ptr<detail::EngineBase> detail::make_engine(Space space, Dtype dtype, int device_id) {
  switch (space) {
#if defined(KOKKOS_ENABLE_SERIAL)
    case Space::serial: return make_serial_engine(dtype, device_id);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    case Space::openmp: return make_openmp_engine(dtype, device_id);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    case Space::cuda:
      // Kokkos drives one CUDA device per process: the one chosen when it was initialized.
      if (device_id != Kokkos::Cuda().cuda_device())
        throw Error(Errc::unavailable, fmt::format("CUDA device {} was requested, but this process runs Kokkos on "
                                                   "device {} (set it with rh::initialize_runtime or rh_init)",
                                                   device_id, Kokkos::Cuda().cuda_device()));
      return make_cuda_engine(dtype, device_id);
#endif
    default: break;
  }
  if (space != Space::serial && space != Space::openmp && space != Space::cuda)
    throw Error(Errc::invalid_argument, fmt::format("unknown execution space enum value {}", static_cast<int>(space)));
  throw Error(Errc::unavailable,
              fmt::format("execution space {} is not compiled into this build of the library", space_name(space)));
}

}  // namespace rh
