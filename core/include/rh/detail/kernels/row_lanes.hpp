// The row dot products of the row passes, portable form: eight lanes per product in arrays (any space, any
// compiler). kernels/host_simd/ holds the host's vector forms of the same sums.
#pragma once
#include <Kokkos_Core.hpp>

namespace rh::detail {

// x_iᵀv, and with Line also x_iᵀv2 and Σ_j |x_ij v_j| beside it (the line search's pass): eight partial sums per
// product, term j always in lane j mod 8, the lanes combined in a fixed order. Every space and every path below
// rounds the same way for any thread count. Two paths compute exactly these sums:
//  - row_lanes: the lanes as arrays, for any layout and any compiler (device code, MSVC).
//  - row_vectors: the lanes as GNU vectors of the host ISA's width (GCC, Clang; host code, row-major X). The compiler
//    vectorizes row_lanes' block loop across blocks instead (stride-8 loads and shuffles), several times slower
//    (docs/performance.md, "Why the code is so").
// tests/unit/test_formulas.cpp checks both against the lanes summed one term at a time, to the bit.
constexpr int row_lanes_count = 8;

template <class S>
struct RowDots {
  S dot = S(0), dot2 = S(0), magnitude = S(0);
};

template <class S>
KOKKOS_INLINE_FUNCTION S combine_lanes(const S (&a)[row_lanes_count]) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Term x_j·v_j (and x_j·v2_j, |x_j·v_j|) into lane l.
template <bool Line, class S>
KOKKOS_INLINE_FUNCTION void add_to_lane(S (&a)[row_lanes_count], S (&b)[row_lanes_count], S (&m)[row_lanes_count],
                                        int l, S xj, S vj, S v2j) {
  const S xv = xj * vj;
  a[l] += xv;
  if constexpr (Line) {
    b[l] += xj * v2j;
    m[l] += xv < S(0) ? -xv : xv;
  }
}

template <bool Line, class S, class At>
KOKKOS_INLINE_FUNCTION RowDots<S> row_lanes(const At& at, long long q) {
  constexpr int L = row_lanes_count;
  S a[L] = {}, b[L] = {}, m[L] = {};
  long long j = 0;
  for (; j + L <= q; j += L)
    for (int l = 0; l < L; ++l) add_to_lane<Line>(a, b, m, l, at.x(j + l), at.v(j + l), at.v2(j + l));
  // The rest, term j + l into lane l: a constant lane index, so a GPU keeps the lanes in registers.
  for (int l = 0; l < L; ++l)
    if (j + l < q) add_to_lane<Line>(a, b, m, l, at.x(j + l), at.v(j + l), at.v2(j + l));
  return {combine_lanes(a), combine_lanes(b), combine_lanes(m)};
}

}  // namespace rh::detail
