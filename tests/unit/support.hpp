// Shared test helpers: the (space, dtype) targets a test runs on, seeded data, and small oracles.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/same_state.hpp"
#include "rh/detail/compiled_spaces.hpp"
#include "rh/regressor.hpp"

namespace rh::test {

// What a test runs on: one compiled execution space (its traits) and one scalar type. The unit tests are written
// once as doctest template test cases and instantiated for every Target of Targets (every compiled space, both
// dtypes), named "<space>/<dtype>"; ctest runs one process per space (--test-case=*<space/*).
template <class SpaceTraits, class Scalar>
struct Target {
  using Traits = SpaceTraits;
  using S = Scalar;
  static constexpr Space space = Traits::id;
  static constexpr Dtype dtype = dtype_of<Scalar>();
  static std::string name() { return std::string(space_name(space)) + "/" + dtype_name(dtype); }
};

template <class List>
struct TargetsOf;
template <class... Tr>
struct TargetsOf<detail::TypeList<Tr...>> {
  using type = decltype(std::tuple_cat(std::declval<std::tuple<Target<Tr, double>, Target<Tr, float>>>()...));
};
// The targets of a tuple that Keep<T>::value selects.
template <class Tuple, template <class> class Keep>
struct Filter;
template <class... T, template <class> class Keep>
struct Filter<std::tuple<T...>, Keep> {
  using type = decltype(std::tuple_cat(std::declval<std::conditional_t<Keep<T>::value, std::tuple<T>, std::tuple<>>>()...));
};
template <class T>
struct IsFloat64 : std::bool_constant<T::dtype == Dtype::f64> {};
template <class T>
struct HasDeviceMemory : std::bool_constant<!T::Traits::host> {};

using Targets = TargetsOf<detail::CompiledSpaces>::type;
using Float64Targets = Filter<Targets, IsFloat64>::type;
using DeviceTargets = Filter<Targets, HasDeviceMemory>::type;  // empty without a space with its own memory
template <class T>
struct HasHostMemory : std::bool_constant<T::Traits::host> {};
using HostTargets = Filter<Targets, HasHostMemory>::type;

// Every value of rh::Space the library has a name for, compiled or not.
inline std::vector<Space> known_spaces() {
  std::vector<Space> out;
  for (int v = 0; space_known(static_cast<Space>(v)); ++v) out.push_back(static_cast<Space>(v));
  return out;
}

// Relative tolerance for comparisons whose only cause of difference is rounding in the model's dtype.
inline double rounding_tol(Dtype d, double f64, double f32) { return d == Dtype::f64 ? f64 : f32; }
template <class T>
double rounding_tol(double f64, double f32) { return rounding_tol(T::dtype, f64, f32); }

// Row-major design and response, in double; converted to the target dtype when fitted.
struct Data {
  long long n = 0, p = 0;
  std::vector<double> x, y, w;
};

// y = 0.5 + Xβ + noise·N(0,1), β ~ N(0,1) except the last `zero_tail` coefficients, which are exactly 0.
inline Data linear_data(long long n, long long p, unsigned seed, double noise = 0.1, long long zero_tail = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Data d;
  d.n = n;
  d.p = p;
  std::vector<double> beta(static_cast<size_t>(p));
  for (auto& b : beta) b = normal(rng);
  for (long long j = p - zero_tail; j < p; ++j) beta[static_cast<size_t>(j)] = 0.0;
  d.x.resize(static_cast<size_t>(n * p));
  d.y.resize(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) {
    double fit = 0.5;
    for (long long j = 0; j < p; ++j) {
      d.x[static_cast<size_t>(i * p + j)] = normal(rng);
      fit += d.x[static_cast<size_t>(i * p + j)] * beta[static_cast<size_t>(j)];
    }
    d.y[static_cast<size_t>(i)] = fit + noise * normal(rng);
  }
  return d;
}

// Rows [row0, row0 + rows) of the data, as data of their own (weights included when present).
inline Data rows_of(const Data& d, long long row0, long long rows) {
  Data part;
  part.n = rows;
  part.p = d.p;
  part.x = std::vector<double>(d.x.begin() + row0 * d.p, d.x.begin() + (row0 + rows) * d.p);
  part.y = std::vector<double>(d.y.begin() + row0, d.y.begin() + row0 + rows);
  if (!d.w.empty()) part.w = std::vector<double>(d.w.begin() + row0, d.w.begin() + row0 + rows);
  return part;
}

// A dtype-typed copy of (part of) the data that stays alive while a Batch points into it.
struct TypedBatch {
  std::vector<float> xf, yf, wf;
  std::vector<double> xd, yd, wd;
  Batch batch;
};

inline TypedBatch make_batch(const Data& d, Dtype dtype, long long row0 = 0, long long rows = -1) {
  if (rows < 0) rows = d.n - row0;
  TypedBatch t;
  const auto xb = d.x.begin() + row0 * d.p, xe = xb + rows * d.p;
  const auto yb = d.y.begin() + row0, ye = yb + rows;
  if (dtype == Dtype::f64) {
    t.xd = decltype(t.xd)(xb, xe);
    t.yd = decltype(t.yd)(yb, ye);
    if (!d.w.empty()) t.wd = decltype(t.wd)(d.w.begin() + row0, d.w.begin() + row0 + rows);
    t.batch = host_batch(t.xd.data(), t.yd.data(), rows, d.p, t.wd.empty() ? nullptr : t.wd.data());
  } else {
    t.xf = decltype(t.xf)(xb, xe);
    t.yf = decltype(t.yf)(yb, ye);
    if (!d.w.empty()) t.wf = decltype(t.wf)(d.w.begin() + row0, d.w.begin() + row0 + rows);
    t.batch = host_batch(t.xf.data(), t.yf.data(), rows, d.p, t.wf.empty() ? nullptr : t.wf.data());
  }
  return t;
}

// The typed arrays of a TypedBatch for the scalar S: {x, y, w}.
template <class S>
std::tuple<const std::vector<S>&, const std::vector<S>&, const std::vector<S>&> arrays_of(const TypedBatch& t) {
  if constexpr (std::is_same_v<S, double>) return {t.xd, t.yd, t.wd};
  else return {t.xf, t.yf, t.wf};
}

inline const Diagnostics& partial_fit(Regressor& m, const Data& d, long long row0 = 0, long long rows = -1) {
  const TypedBatch t = make_batch(d, m.dtype(), row0, rows);
  return m.partial_fit(t.batch);
}

// Least squares through the normal equations with partial-pivot elimination (an independent oracle).
inline std::vector<double> ols(const Data& d, bool intercept) {
  const long long q = d.p + (intercept ? 1 : 0);
  std::vector<double> a(static_cast<size_t>(q * (q + 1)), 0.0);  // augmented [XᵀX | Xᵀy]
  for (long long i = 0; i < d.n; ++i) {
    std::vector<double> row(static_cast<size_t>(q), 1.0);
    for (long long j = 0; j < d.p; ++j) row[static_cast<size_t>(j)] = d.x[static_cast<size_t>(i * d.p + j)];
    for (long long j = 0; j < q; ++j) {
      for (long long k = 0; k < q; ++k) a[static_cast<size_t>(j * (q + 1) + k)] += row[j] * row[k];
      a[static_cast<size_t>(j * (q + 1) + q)] += row[j] * d.y[static_cast<size_t>(i)];
    }
  }
  for (long long k = 0; k < q; ++k) {
    long long piv = k;
    for (long long i = k + 1; i < q; ++i)
      if (std::fabs(a[i * (q + 1) + k]) > std::fabs(a[piv * (q + 1) + k])) piv = i;
    for (long long j = 0; j <= q; ++j) std::swap(a[k * (q + 1) + j], a[piv * (q + 1) + j]);
    for (long long i = k + 1; i < q; ++i) {
      const double l = a[i * (q + 1) + k] / a[k * (q + 1) + k];
      for (long long j = k; j <= q; ++j) a[i * (q + 1) + j] -= l * a[k * (q + 1) + j];
    }
  }
  std::vector<double> beta(static_cast<size_t>(q));
  for (long long k = q - 1; k >= 0; --k) {
    double s = a[k * (q + 1) + q];
    for (long long j = k + 1; j < q; ++j) s -= a[k * (q + 1) + j] * beta[j];
    beta[k] = s / a[k * (q + 1) + k];
  }
  return beta;
}

inline double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]) / (1.0 + std::fabs(b[i])));
  return worst;
}

}  // namespace rh::test

// doctest names each template instance "<space>/<dtype>".
#define RH_TARGET_NAMES(name, TRAITS, ARG)                                     \
  TYPE_TO_STRING_AS(#name "/f64", ::rh::test::Target<TRAITS, double>); \
  TYPE_TO_STRING_AS(#name "/f32", ::rh::test::Target<TRAITS, float>);
RH_FOR_EACH_COMPILED_SPACE(RH_TARGET_NAMES, unused)
#undef RH_TARGET_NAMES
