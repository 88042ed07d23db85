// The library's explicit instantiations, as macros over one space's traits. backends/instantiate.cpp.in defines
// them once per compiled space (RH_DEFINE); headers declare them extern for every compiled space (RH_DECLARE),
// so no other translation unit instantiates the solver again.
#pragma once
#include <memory>

#include "rh/detail/engine.hpp"
#include "rh/detail/space_traits.hpp"

#define RH_DEFINE
#define RH_DECLARE extern

// Everything instantiated for one space: the engine of each dtype and its factory.
#define RH_SPACE_INSTANCES(PREFIX, TRAITS)                                                                      \
  PREFIX template class ::rh::detail::Engine<TRAITS, float>;                                                    \
  PREFIX template class ::rh::detail::Engine<TRAITS, double>;                                                   \
  PREFIX template std::unique_ptr<::rh::detail::EngineBase> rh::detail::make_engine_for<TRAITS>(Dtype, int);

namespace rh::detail {

template <class Traits>
std::unique_ptr<EngineBase> make_engine_for(Dtype dtype, int device_id) {
  static_assert(check_space_traits<Traits>());
  auto space = Traits::instance(device_id);  // throws when the space cannot serve this device
  if (dtype == Dtype::f32) return std::make_unique<Engine<Traits, float>>(space, device_id);
  return std::make_unique<Engine<Traits, double>>(space, device_id);
}

}  // namespace rh::detail
