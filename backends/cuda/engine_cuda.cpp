// Kokkos::Cuda: the same core engine on the GPU, plus the device-pointer check.
#include "device_pointers.hpp"
#include "instantiate.hpp"

RH_INSTANTIATE_SPACE(Kokkos::Cuda, make_cuda_engine)
