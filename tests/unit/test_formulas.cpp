// The device-callable formulas of the method (rh/detail/method.hpp) evaluated inside a kernel on every space and
// dtype: against the golden points of docs/method.md §2, and against the same formulas called on the host.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <random>
#include <limits>
#include <vector>

#include "rh/detail/kernels.hpp"
#include "rh/detail/method.hpp"
#include "support.hpp"

using namespace rh;
using namespace rh::test;

namespace {

enum Formula { loss, score, curvature, smoothed, threshold, formulas };

template <class S>
S evaluate_formula(int f, S r, S tau, S h) {
  switch (f) {
    case loss: return detail::huber_loss(r, tau);
    case score: return detail::huber_score(r, tau);
    case curvature: return detail::smoothed_curvature(r, tau, h);
    case smoothed: return detail::smoothed_score(r, tau, h);
    default: return detail::soft_threshold(r, tau);
  }
}

template <class S, class In, class Out>
struct FormulaKernel {
  In points;  // r, τ, h per point
  Out out;    // one column per formula
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const S r = points(i, 0), tau = points(i, 1), h = points(i, 2);
    out(i, loss) = detail::huber_loss(r, tau);
    out(i, score) = detail::huber_score(r, tau);
    out(i, curvature) = detail::smoothed_curvature(r, tau, h);
    out(i, smoothed) = detail::smoothed_score(r, tau, h);
    out(i, threshold) = detail::soft_threshold(r, tau);
  }
};

// Every formula at every point, computed on the space of T.
template <class T>
std::vector<std::vector<double>> on_space(const std::vector<std::array<double, 3>>& points) {
  using S = typename T::S;
  using Space = typename T::Traits::execution_space;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, typename Space::memory_space>;
  const int n = static_cast<int>(points.size());
  Matrix in("formula_points", n, 3), out("formula_values", n, static_cast<int>(formulas));
  auto h_in = Kokkos::create_mirror_view(in);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) h_in(i, k) = static_cast<S>(points[static_cast<size_t>(i)][static_cast<size_t>(k)]);
  Kokkos::deep_copy(in, h_in);
  Kokkos::parallel_for("test_formulas", Kokkos::RangePolicy<Space>(T::Traits::instance(0), 0, n),
                       FormulaKernel<S, Matrix, Matrix>{in, out});
  auto h_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  std::vector<std::vector<double>> values(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    for (int f = 0; f < formulas; ++f) values[static_cast<size_t>(i)].push_back(static_cast<double>(h_out(i, f)));
  return values;
}

// A few roundings apart: a kernel and a host call may contract different multiply-adds into fused ones (nvcc
// contracts by default, and so does the host compiler for -march=native); each formula has at most 4 roundings.
template <class S>
double close(double got, double want) {
  return std::fabs(got - want) <= 4 * std::numeric_limits<S>::epsilon() * (1.0 + std::fabs(want));
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("the formulas give the golden points of §2 inside a kernel", T, formulas_golden) {
  using S = typename T::S;
  // r, τ, h and the golden loss, score, curvature, smoothed score and soft threshold S(r, τ).
  struct Point {
    double r, tau, h, want[formulas];
  };
  const Point golden[] = {
      {-3.0, 2.0, 0.5, {4.0, -2.0, 0.0, -2.0, -1.0}},
      {-2.5, 2.0, 0.5, {3.0, -2.0, 0.0, -2.0, -0.5}},
      {-2.25, 2.0, 0.5, {2.5, -2.0, 0.25, -1.96875, -0.25}},
      {-2.0, 2.0, 0.5, {2.0, -2.0, 0.5, -1.875, 0.0}},
      {-1.75, 2.0, 0.5, {1.53125, -1.75, 0.75, -1.71875, 0.0}},
      {-1.5, 2.0, 0.5, {1.125, -1.5, 1.0, -1.5, 0.0}},
      {2.25, 2.0, 0.5, {2.5, 2.0, 0.25, 1.96875, 0.25}},
      {-3.5, 2.0, 1.5, {5.0, -2.0, 0.0, -2.0, -1.5}},
      {-2.0, 2.0, 1.5, {2.0, -2.0, 0.5, -1.625, 0.0}},
      {-0.5, 2.0, 1.5, {0.125, -0.5, 1.0, -0.5, 0.0}},
      {0.0, 1.0, 5.0, {0.0, 0.0, 1.0, 0.0, 0.0}},  // h is capped at τ, so the ramps never overlap
      {3.0, 2.0, 0.5, {4.0, 2.0, 0.0, 2.0, 1.0}},
      {0.3, 0.5, 0.1, {0.045, 0.3, 1.0, 0.3, 0.0}},
      {0.7, 0.0, 0.0, {0.0, 0.0, 0.0, 0.0, 0.7}},  // τ = 0: soft threshold at 0 is the identity
  };
  std::vector<std::array<double, 3>> points;
  for (const Point& p : golden) points.push_back({p.r, p.tau, p.h});
  const auto got = on_space<T>(points);
  for (size_t i = 0; i < points.size(); ++i)
    for (int f = 0; f < formulas; ++f) {
      CAPTURE(golden[i].r);
      CAPTURE(golden[i].tau);
      CAPTURE(golden[i].h);
      CAPTURE(f);
      CHECK(close<S>(got[i][static_cast<size_t>(f)], golden[i].want[f]));
    }
}
TEST_CASE_TEMPLATE_APPLY(formulas_golden, Targets);

TEST_CASE_TEMPLATE_DEFINE("the formulas agree between a kernel and a host call, across both ramps", T, formulas_host) {
  using S = typename T::S;
  std::vector<std::array<double, 3>> points;
  for (double tau : {0.5, 1.345, 3.0})
    for (double h : {0.01, 0.3, 1.0, 10.0})
      for (int k = -80; k <= 80; ++k) points.push_back({tau * k / 40.0, tau, h});  // |r| up to 2τ, every zone
  const auto got = on_space<T>(points);
  for (size_t i = 0; i < points.size(); ++i) {
    const S r = static_cast<S>(points[i][0]), tau = static_cast<S>(points[i][1]), h = static_cast<S>(points[i][2]);
    for (int f = 0; f < formulas; ++f) {
      CAPTURE(points[i][0]);
      CAPTURE(f);
      CHECK(close<S>(got[i][static_cast<size_t>(f)], static_cast<double>(evaluate_formula<S>(f, r, tau, h))));
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(formulas_host, Targets);

// The row dot products of the row passes (rh/detail/kernels/row_dots.hpp): term j in lane j mod 8, each lane summed
// in order, the lanes combined as ((0+1)+(2+3))+((4+5)+(6+7)). Row-major views take the vector path where the
// compiler has GNU vectors, other layouts the lane arrays; both must give these sums to the bit.
template <class S>
void check_row_dots() {
  using Right = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using Left = Kokkos::View<S**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  using Vec = Kokkos::View<S*, Kokkos::HostSpace>;
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  const auto draw = [&]() -> S {  // magnitudes over ten decades, exact zeros of both signs
    const double u = normal(gen);
    if (u > 2.2) return S(0.0);
    if (u < -2.2) return S(-0.0);
    return static_cast<S>(normal(gen) * std::pow(10.0, 5.0 * normal(gen) / 2.0));
  };
  const auto bits = [](S a) {
    unsigned long long b = 0;
    std::memcpy(&b, &a, sizeof a);
    return b;
  };
  for (long long q : {0LL, 1LL, 3LL, 7LL, 8LL, 9LL, 16LL, 17LL, 33LL, 63LL, 91LL, 257LL}) {
    const long long rows = 6;
    Right xr("x_right", rows, q);
    Left xl("x_left", rows, q);
    Vec v("v", q), v2("v2", q);
    for (long long j = 0; j < q; ++j) {
      v(j) = draw();
      v2(j) = draw();
    }
    for (long long i = 0; i < rows; ++i)
      for (long long j = 0; j < q; ++j) xl(i, j) = xr(i, j) = draw();
    for (long long i = 0; i < rows; ++i) {
      S want[3][detail::row_lanes_count] = {};
      for (long long j = 0; j < q; ++j) {
        const S xv = xr(i, j) * v(j);
        want[0][j % 8] += xv;
        want[1][j % 8] += xr(i, j) * v2(j);
        want[2][j % 8] += xv < S(0) ? -xv : xv;
      }
      S dot[3], dot2[3], magnitude[3];  // vectors of 16 bytes, of 32 bytes (the AVX2 copy's width), lane arrays
      detail::row_dots<true, S, detail::BaselineIsa>(xr, i, v, v2, q, dot[0], dot2[0], magnitude[0]);
      detail::row_dots<true, S, detail::Avx2Isa>(xr, i, v, v2, q, dot[1], dot2[1], magnitude[1]);
      detail::row_dots<true, S, detail::BaselineIsa>(xl, i, v, v2, q, dot[2], dot2[2], magnitude[2]);
      const S plain = detail::row_dot<S, detail::BaselineIsa>(xr, i, v, q);
      CAPTURE(q);
      CAPTURE(i);
      for (int path = 0; path < 3; ++path) {
        CHECK(bits(dot[path]) == bits(detail::combine_lanes(want[0])));
        CHECK(bits(dot2[path]) == bits(detail::combine_lanes(want[1])));
        CHECK(bits(magnitude[path]) == bits(detail::combine_lanes(want[2])));
      }
      CHECK(bits(plain) == bits(dot[0]));
    }
  }
}

TEST_CASE("row dot products: the vector path and the lane arrays give the lanes' sums to the bit") {
#if defined(__GNUC__)
  CHECK(RH_ROW_VECTORS == 1);  // GCC and Clang take the vector path; were it dropped, the comparison would be empty
#endif
  check_row_dots<double>();
  check_row_dots<float>();
}

#if RH_ROW_BLOCKS
// The row blocks of the host row passes (RowBlock, rh/detail/kernels/host_simd/row_block.hpp, and
// LineSearchSums::RowTerms on vectors): W rows at once must give each row's sums, loss, score and curvature, and
// its line-search terms, to the bit.
namespace {

template <class S>
unsigned long long bits_of(S a) {
  unsigned long long b = 0;
  std::memcpy(&b, &a, sizeof a);
  return b;
}

template <class S>
S draw_value(std::mt19937_64& gen) {  // magnitudes over ten decades, exact zeros of both signs
  std::normal_distribution<double> normal;
  const double u = normal(gen);
  if (u > 2.2) return S(0.0);
  if (u < -2.2) return S(-0.0);
  return static_cast<S>(normal(gen) * std::pow(10.0, 5.0 * normal(gen) / 2.0));
}

template <class S, class Isa>
void check_block_dots() {
  using Block = detail::RowBlock<S, Isa>;
  constexpr int W = Block::W;
  std::mt19937_64 gen(11);
  for (long long q : {1LL, 3LL, 7LL, 8LL, 9LL, 16LL, 17LL, 33LL, 63LL, 91LL, 257LL}) {
    const long long n = 2 * W;
    std::vector<S> x(static_cast<size_t>(n * q + detail::host_gram_tile), S(0)), v(static_cast<size_t>(q)),
        v2(static_cast<size_t>(q));
    for (auto& e : x) e = draw_value<S>(gen);
    for (int k = 0; k < detail::host_gram_tile; ++k)  // the masked last block reads the padding and must ignore it
      x[static_cast<size_t>(n * q + k)] = k % 2 ? std::numeric_limits<S>::infinity() : std::numeric_limits<S>::quiet_NaN();
    for (long long j = 0; j < q; ++j) {
      v[static_cast<size_t>(j)] = draw_value<S>(gen);
      v2[static_cast<size_t>(j)] = draw_value<S>(gen);
    }
    const Block block(v.data(), v2.data(), q);
    for (long long i0 = 0; i0 < n; i0 += W) {
      typename Block::vec dot, dot2, magnitude, plain, unused;
      block.template dots<true>(x.data() + i0 * q, q, dot, dot2, magnitude);
      block.template dots<false>(x.data() + i0 * q, q, plain, unused, unused);
      for (int r = 0; r < W; ++r) {
        S want[3][detail::row_lanes_count] = {};
        for (long long j = 0; j < q; ++j) {
          const S xj = x[static_cast<size_t>((i0 + r) * q + j)];
          const S xv = xj * v[static_cast<size_t>(j)];
          want[0][j % 8] += xv;
          want[1][j % 8] += xj * v2[static_cast<size_t>(j)];
          want[2][j % 8] += xv < S(0) ? -xv : xv;
        }
        CAPTURE(q);
        CAPTURE(r);
        CHECK(bits_of(dot[r]) == bits_of(detail::combine_lanes(want[0])));
        CHECK(bits_of(dot2[r]) == bits_of(detail::combine_lanes(want[1])));
        CHECK(bits_of(magnitude[r]) == bits_of(detail::combine_lanes(want[2])));
        CHECK(bits_of(plain[r]) == bits_of(dot[r]));
      }
    }
  }
}

// Residuals around every point where a formula changes its piece (0, ±τ, ±τ ± h), and random ones.
template <class S>
std::vector<S> residuals(S tau, S h, std::mt19937_64& gen) {
  std::vector<S> r = {S(0), S(-0.0), tau, -tau, tau + h, tau - h, -tau + h, -tau - h, S(1e30), S(-1e30)};
  const size_t edges = r.size();
  for (size_t k = 0; k < edges; ++k) {
    r.push_back(std::nextafter(r[k], S(1e38)));
    r.push_back(std::nextafter(r[k], S(-1e38)));
  }
  for (int k = 0; k < 200; ++k) r.push_back(draw_value<S>(gen));
  while (r.size() % 8 != 0) r.push_back(S(0.5));
  return r;
}

template <class S, class Isa>
void check_block_formulas() {
  using Block = detail::RowBlock<S, Isa>;
  constexpr int W = Block::W;
  std::mt19937_64 gen(13);
  for (const auto& [tau, h] : std::vector<std::pair<S, S>>{{S(1.345), S(0.1)}, {S(0.5), S(0.9)}, {S(2), S(0)}}) {
    const std::vector<S> r = residuals(tau, h, gen);
    for (size_t i = 0; i < r.size(); i += W) {
      typename Block::vec rv, loss, score, curvature;
      Block::load(&r[i], rv);
      Block::loss(rv, tau, loss);
      Block::score(rv, tau, score);
      Block::curvature(rv, tau, h, curvature);
      for (int e = 0; e < W; ++e) {
        CAPTURE(r[i + e]);
        CAPTURE(tau);
        CHECK(bits_of(loss[e]) == bits_of(detail::huber_loss(r[i + e], tau)));
        CHECK(bits_of(score[e]) == bits_of(detail::huber_score(r[i + e], tau)));
        CHECK(bits_of(curvature[e]) == bits_of(detail::smoothed_curvature(r[i + e], tau, h)));
      }
    }
  }
}

template <class Isa>
void check_block_line_search_terms() {
  using Block = detail::RowBlock<float, Isa>;
  using dvec = typename Block::dvec;
  constexpr int DW = Block::double_lanes;
  using Terms = detail::LineSearchSums::RowTerms<double>;
  using VectorTerms = detail::LineSearchSums::RowTerms<dvec>;
  std::mt19937_64 gen(17);
  const double tau = 1.345;
  const std::vector<double> r = residuals<double>(tau, 0.0, gen);
  std::vector<double> u = r;
  std::shuffle(u.begin(), u.end(), gen);
  for (size_t k = 0; k < u.size(); k += 3) u[k] = tau - r[k];  // segments ending on ±τ exactly
  int crossing = 0, quadratic = 0, beyond = 0;
  for (size_t i = 0; i + DW <= r.size(); i += DW) {
    dvec w, rv, uv, tv, mv;
    for (int e = 0; e < DW; ++e) {
      w[e] = (i + e) % 5 == 0 ? 0.0 : 0.5 + static_cast<double>((i + e) % 7);
      rv[e] = r[i + e];
      uv[e] = u[i + e];
      tv[e] = tau;
      mv[e] = std::fabs(r[i + e]) + 3.0;
    }
    const VectorTerms got(w, rv, uv, tv, mv);
    for (int e = 0; e < DW; ++e) {
      const Terms want(w[e], rv[e], uv[e], tau, mv[e]);
      CAPTURE(rv[e]);
      CAPTURE(uv[e]);
      CHECK(bits_of(got.linear[e]) == bits_of(want.linear));
      CHECK(bits_of(got.square[e]) == bits_of(want.square));
      CHECK(bits_of(got.noise[e]) == bits_of(want.noise));
      CHECK((got.crosses[e] != 0) == static_cast<bool>(want.crosses));
      crossing += want.crosses ? 1 : 0;
      quadratic += !want.crosses && want.square != 0 ? 1 : 0;
      beyond += !want.crosses && want.square == 0 && want.linear != 0 ? 1 : 0;
    }
  }
  CHECK(crossing > 10);  // every zone is exercised
  CHECK(quadratic > 10);
  CHECK(beyond > 10);

  // A crossing row's 27 steps in lanes (add_crossing_steps): each step's sum to the bit, every row on its own and
  // the ordinary rows added in turn to the same sums; with rows whose t·u is subnormal or overflows.
  std::vector<double> rr = r, uu = u;
  for (const double extra_u : {1e-300, -3e-310, 1e300, -2.0 * tau, 2.0 * tau}) {
    rr.push_back(0.999 * tau);
    uu.push_back(extra_u);
    rr.push_back(-tau);
    uu.push_back(extra_u);
  }
  const auto same_steps = [](const detail::LineSearchSums& a, const detail::LineSearchSums& b) {
    int same = 0;
    for (int k = 0; k < detail::line_search_steps; ++k) same += bits_of(a.crossing[k]) == bits_of(b.crossing[k]) ? 1 : 0;
    return same;
  };
  detail::LineSearchSums in_lanes, one_by_one;
  int rows = 0;
  for (size_t i = 0; i < rr.size(); ++i) {
    const double w = i % 5 == 0 ? 0.0 : 0.5 + static_cast<double>(i % 7);
    if (!Terms(w, rr[i], uu[i], tau, 1.0).crosses && i % 4 != 0 && i < r.size()) continue;
    CAPTURE(rr[i]);
    CAPTURE(uu[i]);
    detail::LineSearchSums row_lanes, row_scalar;
    detail::add_crossing_steps<typename Block::DoubleBlock>(row_lanes, w, rr[i], uu[i], tau);
    row_scalar.add_crossing(w, rr[i], uu[i], tau);
    CHECK(same_steps(row_lanes, row_scalar) == detail::line_search_steps);
    if (i < r.size()) {
      detail::add_crossing_steps<typename Block::DoubleBlock>(in_lanes, w, rr[i], uu[i], tau);
      one_by_one.add_crossing(w, rr[i], uu[i], tau);
      ++rows;
    }
  }
  CHECK(rows > 40);
  CHECK(same_steps(in_lanes, one_by_one) == detail::line_search_steps);
}

}  // namespace
#endif

TEST_CASE("row blocks: W rows at once give each row's sums, formulas and line-search terms to the bit") {
#if defined(__GNUC__) && !defined(__NVCC__)
  CHECK(RH_ROW_BLOCKS == 1);  // GCC and Clang take the block path; were it dropped, the comparisons would be empty
#endif
#if RH_ROW_BLOCKS
  check_block_dots<double, detail::BaselineIsa>();
  check_block_dots<float, detail::BaselineIsa>();
  check_block_formulas<double, detail::BaselineIsa>();
  check_block_formulas<float, detail::BaselineIsa>();
  check_block_line_search_terms<detail::BaselineIsa>();
#if RH_HOST_AVX2_DISPATCH
  if (detail::host_avx2_enabled()) {  // the AVX2 copy's widths, compiled for AVX2
    detail::run_avx2([](auto isa) {
      using Isa = decltype(isa);
      check_block_dots<double, Isa>();
      check_block_dots<float, Isa>();
      check_block_formulas<double, Isa>();
      check_block_formulas<float, Isa>();
      check_block_line_search_terms<Isa>();
    });
  }
#endif
#endif
}
