// The Cholesky of the Newton system by the CUDA toolkit's cuSOLVER (potrf + potrs), for the opt-in A/B build
// RH_CUDA_CUSOLVER (docs/cuda-plan.md §1): against our one-team kernel (rh::cholesky_team) on the same build.
// Included by traits.hpp only when the build asks for it; the library then needs the toolkit's libcusolver.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <fmt/format.h>
#include <mutex>

#include "rh/error.hpp"

namespace rh::backends::cuda {

// One cuSOLVER handle, its workspace and two device ints (potrf's info, potrs's) for the process: CUDA models all
// run on Kokkos' default instance, one call at a time (Traits::independent_instances), so they share it. Released
// when Kokkos finalizes.
class ToolkitCholesky {
 public:
  // f (q×q, row-major: its upper triangle is a column-major lower triangle) ← its factor; sol ← f⁻¹ sol;
  // info() ← potrf's info (0: factored). Asynchronous, on `space`'s stream.
  template <class S>
  static void solve(const Kokkos::Cuda& space, S* f, S* sol, int q) {
    ToolkitCholesky& c = get();
    const std::lock_guard<std::mutex> lock(c.mutex_);
    check(cusolverDnSetStream(c.handle_, space.cuda_stream()), "cusolverDnSetStream");
    int lwork = 0;
    if constexpr (std::is_same_v<S, double>) {
      check(cusolverDnDpotrf_bufferSize(c.handle_, CUBLAS_FILL_MODE_LOWER, q, f, q, &lwork), "potrf_bufferSize");
    } else {
      check(cusolverDnSpotrf_bufferSize(c.handle_, CUBLAS_FILL_MODE_LOWER, q, f, q, &lwork), "potrf_bufferSize");
    }
    c.reserve(static_cast<std::size_t>(lwork) * sizeof(S));
    S* work = static_cast<S*>(c.work_);
    if constexpr (std::is_same_v<S, double>) {
      check(cusolverDnDpotrf(c.handle_, CUBLAS_FILL_MODE_LOWER, q, f, q, work, lwork, c.info_), "potrf");
      check(cusolverDnDpotrs(c.handle_, CUBLAS_FILL_MODE_LOWER, q, 1, f, q, sol, q, c.info_ + 1), "potrs");
    } else {
      check(cusolverDnSpotrf(c.handle_, CUBLAS_FILL_MODE_LOWER, q, f, q, work, lwork, c.info_), "potrf");
      check(cusolverDnSpotrs(c.handle_, CUBLAS_FILL_MODE_LOWER, q, 1, f, q, sol, q, c.info_ + 1), "potrs");
    }
  }
  // Device memory holding potrf's info of the last solve.
  static const int* info() { return get().info_; }

 private:
  ToolkitCholesky() {
    check(cusolverDnCreate(&handle_), "cusolverDnCreate");
    device(cudaMalloc(reinterpret_cast<void**>(&info_), 2 * sizeof(int)), "cudaMalloc");
    Kokkos::push_finalize_hook([] { get().release(); });
  }
  static ToolkitCholesky& get() {
    static ToolkitCholesky c;
    return c;
  }
  void reserve(std::size_t bytes) {
    if (bytes <= work_bytes_) return;
    if (work_) device(cudaFree(work_), "cudaFree");
    work_ = nullptr;
    work_bytes_ = 0;
    device(cudaMalloc(&work_, bytes), "cudaMalloc");
    work_bytes_ = bytes;
  }
  void release() {
    if (work_) cudaFree(work_);
    if (info_) cudaFree(info_);
    if (handle_) cusolverDnDestroy(handle_);
    work_ = nullptr;
    info_ = nullptr;
    handle_ = nullptr;
    work_bytes_ = 0;
  }
  static void check(cusolverStatus_t s, const char* what) {
    if (s != CUSOLVER_STATUS_SUCCESS)
      throw Error(Errc::device_error, fmt::format("cuSOLVER {} failed (status {})", what, static_cast<int>(s)));
  }
  static void device(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::device_error, fmt::format("{} failed: {}", what, cudaGetErrorString(e)));
    }
  }

  std::mutex mutex_;
  cusolverDnHandle_t handle_ = nullptr;
  void* work_ = nullptr;
  std::size_t work_bytes_ = 0;
  int* info_ = nullptr;
};

}  // namespace rh::backends::cuda
