// The line search pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
// the tolerances are rounding-error bounds (tests/unit/pass_tests.hpp says how).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "pass_tests.hpp"

using namespace rh;
using namespace rh::test;
using namespace rh::test::pass_tests;
namespace ref = rh::reference;
using ref::Values;

// Lever 1 of issue 12: one pass prices every step. The reference evaluates F_b directly at each rounded candidate
// (ref::evaluate); the pass must agree with it to the rounding of such an evaluation, take the same decision
// wherever the reference's decision is not itself a matter of rounding, and decide these clear-cut searches itself.
TEST_CASE_TEMPLATE_DEFINE("line_search prices every step as a direct evaluation does and takes the reference's decision",
                          T, pass_line_search) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  typename OnSpace<T>::Passes::LineSearchScratch scratch;
  int searches = 0, decided = 0;
  for (const Shape& shape : kShapes)
    for (Scenario sc : kScenarios) {
      CAPTURE(name_of(sc));
      CAPTURE(shape.p);
      const Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 61);
      const ref::Rows rows = reference_rows(pr);
      auto st = sp.stage(pr);
      add_newton_rows<T>(st, pr.n);
      const detail::BatchScalars bs = scalars_of(pr);
      typename OnSpace<T>::Passes::Coefficients coef;
      coef.cur = OnSpace<T>::vector(pr.cur);
      coef.tilde = OnSpace<T>::vector(pr.tilde);
      coef.info = OnSpace<T>::matrix(pr.info, pr.q);
      coef.cand = typename OnSpace<T>::Vector("cand", pr.q);
      typename OnSpace<T>::Passes::Status status("status");
      // d = α(β − β_fit): t = 1/α lands on the point y was generated from; α > 1 overshoots, so larger steps
      // are rejected first.
      for (double alpha : {1.0, 3.0, 40.0}) {
        CAPTURE(alpha);
        Values dir;
        for (long long j = 0; j < pr.q; ++j)
          dir.push_back(round_to<S>(alpha * (pr.cur[static_cast<size_t>(j)] - pr.cand[static_cast<size_t>(j)])));
        coef.dir = OnSpace<T>::vector(dir);
        const detail::LineSearch got = sp.passes.line_search(st.rows, st.chunks, bs, coef, status, scratch);
        // The reference: F_b at β and at every rounded candidate, with a bound on a direct evaluation's rounding
        // (the evaluate test's: residuals in S, sums in double).
        const auto objective = [&](const Values& at, double& bound) {
          const ref::Evaluation e = ref::evaluate(rows, at, pr.cur, pr.tilde, pr.info, pr.tau, pr.h);
          double loss_bound = 0, quad_abs = 0;
          for (long long i = 0; i < pr.n; ++i) {
            double fit_abs = std::fabs(rows.y[static_cast<size_t>(i)]);
            for (long long j = 0; j < pr.q; ++j)
              fit_abs += std::fabs(rows.at(i, j)) * (std::fabs(at[static_cast<size_t>(j)]) + std::fabs(dir[static_cast<size_t>(j)]));
            const double dr = (pr.q + 2) * eps * fit_abs + eps * pr.tau;
            loss_bound += rows.weight(i) * (pr.tau * dr + 4 * eps * (pr.tau * fit_abs + fit_abs * fit_abs + pr.tau * pr.tau));
          }
          for (long long j = 0; j < pr.q; ++j)
            for (long long k = 0; k < pr.q; ++k)
              quad_abs += std::fabs((at[static_cast<size_t>(j)] - pr.tilde[static_cast<size_t>(j)]) *
                                    pr.info[static_cast<size_t>(j * pr.q + k)] *
                                    (at[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]));
          bound = (loss_bound + 4.0 * (pr.q + 2) * kEps64 * quad_abs) * bs.inv_n;
          return (e.loss + 0.5 * e.quad) * bs.inv_n;
        };
        double bound0 = 0;
        const double f0 = objective(pr.cur, bound0);
        CHECK_WITHIN(got.objective_current, f0, bound0 + 4 * kEps64 * std::fabs(f0), "F(beta)");
        // Every step the pass rejected or accepted, the reference rejects or accepts too, unless the two objectives
        // it compares lie within their rounding bounds (then either decision is a direct evaluation's).
        const int last = got.step >= 0 ? got.step : (got.undecided >= 0 ? got.undecided : detail::line_search_steps - 1);
        double t = 1.0;
        for (int k = 0; k <= last; ++k, t *= 0.5) {
          CAPTURE(k);
          Values cand = ref::candidate(pr.cur, dir, t, 0.0, bs.penalized);
          for (auto& v : cand) v = round_to<S>(v);
          double bound = 0;
          const double f = objective(cand, bound);
          const bool decisive = std::fabs(f - f0) > bound + bound0;
          if (k == got.undecided) break;
          if (k < got.step || got.step < 0) CHECK((f > f0 || !decisive));
          if (k == got.step) {
            CHECK((f <= f0 || !decisive));
            CHECK_WITHIN(got.objective, f, bound + 4 * kEps64 * std::fabs(f), "F(candidate)");
            const Values c = OnSpace<T>::values(coef.cand);
            for (long long j = 0; j < pr.q; ++j) CHECK(c[static_cast<size_t>(j)] == cand[static_cast<size_t>(j)]);
          }
        }
        ++searches;
        decided += got.undecided < 0 ? 1 : 0;
        // r = y − Xβ and u = X·d are left for accept_step.
        const Values r = OnSpace<T>::values(st.rows.r), u = OnSpace<T>::values(st.rows.u);
        for (long long i = 0; i < pr.n; ++i) {
          double fit = 0, fit_abs = 0, step = 0, step_abs = 0;
          for (long long j = 0; j < pr.q; ++j) {
            fit += rows.at(i, j) * pr.cur[static_cast<size_t>(j)];
            fit_abs += std::fabs(rows.at(i, j) * pr.cur[static_cast<size_t>(j)]);
            step += rows.at(i, j) * dir[static_cast<size_t>(j)];
            step_abs += std::fabs(rows.at(i, j) * dir[static_cast<size_t>(j)]);
          }
          const size_t I = static_cast<size_t>(i);
          CHECK_WITHIN(r[I], rows.y[I] - fit, (pr.q + 2) * eps * (fit_abs + std::fabs(rows.y[I])), "r_" << i);
          CHECK_WITHIN(u[I], step, (pr.q + 2) * eps * step_abs, "u_" << i);
        }
      }
    }
  // These steps change F_b by far more than rounding: the pass must decide them itself, not hand them back.
  CHECK(decided == searches);
}
TEST_CASE_TEMPLATE_APPLY(pass_line_search, Targets);
