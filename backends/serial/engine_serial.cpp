// Kokkos::Serial: the reference space (one thread, fixed order).
#include "instantiate.hpp"

RH_INSTANTIATE_SPACE(Kokkos::Serial, make_serial_engine)
