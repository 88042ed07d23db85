// Every difference between Kokkos 3.4 and Kokkos >= 4.6 that this project meets lives here, and only here.
#pragma once
#include <Kokkos_Core.hpp>

#if KOKKOS_VERSION >= 40000
#define RH_KOKKOS4 1
#else
#define RH_KOKKOS4 0
#endif

namespace rh::compat {

// Kokkos 3.4 joins reduction values through volatile references; Kokkos 4 calls the plain overloads.
#if RH_KOKKOS4
#define RH_REDUCE_VOLATILE
#else
#define RH_REDUCE_VOLATILE volatile
#endif

// Math functions: Kokkos::Experimental in 3.4, Kokkos in 4.x.
#if RH_KOKKOS4
using Kokkos::fabs;
using Kokkos::isfinite;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::sqrt;
#endif

// Kokkos::initialize with a thread count (0 = Kokkos' default) and a device id (-1 = Kokkos' default).
inline void initialize_kokkos(int num_threads, int device_id) {
#if RH_KOKKOS4
  Kokkos::InitializationSettings settings;
  if (num_threads > 0) settings.set_num_threads(num_threads);
  if (device_id >= 0) settings.set_device_id(device_id);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments args;
  args.num_threads = num_threads > 0 ? num_threads : -1;
  args.device_id = device_id;
  Kokkos::initialize(args);
#endif
}

// Concurrency of an execution space instance (a static in 3.4, an instance member in 4.x).
template <class Space>
int concurrency(const Space& space) {
#if RH_KOKKOS4
  return space.concurrency();
#else
  (void)space;
  return Space::concurrency();
#endif
}

}  // namespace rh::compat
