// The symmetry check, candidate and commit pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
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

// The per-batch test that lets J's kernels read its rows for its columns: any one entry that differs from its mirror,
// or a NaN (never equal to itself), makes J not exactly symmetric; the diagonal does not count.
TEST_CASE_TEMPLATE_DEFINE("exactly_symmetric finds any entry that differs from its mirror", T, pass_symmetric) {
  using S = typename T::S;
  OnSpace<T> sp;
  for (const Shape& shape : kShapes) {
    const Problem pr = make_problem<S>(Scenario::random, shape.n, shape.p, shape.intercept, 53);
    const long long q = pr.q;
    CAPTURE(q);
    CHECK(sp.passes.exactly_symmetric(OnSpace<T>::matrix(pr.info, q)));
    const long long places[][2] = {{0, 1}, {q - 1, 0}, {q / 2, q - 1}};  // above and below the diagonal
    for (const auto& place : places) {
      const long long j = place[0], k = place[1];
      Values changed = pr.info;
      changed[static_cast<size_t>(j * q + k)] = round_to<S>(changed[static_cast<size_t>(j * q + k)] * 2.0 + 1.0);
      CHECK_FALSE(sp.passes.exactly_symmetric(OnSpace<T>::matrix(changed, q)));
      Values nan = pr.info;
      nan[static_cast<size_t>(j * q + k)] = nan[static_cast<size_t>(k * q + j)] = std::numeric_limits<double>::quiet_NaN();
      CHECK_FALSE(sp.passes.exactly_symmetric(OnSpace<T>::matrix(nan, q)));
    }
    Values diagonal = pr.info;
    diagonal[0] = 12345.0;
    CHECK(sp.passes.exactly_symmetric(OnSpace<T>::matrix(diagonal, q)));
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_symmetric, Targets);

TEST_CASE_TEMPLATE_DEFINE("candidate and commit follow the reference, and commit counts non-finite values", T,
                          pass_commit) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  for (const Shape& shape : kShapes) {
    CAPTURE(shape.p);
    const Problem pr = make_problem<S>(Scenario::random, shape.n, shape.p, shape.intercept, 51);
    const long long q = pr.q, penalized = shape.intercept ? q - 1 : q;
    // Candidates: a Newton step (threshold 0) and a proximal step whose threshold zeroes some coefficients.
    typename OnSpace<T>::Passes::Coefficients coef;
    coef.cur = OnSpace<T>::vector(pr.cur);
    coef.cand = typename OnSpace<T>::Vector("cand", q);
    const auto dir = OnSpace<T>::vector(pr.grad);
    for (double threshold : {0.0, 0.4}) {
      CAPTURE(threshold);
      sp.passes.candidate(coef, dir, static_cast<S>(0.75), static_cast<S>(threshold), penalized);
      const Values got = OnSpace<T>::values(coef.cand);
      const Values want = ref::candidate(pr.cur, pr.grad, 0.75, threshold, penalized);
      for (long long j = 0; j < q; ++j) {
        const size_t J = static_cast<size_t>(j);
        CHECK_WITHIN(got[J], want[J], 2 * eps * (std::fabs(pr.cur[J]) + 0.75 * std::fabs(pr.grad[J]) + threshold), "cand_" << j);
      }
    }
    // Commit: J_new = J + G, G summed in S over the chunks.
    const long long chunks = 5;
    Values host;
    const auto partial = random_partial<T>(chunks, q, 52, host);
    const Summed sum = sum_partials(host, chunks, q);
    detail::Chunks ch;
    ch.count = chunks;
    typename OnSpace<T>::Matrix info_new("info_new", q, q);
    Values beta = pr.cand;
    long long bad = sp.passes.commit(partial, ch, OnSpace<T>::matrix(pr.info, q), OnSpace<T>::vector(beta), info_new);
    ref::Commit want = ref::commit(pr.info, sum.gram, beta);
    CHECK(bad == want.non_finite);
    CHECK(bad == 0);
    const Values got = OnSpace<T>::values(info_new);
    for (size_t e = 0; e < got.size(); ++e)
      CHECK_WITHIN(got[e], want.info[e], chunks * eps * sum.gram_abs[e] + eps * std::fabs(want.info[e]), "J_new_" << e);
    // Non-finite values are counted, in β and in J_new.
    beta[0] = std::numeric_limits<double>::quiet_NaN();
    Values info = pr.info;
    info[static_cast<size_t>(q + 1 < q * q ? q + 1 : 0)] = std::numeric_limits<double>::infinity();
    bad = sp.passes.commit(partial, ch, OnSpace<T>::matrix(info, q), OnSpace<T>::vector(beta), info_new);
    want = ref::commit(info, sum.gram, beta);
    CHECK(bad == want.non_finite);
    CHECK(bad >= 2);
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_commit, Targets);
