// Host SIMD (GCC, Clang; host code): row_lanes' eight lanes in GNU vectors of the host ISA's width. Defines
// RH_ROW_VECTORS (0 where this path is not compiled: device code, other compilers).
#pragma once
#include "rh/detail/kernels/row_lanes.hpp"

namespace rh::detail {

#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define RH_ROW_VECTORS 1
// The same lanes in vectors of Isa::vector_bytes (at most the 8 lanes): each lane still its own sum.
template <bool Line, class S, class Isa>
inline RowDots<S> row_vectors(const S* row, const S* v, const S* v2, long long q) {
  constexpr int L = row_lanes_count;
  constexpr int bytes = L * sizeof(S) < Isa::vector_bytes ? L * sizeof(S) : Isa::vector_bytes;
  constexpr int W = bytes / static_cast<int>(sizeof(S)), NV = L / W;
  typedef S vec __attribute__((vector_size(bytes)));
  vec a[NV] = {}, b[NV] = {}, m[NV] = {};
  const auto block = [&](const S* xs, const S* vs, const S* v2s) {
    for (int k = 0; k < NV; ++k) {
      vec x, p;
      __builtin_memcpy(&x, xs + k * W, bytes);  // an unaligned vector load
      __builtin_memcpy(&p, vs + k * W, bytes);
      const vec xv = x * p;
      a[k] += xv;
      if constexpr (Line) {
        vec p2;
        __builtin_memcpy(&p2, v2s + k * W, bytes);
        b[k] += x * p2;
        m[k] += xv < S(0) ? -xv : xv;
      }
    }
  };
  long long j = 0;
  for (; j + L <= q; j += L) block(row + j, v + j, v2 + j);
  S la[L], lb[L], lm[L];
  for (int l = 0; l < L; ++l) {
    la[l] = a[l / W][l % W];
    lb[l] = b[l / W][l % W];
    lm[l] = m[l / W][l % W];
  }
  // The last, partial block lane by lane: the same sums in the same order. (Filling vectors from scalars on the
  // stack instead stalled every row on store-to-load forwarding.)
  for (int l = 0; j < q; ++j, ++l) add_to_lane<Line>(la, lb, lm, l, row[j], v[j], v2[j]);
  return {combine_lanes(la), combine_lanes(lb), combine_lanes(lm)};
}
#else
#define RH_ROW_VECTORS 0
#endif

}  // namespace rh::detail
