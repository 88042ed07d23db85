// Inference from the renewable summaries (docs/method.md §12): the sandwich covariance J⁻¹ K J⁻¹ and the normal
// distribution's tail and quantile, on the host in double. Internal to the library (rh::Regressor uses it).
#pragma once
#include <vector>

#include "rh/types.hpp"

namespace rh::detail {

// Ĉov(β̂) = J⁻¹ K J⁻¹ (q×q row-major) from the state's information J and score variance K. J is factored by
// Cholesky; throws Errc::numerical_error when J is not positive definite to working precision.
std::vector<double> sandwich_covariance(const State& state);

// P(|Z| ≥ |z|) for a standard normal Z: 2·(1 − Φ(|z|)) = erfc(|z|/√2).
double two_sided_p_value(double z);
// Φ⁻¹(p) for 0 < p < 1, to about 1 ulp of double's relative precision.
double normal_quantile(double p);

}  // namespace rh::detail
