// Sums in a fixed order whose loads are issued ahead of their adds: the chunk and coefficient sums of the passes.
#pragma once
#include <Kokkos_Core.hpp>

namespace rh::detail {

// add(load(0)), add(load(1)), …, add(load(count − 1)), in that order, with blocks of Ahead loads issued before their
// adds: on a device the loads of a block are in flight together instead of one after the other behind the chain of
// adds (one thread's in-order sum over the chunks is a chain of loads from L2 otherwise). The same operations in the
// same order as a plain loop, so the same bits.
template <int Ahead, class T, class Load, class Add>
KOKKOS_INLINE_FUNCTION void for_each_in_order(long long count, const Load& load, const Add& add) {
  long long i = 0;
  for (; i + Ahead <= count; i += Ahead) {
    T v[Ahead];
    for (int t = 0; t < Ahead; ++t) v[t] = load(i + t);
    for (int t = 0; t < Ahead; ++t) add(v[t]);
  }
  for (; i < count; ++i) add(load(i));
}

// S(0) + load(0) + load(1) + … + load(count − 1), added in that order (for_each_in_order).
template <class S, class Load>
KOKKOS_INLINE_FUNCTION S sum_in_order(long long count, const Load& load) {
  S sum = S(0);
  for_each_in_order<8, S>(count, load, [&](const S& v) { sum += v; });
  return sum;
}

}  // namespace rh::detail
