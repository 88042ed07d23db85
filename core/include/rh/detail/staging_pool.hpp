// Pinned host memory through which host arrays reach a space with its own memory, shared by every model of the
// process. Pinning costs far more per byte than the copy it speeds up, so a buffer pinned per model made cold
// host-input streams slower than pageable copies (docs/evidence/h200.md); the pool pins a few
// chunk-sized slots once and every staging cycles through them.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <mutex>

namespace rh::detail {

// Copies `bytes` from src to dst (host memory, not overlapping) with up to host_copy_threads threads, pieces of at
// least 1 MiB (core/src/host_copy.cpp): how host arrays are copied into the staging slots.
inline constexpr std::size_t host_copy_threads = 4;
void copy_host(void* dst, const void* src, std::size_t bytes);

template <class StagingSpace>
struct StagingPool {
  static constexpr int slots = 4;  // a space fence every `slots` chunks: the copy of 3 overlaps their transfers

  // Calls f(base) with the pool held: base points to slots × slot_bytes of staging memory, which f may fill and
  // hand to asynchronous transfers, as long as they have completed when f returns or throws. One staging at a
  // time: the host copies of two models would only share the same memory bandwidth.
  template <class F>
  static void use(std::size_t slot_bytes, F&& f) {
    std::lock_guard<std::mutex> lock(mutex());
    auto*& buffer = view();
    if (!buffer) {  // freed by Kokkos::finalize: a Kokkos allocation must not outlive it
      buffer = new Buffer();
      Kokkos::push_finalize_hook([] {
        delete view();
        view() = nullptr;
      });
    }
    if (buffer->extent(0) < slots * slot_bytes)
      *buffer = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rh::host_staging"), slots * slot_bytes);
    f(buffer->data());
  }

 private:
  using Buffer = Kokkos::View<char*, StagingSpace>;
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static Buffer*& view() {
    static Buffer* v = nullptr;
    return v;
  }
};

}  // namespace rh::detail
