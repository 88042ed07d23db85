// Penalty none: the renewable Huber estimator (RHE), solved by damped Newton with monotone backtracking
// (docs/method.md §5). λ_b = 0 and the penalty adds nothing to the objective, the gradient or the sums.
#pragma once
// The penalty's entry in the list of penalties (cmake/RhPenalties.cmake): its public name, its C ABI and
// checkpoint code (RH_PENALTY_NONE in rh.h; frozen), its policy type below.
// RH_PENALTY name=none code=1 policy=None
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "rh/detail/penalty.hpp"

namespace rh::detail::penalty {

struct None {
  static constexpr Penalty id = Penalty::none;
  static constexpr const char* name = "none";

  struct Sums {
    KOKKOS_INLINE_FUNCTION void add(const Sums&) {}
    template <class F>
    void for_each(F&&) const {}
  };

  static double lambda(const Config&, double /*cumulative_weight*/, long long /*p*/) { return 0.0; }
  static double historical(const Config&, double, double, double) { return 0.0; }
  KOKKOS_INLINE_FUNCTION static void coefficient_terms(const CoefficientInputs&, Sums&) {}
  KOKKOS_INLINE_FUNCTION static double gradient(double data_gradient, double, double, double) {
    return data_gradient;
  }
  static double objective(const EvaluationSums<None>& s, const BatchScalars& bs) { return smooth_objective(s, bs); }

  // Damped Newton: H d = g by the dense solve (LU, or the minimum-norm fallback when LU fails, §8), then the
  // largest step t ∈ {1, ½, …, 2⁻²⁶} that does not increase F_b — every step priced from one pass over X and
  // chosen on the space, so an iteration reads X twice (Gram + gradient, line search) and synchronizes once; spread
  // over processes, its partial sums cross processes once when the full step is taken (docs/scale-out.md).
  template <class Solve>
  static Diagnostics solve(Solve& s, const Config& cfg, const BatchScalars& /*bs*/) {
    Diagnostics d;
    double f = s.evaluate_before_system().objective;  // F_b(β̃) and the row weights there
    for (int it = 1; it <= cfg.max_iter && !s.stopped(); ++it) {  // stopped: the engine runs the batch again
      d.iterations = it;
      s.newton_system();
      s.factor_solve();
      auto ls = s.line_search();  // a LineSearch (rh/detail/passes.hpp)
      if (ls.solve_status != solve_ok) {  // singular or non-finite LU result: minimum-norm direction
        s.min_norm_direction();
        d.used_regularized_fallback = true;
        ls = s.line_search();
      }
      f = ls.objective_current;
      int step = ls.step;
      double objective = ls.objective, step_norm = std::sqrt(ls.step2), cand_norm = std::sqrt(ls.cand2);
      // Steps within rounding of F_b(β) (near convergence): a direct evaluation of each decides against a direct
      // evaluation of F_b(β), as in the reference.
      const double f_direct = ls.undecided >= 0 ? s.evaluate_unmoved().objective : f;
      for (int k = ls.undecided; k >= 0 && k < line_search_steps; ++k) {
        const auto e = s.evaluate_step(k);
        if (e.objective <= f_direct) {
          step = k;
          objective = e.objective;
          step_norm = e.step_norm;
          cand_norm = e.cand_norm;
          break;
        }
      }
      if (step < 0) break;  // no step accepted: β stays
      s.accept_step(step);
      f = objective;
      if (step_norm <= cfg.tol * (1.0 + cand_norm)) {
        d.converged = true;
        break;
      }
    }
    d.objective = f;
    return d;
  }
};

}  // namespace rh::detail::penalty
