// Estimator configuration: every parameter of the method with its default (docs/method.md §10).
#pragma once
#include <cstdint>
#include <string>

#include "rh/known_penalties.hpp"

namespace rh {

// The penalties: RH_FOR_EACH_PENALTY(X), X(name, NAME) in the order of their values 0, 1, ..., generated from the
// policy files (rh/detail/penalties/<name>.hpp, each with its marked line; cmake/RhPenalties.cmake). The C ABI's
// RH_PENALTY_<NAME> and the checkpoint's code are the value + 1, so a new penalty appends: the codes of the others
// are frozen by the checkpoints already written (rh.h states them; abi/src/structs.cpp checks it against this list).
#define RH_PENALTY_ENUMERATOR(name, NAME) name,
enum class Penalty : int { RH_FOR_EACH_PENALTY(RH_PENALTY_ENUMERATOR) };
#undef RH_PENALTY_ENUMERATOR

// Every penalty has a name (its list entry's); other values are "unknown". An unknown value or name is an error
// everywhere, never read as another penalty.
const char* penalty_name(Penalty p) noexcept;
bool penalty_known(Penalty p) noexcept;
// The penalty called `name`; throws rh::Error(Errc::invalid_argument) for any other name.
Penalty penalty_from_name(const std::string& name);

struct Config {
  double tau = 1.345;            // Huber threshold; fixed, never rescaled
  Penalty penalty = Penalty::none;
  double lambda_scale = 1.0;     // λ_b = lambda_scale·τ·sqrt(ln max(p,2) / N_b)
  double bandwidth_scale = 1.0;  // h_b = min(bandwidth_scale / (sqrt(N_b)·ln max(p,2)), τ)
  bool fit_intercept = true;     // intercept = trailing coefficient, never penalized
  int max_iter = 100;
  double tol = 1e-6;             // ‖Δβ‖₂ ≤ tol·(1 + ‖β‖₂)
  double ridge = 1e-8;           // added to the Newton Hessian after the 1/N_b scaling
  bool inference = false;        // also carry K so that covariance() etc. work (docs/method.md §12); penalty none only
};

// Throws rh::Error(Errc::invalid_argument) naming the first bad field.
void validate(const Config& config);

// Why inference is refused with the L1 penalty (in the messages of validate and of the inference calls).
inline constexpr const char* inference_penalty_reason =
    "the L1 penalty selects the coefficients from the same data, and Wald intervals computed after that selection "
    "do not have their nominal coverage (post-selection inference)";

}  // namespace rh
