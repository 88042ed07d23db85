// Kokkos::OpenMP: host threads. Results do not depend on the thread count (see Tuning in core).
#include "instantiate.hpp"

RH_INSTANTIATE_SPACE(Kokkos::OpenMP, make_openmp_engine)
