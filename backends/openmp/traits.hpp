// Kokkos::OpenMP: host threads. Results do not depend on the thread count (fixed row chunks, see HostTraits).
#pragma once
#include "../host_traits.hpp"
#if defined(KOKKOS_ENABLE_SERIAL)
#include "../serial/traits.hpp"
#endif

namespace rh::backends::openmp {

struct Traits : HostTraits<Kokkos::OpenMP, Space::openmp> {
#if defined(KOKKOS_ENABLE_SERIAL)
  // When the threads are measured slower than the calling thread alone (a loaded machine), a batch runs on Serial
  // over the same views (rh/detail/thread_choice.hpp).
  using calling_thread = serial::Traits;
#endif
};

}  // namespace rh::backends::openmp
