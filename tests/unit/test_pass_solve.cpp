// The dense solve (Cholesky, LU, minimum norm) pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
// the tolerances are rounding-error bounds (tests/unit/pass_tests.hpp says how).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "rh/detail/dense_solve.hpp"
#include "pass_tests.hpp"

using namespace rh;
using namespace rh::test;
using namespace rh::test::pass_tests;
namespace ref = rh::reference;
using ref::Values;

namespace {

// V·diag(σ)·Vᵀ with V orthonormal (Gram-Schmidt of a random matrix), in double.
struct Spectral {
  Values v, sigma, a;
};
Spectral spectral(long long q, const Values& sigma, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Spectral s{Values(static_cast<size_t>(q * q)), sigma, Values(static_cast<size_t>(q * q), 0.0)};
  for (long long i = 0; i < q; ++i) {  // column i of V
    Values col(static_cast<size_t>(q));
    for (auto& x : col) x = normal(rng);
    for (int pass = 0; pass < 2; ++pass)
      for (long long k = 0; k < i; ++k) {
        double d = 0;
        for (long long r = 0; r < q; ++r) d += col[static_cast<size_t>(r)] * s.v[static_cast<size_t>(r * q + k)];
        for (long long r = 0; r < q; ++r) col[static_cast<size_t>(r)] -= d * s.v[static_cast<size_t>(r * q + k)];
      }
    double norm = 0;
    for (double x : col) norm += x * x;
    for (long long r = 0; r < q; ++r) s.v[static_cast<size_t>(r * q + i)] = col[static_cast<size_t>(r)] / std::sqrt(norm);
  }
  for (long long j = 0; j < q; ++j)
    for (long long k = 0; k < q; ++k)
      for (long long i = 0; i < q; ++i)
        s.a[static_cast<size_t>(j * q + k)] +=
            s.v[static_cast<size_t>(j * q + i)] * sigma[static_cast<size_t>(i)] * s.v[static_cast<size_t>(k * q + i)];
  return s;
}

double norm_inf(const Values& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Backward error of a stable dense solve of a·x = g (LU with small growth, Cholesky):
// ‖a·x − g‖ ≤ c·q·ε·(‖a‖·‖x‖ + ‖g‖), row by row, with c = 8.
void check_backward_error(const Values& a, const Values& x, const Values& g, long long q, double eps) {
  double a_norm = 0;
  for (long long j = 0; j < q; ++j) {
    double row = 0;
    for (long long k = 0; k < q; ++k) row += std::fabs(a[static_cast<size_t>(j * q + k)]);
    a_norm = std::max(a_norm, row);
  }
  for (long long j = 0; j < q; ++j) {
    double r = -g[static_cast<size_t>(j)];
    for (long long k = 0; k < q; ++k) r += a[static_cast<size_t>(j * q + k)] * x[static_cast<size_t>(k)];
    CHECK_WITHIN(r, 0.0, 8 * q * eps * (a_norm * norm_inf(x) + norm_inf(g)), "residual_" << j);
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("factor_solve solves like the reference LU, and min_norm_solve like the pseudo-inverse", T,
                          pass_solve) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  using Matrix = typename OnSpace<T>::Matrix;
  using Vector = typename OnSpace<T>::Vector;
  for (long long q : {1LL, 6LL, 17LL, 40LL}) {
    CAPTURE(q);
    std::mt19937_64 rng(31 + q);
    std::normal_distribution<double> normal;
    Values g(static_cast<size_t>(q));
    for (auto& v : g) v = round_to<S>(normal(rng));
    // Well conditioned (σ in [1, 10]), ill conditioned (σ down to 1e3·ε), and exactly singular (a zero row and
    // column: a zero pivot whatever the order).
    for (int kind = 0; kind < 3; ++kind) {
      CAPTURE(kind);
      Values sigma(static_cast<size_t>(q));
      for (long long i = 0; i < q; ++i)
        sigma[static_cast<size_t>(i)] = kind == 1 ? std::pow(1e3 * eps, static_cast<double>(i) / std::max<long long>(1, q - 1))
                                                  : 1.0 + 9.0 * static_cast<double>(i) / std::max<long long>(1, q - 1);
      Values a = spectral(q, sigma, 32 + static_cast<unsigned>(q)).a;
      if (kind == 2)
        for (long long k = 0; k < q; ++k) a[static_cast<size_t>(k * q + q / 2)] = a[static_cast<size_t>((q / 2) * q + k)] = 0.0;
      for (auto& v : a) v = round_to<S>(v);
      const Matrix ha = OnSpace<T>::matrix(a, q), lu("lu", q, q);
      const Vector rhs = OnSpace<T>::vector(g), sol("sol", q);
      typename OnSpace<T>::Passes::Status status("status");
      sp.passes.factor_solve(ha, rhs, lu, sol, status, false);
      const auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
      const ref::Solution want = ref::lu_solve(a, g);
      CHECK(hs().status == want.status);
      CHECK(hs().method == detail::solve_by_lu);
      CHECK(OnSpace<T>::values(ha) == a);  // the system is kept for the fallback
      if (want.status != 0) continue;
      const Values x = OnSpace<T>::values(sol);
      check_backward_error(a, x, g, q, eps);  // LU with partial pivoting: growth is small here
      // Forward error against the reference: at most the condition number times the backward error.
      if (kind == 0)
        for (long long j = 0; j < q; ++j)
          CHECK_WITHIN(x[static_cast<size_t>(j)], want.x[static_cast<size_t>(j)], 10 * 8 * q * eps * 2 * norm_inf(want.x),
                       "x_" << j);
    }
    // The minimum-norm fallback on a rank-deficient system: half the spectrum is zero.
    Values sigma(static_cast<size_t>(q));
    for (long long i = 0; i < q; ++i) sigma[static_cast<size_t>(i)] = i % 2 ? 0.0 : 1.0 + static_cast<double>(i % 9);
    Spectral sp_a = spectral(q, sigma, 40 + static_cast<unsigned>(q));
    for (auto& v : sp_a.a) v = round_to<S>(v);
    const Vector sol("sol", q);
    sp.passes.min_norm_solve(OnSpace<T>::matrix(sp_a.a, q), OnSpace<T>::vector(g), sol);
    const Values x = OnSpace<T>::values(sol);
    const Values want = ref::min_norm_solve(sp_a.v, sigma, g, 0.0);
    // a was rounded to S: a perturbation of ε·‖a‖ moves x by about κ·ε·‖x‖ (κ ≤ 9 on the kept spectrum).
    for (long long j = 0; j < q; ++j)
      CHECK_WITHIN(x[static_cast<size_t>(j)], want[static_cast<size_t>(j)], 100 * q * eps * (1 + norm_inf(want)), "x_" << j);
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_solve, Targets);

// Cholesky first (docs/method.md §8): a symmetric positive definite system is solved by it, to the backward error of
// a Cholesky; a symmetric indefinite one, a non-symmetric one and a singular one give way to LU on the space, and
// then the result is exactly LU's (the same launch as without the Cholesky attempt). q = 16, 17, 40, 91 span two
// to twelve CUDA panels of 8 rows, with and without a partial last panel.
TEST_CASE_TEMPLATE_DEFINE("factor_solve tries Cholesky first and falls back to LU, as LU alone would", T,
                          pass_cholesky) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  using Matrix = typename OnSpace<T>::Matrix;
  using Vector = typename OnSpace<T>::Vector;
  using Status = typename OnSpace<T>::Passes::Status;
  for (long long q : {1LL, 6LL, 16LL, 17LL, 40LL, 91LL}) {
    CAPTURE(q);
    std::mt19937_64 rng(57 + q);
    std::normal_distribution<double> normal;
    Values g(static_cast<size_t>(q));
    for (auto& v : g) v = round_to<S>(normal(rng));
    const auto solve = [&](const Values& a, bool positive_definite) {
      const Matrix ha = OnSpace<T>::matrix(a, q), factor("factor", q, q);
      const Vector sol("sol", q);
      const Status status("status");
      sp.passes.factor_solve(ha, OnSpace<T>::vector(g), factor, sol, status, positive_definite);
      const auto report = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
      CHECK(OnSpace<T>::values(ha) == a);  // the system is kept for the fallbacks
      return std::make_pair(report(), OnSpace<T>::values(sol));
    };
    // 0: positive definite (σ in [1, 10]); 1: indefinite (every third σ negative); 2: positive definite but not
    // symmetric in one pair; 3: singular (a zero row and column: a zero pivot for Cholesky and for LU).
    for (int kind = 0; kind < 4; ++kind) {
      CAPTURE(kind);
      if (kind == 1 && q == 1) continue;  // a 1×1 "indefinite" matrix is just negative: covered by kind 3's logic
      Values sigma(static_cast<size_t>(q));
      for (long long i = 0; i < q; ++i)
        sigma[static_cast<size_t>(i)] = (kind == 1 && i % 3 == 1 ? -1.0 : 1.0) *
                                        (1.0 + 9.0 * static_cast<double>(i) / std::max<long long>(1, q - 1));
      Values a = spectral(q, sigma, 58 + static_cast<unsigned>(q)).a;
      for (long long j = 0; j < q; ++j)  // exactly symmetric: V·Σ·Vᵀ is symmetric only up to rounding
        for (long long k = 0; k < j; ++k) a[static_cast<size_t>(j * q + k)] = a[static_cast<size_t>(k * q + j)];
      if (kind == 2 && q > 1) a[static_cast<size_t>(q - 1)] *= 1.5;  // a(0, q−1) ≠ a(q−1, 0)
      if (kind == 3)
        for (long long k = 0; k < q; ++k) a[static_cast<size_t>(k * q + q / 2)] = a[static_cast<size_t>((q / 2) * q + k)] = 0.0;
      for (auto& v : a) v = round_to<S>(v);
      const auto [lu_report, lu_x] = solve(a, false);
      const auto [report, x] = solve(a, true);
      if (kind == 0 || (kind == 2 && q == 1)) {
        CHECK(report.method == detail::solve_by_cholesky);
        CHECK(report.status == detail::solve_ok);
        // The backward error of a Cholesky, and the forward error against LU at most the condition number (10)
        // times the backward errors of both.
        check_backward_error(a, x, g, q, eps);
        for (long long j = 0; j < q; ++j)
          CHECK_WITHIN(x[static_cast<size_t>(j)], lu_x[static_cast<size_t>(j)], 10 * 2 * 8 * q * eps * 2 * norm_inf(lu_x),
                       "x_" << j);
      } else {  // LU took over: exactly what LU alone gives, reported as LU
        CHECK(report.method == detail::solve_by_lu);
        CHECK(report.status == lu_report.status);
        CHECK(report.status == (kind == 3 ? detail::solve_singular : detail::solve_ok));
        if (report.status == detail::solve_ok) CHECK(x == lu_x);
      }
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(pass_cholesky, Targets);

namespace {
// CUDA's one-team Cholesky (CholeskyTeam: team scratch, barriers) is picked by `host = false`; on a host execution
// space its team has 1 or 2 threads here, enough to exercise the barriers between columns and panels in CI, where
// no GPU is. The sequential algorithm is the host path of the same entry point.
struct OneTeamTraits {
  using execution_space = Kokkos::DefaultHostExecutionSpace;
  static constexpr bool host = false;
  static constexpr int team_size = 1;  // the panel fallback's teams (q beyond the scratch budget)
};
struct SequentialTraits {
  using execution_space = Kokkos::DefaultHostExecutionSpace;
  static constexpr bool host = true;
  static constexpr int team_size = 1;
};
}  // namespace

// The one-team kernel gives each entry of U the sequential algorithm's operations in its order: the same factor
// to the bit (the host build contracts no multiply-adds into FMAs in either), a solution to a Cholesky's backward
// error (its substitutions are column-oriented, the sequential ones row-oriented), and the same report when H is not
// positive definite or not symmetric. q = 150 and 300 take one team's panels (300 in f64: of 8 rows); q = 520 in f64
// exceeds the scratch budget and takes the many-launch panels instead.
TEST_CASE_TEMPLATE("the one-team Cholesky factors like the sequential one", S, double, float) {
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using Vector = Kokkos::View<S*, Kokkos::HostSpace>;
  using Report = Kokkos::View<detail::SolveReport, Kokkos::HostSpace>;
  const typename OneTeamTraits::execution_space space;
  {  // where one_team_scratch binds (a CUDA block): one panel up to q = 32, then panels of 16 rows, of 8 from q = 278
     // in float64, 556 in float32
    using Team = detail::CholeskyTeam<OneTeamTraits, Matrix, Vector, Report>;
    const auto unbound = std::numeric_limits<std::size_t>::max();
    const int last16 = sizeof(S) == 8 ? 277 : 555;
    CHECK(Team::panel_rows(32, unbound) == 32);
    CHECK(Team::panel_rows(33, unbound) == 16);
    CHECK(Team::panel_rows(last16, unbound) == 16);
    CHECK(Team::panel_rows(last16 + 1, unbound) == 8);
  }
  for (int q : {1, 7, 16, 17, 40, 91, 150, 300, 520}) {
    for (int kind = 0; kind < 3; ++kind) {  // 0: positive definite, 1: indefinite, 2: not symmetric
      CAPTURE(q);
      CAPTURE(kind);
      const Kokkos::TeamPolicy<typename OneTeamTraits::execution_space> probe(space, 1, 1);
      const int panel_rows =
          detail::CholeskyTeam<OneTeamTraits, Matrix, Vector, Report>::panel_rows(q, probe.scratch_size_max(0));
      if (q <= 300) CHECK(panel_rows > 0);  // the route each case is meant to take
      if (q == 300 && sizeof(S) == 8) CHECK(panel_rows == 8);
      if (q == 520 && sizeof(S) == 8) CHECK(panel_rows == 0);
      std::mt19937_64 rng(7 * q + kind);
      std::normal_distribution<double> normal;
      const int m = 2 * q + 3;
      std::vector<double> g(static_cast<size_t>(m) * q);
      for (auto& v : g) v = normal(rng);
      Matrix a("a", q, q), f_team("f_team", q, q), f_seq("f_seq", q, q);
      Vector rhs("rhs", q), x_team("x_team", q), x_seq("x_seq", q);
      Report r_team("r_team"), r_seq("r_seq");
      for (int i = 0; i < q; ++i) {
        rhs(i) = static_cast<S>(normal(rng));
        for (int j = 0; j < q; ++j) {
          double sum = 0;
          for (int r = 0; r < m; ++r) sum += g[static_cast<size_t>(r) * q + i] * g[static_cast<size_t>(r) * q + j];
          a(i, j) = static_cast<S>(sum / m + (i == j ? 1e-3 : 0.0));
        }
      }
      if (kind == 1) a(q / 2, q / 2) = S(-1);
      if (kind == 2 && q > 1) a(0, q - 1) *= S(1.5);
      detail::cholesky_solve<OneTeamTraits>(space, a, rhs, f_team, x_team, r_team, q);
      detail::cholesky_solve<SequentialTraits>(space, a, rhs, f_seq, x_seq, r_seq, q);
      space.fence();
      const bool positive_definite = kind == 0 || (kind == 2 && q == 1);
      CHECK(r_team().method == r_seq().method);
      CHECK(r_team().method == (positive_definite ? detail::solve_by_cholesky : detail::solve_by_lu));
      if (!positive_definite) {
        // Both hand over to the LU inside their own launch (lu_if_cholesky_gave_way): the one team's LU (a flat range
        // over the trailing entries) and the host's (row by row) are the same operations, so the same solution.
        CHECK(r_team().status == detail::solve_ok);
        CHECK(r_seq().status == detail::solve_ok);
        int x_differ = 0;
        for (int i = 0; i < q; ++i) x_differ += x_team(i) == x_seq(i) ? 0 : 1;
        CHECK(x_differ == 0);
        continue;
      }
      int differ = 0;
      for (int i = 0; i < q; ++i)
        for (int j = i; j < q; ++j) differ += f_team(i, j) == f_seq(i, j) ? 0 : 1;
      CHECK(differ == 0);
      Values av(static_cast<size_t>(q) * q), xv(q), gv(q);
      for (int i = 0; i < q; ++i) {
        xv[i] = x_team(i);
        gv[i] = rhs(i);
        for (int j = 0; j < q; ++j) av[static_cast<size_t>(i) * q + j] = a(i, j);
      }
      check_backward_error(av, xv, gv, q, std::numeric_limits<S>::epsilon());
    }
  }
}

// The host factor runs by panels of rows (dense/cholesky.hpp, factor_upper) only to read the trailing rows less often:
// every entry must still get the unblocked algorithm's operations in its order, so the factor is bitwise the same.
// q spans one panel, a panel and one row, several panels with a partial last one, and the wide shape's 257.
TEST_CASE_TEMPLATE("the panelled host Cholesky factor is bitwise the unblocked one", S, double, float) {
  using Host = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  for (int q : {1, 15, 16, 17, 40, 91, 257}) {
    CAPTURE(q);
    std::mt19937_64 rng(91 + q);
    std::normal_distribution<double> normal;
    const int m = 2 * q + 3;
    std::vector<double> g(static_cast<size_t>(m) * q);
    for (auto& v : g) v = normal(rng);
    Host blocked("blocked", q, q), plain("plain", q, q);
    for (int i = 0; i < q; ++i)
      for (int j = 0; j < q; ++j) {
        double sum = 0;
        for (int r = 0; r < m; ++r) sum += g[static_cast<size_t>(r) * q + i] * g[static_cast<size_t>(r) * q + j];
        blocked(i, j) = plain(i, j) = static_cast<S>(sum / m);
      }
    REQUIRE(detail::factor_upper(blocked, 0, q));
    for (int c = 0; c < q; ++c) {  // the unblocked right-looking algorithm
      const S r = std::sqrt(plain(c, c));
      plain(c, c) = r;
      for (int j = c + 1; j < q; ++j) plain(c, j) = plain(c, j) / r;
      for (int i = c + 1; i < q; ++i)
        for (int j = i; j < q; ++j) plain(i, j) -= plain(c, i) * plain(c, j);
    }
    int differ = 0;
    for (int i = 0; i < q; ++i)
      for (int j = i; j < q; ++j) differ += blocked(i, j) == plain(i, j) ? 0 : 1;
    CHECK(differ == 0);
  }
}
