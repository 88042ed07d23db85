// row_dots / row_dot: the row passes' dot products, taking the host vector path (host_simd/row_vectors.hpp)
// for row-major X where it is compiled, else the portable lanes (row_lanes.hpp). Both give the same bits.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "rh/detail/kernels/host_simd/row_vectors.hpp"
#include "rh/detail/kernels/row_lanes.hpp"

namespace rh::detail {

template <class XView, class VView>
struct RowViews {
  const XView& xs;
  const VView &vs, &v2s;
  long long i;
  KOKKOS_INLINE_FUNCTION auto x(long long j) const { return xs(i, j); }
  KOKKOS_INLINE_FUNCTION auto v(long long j) const { return vs(j); }
  KOKKOS_INLINE_FUNCTION auto v2(long long j) const { return v2s(j); }
};

template <bool Line, class S, class Isa, class XView, class VView>
KOKKOS_INLINE_FUNCTION void row_dots(const XView& x, long long i, const VView& v, const VView& v2, long long q,
                                     S& out, S& out2, S& magnitude) {
  RowDots<S> d;
#if RH_ROW_VECTORS
  if constexpr (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value)
    d = row_vectors<Line, S, Isa>(&x(i, 0), v.data(), v2.data(), q);
  else
#endif
    d = row_lanes<Line, S>(RowViews<XView, VView>{x, v, v2, i}, q);
  out = d.dot;
  out2 = d.dot2;
  magnitude = d.magnitude;
}
template <class S, class Isa, class XView, class VView>
KOKKOS_INLINE_FUNCTION S row_dot(const XView& x, long long i, const VView& v, long long q) {
  S out, unused, unused_too;
  row_dots<false, S, Isa>(x, i, v, v, q, out, unused, unused_too);
  return out;
}

}  // namespace rh::detail
