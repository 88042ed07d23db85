// Penalty l1: the renewable penalized smoothed Huber estimator (RPSHE), solved by LAMM proximal gradient with the
// majorization test (docs/method.md §6). λ_b follows §3; the objective carries the historical subgradient term
// −(N_{b−1}/N_b)·λ_{b−1}·Σ_j m_j sign(β̃_j)(β_j − β̃_j) of §4, and the reported objective adds λ_b·Σ_j m_j|β_j|.
#pragma once
// The penalty's entry in the list of penalties (cmake/RhPenalties.cmake): its public name, its C ABI and
// checkpoint code (RH_PENALTY_L1 in rh.h; frozen), its policy type below.
// RH_PENALTY name=l1 code=2 policy=L1
#include <algorithm>
#include <cmath>

#include "rh/detail/compat.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/penalty.hpp"

namespace rh::detail::penalty {

struct L1 {
  static constexpr Penalty id = Penalty::l1;
  static constexpr const char* name = "l1";

  struct Sums {
    double hist = 0.0;   // Σ_j m_j sign(β̃_j) δ_j, the historical subgradient term
    double gstep = 0.0;  // gᵀ(cand − β), for the majorization bound
    double l1 = 0.0;     // Σ_j m_j |cand_j|
    KOKKOS_INLINE_FUNCTION void add(const Sums& o) {
      hist += o.hist;
      gstep += o.gstep;
      l1 += o.l1;
    }
    template <class F>
    void for_each(F&& f) const {
      f("hist", hist);
      f("gstep", gstep);
      f("l1", l1);
    }
  };

  // λ_b = lambda_scale·τ·sqrt(ln max(p, 2) / N_b).
  static double lambda(const Config& cfg, double cumulative_weight, long long p) {
    return cfg.lambda_scale * cfg.tau * std::sqrt(log_features(p) / cumulative_weight);
  }
  // (N_{b−1}/N_b)·λ_{b−1}; zero for the first batch (previous_weight 0).
  static double historical(const Config&, double previous_weight, double cumulative_weight, double previous_lambda) {
    return previous_weight > 0 ? (previous_weight / cumulative_weight) * previous_lambda : 0.0;
  }
  KOKKOS_INLINE_FUNCTION static void coefficient_terms(const CoefficientInputs& c, Sums& t) {
    t.hist = c.penalized * sign_of(c.tilde) * c.delta;
    t.gstep = c.grad * c.step;
    t.l1 = c.penalized * compat::fabs(c.cand);
  }
  KOKKOS_INLINE_FUNCTION static double gradient(double data_gradient, double historical, double penalized,
                                                double tilde) {
    return data_gradient - historical * penalized * sign_of(tilde);
  }
  static double objective(const EvaluationSums<L1>& s, const BatchScalars& bs) {
    return smooth_objective(s, bs) - bs.historical * s.penalty.hist;
  }

  // LAMM: from the current β, the proximal step S(β − g/φ, λ/φ) is accepted when F_b(cand) stays below the
  // quadratic majorizer F_b(β) + gᵀ(cand − β) + φ/2·‖cand − β‖²; otherwise φ doubles (at most 40 times).
  template <class Solve>
  static Diagnostics solve(Solve& s, const Config& cfg, const BatchScalars& bs) {
    Diagnostics d;
    const Evaluation<L1> start = s.evaluate(true);  // with the data gradient at β̃
    double f = start.objective, l1_current = start.penalty.l1;
    double phi = 1.0;
    bool evaluated_at_current = true;
    for (int it = 1; it <= cfg.max_iter && !s.stopped(); ++it) {  // stopped: the engine runs the batch again
      d.iterations = it;
      s.assemble(false);  // g from the data gradient of the last accepted evaluation
      bool accepted = false;
      Evaluation<L1> e{};
      for (int attempt = 0; attempt < 40 && !s.stopped(); ++attempt) {
        s.proximal_candidate(1.0 / phi, bs.lambda / phi);
        e = s.evaluate(true);  // F_b(c) and, should c be accepted, the next iteration's data gradient
        evaluated_at_current = false;
        const double bound = f + e.penalty.gstep + 0.5 * phi * e.step_norm * e.step_norm;
        if (e.objective <= bound + 1e-12) {
          accepted = true;
          break;
        }
        phi *= 2.0;
      }
      if (!accepted) break;
      s.accept();
      evaluated_at_current = true;
      f = e.objective;
      l1_current = e.penalty.l1;
      phi = std::max(phi / 2.0, 1e-8);
      if (e.step_norm <= cfg.tol * (1.0 + e.cand_norm)) {
        d.converged = true;
        break;
      }
    }
    if (!evaluated_at_current) {
      const Evaluation<L1> e = s.evaluate_current();
      f = e.objective;
      l1_current = e.penalty.l1;
    }
    d.objective = f + bs.lambda * l1_current;
    return d;
  }
};

}  // namespace rh::detail::penalty
