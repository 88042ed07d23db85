// Bitwise equality of two states, field by field from the state list (RH_STATE_SCALARS, RH_STATE_ARRAYS in
// rh/types.hpp): the transactional guarantee is "exactly as it was", so NaN and -0 compare by their bits.
#pragma once
#include <cstring>
#include <vector>

#include "rh/types.hpp"

namespace rh::test {

inline bool same_state(const State& a, const State& b) {
  bool same = true;
#define RH_SAME_SCALAR(type, name, init, since) same = same && std::memcmp(&a.name, &b.name, sizeof(type)) == 0;
  RH_STATE_SCALARS(RH_SAME_SCALAR)
#undef RH_SAME_SCALAR
  const auto same_values = [](const std::vector<double>& u, const std::vector<double>& v) {
    return u.size() == v.size() && (u.empty() || std::memcmp(u.data(), v.data(), u.size() * sizeof(double)) == 0);
  };
#define RH_SAME_ARRAY(name, rank, since) same = same && same_values(a.name, b.name);
  RH_STATE_ARRAYS(RH_SAME_ARRAY)
#undef RH_SAME_ARRAY
  return same;
}

}  // namespace rh::test
