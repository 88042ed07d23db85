// The shared inputs of the pass tests (tests/unit/test_pass_*.cpp): problems, the views of one target and
// conversions, and the reference's views of them.
//
// Every solver pass (rh/detail/passes.hpp) called directly on every space and dtype, against the sequential
// reference of tests/reference/passes.hpp, on random and adversarial inputs: ill-conditioned and rank-deficient
// designs, zero weights, residuals inside and on the edges of the curvature ramps, and non-finite values.
//
// Tolerances are rounding-error bounds, not fitted numbers: a sum of k terms computed in precision ε (any order,
// any chunking) differs from the exact sum by at most k·ε·Σ|terms| (the classic γ_k bound), and the reference is
// exact to far below that. ε is the machine epsilon of the scalar the pass computes in: S for the row-side sums and
// the Gram, double for the coefficient-side sums (docs/method.md says which is which).
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/passes.hpp"
#include "rh/detail/dense_solve.hpp"
#include "rh/detail/passes.hpp"
#include "rh/detail/staging_pool.hpp"
#include "support.hpp"

namespace rh::test::pass_tests {

using namespace rh;
namespace ref = rh::reference;
using ref::Values;

inline constexpr double kEps64 = std::numeric_limits<double>::epsilon();

// What a batch looks like, before any space sees it.
enum class Scenario { random, ill_conditioned, rank_deficient, zero_weights, ramps };
inline const Scenario kScenarios[] = {Scenario::random, Scenario::ill_conditioned, Scenario::rank_deficient,
                               Scenario::zero_weights, Scenario::ramps};
inline const char* name_of(Scenario s) {
  switch (s) {
    case Scenario::random: return "random";
    case Scenario::ill_conditioned: return "ill-conditioned";
    case Scenario::rank_deficient: return "rank-deficient";
    case Scenario::zero_weights: return "zero weights";
    case Scenario::ramps: return "residuals in the curvature ramps";
  }
  return "?";
}

// A batch and a point of the solve: values already rounded to the model's scalar S, held in double.
struct Problem {
  long long n = 0, p = 0, q = 0;
  bool intercept = true;
  Values x, y, w;                         // caller arrays, row-major n × p
  Values cand, cur, tilde, grad, info;    // q, q, q, q, q×q (J symmetric positive semi-definite)
  double tau = 1.345, h = 0.3;
};

template <class S>
double round_to(double v) { return static_cast<double>(static_cast<S>(v)); }

template <class S>
Problem make_problem(Scenario sc, long long n, long long p, bool intercept, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Problem pr;
  pr.n = n;
  pr.p = p;
  pr.intercept = intercept;
  pr.q = p + (intercept ? 1 : 0);
  const long long q = pr.q;
  pr.x.resize(static_cast<size_t>(n * p));
  for (auto& v : pr.x) v = normal(rng);
  if (sc == Scenario::ill_conditioned)  // column 1 = column 0 + a perturbation near S's resolution
    for (long long i = 0; i < n; ++i)
      pr.x[static_cast<size_t>(i * p + 1)] = pr.x[static_cast<size_t>(i * p)] * (1.0 + 1e3 * std::numeric_limits<S>::epsilon() * normal(rng));
  if (sc == Scenario::rank_deficient)  // a duplicated column and a zero column
    for (long long i = 0; i < n; ++i) {
      pr.x[static_cast<size_t>(i * p + 2)] = pr.x[static_cast<size_t>(i * p)];
      pr.x[static_cast<size_t>(i * p + 3)] = 0.0;
    }
  for (auto& v : pr.x) v = round_to<S>(v);
  for (long long j = 0; j < q; ++j) {
    pr.cand.push_back(round_to<S>(normal(rng)));
    pr.cur.push_back(round_to<S>(pr.cand.back() + 0.1 * normal(rng)));
    pr.tilde.push_back(j % 4 == 0 ? 0.0 : round_to<S>(normal(rng)));  // some sign(β̃_j) = 0
    pr.grad.push_back(round_to<S>(normal(rng)));
  }
  // J = AᵀA/q: symmetric positive semi-definite.
  Values a(static_cast<size_t>(q * q));
  for (auto& v : a) v = normal(rng);
  pr.info.assign(static_cast<size_t>(q * q), 0.0);
  for (long long j = 0; j < q; ++j)
    for (long long k = 0; k < q; ++k) {
      double s = 0;
      for (long long l = 0; l < q; ++l) s += a[static_cast<size_t>(l * q + j)] * a[static_cast<size_t>(l * q + k)];
      pr.info[static_cast<size_t>(j * q + k)] = round_to<S>(s / static_cast<double>(q));
    }
  // y: the fit at cand plus a residual; ramps puts residuals inside and on the edges of τ ± h.
  for (long long i = 0; i < n; ++i) {
    double fit = intercept ? pr.cand[static_cast<size_t>(q - 1)] : 0.0;
    for (long long j = 0; j < p; ++j) fit += pr.x[static_cast<size_t>(i * p + j)] * pr.cand[static_cast<size_t>(j)];
    double r = (i % 10 == 3) ? 20.0 * normal(rng) : normal(rng);
    if (sc == Scenario::ramps) {
      const double edges[] = {pr.tau - pr.h, pr.tau + pr.h, pr.tau, pr.tau - 0.5 * pr.h, pr.tau + 0.9 * pr.h};
      r = (i % 2 ? -1.0 : 1.0) * edges[i % 5] * (1.0 + 1e-3 * unit(rng) * (i % 3 == 0));
    }
    pr.y.push_back(round_to<S>(fit + r));
  }
  if (sc != Scenario::random) {
    for (long long i = 0; i < n; ++i)
      pr.w.push_back(sc == Scenario::zero_weights && i % 2 == 0 ? 0.0 : round_to<S>(0.25 + 2.0 * unit(rng)));
  }
  return pr;
}

// The views of one target, and conversions to and from host vectors.
template <class T>
struct OnSpace {
  using S = typename T::S;
  using Traits = typename T::Traits;
  using Passes = detail::Passes<Traits, S>;
  using Vector = typename Passes::Vector;
  using Matrix = typename Passes::Matrix;

  Passes passes{Traits::instance(0), 0};

  static Vector vector(const Values& v) {
    Vector out("test_vector", v.size());
    auto h = Kokkos::create_mirror_view(out);
    for (size_t i = 0; i < v.size(); ++i) h(i) = static_cast<S>(v[i]);
    Kokkos::deep_copy(out, h);
    return out;
  }
  static Matrix matrix(const Values& v, long long q) {
    Matrix out("test_matrix", q, q);
    auto h = Kokkos::create_mirror_view(out);
    for (long long j = 0; j < q; ++j)
      for (long long k = 0; k < q; ++k) h(j, k) = static_cast<S>(v[static_cast<size_t>(j * q + k)]);
    Kokkos::deep_copy(out, h);
    return out;
  }
  template <class View>
  static Values values(const View& v) {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    Values out;
    if constexpr (View::rank == 1) {
      for (size_t i = 0; i < h.extent(0); ++i) out.push_back(static_cast<double>(h(i)));
    } else {
      for (size_t i = 0; i < h.extent(0); ++i)
        for (size_t j = 0; j < h.extent(1); ++j) out.push_back(static_cast<double>(h(i, j)));
    }
    return out;
  }

  // The problem's coefficient views: cand, cur, β̃, g and J.
  static typename Passes::Coefficients coefficients(const Problem& pr) {
    typename Passes::Coefficients coef;
    coef.cand = vector(pr.cand);
    coef.cur = vector(pr.cur);
    coef.tilde = vector(pr.tilde);
    coef.grad = vector(pr.grad);
    coef.info = matrix(pr.info, pr.q);
    return coef;
  }
  // The problem's batch staged on the space (pass 1), with its chunks.
  struct Staged {
    Vector buffer;
    typename Passes::HostInput input;
    typename Passes::Rows rows;
    detail::Chunks chunks;
    detail::BatchCounts counts;  // what staging counted
  };
  Staged stage(const Problem& pr, bool row_major = true, long long extra_ld = 0) {
    const std::vector<S> x = caller_x(pr, row_major, extra_ld), y(pr.y.begin(), pr.y.end()), w(pr.w.begin(), pr.w.end());
    Batch b;
    b.x.data = x.data();
    b.x.rows = pr.n;
    b.x.cols = pr.p;
    b.x.ld = (row_major ? pr.p : pr.n) + extra_ld;
    b.x.layout = row_major ? Layout::row_major : Layout::col_major;
    b.y = y.data();
    b.weights = w.empty() ? nullptr : w.data();
    b.dtype = dtype_of<S>();
    Staged st;
    st.buffer = passes.design_buffer(pr.n, pr.q);
    st.rows.x = Passes::design_view(st.buffer, pr.n, pr.q);
    st.rows.y = Vector("y", pr.n);
    st.rows.w = Vector("w", pr.n);
    st.rows.s = Vector("s", pr.n);
    st.rows.c = Vector("c", pr.n);
    st.chunks = passes.chunks_for(pr.n, pr.q);
    st.counts = passes.stage(b, st.rows, st.input);
    Kokkos::fence();
    return st;
  }
  // The caller's X laid out row- or column-major with a leading dimension extra_ld beyond tight (NaN padding).
  static std::vector<S> caller_x(const Problem& pr, bool row_major, long long extra_ld) {
    const long long ld = (row_major ? pr.p : pr.n) + extra_ld;
    std::vector<S> x(static_cast<size_t>(ld * (row_major ? pr.n : pr.p)), std::numeric_limits<S>::quiet_NaN());
    for (long long i = 0; i < pr.n; ++i)
      for (long long j = 0; j < pr.p; ++j)
        x[static_cast<size_t>(row_major ? i * ld + j : j * ld + i)] = static_cast<S>(pr.x[static_cast<size_t>(i * pr.p + j)]);
    return x;
  }
};

inline ref::Rows reference_rows(const Problem& pr) {
  return ref::stage<double>(pr.x.data(), pr.y.data(), pr.w.empty() ? nullptr : pr.w.data(), pr.n, pr.p, pr.p, true,
                            pr.intercept);
}

// |got − want| ≤ bound, reported with the quantity's name.
#define CHECK_WITHIN(got, want, bound, what)                                                              \
  do {                                                                                                    \
    const double got_ = (got), want_ = (want), bound_ = (bound);                                          \
    INFO(what << ": got " << got_ << ", want " << want_ << ", bound " << bound_);                         \
    CHECK(std::fabs(got_ - want_) <= bound_);                                                             \
  } while (0)

struct Shape {
  long long n, p;
  bool intercept;
};
// Uneven chunks; q below, at and above one 16-wide Gram tile.
inline const Shape kShapes[] = {{203, 5, true}, {97, 16, false}, {130, 18, true}};

// Random per-chunk partials (some huge, some zero) in the layout gram_gradient writes.
template <class T>
typename OnSpace<T>::Passes::Partial random_partial(long long chunks, long long q, unsigned seed, Values& host) {
  using S = typename T::S;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  typename OnSpace<T>::Passes::Partial partial("test_partial", chunks, q * q + q);
  auto h = Kokkos::create_mirror_view(partial);
  host.assign(static_cast<size_t>(chunks * (q * q + q)), 0.0);
  for (long long ch = 0; ch < chunks; ++ch)
    for (long long e = 0; e < q * q + q; ++e) {
      const double v = round_to<S>(ch % 5 == 4 ? 0.0 : (e % 11 == 0 ? 1e3 : 1.0) * normal(rng));
      h(ch, e) = static_cast<S>(v);
      host[static_cast<size_t>(ch * (q * q + q) + e)] = v;
    }
  Kokkos::deep_copy(partial, h);
  return partial;
}

// Σ over chunks of the partials, as the exact symmetric Gram (from the upper triangle) and gradient, and the sums of
// their absolute values (the rounding scale).
struct Summed {
  Values gram, u, gram_abs, u_abs;
};
inline Summed sum_partials(const Values& host, long long chunks, long long q) {
  Summed s{Values(static_cast<size_t>(q * q), 0.0), Values(static_cast<size_t>(q), 0.0),
           Values(static_cast<size_t>(q * q), 0.0), Values(static_cast<size_t>(q), 0.0)};
  for (long long ch = 0; ch < chunks; ++ch) {
    const double* row = host.data() + ch * (q * q + q);
    for (long long j = 0; j < q; ++j) {
      s.u[static_cast<size_t>(j)] += row[q * q + j];
      s.u_abs[static_cast<size_t>(j)] += std::fabs(row[q * q + j]);
      for (long long k = 0; k < q; ++k) {
        const double v = row[std::min(j, k) * q + std::max(j, k)];
        s.gram[static_cast<size_t>(j * q + k)] += v;
        s.gram_abs[static_cast<size_t>(j * q + k)] += std::fabs(v);
      }
    }
  }
  return s;
}

// The views the Newton line search and the delta Gram add to a staged batch.
template <class T>
void add_newton_rows(typename OnSpace<T>::Staged& st, long long n) {
  using Passes = typename OnSpace<T>::Passes;
  st.rows.r = typename Passes::Vector("r", n);
  st.rows.u = typename Passes::Vector("u", n);
  st.rows.dc = typename Passes::Vector("dc", n);
  st.rows.changed = typename Passes::Index("changed", n);
}

inline detail::BatchScalars scalars_of(const Problem& pr) {
  detail::BatchScalars bs;
  bs.n = pr.n;
  bs.penalized = pr.intercept ? pr.q - 1 : pr.q;
  bs.has_weights = !pr.w.empty();
  bs.tau = pr.tau;
  bs.h = pr.h;
  bs.inv_n = 1.0 / static_cast<double>(pr.n);
  return bs;
}

}  // namespace rh::test::pass_tests
