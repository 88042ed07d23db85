// The evaluation pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
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

TEST_CASE_TEMPLATE_DEFINE("evaluate gives the reference's sums and row weights for every penalty", T, pass_evaluate) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  detail::for_each_type(detail::Penalties{}, [&](auto tag) {
    using Penalty = typename decltype(tag)::type;
    CAPTURE(Penalty::name);
    const detail::PenaltyPasses<typename T::Traits, S, Penalty> passes(sp.passes);
    typename detail::PenaltyPasses<typename T::Traits, S, Penalty>::Scratch scratch;
    for (const Shape& shape : kShapes)
      for (Scenario sc : kScenarios) {
        CAPTURE(name_of(sc));
        CAPTURE(shape.p);
        const Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 41);
        const ref::Rows rows = reference_rows(pr);
        auto st = sp.stage(pr);
        typename OnSpace<T>::Passes::Coefficients coef = OnSpace<T>::coefficients(pr);
        typename OnSpace<T>::Passes::Status status("status");
        detail::SolveReport report;  // the report of the last solve travels with the sums
        report.status = detail::solve_non_finite;
        report.method = detail::solve_by_lu;
        Kokkos::deep_copy(status, report);
        detail::BatchScalars bs = scalars_of(pr);
        bs.historical = 0.3;
        const detail::EvaluationSums<Penalty> got = passes.evaluate(st.rows, st.chunks, bs, coef, status, scratch);
        const ref::Evaluation want = ref::evaluate(rows, pr.cand, pr.cur, pr.tilde, pr.info, pr.tau, pr.h);
        const ref::PenaltyTerms want_penalty =
            ref::penalty_terms(Penalty::name, pr.cand, pr.cur, pr.tilde, pr.grad, bs.historical, bs.penalized);
        CHECK(got.solve_status == detail::solve_non_finite);
        CHECK(got.solve_method == detail::solve_by_lu);
        // Rows: the residual is computed in S, off by δr_i ≤ (q + 2)·ε·(Σ_j |x_ij·cand_j| + |y_i|) + ε·τ (τ itself is
        // rounded to S); ψ moves by at most δr (slope 1), φ by δr/(2h) (its slope in the ramps), ρ by τ·δr, and each
        // adds a few roundings of its own, relative to ρ's scale τ|r| + r² + τ².
        const Values s = OnSpace<T>::values(st.rows.s), c = OnSpace<T>::values(st.rows.c);
        double loss_bound = 0, loss_scale = 0;
        for (long long i = 0; i < pr.n; ++i) {
          const size_t I = static_cast<size_t>(i);
          double fit_abs = std::fabs(rows.y[I]);
          for (long long j = 0; j < pr.q; ++j) fit_abs += std::fabs(rows.at(i, j) * pr.cand[static_cast<size_t>(j)]);
          const double dr = (pr.q + 2) * eps * fit_abs + eps * pr.tau, w = rows.weight(i);
          const double rho_scale = pr.tau * fit_abs + fit_abs * fit_abs + pr.tau * pr.tau;
          CHECK_WITHIN(s[I], want.s[I], w * dr + 2 * eps * std::fabs(want.s[I]), "s_" << i);
          CHECK_WITHIN(c[I], want.c[I], w * (dr / (2 * std::min(pr.h, pr.tau)) + 4 * eps), "c_" << i);
          loss_bound += w * (pr.tau * dr + 4 * eps * rho_scale);
          loss_scale += w * rho_scale;
        }
        const double loss_abs = loss_scale;
        CHECK_WITHIN(got.loss, want.loss, loss_bound + pr.n * kEps64 * loss_abs, "loss");
        // Coefficients: double sums of S values.
        double quad_abs = 0, step_abs = 0, cand_abs = 0;
        for (long long j = 0; j < pr.q; ++j) {
          const size_t J = static_cast<size_t>(j);
          const double delta = pr.cand[J] - pr.tilde[J], step = pr.cand[J] - pr.cur[J];
          for (long long k = 0; k < pr.q; ++k)
            quad_abs += std::fabs(delta * pr.info[static_cast<size_t>(j * pr.q + k)] *
                                  (pr.cand[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]));
          step_abs += step * step;
          cand_abs += pr.cand[J] * pr.cand[J];
        }
        const double k = 2.0 * (pr.q + 2) * kEps64;
        CHECK_WITHIN(got.quad, want.quad, k * quad_abs, "quad");
        CHECK_WITHIN(got.step2, want.step2, k * step_abs, "step2");
        CHECK_WITHIN(got.cand2, want.cand2, k * cand_abs, "cand2");
        // The penalty's own sums, each by its name: every one the policy has, and no other the reference expects.
        std::size_t compared = 0;
        got.penalty.for_each([&](const char* sum, double value) {
          CAPTURE(sum);
          REQUIRE(want_penalty.sums.count(sum) == 1);
          const ref::PenaltySum& w = want_penalty.sums.at(sum);
          CHECK_WITHIN(value, w.value, k * w.magnitude, sum);
          ++compared;
        });
        CHECK(compared == want_penalty.sums.size());
        const double f = (want.loss + 0.5 * want.quad) * bs.inv_n + want_penalty.objective;
        CHECK_WITHIN(Penalty::objective(got, bs), f,
                     (loss_bound + pr.n * kEps64 * loss_abs + k * quad_abs) * bs.inv_n +
                         k * want_penalty.objective_magnitude + 4 * kEps64 * std::fabs(f),
                     "objective");
      }
  });
}
TEST_CASE_TEMPLATE_APPLY(pass_evaluate, Targets);

// An evaluation leaves (Jδ)_j = Σ_k J(j,k)·δ_k (δ = cand − β̃) for the next gradient. When J is exactly symmetric a
// host forms it from J's rows and a device reads J(k,j) for J(j,k), and on a host the gradient after an accepted
// candidate takes it from there instead of summing it again. Both must be the same sums to the bit, and the reuse
// must happen exactly when δ is the gradient's β − β̃: a marked value shows where it is read.
TEST_CASE_TEMPLATE_DEFINE("evaluate's J·delta is the in-order sum, and the next gradient reuses it only at its beta", T,
                          pass_j_delta) {
  using S = typename T::S;
  using Penalty = detail::penalty::L1;
  using PP = detail::PenaltyPasses<typename T::Traits, S, Penalty>;
  constexpr bool host = T::Traits::host;
  OnSpace<T> sp;
  const PP passes(sp.passes);
  for (const Shape& shape : kShapes) {
    CAPTURE(shape.p);
    const Problem pr = make_problem<S>(Scenario::random, shape.n, shape.p, shape.intercept, 47);
    const long long q = pr.q;
    const size_t Q = static_cast<size_t>(q);
    Values asym = pr.info;  // pr.info is exactly symmetric; this one is not anywhere off the diagonal
    for (long long j = 0; j < q; ++j)
      for (long long k = 0; k < j; ++k) asym[static_cast<size_t>(j * q + k)] = round_to<S>(0.5 - pr.info[static_cast<size_t>(k * q + j)]);
    auto st = sp.stage(pr);
    typename OnSpace<T>::Passes::Coefficients coef = OnSpace<T>::coefficients(pr);
    typename OnSpace<T>::Passes::Status status("status");
    detail::BatchScalars bs;
    bs.n = pr.n;
    bs.penalized = pr.intercept ? q - 1 : q;
    bs.tau = pr.tau;
    bs.h = pr.h;
    bs.inv_n = 1.0 / static_cast<double>(pr.n);
    bs.historical = 0.3;
    // Σ_k J(j,k)·δ_k in double, k in order (`rows`: J(k,j) instead).
    const auto chain = [&](const Values& info, bool rows) {
      Values out(Q);
      for (long long j = 0; j < q; ++j) {
        double sum = 0.0;
        for (long long k = 0; k < q; ++k)
          sum += info[static_cast<size_t>(rows ? k * q + j : j * q + k)] * (pr.cand[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]);
        out[static_cast<size_t>(j)] = sum;
      }
      return out;
    };
    typename PP::Scratch scratch;
    const auto j_delta_of = [&](const Values& info, bool symmetric) {
      coef.info = OnSpace<T>::matrix(info, q);
      coef.info_symmetric = symmetric;
      passes.evaluate(st.rows, st.chunks, bs, coef, status, scratch);
      return OnSpace<T>::values(scratch.j_delta);
    };
    const Values by_rows = j_delta_of(pr.info, true), by_chains = j_delta_of(pr.info, false);
    CHECK(by_rows == by_chains);
    if (host) {
      CHECK(by_chains == chain(pr.info, false));
      CHECK(j_delta_of(asym, false) == chain(asym, false));
      CHECK(j_delta_of(asym, true) == chain(asym, true));  // the flag is what makes a host read rows
    } else {  // a device reads J(k,j) for J(j,k) with the flag (coalesced); its compiler may contract the
              // multiply-adds, so each sum is held to q + 2 roundings
      const auto check_near = [&](const Values& got, const Values& info, bool rows) {
        const Values want = chain(info, rows);
        for (size_t j = 0; j < Q; ++j) {
          double scale = 0;
          for (size_t k = 0; k < Q; ++k)
            scale += std::fabs(info[rows ? k * Q + j : j * Q + k] * (pr.cand[k] - pr.tilde[k]));
          CHECK_WITHIN(got[j], want[j], (q + 2) * kEps64 * scale, "Jδ_" << j);
        }
      };
      check_near(by_rows, pr.info, false);
      const Values asym_rows = j_delta_of(asym, true), asym_chains = j_delta_of(asym, false);
      CHECK(asym_rows != asym_chains);  // the flag is what makes a device read rows
      check_near(asym_rows, asym, true);
      check_near(asym_chains, asym, false);
    }

    // The candidate accepted: β = cand, so the evaluation's δ is the gradient's β − β̃.
    j_delta_of(pr.info, host);
    coef.cur = OnSpace<T>::vector(pr.cand);
    const long long chunks = 5;
    Values host_partial;
    const auto partial = random_partial<T>(chunks, q, 48, host_partial);
    detail::Chunks ch;
    ch.count = chunks;
    typename OnSpace<T>::Matrix hessian("hessian", q, q);
    const auto gradient = [&](const typename PP::Scratch* last) {
      coef.grad = typename OnSpace<T>::Vector("grad", q);
      passes.assemble(false, partial, ch, coef, bs, hessian, last);
      return OnSpace<T>::values(coef.grad);
    };
    const Values summed_again = gradient(nullptr);
    CHECK(gradient(&scratch) == summed_again);
    coef.info_symmetric = !host;  // a device's gradient reads J's rows then: the same values in the same order
    CHECK(gradient(nullptr) == summed_again);
    coef.info_symmetric = host;
    Kokkos::deep_copy(scratch.j_delta, 1e6);  // marked: a gradient that reads it moves by 1e6/N
    const Values marked = gradient(&scratch);
    long long moved = 0;
    for (size_t j = 0; j < Q; ++j) moved += marked[j] != summed_again[j] ? 1 : 0;
    CHECK(moved == (host ? q : 0));
    scratch.j_delta_valid = false;  // a new batch's J
    CHECK(gradient(&scratch) == summed_again);
    scratch.j_delta_valid = true;
    coef.cur = OnSpace<T>::vector(pr.cur);  // another β: δ differs
    const Values at_cur = gradient(nullptr);
    CHECK(at_cur != summed_again);
    CHECK(gradient(&scratch) == at_cur);
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_j_delta, Targets);

// Lever 3 of issue 12: an L1 evaluation sums the candidate's data gradient in the same pass; it must be what
// gram_gradient sums from the row weights the evaluation left.
TEST_CASE_TEMPLATE_DEFINE("evaluate with the gradient sums what gram_gradient sums", T, pass_evaluate_gradient) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  using Passes = typename OnSpace<T>::Passes;
  const detail::PenaltyPasses<typename T::Traits, S, detail::penalty::L1> l1(sp.passes);
  typename detail::PenaltyPasses<typename T::Traits, S, detail::penalty::L1>::Scratch scratch;
  for (const Shape& shape : kShapes)
    for (Scenario sc : kScenarios) {
      CAPTURE(name_of(sc));
      CAPTURE(shape.p);
      const Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 81);
      const ref::Rows rows = reference_rows(pr);
      auto st = sp.stage(pr);
      typename Passes::Coefficients coef;
      coef.cand = OnSpace<T>::vector(pr.cand);
      coef.cur = OnSpace<T>::vector(pr.cur);
      coef.tilde = OnSpace<T>::vector(pr.tilde);
      coef.grad = OnSpace<T>::vector(pr.grad);
      coef.info = OnSpace<T>::matrix(pr.info, pr.q);
      typename Passes::Status status("status");
      typename Passes::Partial fused, separate;
      l1.evaluate(st.rows, st.chunks, scalars_of(pr), coef, status, scratch, &fused);
      sp.passes.gram_gradient(st.rows, st.chunks, false, separate);
      const auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fused);
      const auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), separate);
      const Values s = OnSpace<T>::values(st.rows.s);
      const long long q = pr.q;
      for (long long j = 0; j < q; ++j) {
        double a = 0, b = 0, scale = 0;
        for (long long ch = 0; ch < st.chunks.count; ++ch) {
          a += static_cast<double>(hf(ch, q * q + j));
          b += static_cast<double>(hs(ch, q * q + j));
        }
        for (long long i = 0; i < pr.n; ++i) scale += std::fabs(s[static_cast<size_t>(i)] * rows.at(i, j));
        CHECK_WITHIN(a, b, 2 * (pr.n + 2) * eps * scale, "u_" << j);
      }
    }
}
TEST_CASE_TEMPLATE_APPLY(pass_evaluate_gradient, Targets);
