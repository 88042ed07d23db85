// Prediction and the score's moments (Passes::predict, Passes::score).
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compat.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// out_i = x_iᵀβ.
template <class S, class XView, class VView>
struct Predict {
  XView x;
  VView beta, out;
  long long q;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i) const {
    S fit = S(0);
    for (long long j = 0; j < q; ++j) fit += x(i, j) * beta(j);
    out(i) = fit;
  }
};

template <class S, class VView>
struct ScoreMoments {
  VView y, w, pred;
  bool has_w;
  int pass;
  double mean;
  using value_type = ScoreSums;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i, value_type& acc) const {
    const double wi = has_w ? static_cast<double>(w(i)) : 1.0;
    const double yi = static_cast<double>(y(i));
    if (pass == 0) {
      acc.weight += wi;
      acc.weighted_y += wi * yi;
    } else {
      const double d = yi - mean, r = yi - static_cast<double>(pred(i));
      acc.total += wi * d * d;
      acc.residual += wi * r * r;
    }
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(RH_REDUCE_VOLATILE value_type& dst,
                                   const RH_REDUCE_VOLATILE value_type& src) const {
    dst.weight += src.weight;
    dst.weighted_y += src.weighted_y;
    dst.total += src.total;
    dst.residual += src.residual;
  }
};

}  // namespace rh::detail
