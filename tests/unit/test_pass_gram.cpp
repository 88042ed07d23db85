// The Gram/gradient pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
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

TEST_CASE_TEMPLATE_DEFINE("gram_gradient sums what the reference sums", T, pass_gram) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  // Plus a wide shape: q = 131 ≥ 2·64 takes CUDA's register-tiled path (backends/cuda/traits.hpp, gram_wide_tile),
  // with a partial last tile and chunks of 33 rows (a partial staged block).
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.push_back({260, 130, true});
  for (const Shape& shape : shapes)
    for (Scenario sc : kScenarios) {
      CAPTURE(name_of(sc));
      CAPTURE(shape.p);
      const Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 11);
      const ref::Rows rows = reference_rows(pr);
      // Row weights as an evaluation leaves them: s of either sign, c in [0, w] with zeros.
      std::mt19937_64 rng(12);
      std::normal_distribution<double> normal;
      Values s, c;
      for (long long i = 0; i < pr.n; ++i) {
        s.push_back(round_to<S>(normal(rng)));
        c.push_back(i % 7 == 0 ? 0.0 : round_to<S>(std::fabs(normal(rng)) / 2));
      }
      auto st = sp.stage(pr);
      st.rows.s = OnSpace<T>::vector(s);
      st.rows.c = OnSpace<T>::vector(c);
      for (bool with_gram : {true, false}) {
        CAPTURE(with_gram);
        typename OnSpace<T>::Passes::Partial partial;
        sp.passes.gram_gradient(st.rows, st.chunks, with_gram, partial);
        const auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), partial);
        const ref::GramGradient want = ref::gram_gradient(rows, s, c);
        const long long q = pr.q;
        for (long long j = 0; j < q; ++j) {
          double u = 0, scale_u = 0;
          for (long long ch = 0; ch < st.chunks.count; ++ch) u += static_cast<double>(hp(ch, q * q + j));
          for (long long i = 0; i < pr.n; ++i) scale_u += std::fabs(s[static_cast<size_t>(i)] * rows.at(i, j));
          CHECK_WITHIN(u, want.gradient[static_cast<size_t>(j)], (pr.n + 2) * eps * scale_u, "u_" << j);
          for (long long k = j; k < q && with_gram; ++k) {  // the upper triangle
            double g = 0, scale = 0;
            for (long long ch = 0; ch < st.chunks.count; ++ch) g += static_cast<double>(hp(ch, j * q + k));
            for (long long i = 0; i < pr.n; ++i) scale += std::fabs(c[static_cast<size_t>(i)] * rows.at(i, j) * rows.at(i, k));
            CHECK_WITHIN(g, want.gram[static_cast<size_t>(j * q + k)], (pr.n + 2) * eps * scale, "G_" << j << "," << k);
          }
        }
      }
    }
}
TEST_CASE_TEMPLATE_APPLY(pass_gram, Targets);

// A host chunk's partial Gram entry is (c_i·x_ij)·x_ik summed over the chunk's rows in row order, whichever path its
// tile pair takes: the J × KB sweeps, or the narrow path of a right tile with at most host_narrow_columns columns
// (q = 1, 2, 17, 34, 257, 258 below; q = 40 has none). Checked to the bit against that sum written out row by row,
// each term's multiply and add rounded on its own (the portable build) or fused (a -march=native build contracts
// the kernels' multiply-adds: the same sum with one rounding per term).
TEST_CASE_TEMPLATE_DEFINE("the host Gram sums every tile pair's entries in row order, narrow tiles included", T,
                          pass_gram_bits) {
  using S = typename T::S;
  OnSpace<T> sp;
  const Shape shapes[] = {{90, 1, false}, {90, 1, true},   {300, 16, true}, {200, 33, true},
                          {150, 39, true}, {70, 256, true}, {40, 257, true}};
  for (const Shape& shape : shapes) {
    CAPTURE(shape.p);
    const Problem pr = make_problem<S>(Scenario::random, shape.n, shape.p, shape.intercept, 13);
    std::mt19937_64 rng(14);
    std::normal_distribution<double> normal;
    Values s, c;
    for (long long i = 0; i < pr.n; ++i) {
      s.push_back(round_to<S>(normal(rng)));
      c.push_back(i % 5 == 0 ? 0.0 : round_to<S>(std::fabs(normal(rng))));
    }
    auto st = sp.stage(pr);
    st.rows.s = OnSpace<T>::vector(s);
    st.rows.c = OnSpace<T>::vector(c);
    typename OnSpace<T>::Passes::Partial partial;
    sp.passes.gram_gradient(st.rows, st.chunks, true, partial);
    const auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), partial);
    const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), st.rows.x);
    const long long q = pr.q;
    long long differing = 0;
    for (long long ch = 0; ch < st.chunks.count; ++ch) {
      const long long r0 = ch * st.chunks.rows, r1 = std::min(pr.n, r0 + st.chunks.rows);
      for (long long j = 0; j < q; ++j)
        for (long long k = j; k < q; ++k) {
          volatile S sum = S(0), fused = S(0);  // volatile: each operation rounded where it is written
          for (long long i = r0; i < r1; ++i) {
            const volatile S scaled = static_cast<S>(c[static_cast<size_t>(i)]) * hx(i, j);
            const volatile S term = scaled * hx(i, k);
            sum = sum + term;
            fused = std::fma(static_cast<S>(scaled), hx(i, k), static_cast<S>(fused));
          }
          const S got = hp(ch, j * q + k);
          if (!(got == sum || got == fused)) ++differing;
        }
    }
    CHECK(differing == 0);
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_gram_bits, HostTargets);
