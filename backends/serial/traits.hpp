// Kokkos::Serial: one thread, host memory.
#pragma once
#include "../host_traits.hpp"

namespace rh::backends::serial {

struct Traits : HostTraits<Kokkos::Serial, Space::serial> {};

}  // namespace rh::backends::serial
