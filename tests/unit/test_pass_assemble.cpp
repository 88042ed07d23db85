// The assemble pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
// the tolerances are rounding-error bounds (tests/unit/pass_tests.hpp says how).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "pass_tests.hpp"
#include "rh/detail/kernels/newton_system.hpp"

using namespace rh;
using namespace rh::test;
using namespace rh::test::pass_tests;
namespace ref = rh::reference;
using ref::Values;

TEST_CASE_TEMPLATE_DEFINE("assemble forms the reference's Newton system for every penalty", T, pass_assemble) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  detail::for_each_type(detail::Penalties{}, [&](auto tag) {
    using Penalty = typename decltype(tag)::type;
    CAPTURE(Penalty::name);
    const detail::PenaltyPasses<typename T::Traits, S, Penalty> passes(sp.passes);
    for (const Shape& shape : kShapes) {
      const Problem pr = make_problem<S>(Scenario::random, shape.n, shape.p, shape.intercept, 21);
      const long long q = pr.q, chunks = 7;
      Values host;
      const auto partial = random_partial<T>(chunks, q, 22, host);
      const Summed sum = sum_partials(host, chunks, q);
      detail::BatchScalars bs;
      bs.penalized = shape.intercept ? q - 1 : q;
      bs.inv_n = 1.0 / 37.5;
      bs.ridge = 1e-3;
      bs.historical = 0.4;  // a penalty without a historical term ignores it
      typename OnSpace<T>::Passes::Coefficients coef;
      coef.cur = OnSpace<T>::vector(pr.cur);
      coef.tilde = OnSpace<T>::vector(pr.tilde);
      coef.info = OnSpace<T>::matrix(pr.info, q);
      coef.grad = typename OnSpace<T>::Vector("grad", q);
      typename OnSpace<T>::Matrix hessian("hessian", q, q);
      detail::Chunks ch;
      ch.count = chunks;
      passes.assemble(true, partial, ch, coef, bs, hessian);
      const ref::Assembled want = ref::assemble(sum.gram, sum.u, pr.info, pr.cur, pr.tilde, bs.inv_n, bs.ridge,
                                                Penalty::name, bs.historical, bs.penalized);
      const double hist = ref::penalty_gradient_scale(Penalty::name, bs.historical);
      const Values h = OnSpace<T>::values(hessian), g = OnSpace<T>::values(coef.grad);
      for (long long j = 0; j < q; ++j) {
        double jd_abs = 0;
        for (long long k = 0; k < q; ++k) {
          const size_t e = static_cast<size_t>(j * q + k);
          jd_abs += std::fabs(pr.info[e] * (pr.cur[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]));
          // G summed in S over the chunks, then (G + J)/N + ridge in double, rounded to S.
          CHECK_WITHIN(h[e], want.hessian[e], chunks * eps * sum.gram_abs[e] * bs.inv_n + eps * std::fabs(want.hessian[e]),
                       "H_" << j << "," << k);
        }
        const size_t J = static_cast<size_t>(j);
        CHECK_WITHIN(g[J], want.gradient[J],
                     chunks * eps * sum.u_abs[J] * bs.inv_n + (q + 2) * kEps64 * jd_abs * bs.inv_n +
                         eps * std::fabs(want.gradient[J]) + 4 * kEps64 * hist,
                     "g_" << j);
      }
      // The gradient alone leaves the Hessian as it was.
      const Values before = OnSpace<T>::values(hessian);
      passes.assemble(false, partial, ch, coef, bs, hessian);
      CHECK(OnSpace<T>::values(hessian) == before);
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(pass_assemble, Targets);

// A device assembles by entries of G's upper triangle (two rows folded into one launch row), a host by pairs of rows:
// both shapes run here on the host, and they must give the same bits (every entry the same sum in the same order),
// for odd and even q, a symmetric J (read transposed by a device's gradient) and a non-symmetric one.
TEST_CASE_TEMPLATE("assemble by entries of the triangle gives the bits of assemble by rows", S, double, float) {
  using Vector = Kokkos::View<S*, Kokkos::HostSpace>;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using DoubleVector = Kokkos::View<double*, Kokkos::HostSpace>;
  using Kernel = detail::ReduceAndAssemble<S, detail::penalty::None, Vector, Matrix, Matrix, DoubleVector>;
  for (long long q : {1LL, 2LL, 7LL, 16LL, 33LL, 91LL}) {
    for (const bool symmetric : {true, false}) {
      CAPTURE(q);
      CAPTURE(symmetric);
      const long long chunks = 11;
      std::mt19937_64 rng(static_cast<unsigned>(5 * q + symmetric));
      std::normal_distribution<double> normal;
      Matrix partial("partial", chunks, q * q + q), info("info", q, q);
      Vector cur("cur", q), tilde("tilde", q);
      for (long long ch = 0; ch < chunks; ++ch)
        for (long long e = 0; e < q * q + q; ++e) partial(ch, e) = static_cast<S>(normal(rng) * (e % 7 ? 1.0 : 1e3));
      for (long long j = 0; j < q; ++j) {
        cur(j) = static_cast<S>(normal(rng));
        tilde(j) = static_cast<S>(normal(rng));
        for (long long k = 0; k <= j; ++k) info(j, k) = info(k, j) = static_cast<S>(normal(rng));
      }
      if (!symmetric && q > 1) info(0, q - 1) += S(1);
      const auto assemble = [&](bool by_rows, Matrix& hessian, Vector& grad) {
        hessian = Matrix("hessian", q, q);
        grad = Vector("grad", q);
        const Kernel kernel{partial, info, hessian, grad, cur, tilde, DoubleVector(), q, chunks, q - 1,
                            1.0 / 37.5, 1e-3, 0.0, by_rows, symmetric};
        Kokkos::parallel_for(Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(
                                 0, q + Kernel::hessian_items(q, by_rows)),
                             kernel);
        Kokkos::fence();
      };
      Matrix h_rows, h_entries;
      Vector g_rows, g_entries;
      assemble(true, h_rows, g_rows);
      assemble(false, h_entries, g_entries);
      long long differ = 0;
      for (long long j = 0; j < q; ++j) {
        differ += std::memcmp(&g_rows(j), &g_entries(j), sizeof(S)) != 0;
        for (long long k = 0; k < q; ++k) differ += std::memcmp(&h_rows(j, k), &h_entries(j, k), sizeof(S)) != 0;
      }
      CHECK(differ == 0);
    }
  }
}
