// The accept-step and delta Gram pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
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

// Lever 2 of issue 12: the delta Gram. After each accepted step only the rows whose curvature weight changed are
// added to the chunks' partial Gram; with wide ramps (h = 0.3 against unit-variance residuals: about 20 % of the
// rows sit on τ ± h, where every move changes φ, against well under 1 % in a real stream) and over more steps than
// gram_delta_max_age, it must agree with a Gram recomputed from every row. Each of the ≤ 1 +
// gram_delta_max_age passes that built a chunk's partial adds at most (rows of the chunk + 1)·ε of
// Σ_i w_i |x_ij x_ik| (|c_i|, |Δc_i| ≤ w_i), and the full recompute as much again.
TEST_CASE_TEMPLATE_DEFINE("accept_step and the delta Gram agree with a Gram recomputed from every row", T,
                          pass_delta_gram) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  using Passes = typename OnSpace<T>::Passes;
  const detail::PenaltyPasses<typename T::Traits, S, detail::penalty::None> none(sp.passes);
  typename detail::PenaltyPasses<typename T::Traits, S, detail::penalty::None>::Scratch eval_scratch;
  typename Passes::LineSearchScratch scratch;
  const Shape shapes[] = {{2000, 5, true}, {700, 18, true}, {700, 16, true}};  // q = 17: the host Gram's narrow tile
  for (const Shape& shape : shapes) {
    CAPTURE(shape.p);
    const Problem pr = make_problem<S>(Scenario::random, shape.n, shape.p, shape.intercept, 71);
    const ref::Rows rows = reference_rows(pr);
    auto st = sp.stage(pr);
    add_newton_rows<T>(st, pr.n);
    const detail::BatchScalars bs = scalars_of(pr);
    typename Passes::Coefficients coef;
    coef.cur = OnSpace<T>::vector(pr.cand);  // the point y was generated from: unit-variance residuals
    coef.cand = OnSpace<T>::vector(pr.cand);
    coef.tilde = OnSpace<T>::vector(pr.tilde);
    coef.info = OnSpace<T>::matrix(pr.info, pr.q);
    coef.grad = OnSpace<T>::vector(pr.grad);
    typename Passes::Status status("status");
    none.evaluate(st.rows, st.chunks, bs, coef, status, eval_scratch);  // s, c at β
    typename Passes::Partial partial, full;
    sp.passes.gram_gradient(st.rows, st.chunks, true, partial);
    typename Passes::GramRows changes;
    changes.reset(sp.passes, st.chunks.count);
    double scale_max = 0;
    const long long q = pr.q;
    std::vector<double> scale(static_cast<size_t>(q * q), 0.0);
    for (long long i = 0; i < pr.n; ++i)
      for (long long j = 0; j < q; ++j)
        for (long long k = 0; k < q; ++k)
          scale[static_cast<size_t>(j * q + k)] += rows.weight(i) * std::fabs(rows.at(i, j) * rows.at(i, k));
    std::mt19937_64 rng(72);
    std::normal_distribution<double> normal;
    long long listed_chunks = 0, listed_rows = 0, forced_full = 0;
    for (int step = 1; step <= 2 * detail::gram_delta_max_age + 2; ++step) {
      CAPTURE(step);
      Values dir;  // small moves: rows on a ramp change φ, rows on the flats do not
      for (long long j = 0; j < q; ++j) dir.push_back(round_to<S>(0.01 * normal(rng)));
      coef.dir = OnSpace<T>::vector(dir);
      sp.passes.line_search(st.rows, st.chunks, bs, coef, status, scratch);  // r, u
      detail::LineSearch take;
      take.step = 0;  // t = 1
      sp.passes.candidate(coef, coef.dir, S(1), S(0), bs.penalized);
      sp.passes.accept_step(st.rows, st.chunks, bs, take, changes);
      std::swap(coef.cur, coef.cand);
      const auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), changes.count);
      for (long long ch = 0; ch < st.chunks.count; ++ch) {
        if (count(ch) >= 0) {
          ++listed_chunks;
          listed_rows += count(ch);
        } else {
          ++forced_full;
        }
      }
      sp.passes.gram_gradient(st.rows, st.chunks, true, partial, true, &changes);
      sp.passes.gram_gradient(st.rows, st.chunks, true, full);
      const auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), partial);
      const auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), full);
      for (long long j = 0; j < q; ++j)
        for (long long k = j; k < q; ++k) {
          double g = 0, want = 0;
          for (long long ch = 0; ch < st.chunks.count; ++ch) {
            g += static_cast<double>(hp(ch, j * q + k));
            want += static_cast<double>(hf(ch, j * q + k));
          }
          const double bound = (2.0 + detail::gram_delta_max_age) * (st.chunks.rows + st.chunks.count + 1) * eps *
                               scale[static_cast<size_t>(j * q + k)];
          scale_max = std::max(scale_max, std::fabs(g - want) / bound);
          CHECK_WITHIN(g, want, bound, "G_" << j << "," << k);
        }
    }
    MESSAGE("delta Gram vs full recompute: worst " << scale_max << " of the bound; " << listed_chunks
                                                   << " chunk updates from " << listed_rows << " listed rows, "
                                                   << forced_full << " recomputed");
    CHECK(listed_chunks > 0);  // the delta path ran ...
    CHECK(listed_rows > 0);    // ... on rows that changed ...
    CHECK(listed_rows < (2 * detail::gram_delta_max_age + 2) * pr.n / 2);  // ... and not on every row
    CHECK(forced_full > 0);    // and the age limit recomputed chunks from every row
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_delta_gram, Targets);
