// What the core asks of an execution space. Each space is a folder backends/<name>/ whose traits.hpp defines
// rh::backends::<name>::Traits with these members (docs/architecture.md, "Spaces as traits"):
//
//   using execution_space                   the Kokkos execution space
//   static constexpr Space id               its value in the public enum rh::Space
//   static constexpr bool host              its memory is host memory: caller arrays are read in place, and the
//                                           kernels take their host paths (one thread per team)
//   using calling_thread                    traits of a host space that runs a batch on the calling thread alone
//                                           over this space's views (the same bits), tried when this space's
//                                           threads are measured slower (rh/detail/thread_choice.hpp); void: none
//   static constexpr int team_size          threads per team of the row-chunk kernels
//   static constexpr int gram_tile          Gram tile edge of the team path (the host path is fixed at 16)
//   static constexpr int gram_wide_tile     Gram tile edge of the register-tiled team path, taken from q = 2 tiles
//                                           on (a multiple of 16, team_size 256; 0: not used)
//   static constexpr int stage_rows         rows staged in team scratch at a time (team path)
//   static constexpr int group_team_size    threads per team (one team per model) of the model group's kernels
//   static constexpr long long min_chunks, max_chunks   bounds of the row-chunk count (Passes::chunks_for)
//   using staging_space                     host memory space that host arrays pass through on their way to a
//                                           space with its own memory (pinned on CUDA); one pool per process, staging_pool.hpp
//   static constexpr long long staging_chunk_bytes   bytes per host copy + transfer step of that staging
//   static int lu_team_size(long long q)    team size of the one-team LU factor+solve
//   static int cholesky_panel(long long q)  rows per panel of the blocked Cholesky (q: one launch: sequential on
//                                           a host, one team on a device)
//   static int device_count()               devices present (1 for a host space); must not start Kokkos
//   static int concurrency()                threads (host) or resident threads (device) of Kokkos' instance
//   static execution_space instance(int device_id)      the instance an engine runs on; throws Errc::unavailable
//                                           for a device it cannot use
//   static constexpr bool independent_instances   instance() gives each engine an instance of its own, and engines
//                                           on different threads may run at the same time (else calls serialize)
//   static std::uint64_t available_memory(int device_id)   bytes the space can still allocate (a device's free
//                                           memory; the largest value for host memory, bounded by the memory limit)
//   static void check_device_pointer(const void*, const char* what, int device_id)   memory passed as device
//                                           memory: throws Errc::invalid_argument unless it is this space's
//   static void check_host_pointer(const void*, const char* what)   memory passed as host memory: throws
//                                           Errc::invalid_argument when this space knows it is device memory
//
// Nothing else in the core names a space: no #if KOKKOS_ENABLE_*, no vendor runtime call outside backends/.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "rh/types.hpp"

namespace rh::detail {

// Compile-time check that a traits type has the members above with the right types.
template <class T>
constexpr bool check_space_traits() {
  static_assert(std::is_same_v<std::remove_cv_t<decltype(T::id)>, Space>, "Traits::id must be an rh::Space");
  static_assert(std::is_same_v<std::remove_cv_t<decltype(T::host)>, bool>, "Traits::host must be a bool");
  static_assert(T::host == Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                      typename T::execution_space::memory_space>::accessible,
                "Traits::host must say whether the space's memory is host memory");
  if constexpr (!std::is_void_v<typename T::calling_thread>) {
    using C = typename T::calling_thread;
    static_assert(T::host && C::host, "only a host space runs on the calling thread");
    static_assert(std::is_same_v<typename C::execution_space::memory_space,
                                 typename T::execution_space::memory_space> &&
                      std::is_same_v<typename C::execution_space::array_layout,
                                     typename T::execution_space::array_layout> &&
                      C::min_chunks == T::min_chunks && C::max_chunks == T::max_chunks &&
                      C::stage_rows == T::stage_rows && C::team_size == T::team_size &&
                      C::independent_instances == T::independent_instances,
                  "the calling thread's space shares the views, the row chunks (so the bits) and the threading rule");
  }
  static_assert(T::team_size >= 1 && T::gram_tile >= 1 && T::stage_rows >= 1 && T::group_team_size >= 1,
                "team tuning must be positive");
  static_assert(T::gram_wide_tile == 0 || (T::gram_wide_tile % 16 == 0 && T::team_size == 256),
                "the register-tiled Gram uses 16×16 threads, each with a (gram_wide_tile/16)² block");
  static_assert(T::min_chunks >= 1 && T::min_chunks <= T::max_chunks, "chunk bounds must be ordered");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename T::staging_space>::accessible &&
                    T::staging_chunk_bytes >= 1,
                "the staging space is host memory, copied in positive chunks");
  static_assert(std::is_same_v<decltype(T::instance(0)), typename T::execution_space>,
                "Traits::instance must return the execution space");
  static_assert(std::is_same_v<decltype(T::device_count()), int> && std::is_same_v<decltype(T::concurrency()), int>,
                "device_count and concurrency return int");
  static_assert(std::is_same_v<decltype(T::lu_team_size(1LL)), int>, "lu_team_size returns int");
  static_assert(std::is_same_v<std::remove_cv_t<decltype(T::independent_instances)>, bool>,
                "Traits::independent_instances must be a bool");
  static_assert(std::is_same_v<decltype(T::available_memory(0)), std::uint64_t>, "available_memory returns bytes");
  static_assert(std::is_same_v<decltype(T::cholesky_panel(1LL)), int>, "cholesky_panel returns int");
  static_assert(std::is_same_v<decltype(T::check_device_pointer(nullptr, "", 0)), void> &&
                    std::is_same_v<decltype(T::check_host_pointer(nullptr, "")), void>,
                "pointer checks return void (they throw)");
  return true;
}

}  // namespace rh::detail
