// Kokkos::Threads: host threads of Kokkos' own pool, the host-parallel space where Kokkos has no OpenMP (MSVC).
// Results do not depend on the thread count (fixed row chunks, see HostTraits).
#pragma once
#include "../host_traits.hpp"

namespace rh::backends::threads {

// One pool per process, which runs one parallel region at a time: engines share it and their calls are serialized
// (no independent instances), and a batch never moves to the calling thread alone (that needs the same instance
// rule as Serial's; calling_thread stays void).
struct Traits : HostTraits<Kokkos::Threads, Space::threads> {
  static constexpr bool independent_instances = false;
  static Kokkos::Threads instance(int /*device_id*/) { return Kokkos::Threads(); }
};

}  // namespace rh::backends::threads
