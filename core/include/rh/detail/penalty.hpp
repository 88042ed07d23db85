// What a penalty policy is, and what the solver shares with every penalty (docs/architecture.md, "Penalties as
// policies"). A penalty is one type in rh::detail::penalty (one file in rh/detail/penalties/) with:
//
//   static constexpr Penalty id;  static constexpr const char* name     its public enum value and name
//   struct Sums                    its share of an evaluation's sums: named double fields, zero-initialized,
//                                  KOKKOS_INLINE_FUNCTION void add(const Sums&) summing them field by field, and
//                                  for_each(f) calling f(name, value) for each field (the pass tests compare them,
//                                  by name, with tests/reference/passes.hpp)
//   static double lambda(const Config&, double cumulative_weight, long long p)        λ_b (docs/method.md §3)
//   static double historical(const Config&, double previous_weight, double cumulative_weight,
//                            double previous_lambda)     weight of its term carried from earlier batches (§4)
//   KOKKOS_INLINE_FUNCTION static void coefficient_terms(const CoefficientInputs&, Sums&)   one coefficient's
//                                  share of Sums at a candidate (run on the execution space)
//   KOKKOS_INLINE_FUNCTION static double gradient(double data_gradient, double historical, double penalized,
//                                  double tilde)      g_j of the batch objective from its data part (§4)
//   static double objective(const EvaluationSums<P>&, const BatchScalars&)             F_b at a candidate (§4)
//   template <class Solve> static Diagnostics solve(Solve&, const Config&, const BatchScalars&)   its solver,
//                                  written against the named operations of Engine::Solve
//
// Adding a penalty is a new file in rh/detail/penalties/ whose marked line (// RH_PENALTY name=… code=… policy=…)
// puts it in the generated lists RH_FOR_EACH_PENALTY and RH_PENALTY_POLICIES (cmake/RhPenalties.cmake).
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>

#include "rh/config.hpp"
#include "rh/types.hpp"

namespace rh::detail {

// The scalars of one batch's solve.
struct BatchScalars {
  long long n = 0;           // rows of the batch
  long long penalized = 0;   // coefficients [0, penalized) are penalized; the intercept (last) never is
  bool has_weights = false;  // the batch has sample weights (else every weight is 1)
  double tau = 0.0;          // Huber threshold τ
  double h = 0.0;            // smoothing bandwidth h_b (§3)
  double inv_n = 0.0;        // 1 / N_b, N_b the cumulative weight including this batch
  double lambda = 0.0;       // λ_b of the penalty (§3)
  double historical = 0.0;   // the penalty's weight of its term from earlier batches (§4)
  double ridge = 0.0;        // added to the scaled Newton Hessian (§5)
};

// One coefficient j at a candidate, as the evaluation sees it (double, whatever the model dtype).
struct CoefficientInputs {
  double cand = 0.0;       // candidate β_j
  double cur = 0.0;        // current iterate β_j
  double tilde = 0.0;      // β̃_j of the previous batch
  double grad = 0.0;       // gradient g_j at the current iterate
  double delta = 0.0;      // cand − β̃_j
  double step = 0.0;       // cand − β_j
  double penalized = 0.0;  // m_j: 1 for a penalized coefficient, 0 for the intercept
};

// The steps of the Newton line search (docs/method.md §5): t_k = 2⁻ᵏ for k = 0 … 26, every t ≥ 10⁻⁸.
constexpr int line_search_steps = 27;

// What the dense solve of the Newton system reports (docs/method.md §8): whether d is usable, and which
// factorization produced it (Cholesky first when H is meant to be positive definite, else or on its failure LU).
enum SolveStatus : int { solve_ok = 0, solve_singular = 1, solve_non_finite = 2 };
enum SolveMethod : int { solve_by_cholesky = 0, solve_by_lu = 1 };
struct SolveReport {
  int status = solve_ok;
  int method = solve_by_lu;
};

// Everything one evaluation of the batch objective reads back, in one copy (docs/method.md §4). The kernel that
// writes it (FinishEvaluation) and the host code that reads it use these names only.
template <class Penalty>
struct EvaluationSums {
  double loss = 0.0;   // Σ_i w_i ρ_τ(r_i), over fixed row chunks summed in order
  double quad = 0.0;   // δᵀJδ, δ = cand − β̃, J the information of earlier batches
  double step2 = 0.0;  // ‖cand − β‖²
  double cand2 = 0.0;  // ‖cand‖²
  typename Penalty::Sums penalty;  // the penalty's own share
  int solve_status = 0;  // status of the last dense solve (SolveStatus), read back with the same copy
  int solve_method = 0;  // and the factorization that produced its direction (SolveMethod)

  // One coefficient's terms (loss and status stay zero) added field by field, in coefficient order.
  KOKKOS_INLINE_FUNCTION void add_terms(const EvaluationSums& t) {
    quad += t.quad;
    step2 += t.step2;
    cand2 += t.cand2;
    penalty.add(t.penalty);
  }
};

// An evaluation as the solvers use it.
template <class Penalty>
struct Evaluation {
  double objective = 0.0;  // F_b at the candidate
  double step_norm = 0.0;  // ‖cand − β‖₂
  double cand_norm = 0.0;  // ‖cand‖₂
  int solve_status = 0;
  int solve_method = 0;
  typename Penalty::Sums penalty;
};

template <class Penalty>
Evaluation<Penalty> evaluation_of(const EvaluationSums<Penalty>& s, const BatchScalars& bs) {
  Evaluation<Penalty> e;
  e.objective = Penalty::objective(s, bs);
  e.step_norm = std::sqrt(s.step2);
  e.cand_norm = std::sqrt(s.cand2);
  e.solve_status = s.solve_status;
  e.solve_method = s.solve_method;
  e.penalty = s.penalty;
  return e;
}

// The data part of F_b shared by every penalty: (Σ w ρ + ½ δᵀJδ) / N_b.
template <class Penalty>
double smooth_objective(const EvaluationSums<Penalty>& s, const BatchScalars& bs) {
  return (s.loss + 0.5 * s.quad) * bs.inv_n;
}

}  // namespace rh::detail
