// Included by exactly one source file per execution space: instantiates the core engine for both dtypes and
// defines that space's factory. Backends choose by template argument; the numerics stay in core/.
#pragma once
#include <memory>

#include "rh/detail/engine.hpp"

#define RH_INSTANTIATE_SPACE(SPACE, FACTORY)                                              \
  template class rh::detail::Engine<SPACE, float>;                                        \
  template class rh::detail::Engine<SPACE, double>;                                       \
  namespace rh::detail {                                                                  \
  std::unique_ptr<EngineBase> FACTORY(Dtype dtype, int device_id) {                       \
    if (dtype == Dtype::f32) return std::make_unique<Engine<SPACE, float>>(device_id);    \
    return std::make_unique<Engine<SPACE, double>>(device_id);                            \
  }                                                                                       \
  }
