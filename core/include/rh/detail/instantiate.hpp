// What backends/instantiate.cpp.in compiles once per space: every definition of the solver, and the factory.
#pragma once
#include <memory>

#include "rh/detail/engine.hpp"
#include "rh/detail/group/engine.hpp"
#include "rh/detail/instances.hpp"
#include "rh/detail/passes_impl.hpp"
#include "rh/detail/space_traits.hpp"

namespace rh::detail {

template <class Traits>
std::unique_ptr<EngineBase> make_engine_for(Dtype dtype, int device_id) {
  static_assert(check_space_traits<Traits>());
  auto space = Traits::instance(device_id);  // throws when the space cannot serve this device
  if (dtype == Dtype::f32) return std::make_unique<Engine<Traits, float>>(space, device_id);
  return std::make_unique<Engine<Traits, double>>(space, device_id);
}

}  // namespace rh::detail
