// Inference from the renewable summaries (docs/method.md §12): the sandwich covariance J⁻¹ K J⁻¹ and the normal
// distribution's tail and quantile, on the host in double. Internal to the library (rh::Regressor uses it).
#pragma once
#include <string>
#include <vector>

#include "rh/types.hpp"

namespace rh::detail {

// q·ε·max_j |a(j,j)| (ε of double) for a q×q row-major summary a: a difference below it is rounding (the Cholesky's
// pivot floor for J, the symmetry tolerance for K).
double rounding_level(const std::vector<double>& a, long long q);

// Why `k` (q×q row-major, finite) cannot be a score variance K, or "" when it can: a negative diagonal entry, or
// K(i,j) and K(j,i) differing by more than rounding_level (validate_state's check of an imported K).
std::string score_variance_defect(const std::vector<double>& k, long long q);

// Ĉov(β̂) = J⁻¹ K J⁻¹ (q×q row-major) from the state's information J and score variance K. J is factored by
// Cholesky; throws Errc::numerical_error when J is not positive definite to working precision, or when a variance
// Ĉov(j,j) is not positive and finite or another entry is not finite (names the coefficient).
std::vector<double> sandwich_covariance(const State& state);

// P(|Z| ≥ |z|) for a standard normal Z: 2·(1 − Φ(|z|)) = erfc(|z|/√2).
double two_sided_p_value(double z);
// Φ⁻¹(p) for 0 < p < 1, to about 1 ulp of double's relative precision.
double normal_quantile(double p);

}  // namespace rh::detail
