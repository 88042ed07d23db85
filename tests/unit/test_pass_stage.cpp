// The stage pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
// the tolerances are rounding-error bounds (tests/unit/pass_tests.hpp says how).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "rh/detail/staging_pool.hpp"
#include "pass_tests.hpp"

using namespace rh;
using namespace rh::test;
using namespace rh::test::pass_tests;
namespace ref = rh::reference;
using ref::Values;

TEST_CASE_TEMPLATE_DEFINE("stage and validate copy and count exactly what the reference does", T, pass_stage) {
  using S = typename T::S;
  OnSpace<T> sp;
  for (const Shape& shape : kShapes)
    for (Scenario sc : kScenarios) {
      CAPTURE(name_of(sc));
      CAPTURE(shape.p);
      Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 7);
      const ref::Rows want = reference_rows(pr);
      for (int layout = 0; layout < 3; ++layout) {  // row-major tight, row-major with ld, column-major with ld
        CAPTURE(layout);
        auto st = sp.stage(pr, layout == 0 || layout == 1, layout == 0 ? 0 : 3);
        CHECK(OnSpace<T>::values(st.rows.x) == want.x);  // a copy: bit for bit
        const Values y = OnSpace<T>::values(st.rows.y);
        CHECK(Values(y.begin(), y.begin() + pr.n) == want.y);
        // Counted in the same pass, never reading the NaN padding beyond each row or column.
        const ref::Check counted = ref::validate(want);
        CHECK(st.counts.non_finite_x == counted.non_finite_x);
        CHECK(st.counts.non_finite_y == counted.non_finite_y);
        CHECK(st.counts.non_finite_w == counted.non_finite_w);
        CHECK(st.counts.negative_w == counted.negative_w);
      }
      auto st = sp.stage(pr);
      typename OnSpace<T>::Passes::ChunkSums scratch;
      const detail::BatchCheck got = sp.passes.validate(st.counts, st.rows, !pr.w.empty(), st.chunks, scratch);
      const ref::Check check = ref::validate(want);
      CHECK(got.counts.non_finite_x == 0);
      CHECK(got.counts.negative_w == 0);
      double total = 0;
      for (long long i = 0; i < pr.n; ++i) total += std::fabs(want.weight(i));
      CHECK_WITHIN(got.weight_sum, check.weight_sum, pr.n * kEps64 * total, "weight sum");
    }
  // Bad values: every count, exactly.
  Problem pr = make_problem<S>(Scenario::zero_weights, 150, 4, true, 8);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  pr.x[5] = nan;
  pr.x[17] = inf;
  pr.y[3] = -inf;
  pr.w[9] = nan;
  pr.w[11] = -0.5;
  pr.w[12] = -2.0;
  auto st = sp.stage(pr);
  typename OnSpace<T>::Passes::ChunkSums scratch;
  const detail::BatchCheck got = sp.passes.validate(st.counts, st.rows, true, st.chunks, scratch);
  const ref::Check want = ref::validate(reference_rows(pr));
  CHECK(got.counts.non_finite_x == want.non_finite_x);
  CHECK(got.counts.non_finite_y == want.non_finite_y);
  CHECK(got.counts.non_finite_w == want.non_finite_w);
  CHECK(got.counts.negative_w == want.negative_w);
  CHECK(want.non_finite_x == 2);
  CHECK_THROWS_AS(detail::require_valid(got), Error);
  // All weights zero: valid values, but no weight.
  Problem zero = make_problem<S>(Scenario::zero_weights, 40, 3, true, 9);
  zero.w.assign(zero.w.size(), 0.0);
  auto sz = sp.stage(zero);
  const detail::BatchCheck none = sp.passes.validate(sz.counts, sz.rows, true, sz.chunks, scratch);
  CHECK(none.weight_sum == 0.0);
  CHECK_THROWS_AS(detail::require_valid(none), Error);
  // Finite weights whose sum is not (issue 15, item 1): refused, not passed on as W_b = +Inf.
  if constexpr (std::is_same_v<S, double>) {
    Problem big = make_problem<S>(Scenario::zero_weights, 40, 3, true, 10);
    big.w.assign(big.w.size(), 1e308);
    auto sb = sp.stage(big);
    const detail::BatchCheck overflow = sp.passes.validate(sb.counts, sb.rows, true, sb.chunks, scratch);
    CHECK(overflow.weight_sum == std::numeric_limits<double>::infinity());
    CHECK_THROWS_WITH_AS(detail::require_valid(overflow), doctest::Contains("largest double"), Error);
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_stage, Targets);

// Host arrays reach a CUDA model through detail::copy_host (several threads from 2 MiB on): every byte arrives,
// whatever the size's relation to the pieces (one piece, pieces with a remainder, more pieces than threads).
TEST_CASE("copy_host copies every byte, in one piece or in several") {
  const std::size_t mib = std::size_t{1} << 20;
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, mib + 5, 2 * mib + 3, 4 * mib, 9 * mib + 7}) {
    CAPTURE(bytes);
    std::vector<unsigned char> src(bytes), dst(bytes + 16, 0xAB);
    for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    detail::copy_host(dst.data(), src.data(), bytes);
    CHECK(std::equal(src.begin(), src.end(), dst.begin()));
    CHECK(std::all_of(dst.begin() + static_cast<std::ptrdiff_t>(bytes), dst.end(),
                      [](unsigned char v) { return v == 0xAB; }));
  }
}
