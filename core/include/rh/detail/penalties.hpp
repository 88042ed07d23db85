// The penalties: one policy type each (rh/detail/penalties/*.hpp, the concept in rh/detail/penalty.hpp), and the
// one list of them, RH_PENALTY_POLICIES, generated from the policy files' marked lines (rh/detail/penalty_policies.hpp,
// cmake/RhPenalties.cmake). Names, validation, codes, dispatch and the explicit instantiations all expand that list,
// so an unknown penalty is an error everywhere, never mapped to another.
#pragma once
#include <fmt/format.h>
#include <utility>

#include "rh/detail/penalty_policies.hpp"
#include "rh/detail/type_list.hpp"
#include "rh/error.hpp"

namespace rh::detail {

#define RH_PENALTY_LIST_ITEM(P, ARG) , penalty::P
using Penalties = DropFirst<TypeList<void RH_PENALTY_POLICIES(RH_PENALTY_LIST_ITEM, )>>::type;
#undef RH_PENALTY_LIST_ITEM

// f(Tag<P>{}) for the P of the list whose id is `penalty` (the last one when none is: checked by the caller).
template <class F, class First, class... Rest>
decltype(auto) dispatch_penalty(Penalty penalty, F&& f, TypeList<First, Rest...>) {
  if constexpr (sizeof...(Rest) == 0) {
    return f(Tag<First>{});
  } else {
    if (First::id == penalty) return f(Tag<First>{});
    return dispatch_penalty(penalty, std::forward<F>(f), TypeList<Rest...>{});
  }
}

// Calls f(Tag<Policy>{}) for the policy of `penalty`; throws Errc::invalid_argument for an unknown value.
template <class F>
decltype(auto) with_penalty(Penalty penalty, F&& f) {
  bool found = false;
  for_each_type(Penalties{}, [&](auto tag) { found = found || decltype(tag)::type::id == penalty; });
  if (!found)
    throw Error(Errc::invalid_argument, fmt::format("unknown penalty enum value {}", static_cast<int>(penalty)));
  return dispatch_penalty(penalty, std::forward<F>(f), Penalties{});
}

}  // namespace rh::detail
