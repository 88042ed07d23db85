// Properties of the method (docs/method.md) that hold on every space and dtype.
#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "reference/passes.hpp"
#include "rh/detail/engine.hpp"
#include "rh/detail/penalties.hpp"
#include "support.hpp"

using namespace rh;
using namespace rh::test;
using namespace rh::detail;

TEST_CASE("smoothed score and curvature match the golden points of docs/method.md §2") {
  const double r1[] = {-3, -2.5, -2.25, -2, -1.75, -1.5};
  const double score1[] = {-2, -2, -1.96875, -1.875, -1.71875, -1.5};
  const double curv1[] = {0, 0, 0.25, 0.5, 0.75, 1};
  for (int i = 0; i < 6; ++i) {
    CAPTURE(r1[i]);
    CHECK(smoothed_score(r1[i], 2.0, 0.5) == doctest::Approx(score1[i]).epsilon(1e-15));
    CHECK(smoothed_curvature(r1[i], 2.0, 0.5) == doctest::Approx(curv1[i]).epsilon(1e-15));
    // Odd score, even curvature.
    CHECK(smoothed_score(-r1[i], 2.0, 0.5) == doctest::Approx(-score1[i]).epsilon(1e-15));
    CHECK(smoothed_curvature(-r1[i], 2.0, 0.5) == doctest::Approx(curv1[i]).epsilon(1e-15));
  }
  const double r2[] = {-3.5, -2, -0.5}, score2[] = {-2, -1.625, -0.5}, curv2[] = {0, 0.5, 1};
  for (int i = 0; i < 3; ++i) {  // h = 1.5 > τ/2 is allowed
    CHECK(smoothed_score(r2[i], 2.0, 1.5) == doctest::Approx(score2[i]).epsilon(1e-15));
    CHECK(smoothed_curvature(r2[i], 2.0, 1.5) == doctest::Approx(curv2[i]).epsilon(1e-15));
  }
  CHECK(smoothed_curvature(0.0, 1.0, 5.0) == 1.0);  // h is capped at τ, so the ramps never overlap
  CHECK(huber_loss(3.0, 2.0) == 4.0);               // τ|r| − τ²/2
  CHECK(huber_loss(-1.5, 2.0) == 1.125);            // r²/2
  CHECK(huber_score(-7.0, 1.345) == -1.345);
  CHECK(soft_threshold(0.3, 0.5) == 0.0);
  CHECK(soft_threshold(-2.0, 0.5) == -1.5);
  CHECK(soft_threshold(0.7, 0.0) == 0.7);
}

TEST_CASE("bandwidth and lambda follow docs/method.md §3") {
  // N = 24.5, p = 4 (the reference's first weighted batch): h = 1/(sqrt(24.5)·ln 4), capped at τ.
  CHECK(bandwidth_for(1.0, 24.5, 4, 1.2) == doctest::Approx(0.1457342066566842).epsilon(1e-15));
  CHECK(bandwidth_for(1e6, 24.5, 4, 1.2) == 1.2);
  CHECK(bandwidth_for(1.0, 9.0, 1, 5.0) == doctest::Approx(1.0 / (3.0 * std::log(2.0))).epsilon(1e-15));
  Config cfg;
  cfg.lambda_scale = 0.55;
  cfg.tau = 1.345;
  CHECK(penalty::L1::lambda(cfg, 31.0, 6) == doctest::Approx(0.55 * 1.345 * std::sqrt(std::log(6.0) / 31.0)).epsilon(1e-15));
  CHECK(penalty::None::lambda(cfg, 31.0, 6) == 0.0);
}

TEST_CASE_TEMPLATE_DEFINE("with a huge tau and no ridge the fit is closed-form least squares", T, method_1) {
  const Data d = linear_data(300, 5, 11);
  const auto want = ols(d, true);
  Config cfg;
  cfg.tau = 1e9;
  cfg.ridge = 0.0;
  cfg.tol = 1e-12;
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype, cfg);
  partial_fit(m, d);
  CHECK(max_rel_diff(m.coefficients(), want) <= rounding_tol<T>(1e-12, 2e-5));
}
TEST_CASE_TEMPLATE_APPLY(method_1, Targets);

TEST_CASE_TEMPLATE_DEFINE("integer weights equal row replication", T, method_2) {
  Data d = linear_data(120, 4, 12, 1.0);
  d.y[7] += 30.0;  // an outlier, so the Huber zones matter
  Data replicated;
  replicated.p = d.p;
  d.w.resize(static_cast<size_t>(d.n));
  for (long long i = 0; i < d.n; ++i) {
    d.w[static_cast<size_t>(i)] = static_cast<double>(i % 4);  // 0, 1, 2, 3
    for (int k = 0; k < static_cast<int>(i % 4); ++k) {
      replicated.x.insert(replicated.x.end(), d.x.begin() + i * d.p, d.x.begin() + (i + 1) * d.p);
      replicated.y.push_back(d.y[static_cast<size_t>(i)]);
    }
  }
  replicated.n = static_cast<long long>(replicated.y.size());
  Config cfg;
  cfg.tol = 1e-12;
  CAPTURE(T::name());
  Regressor weighted(T::space, T::dtype, cfg), expanded(T::space, T::dtype, cfg);
  partial_fit(weighted, d);
  partial_fit(expanded, replicated);
  CHECK(max_rel_diff(weighted.coefficients(), expanded.coefficients()) <= rounding_tol<T>(1e-9, 2e-4));
  CHECK(weighted.state().weight_sum == expanded.state().weight_sum);
}
TEST_CASE_TEMPLATE_APPLY(method_2, Targets);

TEST_CASE_TEMPLATE_DEFINE("row order within a batch does not matter", T, method_3) {
  const Data d = linear_data(200, 6, 13, 2.0);
  Data shuffled = d;
  std::vector<long long> order(static_cast<size_t>(d.n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
  for (long long i = 0; i < d.n; ++i) {
    std::copy(d.x.begin() + order[i] * d.p, d.x.begin() + (order[i] + 1) * d.p, shuffled.x.begin() + i * d.p);
    shuffled.y[static_cast<size_t>(i)] = d.y[static_cast<size_t>(order[i])];
  }
  Config cfg;
  cfg.tol = 1e-12;
  CAPTURE(T::name());
  Regressor a(T::space, T::dtype, cfg), b(T::space, T::dtype, cfg);
  partial_fit(a, d, 0, 100);
  partial_fit(b, shuffled, 0, 100);  // different rows: only the second batch is compared against a
  Regressor a2(T::space, T::dtype, cfg), b2(T::space, T::dtype, cfg);
  partial_fit(a2, d);
  partial_fit(b2, shuffled);
  CHECK(max_rel_diff(a2.coefficients(), b2.coefficients()) <= rounding_tol<T>(2e-9, 2e-4));
}
TEST_CASE_TEMPLATE_APPLY(method_3, Targets);

namespace {
// ∇F_b(β) of docs/method.md §4 without the current λ term, from the state before and after the batch (in double).
std::vector<double> batch_gradient(const State& before, const State& after, const Data& d, const Config& cfg) {
  const long long q = static_cast<long long>(after.coefficients.size());
  const bool first = before.n_samples_seen == 0;
  std::vector<double> tilde = first ? std::vector<double>(q, 0.0) : before.coefficients;
  std::vector<double> g(static_cast<size_t>(q), 0.0);
  for (long long i = 0; i < d.n; ++i) {
    double fit = cfg.fit_intercept ? after.coefficients[q - 1] : 0.0;
    for (long long j = 0; j < d.p; ++j) fit += d.x[i * d.p + j] * after.coefficients[j];
    const double wi = d.w.empty() ? 1.0 : d.w[i];
    const double s = wi * huber_score(d.y[i] - fit, cfg.tau);
    for (long long j = 0; j < d.p; ++j) g[j] -= s * d.x[i * d.p + j];
    if (cfg.fit_intercept) g[q - 1] -= s;
  }
  for (long long j = 0; j < q && !first; ++j)
    for (long long k = 0; k < q; ++k) g[j] += before.information[j * q + k] * (after.coefficients[k] - tilde[k]);
  const double n_b = after.weight_sum;
  for (auto& v : g) v /= n_b;
  if (cfg.penalty == Penalty::l1 && !first) {
    const double hist = before.weight_sum / n_b * before.previous_lambda;
    for (long long j = 0; j < q - (cfg.fit_intercept ? 1 : 0); ++j) g[j] -= hist * sign_of(tilde[j]);
  }
  return g;
}
}  // namespace

TEST_CASE_TEMPLATE_DEFINE("penalty none: every batch solves the renewable estimating equation (Eq. 2.8)", T, method_4) {
  const Data d = linear_data(400, 5, 14, 1.5);
  Config cfg;
  cfg.ridge = 0.0;
  cfg.tol = 1e-12;
  cfg.max_iter = 200;
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype, cfg);
  for (int b = 0; b < 4; ++b) {
    const State before = m.state();
    const Data part = rows_of(d, b * 100, 100);
    partial_fit(m, part);
    const auto g = batch_gradient(before, m.state(), part, cfg);
    double worst = 0;
    for (double v : g) worst = std::max(worst, std::fabs(v));
    CAPTURE(b);
    // float32: the data gradient is summed in float over the batch and the step stops at float resolution.
    CHECK(worst <= rounding_tol<T>(2e-8, 5e-5));
  }
}
TEST_CASE_TEMPLATE_APPLY(method_4, Targets);

TEST_CASE_TEMPLATE_DEFINE("penalty l1: converged batches satisfy the KKT conditions (Eq. 3.6)", T, method_5) {
  const Data d = linear_data(300, 8, 15, 0.5, 3);  // three coefficients are truly zero
  Config cfg;
  cfg.penalty = Penalty::l1;
  cfg.lambda_scale = 0.5;
  // The majorization test accepts F(cand) ≤ U + 1e-12 (docs/method.md §6): that absolute slack lets steps of about
  // sqrt(1e-12/φ) ≈ 1e-6 pass without decrease, so LAMM cannot converge much below tol 1e-6 (the reference's
  // own L1 golden case, at tol 1e-8, never converges). KKT then holds to 2e-5, the reference's bound.
  cfg.tol = 1e-6;
  cfg.max_iter = 20000;
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype, cfg);
  for (int b = 0; b < 3; ++b) {
    const State before = m.state();
    const Data part = rows_of(d, b * 100, 100);
    const Diagnostics diag = partial_fit(m, part);
    CAPTURE(diag.iterations);
    REQUIRE(diag.converged);
    const State after = m.state();
    const auto g = batch_gradient(before, after, part, cfg);
    const double lambda = diag.lambda_value;
    CAPTURE(b);
    for (long long j = 0; j < d.p; ++j) {
      CAPTURE(j);
      const double beta = after.coefficients[j];
      if (beta != 0.0) CHECK(std::fabs(g[j] + lambda * (beta > 0 ? 1 : -1)) <= 2e-5);
      else CHECK(std::fabs(g[j]) <= lambda + 2e-5);
    }
    CHECK(std::fabs(g[d.p]) <= 2e-5);  // the intercept is never penalized
  }
}
TEST_CASE_TEMPLATE_APPLY(method_5, Float64Targets);  // KKT to 2e-5 needs float64 sums of the data gradient

TEST_CASE_TEMPLATE_DEFINE("orthogonal design: the L1 fit is the soft-thresholded least-squares fit", T, method_6) {
  // 8 rows of a Sylvester-Hadamard matrix: columns are orthogonal with XᵀX = 8·I.
  const int n = 8, p = 4;
  Data d;
  d.n = n;
  d.p = p;
  for (int i = 0; i < n; ++i)
    for (int j = 1; j <= p; ++j) d.x.push_back(__builtin_popcount(i & j) % 2 ? -1.0 : 1.0);
  const double ys[] = {3.0, -1.0, 0.5, 2.0, -0.25, 1.5, 0.75, -2.0};
  d.y = std::vector<double>(ys, ys + n);
  Config cfg;
  cfg.penalty = Penalty::l1;
  cfg.fit_intercept = false;
  cfg.tau = 1e6;  // pure least squares loss
  cfg.ridge = 0.0;
  cfg.tol = 1e-13;
  cfg.max_iter = 1000;
  const double lambda = 0.3;
  cfg.lambda_scale = lambda / (cfg.tau * std::sqrt(std::log(4.0) / n));
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype, cfg);
  const Diagnostics diag = partial_fit(m, d);
  CHECK(diag.lambda_value == doctest::Approx(lambda).epsilon(1e-12));
  const auto beta = m.coefficients();
  for (int j = 0; j < p; ++j) {
    double xty = 0;
    for (int i = 0; i < n; ++i) xty += d.x[i * p + j] * d.y[i];
    CAPTURE(j);
    CHECK(std::fabs(beta[j] - soft_threshold(xty / n, lambda)) <= rounding_tol<T>(1e-10, 1e-5));
  }
}
TEST_CASE_TEMPLATE_APPLY(method_6, Targets);

TEST_CASE_TEMPLATE_DEFINE("a gross outlier barely moves the robust fit while it ruins least squares", T, method_7) {
  Data d = linear_data(500, 3, 16, 0.1);
  Data clean = d;
  d.y[17] += 1000.0;
  const auto truth = ols(clean, true);
  const auto ls = ols(d, true);
  double ls_err = 0;
  for (size_t j = 0; j < truth.size(); ++j) ls_err = std::max(ls_err, std::fabs(ls[j] - truth[j]));
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype);
  partial_fit(m, d);
  const auto beta = m.coefficients();
  double err = 0;
  for (size_t j = 0; j < truth.size(); ++j) err = std::max(err, std::fabs(beta[j] - truth[j]));
  CHECK(err < 0.03);
  CHECK(err < 0.01 * ls_err);
}
TEST_CASE_TEMPLATE_APPLY(method_7, Targets);

TEST_CASE_TEMPLATE_DEFINE("fit is reset plus one batch, and a restored state continues the stream bitwise", T, method_8) {
  const Data d = linear_data(600, 7, 17, 1.0);
  CAPTURE(T::name());
  Regressor stream(T::space, T::dtype), resumed(T::space, T::dtype), refit(T::space, T::dtype);
  partial_fit(stream, d, 0, 200);
  resumed.set_state(stream.state());
  for (int b = 1; b < 3; ++b) {
    partial_fit(stream, d, b * 200, 200);
    partial_fit(resumed, d, b * 200, 200);
  }
  CHECK(same_state(stream.state(), resumed.state()));

  partial_fit(refit, d, 0, 300);
  const TypedBatch last = make_batch(d, T::dtype, 400, 200);
  refit.fit(last.batch);
  Regressor fresh(T::space, T::dtype);
  fresh.partial_fit(last.batch);
  CHECK(same_state(refit.state(), fresh.state()));
  CHECK(refit.state().batch_count == 1);
}
TEST_CASE_TEMPLATE_APPLY(method_8, Targets);

TEST_CASE_TEMPLATE_DEFINE("score is the ordinary R², 1 for a perfect fit", T, method_9) {
  const Data d = linear_data(200, 3, 18, 0.0);
  Config cfg;
  cfg.ridge = 0.0;
  cfg.tol = 1e-12;
  CAPTURE(T::name());
  Regressor m(T::space, T::dtype, cfg);
  const TypedBatch b = make_batch(d, T::dtype);
  m.partial_fit(b.batch);
  CHECK(m.score(b.batch) == doctest::Approx(1.0).epsilon(rounding_tol<T>(1e-12, 1e-5)));
  const auto pred = T::dtype == Dtype::f64 ? m.predict(b.xd.data(), d.n, d.p)
                                          : std::vector<double>();
  for (long long i = 0; i < static_cast<long long>(pred.size()); ++i)
    CHECK(pred[i] == doctest::Approx(d.y[i]).epsilon(1e-9));
}
TEST_CASE_TEMPLATE_APPLY(method_9, Targets);

// docs/method.md §8, observed through the engine's solve counts: with a ridge every Newton system of an ordinary
// stream is solved by Cholesky (a silent fall back to LU fails here); without one, LU solves them; a restored
// information matrix that is not symmetric hands them to LU although the ridge is positive; and an exactly singular
// system (collinear columns, no ridge) ends in the minimum-norm fallback, reported as before.
TEST_CASE_TEMPLATE_DEFINE("Newton systems are solved by Cholesky, and fall back to LU and minimum norm", T, method_10) {
  using Engine = detail::Engine<typename T::Traits, typename T::S>;
  CAPTURE(T::name());
  const Data d = linear_data(1500, 12, 23, 1.0);
  const auto run = [&](Engine& e, const Config& cfg, const Data& data, long long batches) {
    const long long rows = data.n / batches;
    for (long long b = 0; b < batches; ++b) {
      const TypedBatch t = make_batch(data, T::dtype, b * rows, rows);
      e.update(t.batch, cfg, false);
    }
    return e.solve_counts();
  };
  Config with_ridge;  // ridge 1e-8, the default
  REQUIRE(with_ridge.ridge > 0);
  Engine cholesky(T::Traits::instance(0), 0);
  const auto c = run(cholesky, with_ridge, d, 3);
  CHECK(c.cholesky > 0);
  CHECK(c.lu == 0);
  CHECK(c.min_norm == 0);

  Config no_ridge;
  no_ridge.ridge = 0.0;
  Engine lu(T::Traits::instance(0), 0);
  const auto l = run(lu, no_ridge, d, 3);
  CHECK(l.cholesky == 0);
  CHECK(l.lu > 0);
  CHECK(l.min_norm == 0);

  State restored = cholesky.export_state();
  const long long q = d.p + 1;
  restored.information[1] *= 1.5;  // J(0, 1) ≠ J(1, 0)
  Engine asymmetric(T::Traits::instance(0), 0);
  asymmetric.import_state(restored);
  const auto a = run(asymmetric, with_ridge, rows_of(d, 0, 500), 1);
  CHECK(a.cholesky == 0);
  CHECK(a.lu > 0);
  CHECK(restored.information.size() == static_cast<size_t>(q * q));

  // Columns t and 2t (docs/method.md §8's example): G is exactly singular, and so is H without a ridge.
  Data collinear;
  collinear.n = 24;
  collinear.p = 2;
  for (long long i = 0; i < collinear.n; ++i) {
    const double t = -2.0 + 4.0 * static_cast<double>(i) / 23.0;
    collinear.x.insert(collinear.x.end(), {t, 2 * t});
    collinear.y.push_back(1.75 * t + 0.4);
  }
  Config singular = no_ridge;
  singular.tau = 100.0;
  Engine min_norm(T::Traits::instance(0), 0);
  const auto m = run(min_norm, singular, collinear, 1);
  CHECK(m.cholesky == 0);
  CHECK(m.min_norm > 0);
}
TEST_CASE_TEMPLATE_APPLY(method_10, Targets);

// docs/method.md §7: the committed J_b is J_{b−1} plus the curvature Gram Σ w φ(r(β_b)) x xᵀ at the committed β_b,
// whatever path the solver took to β_b (full Gram, delta Gram after the last step, proximal steps with no Gram).
// Checked against tests/reference/ in double on random streams, every penalty, weights with zeros, with and
// without an intercept. The bound per entry is the rounding the engine may make, not a tuned number: the Gram's sum
// over n rows (n·ε·Σ w|x_j x_k|), the addition and our subtraction of J_{b−1} (2ε|J_b|), and on the rows within
// reach of a curvature ramp the residual's own rounding — r is carried from step to step, each accepted step
// adding at most ε(|y| + Σ|x β|) — through the ramp's slope 1/(2h).
TEST_CASE_TEMPLATE_DEFINE("the committed information matrix is the curvature Gram at the committed coefficients", T,
                          method_11) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  int penalties = 0;
  while (penalty_known(static_cast<Penalty>(penalties))) ++penalties;
  // Seeds 31-33 penalty none (the first), then one seed for each other penalty.
  for (unsigned seed = 31u; seed < 33u + static_cast<unsigned>(penalties); ++seed) {
    Config cfg;
    cfg.tau = seed % 2 ? 0.9 : 1.345;
    cfg.fit_intercept = seed != 33u;
    cfg.penalty = static_cast<Penalty>(seed < 34u ? 0 : static_cast<int>(seed) - 33);
    cfg.tol = T::dtype == Dtype::f64 ? 1e-10 : 1e-6;
    Data d = linear_data(480, 6, seed, 1.5);
    if (seed != 31u) {
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (long long i = 0; i < d.n; ++i) d.w.push_back(u(rng) < 0.15 ? 0.0 : 0.2 + 2.8 * u(rng));
    }
    CAPTURE(T::name());
    CAPTURE(seed);
    Regressor m(T::space, T::dtype, cfg);
    const long long q = d.p + (cfg.fit_intercept ? 1 : 0);
    std::vector<double> before(static_cast<size_t>(q * q), 0.0);
    for (int b = 0; b < 4; ++b) {
      const TypedBatch t = make_batch(d, T::dtype, b * 120, 120);
      const auto& [xs, ys, ws] = arrays_of<S>(t);
      const reference::Rows rows = reference::stage(xs.data(), ys.data(), ws.empty() ? nullptr : ws.data(), 120, d.p,
                                                    d.p, true, cfg.fit_intercept);
      const Diagnostics diag = m.partial_fit(t.batch);
      const double steps = static_cast<double>(diag.iterations);  // r is staged afresh at β̃ for each batch
      const State st = m.state();
      const double h = std::min(diag.bandwidth, cfg.tau);
      reference::Values c(static_cast<size_t>(rows.n)), zero(static_cast<size_t>(rows.n), 0.0);
      std::vector<double> residual_error(static_cast<size_t>(rows.n));
      for (long long i = 0; i < rows.n; ++i) {
        double fit = 0, size = std::fabs(rows.y[i]);
        for (long long j = 0; j < q; ++j) {
          fit += rows.at(i, j) * st.coefficients[j];
          size += std::fabs(rows.at(i, j) * st.coefficients[j]);
        }
        const double r = rows.y[i] - fit;
        c[i] = rows.weight(i) * reference::curvature(r, cfg.tau, h);
        const double dr = 2.0 * (steps + 2) * eps * size;
        residual_error[i] = std::fabs(std::fabs(r) - cfg.tau) <= h + dr ? dr / (2.0 * h) : eps;
      }
      const auto gram = reference::gram_gradient(rows, zero, c).gram;
      double worst = 0;
      for (long long j = 0; j < q; ++j)
        for (long long k = 0; k < q; ++k) {
          const size_t e = static_cast<size_t>(j * q + k);
          double mass = 0, ramp = 0;
          for (long long i = 0; i < rows.n; ++i) {
            const double xx = rows.weight(i) * std::fabs(rows.at(i, j) * rows.at(i, k));
            mass += xx;
            ramp += xx * residual_error[i];
          }
          const double bound = static_cast<double>(rows.n) * eps * mass + 2 * eps * std::fabs(st.information[e]) + ramp;
          worst = std::max(worst, std::fabs(st.information[e] - before[e] - gram[e]) / bound);
        }
      CAPTURE(b);
      CHECK(worst <= 1.0);
      MESSAGE(T::name() << " seed " << seed << " batch " << b << ": worst " << worst << " of the rounding bound");
      before = st.information;
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(method_11, Targets);
