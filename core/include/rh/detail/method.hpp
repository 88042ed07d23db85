// The scalar formulas of the method (docs/method.md §2, §3), shared by every execution space and penalty. The
// penalty-specific rules (λ_b, the L1 terms) live in the penalty policies (rh/detail/penalties/).
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>

namespace rh::detail {

// Classical (unsmoothed) Huber loss ρ_τ(r).
template <class S>
KOKKOS_INLINE_FUNCTION S huber_loss(S r, S tau) {
  const S a = r < S(0) ? -r : r;
  return a <= tau ? S(0.5) * r * r : tau * a - S(0.5) * tau * tau;
}

// Ordinary Huber score ψ_τ(r) = clip(r, −τ, τ); the gradient uses this one, not the smoothed score.
template <class S>
KOKKOS_INLINE_FUNCTION S huber_score(S r, S tau) {
  return r < -tau ? -tau : (r > tau ? tau : r);
}

// Smoothed curvature φ_{τ,h}(r): derivative of the smoothed score of paper Eq. (2.1). It weights the Newton
// Hessian and the information matrix only. h is capped at τ so the two ramps never overlap.
template <class S>
KOKKOS_INLINE_FUNCTION S smoothed_curvature(S r, S tau, S h) {
  if (h > tau) h = tau;
  const S a = r < S(0) ? -r : r;  // φ is even
  if (a < tau - h) return S(1);
  if (a > tau + h) return S(0);
  return S(0.5) - (a - tau) / (S(2) * h);
}

// Smoothed score of paper Eq. (2.1). Defined for completeness and tested against the golden points; the update
// itself never uses it (swapping it for huber_score would change the estimating equation).
template <class S>
KOKKOS_INLINE_FUNCTION S smoothed_score(S r, S tau, S h) {
  if (h > tau) h = tau;
  if (r < -tau - h) return -tau;
  if (r > tau + h) return tau;
  if (r < -tau + h) {
    const S u = r + tau;
    return h / S(4) - tau + u / S(2) + u * u / (S(4) * h);
  }
  if (r > tau - h) {
    const S u = tau - r;
    return -(h / S(4) - tau + u / S(2) + u * u / (S(4) * h));
  }
  return r;
}

// Soft threshold S(v, t) = sign(v)·max(|v| − t, 0), with sign(0) = 0. With t = 0 it returns v exactly.
template <class S>
KOKKOS_INLINE_FUNCTION S soft_threshold(S v, S t) {
  if (v > t) return v - t;
  if (v < -t) return v + t;
  return S(0);
}

KOKKOS_INLINE_FUNCTION double sign_of(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

// ln(max(p, 2)), p = features excluding the intercept.
inline double log_features(long long p) { return std::log(static_cast<double>(p < 2 ? 2 : p)); }

// Bandwidth of batch b from the cumulative weight N_b including that batch (§3), capped at τ.
inline double bandwidth_for(double bandwidth_scale, double cumulative_weight, long long p, double tau) {
  const double h = bandwidth_scale / (std::sqrt(cumulative_weight) * log_features(p));
  return h < tau ? h : tau;
}

}  // namespace rh::detail
