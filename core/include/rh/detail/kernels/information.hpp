// How the passes read the information matrix J entry by entry (one rule for every kernel that does).
#pragma once
#include <Kokkos_Core.hpp>

namespace rh::detail {

// J(j,k) where one thread per j loops over k. A device with an exactly symmetric J reads J(k,j), the same value:
// its threads j then read adjacent entries of row k (coalesced) instead of entries q apart. A host thread reads
// row j, in order. reads_j_transposed is that choice, the one rule of every kernel that calls j_entry.
KOKKOS_INLINE_FUNCTION bool reads_j_transposed(bool info_symmetric, bool host) { return info_symmetric && !host; }
template <class MView>
KOKKOS_INLINE_FUNCTION double j_entry(const MView& info, bool transposed, long long j, long long k) {
  return static_cast<double>(transposed ? info(k, j) : info(j, k));
}

}  // namespace rh::detail
