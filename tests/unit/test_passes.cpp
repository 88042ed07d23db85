// Every solver pass (rh/detail/passes.hpp) called directly on every space and dtype, against the sequential
// reference of tests/reference/passes.hpp, on random and adversarial inputs: ill-conditioned and rank-deficient
// designs, zero weights, residuals inside and on the edges of the curvature ramps, and non-finite values.
//
// Tolerances are rounding-error bounds, not fitted numbers: a sum of k terms computed in precision ε (any order,
// any chunking) differs from the exact sum by at most k·ε·Σ|terms| (the classic γ_k bound), and the reference is
// exact to far below that. ε is the machine epsilon of the scalar the pass computes in: S for the row-side sums and
// the Gram, double for the coefficient-side sums (docs/method.md says which is which).
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

using namespace rh;
using namespace rh::test;
namespace ref = rh::reference;
using ref::Values;

namespace {

constexpr double kEps64 = std::numeric_limits<double>::epsilon();

// What a batch looks like, before any space sees it.
enum class Scenario { random, ill_conditioned, rank_deficient, zero_weights, ramps };
const Scenario kScenarios[] = {Scenario::random, Scenario::ill_conditioned, Scenario::rank_deficient,
                               Scenario::zero_weights, Scenario::ramps};
const char* name_of(Scenario s) {
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

ref::Rows reference_rows(const Problem& pr) {
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
const Shape kShapes[] = {{203, 5, true}, {97, 16, false}, {130, 18, true}};

}  // namespace

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

namespace {

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
Summed sum_partials(const Values& host, long long chunks, long long q) {
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

}  // namespace

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
      const double hist = std::is_same_v<Penalty, detail::penalty::L1> ? bs.historical : 0.0;
      const ref::Assembled want =
          ref::assemble(sum.gram, sum.u, pr.info, pr.cur, pr.tilde, bs.inv_n, bs.ridge, hist, bs.penalized);
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
// positive definite or not symmetric. q = 300 in f64 takes panels of 8 rows; q = 400 in f64 exceeds the scratch
// budget and takes the many-launch panels instead.
TEST_CASE_TEMPLATE("the one-team Cholesky factors like the sequential one", S, double, float) {
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using Vector = Kokkos::View<S*, Kokkos::HostSpace>;
  using Report = Kokkos::View<detail::SolveReport, Kokkos::HostSpace>;
  const typename OneTeamTraits::execution_space space;
  for (int q : {1, 7, 16, 17, 40, 91, 300, 400}) {
    for (int kind = 0; kind < 3; ++kind) {  // 0: positive definite, 1: indefinite, 2: not symmetric
      CAPTURE(q);
      CAPTURE(kind);
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
      if (!positive_definite) continue;
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

// The host factor runs by panels of rows (dense_solve.hpp, factor_upper) only to read the trailing rows less often:
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
        detail::BatchScalars bs;
        bs.n = pr.n;
        bs.penalized = pr.intercept ? pr.q - 1 : pr.q;
        bs.has_weights = !pr.w.empty();
        bs.tau = pr.tau;
        bs.h = pr.h;
        bs.inv_n = 1.0 / static_cast<double>(pr.n);
        bs.historical = 0.3;
        const detail::EvaluationSums<Penalty> got = passes.evaluate(st.rows, st.chunks, bs, coef, status, scratch);
        const ref::Evaluation want =
            ref::evaluate(rows, pr.cand, pr.cur, pr.tilde, pr.grad, pr.info, pr.tau, pr.h, bs.penalized);
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
        double quad_abs = 0, step_abs = 0, cand_abs = 0, hist_abs = 0, gstep_abs = 0, l1_abs = 0;
        for (long long j = 0; j < pr.q; ++j) {
          const size_t J = static_cast<size_t>(j);
          const double delta = pr.cand[J] - pr.tilde[J], step = pr.cand[J] - pr.cur[J];
          for (long long k = 0; k < pr.q; ++k)
            quad_abs += std::fabs(delta * pr.info[static_cast<size_t>(j * pr.q + k)] *
                                  (pr.cand[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]));
          step_abs += step * step;
          cand_abs += pr.cand[J] * pr.cand[J];
          hist_abs += std::fabs(delta);
          gstep_abs += std::fabs(pr.grad[J] * step);
          l1_abs += std::fabs(pr.cand[J]);
        }
        const double k = 2.0 * (pr.q + 2) * kEps64;
        CHECK_WITHIN(got.quad, want.quad, k * quad_abs, "quad");
        CHECK_WITHIN(got.step2, want.step2, k * step_abs, "step2");
        CHECK_WITHIN(got.cand2, want.cand2, k * cand_abs, "cand2");
        if constexpr (std::is_same_v<Penalty, detail::penalty::L1>) {
          CHECK_WITHIN(got.penalty.hist, want.hist, k * hist_abs, "hist");
          CHECK_WITHIN(got.penalty.gstep, want.gstep, k * gstep_abs, "gstep");
          CHECK_WITHIN(got.penalty.l1, want.l1, k * l1_abs, "l1");
          const double f = (want.loss + 0.5 * want.quad) * bs.inv_n - bs.historical * want.hist;
          CHECK_WITHIN(Penalty::objective(got, bs), f,
                       (loss_bound + pr.n * kEps64 * loss_abs + k * quad_abs) * bs.inv_n + bs.historical * k * hist_abs +
                           4 * kEps64 * std::fabs(f),
                       "objective");
        } else {
          const double f = (want.loss + 0.5 * want.quad) * bs.inv_n;
          CHECK_WITHIN(Penalty::objective(got, bs), f,
                       (loss_bound + pr.n * kEps64 * loss_abs + k * quad_abs) * bs.inv_n + 4 * kEps64 * std::fabs(f),
                       "objective");
        }
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

namespace {

// The views the Newton line search and the delta Gram add to a staged batch.
template <class T>
void add_newton_rows(typename OnSpace<T>::Staged& st, long long n) {
  using Passes = typename OnSpace<T>::Passes;
  st.rows.r = typename Passes::Vector("r", n);
  st.rows.u = typename Passes::Vector("u", n);
  st.rows.dc = typename Passes::Vector("dc", n);
  st.rows.changed = typename Passes::Index("changed", n);
}

detail::BatchScalars scalars_of(const Problem& pr) {
  detail::BatchScalars bs;
  bs.n = pr.n;
  bs.penalized = pr.intercept ? pr.q - 1 : pr.q;
  bs.has_weights = !pr.w.empty();
  bs.tau = pr.tau;
  bs.h = pr.h;
  bs.inv_n = 1.0 / static_cast<double>(pr.n);
  return bs;
}

}  // namespace

// Lever 1 of issue 12: one pass prices every step. The reference evaluates F_b directly at each rounded candidate
// (ref::evaluate); the pass must agree with it to the rounding of such an evaluation, take the same decision
// wherever the reference's decision is not itself a matter of rounding, and decide these clear-cut searches itself.
TEST_CASE_TEMPLATE_DEFINE("line_search prices every step as a direct evaluation does and takes the reference's decision",
                          T, pass_line_search) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  typename OnSpace<T>::Passes::LineSearchScratch scratch;
  int searches = 0, decided = 0;
  for (const Shape& shape : kShapes)
    for (Scenario sc : kScenarios) {
      CAPTURE(name_of(sc));
      CAPTURE(shape.p);
      const Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 61);
      const ref::Rows rows = reference_rows(pr);
      auto st = sp.stage(pr);
      add_newton_rows<T>(st, pr.n);
      const detail::BatchScalars bs = scalars_of(pr);
      typename OnSpace<T>::Passes::Coefficients coef;
      coef.cur = OnSpace<T>::vector(pr.cur);
      coef.tilde = OnSpace<T>::vector(pr.tilde);
      coef.info = OnSpace<T>::matrix(pr.info, pr.q);
      coef.cand = typename OnSpace<T>::Vector("cand", pr.q);
      typename OnSpace<T>::Passes::Status status("status");
      // d = α(β − β_fit): t = 1/α lands on the point y was generated from; α > 1 overshoots, so larger steps
      // are rejected first.
      for (double alpha : {1.0, 3.0, 40.0}) {
        CAPTURE(alpha);
        Values dir;
        for (long long j = 0; j < pr.q; ++j)
          dir.push_back(round_to<S>(alpha * (pr.cur[static_cast<size_t>(j)] - pr.cand[static_cast<size_t>(j)])));
        coef.dir = OnSpace<T>::vector(dir);
        const detail::LineSearch got = sp.passes.line_search(st.rows, st.chunks, bs, coef, status, scratch);
        // The reference: F_b at β and at every rounded candidate, with a bound on a direct evaluation's rounding
        // (the evaluate test's: residuals in S, sums in double).
        const auto objective = [&](const Values& at, double& bound) {
          const ref::Evaluation e = ref::evaluate(rows, at, pr.cur, pr.tilde, pr.cur, pr.info, pr.tau, pr.h, bs.penalized);
          double loss_bound = 0, quad_abs = 0;
          for (long long i = 0; i < pr.n; ++i) {
            double fit_abs = std::fabs(rows.y[static_cast<size_t>(i)]);
            for (long long j = 0; j < pr.q; ++j)
              fit_abs += std::fabs(rows.at(i, j)) * (std::fabs(at[static_cast<size_t>(j)]) + std::fabs(dir[static_cast<size_t>(j)]));
            const double dr = (pr.q + 2) * eps * fit_abs + eps * pr.tau;
            loss_bound += rows.weight(i) * (pr.tau * dr + 4 * eps * (pr.tau * fit_abs + fit_abs * fit_abs + pr.tau * pr.tau));
          }
          for (long long j = 0; j < pr.q; ++j)
            for (long long k = 0; k < pr.q; ++k)
              quad_abs += std::fabs((at[static_cast<size_t>(j)] - pr.tilde[static_cast<size_t>(j)]) *
                                    pr.info[static_cast<size_t>(j * pr.q + k)] *
                                    (at[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]));
          bound = (loss_bound + 4.0 * (pr.q + 2) * kEps64 * quad_abs) * bs.inv_n;
          return (e.loss + 0.5 * e.quad) * bs.inv_n;
        };
        double bound0 = 0;
        const double f0 = objective(pr.cur, bound0);
        CHECK_WITHIN(got.objective_current, f0, bound0 + 4 * kEps64 * std::fabs(f0), "F(beta)");
        // Every step the pass rejected or accepted, the reference rejects or accepts too, unless the two objectives
        // it compares lie within their rounding bounds (then either decision is a direct evaluation's).
        const int last = got.step >= 0 ? got.step : (got.undecided >= 0 ? got.undecided : detail::line_search_steps - 1);
        double t = 1.0;
        for (int k = 0; k <= last; ++k, t *= 0.5) {
          CAPTURE(k);
          Values cand = ref::candidate(pr.cur, dir, t, 0.0, bs.penalized);
          for (auto& v : cand) v = round_to<S>(v);
          double bound = 0;
          const double f = objective(cand, bound);
          const bool decisive = std::fabs(f - f0) > bound + bound0;
          if (k == got.undecided) break;
          if (k < got.step || got.step < 0) CHECK((f > f0 || !decisive));
          if (k == got.step) {
            CHECK((f <= f0 || !decisive));
            CHECK_WITHIN(got.objective, f, bound + 4 * kEps64 * std::fabs(f), "F(candidate)");
            const Values c = OnSpace<T>::values(coef.cand);
            for (long long j = 0; j < pr.q; ++j) CHECK(c[static_cast<size_t>(j)] == cand[static_cast<size_t>(j)]);
          }
        }
        ++searches;
        decided += got.undecided < 0 ? 1 : 0;
        // r = y − Xβ and u = X·d are left for accept_step.
        const Values r = OnSpace<T>::values(st.rows.r), u = OnSpace<T>::values(st.rows.u);
        for (long long i = 0; i < pr.n; ++i) {
          double fit = 0, fit_abs = 0, step = 0, step_abs = 0;
          for (long long j = 0; j < pr.q; ++j) {
            fit += rows.at(i, j) * pr.cur[static_cast<size_t>(j)];
            fit_abs += std::fabs(rows.at(i, j) * pr.cur[static_cast<size_t>(j)]);
            step += rows.at(i, j) * dir[static_cast<size_t>(j)];
            step_abs += std::fabs(rows.at(i, j) * dir[static_cast<size_t>(j)]);
          }
          const size_t I = static_cast<size_t>(i);
          CHECK_WITHIN(r[I], rows.y[I] - fit, (pr.q + 2) * eps * (fit_abs + std::fabs(rows.y[I])), "r_" << i);
          CHECK_WITHIN(u[I], step, (pr.q + 2) * eps * step_abs, "u_" << i);
        }
      }
    }
  // These steps change F_b by far more than rounding: the pass must decide them itself, not hand them back.
  CHECK(decided == searches);
}
TEST_CASE_TEMPLATE_APPLY(pass_line_search, Targets);

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
