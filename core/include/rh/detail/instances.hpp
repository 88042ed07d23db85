// The library's explicit instantiations, as X-macro arms over the compiled spaces (compiled_spaces.hpp) and the
// penalties (penalties.hpp). backends/instantiate.cpp.in expands them with DEFINE once per space; passes.hpp and
// engine.hpp expand them with DECLARE for every compiled space, so no other translation unit instantiates the
// solver again (a test that calls a pass links the library's code).
#pragma once

#define RH_INSTANCE_DEFINE
#define RH_INSTANCE_DECLARE extern
#define RH_UNPAREN(...) __VA_ARGS__

#define RH_PENALTY_PASSES_DEFINE(P, TRAITS_AND_S) \
  template class ::rh::detail::PenaltyPasses<RH_UNPAREN TRAITS_AND_S, ::rh::detail::penalty::P>;
#define RH_PENALTY_PASSES_DECLARE(P, TRAITS_AND_S) \
  extern template class ::rh::detail::PenaltyPasses<RH_UNPAREN TRAITS_AND_S, ::rh::detail::penalty::P>;
#define RH_PASSES_INSTANCES_OF(MODE, TRAITS, S)                 \
  RH_INSTANCE_##MODE template class ::rh::detail::Passes<TRAITS, S>; \
  RH_PENALTY_POLICIES(RH_PENALTY_PASSES_##MODE, (TRAITS, S))

// X-macro arms: (name, traits, MODE) with MODE DEFINE or DECLARE.
#define RH_PASSES_INSTANCES(name, TRAITS, MODE) \
  RH_PASSES_INSTANCES_OF(MODE, TRAITS, float) RH_PASSES_INSTANCES_OF(MODE, TRAITS, double)
#define RH_ENGINE_INSTANCES(name, TRAITS, MODE)                     \
  RH_INSTANCE_##MODE template class ::rh::detail::Engine<TRAITS, float>;  \
  RH_INSTANCE_##MODE template class ::rh::detail::Engine<TRAITS, double>; \
  RH_INSTANCE_##MODE template std::unique_ptr<::rh::detail::EngineBase> rh::detail::make_engine_for<TRAITS>(Dtype, int);
