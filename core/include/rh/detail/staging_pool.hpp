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

// Sends host arrays into views of a space with its own memory through a pool's slots (inside StagingPool::use, from
// the base it gives), a chunk of `chunk` values at a time: the host copy of one chunk overlaps the transfers of the
// ones before, and the space is fenced each time the slots come round again. The caller fences the space before
// use returns.
template <class StagingSpace, class Space>
struct PooledSends {
  Space space;
  char* base;
  long long chunk_bytes;
  long long sent = 0;  // chunks handed to transfers

  template <class S, class Dst>
  void operator()(const S* src, long long count, const Dst& dst) {
    using Slot = Kokkos::View<S*, StagingSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const long long chunk = chunk_bytes / static_cast<long long>(sizeof(S));
    for (long long o = 0; o < count; o += chunk, ++sent) {
      if (sent > 0 && sent % StagingPool<StagingSpace>::slots == 0) space.fence();
      const long long m = count - o < chunk ? count - o : chunk;
      S* slot = reinterpret_cast<S*>(base) + (sent % StagingPool<StagingSpace>::slots) * chunk;
      copy_host(slot, src + o, static_cast<std::size_t>(m) * sizeof(S));
      Kokkos::deep_copy(space, Kokkos::subview(dst, Kokkos::make_pair(o, o + m)), Slot(slot, m));
    }
  }
};

}  // namespace rh::detail
