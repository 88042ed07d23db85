// Penalty none: the renewable Huber estimator (RHE), solved by damped Newton with monotone backtracking
// (docs/method.md §5). λ_b = 0 and the penalty adds nothing to the objective, the gradient or the sums.
#pragma once
#include "rh/detail/penalty.hpp"

namespace rh::detail::penalty {

struct None {
  static constexpr Penalty id = Penalty::none;
  static constexpr const char* name = "none";

  struct Sums {
    KOKKOS_INLINE_FUNCTION void add(const Sums&) {}
  };

  static double lambda(const Config&, double /*cumulative_weight*/, long long /*p*/) { return 0.0; }
  static double historical(const Config&, double, double, double) { return 0.0; }
  KOKKOS_INLINE_FUNCTION static void coefficient_terms(const CoefficientInputs&, Sums&) {}
  KOKKOS_INLINE_FUNCTION static double gradient(double data_gradient, double, double, double) {
    return data_gradient;
  }
  static double objective(const EvaluationSums<None>& s, const BatchScalars& bs) { return smooth_objective(s, bs); }

  // Damped Newton: H d = g by the dense solve (LU, or the minimum-norm fallback when LU fails, §8), then the
  // largest step t ∈ {1, ½, …, 2⁻²⁶} that does not increase F_b.
  template <class Solve>
  static Diagnostics solve(Solve& s, const Config& cfg, const BatchScalars& /*bs*/) {
    Diagnostics d;
    double f = s.evaluate().objective;
    bool evaluated_at_current = true;  // the row weights left by the last evaluation are those of β
    for (int it = 1; it <= cfg.max_iter; ++it) {
      d.iterations = it;
      s.gram_gradient(true);
      s.assemble(true);
      s.factor_solve();
      bool accepted = false, checked_solve = false;
      Evaluation<None> e{};
      for (double t = 1.0; t >= 1e-8; t *= 0.5) {
        s.newton_candidate(t);
        e = s.evaluate();
        evaluated_at_current = false;
        if (!checked_solve) {
          checked_solve = true;
          if (e.solve_status != solve_ok) {  // singular or non-finite LU result: minimum-norm direction
            s.min_norm_direction();
            d.used_regularized_fallback = true;
            s.newton_candidate(t);
            e = s.evaluate();
          }
        }
        if (e.objective <= f) {
          accepted = true;
          break;
        }
      }
      if (!accepted) break;
      s.accept();
      evaluated_at_current = true;
      f = e.objective;
      if (e.step_norm <= cfg.tol * (1.0 + e.cand_norm)) {
        d.converged = true;
        break;
      }
    }
    if (!evaluated_at_current) f = s.evaluate_current().objective;  // the last candidate was rejected
    d.objective = f;
    return d;
  }
};

}  // namespace rh::detail::penalty
