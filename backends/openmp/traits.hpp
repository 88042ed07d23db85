// Kokkos::OpenMP: host threads. Results do not depend on the thread count (fixed row chunks, see HostTraits).
#pragma once
#include "../host_traits.hpp"

namespace rh::backends::openmp {

struct Traits : HostTraits<Kokkos::OpenMP, Space::openmp> {};

}  // namespace rh::backends::openmp
