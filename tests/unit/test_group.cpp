// rh::RegressorGroup: each model equals a single-model rh::Regressor fit of the same rows on the same space, ragged
// and empty batches, per-model errors, and the errors of the group as a whole.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/float32_path.hpp"
#include "golden_floors.h"  // the float64 floor of a space that sums in another order
#include "rh/detail/group/engine.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/penalties.hpp"
#include "rh/group.hpp"
#include "support.hpp"

namespace rh::test {
namespace {

// The floors of docs/support-matrix.md ("Golden replay per space"; tools/golden_floors.h), rtol / atol. On a host
// space a group model is solved by the single-model engine itself (rh/detail/group/engine.hpp, update_on_host): its
// β and J are the bits of a Regressor fed its rows, for every penalty and dtype (host_bitwise). A device's team
// kernel (rh/detail/group/solve.hpp) sums each model's rows as the engine does (the same chunks,
// rh/detail/row_chunks.hpp) but its Newton line search evaluates each step directly and forms residuals and the Gram
// afresh, where the engine prices the steps from one pass and updates both by the accepted step, and its team
// reductions sum in another order: penalty none there takes the float64 floor of a space that sums in another order
// (CUDA's, 1e-8 / 2e-9; at tol 1e-6 the line search's last accept/reject can be decided by rounding, docs/method.md
// section 5, "How far this rule determines beta"), float32 the float32 cases' 3e-4 / 3e-5. See docs/api.md, "Model
// groups".
template <class T>
bool close(double a, double b) {
  const double rtol = T::dtype == Dtype::f64 ? RH_GOLDEN_CUDA_F64_FLOOR_RTOL : 3e-4;
  const double atol = T::dtype == Dtype::f64 ? RH_GOLDEN_CUDA_F64_FLOOR_ATOL : 3e-5;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// A group model's β and J against its single-model fit, each within close<T> (J relative to its largest entry:
// entries near 0 sum to rounding); worst_beta and worst_info keep the largest differences seen.
template <class T>
void check_close_state(const State& a, const State& e, double& worst_beta, double& worst_info) {
  REQUIRE(a.coefficients.size() == e.coefficients.size());
  REQUIRE(a.information.size() == e.information.size());
  double jmax = 0.0;
  for (double v : e.information) jmax = std::max(jmax, std::fabs(v));
  if (jmax == 0.0) jmax = 1.0;  // a model without rows yet: J = 0
  for (size_t j = 0; j < a.coefficients.size(); ++j) {
    CHECK_MESSAGE(close<T>(a.coefficients[j], e.coefficients[j]), "coefficient ", j, ": ", a.coefficients[j], " vs ",
                  e.coefficients[j]);
    worst_beta = std::max(worst_beta, std::fabs(a.coefficients[j] - e.coefficients[j]));
  }
  for (size_t j = 0; j < a.information.size(); ++j) {
    CHECK(close<T>(a.information[j] / jmax, e.information[j] / jmax));
    worst_info = std::max(worst_info, std::fabs(a.information[j] - e.information[j]) / jmax);
  }
}

// A float32 group model a against its float32 single-model fit e and the float64 fit w of the same values. Where a
// sits within the floors of e (close<T>, β and J) it took e's path: true. Else (seen on a device only, where the
// group's team kernel sums in another order than the engine) the last steps' acceptance was rounding's choice, as in
// the float32 LAMM and in ill-conditioned models (40 rows for q = 21, whose float32 fit is 2.4 from the float64 one on
// every space): then a must be near w (tests/common/float32_path.hpp: no further than the larger of twice e's distance
// and the floors); worst_ratio keeps the largest |a − w| / |e − w| seen there.
bool float32_same_path(const State& a, const State& e, const State& w, double& worst_ratio) {
  const double rtol = 3e-4, atol = 3e-5;
  double jmax = 0.0;
  for (double v : e.information) jmax = std::max(jmax, std::fabs(v));
  if (jmax == 0.0) jmax = 1.0;
  const Float32Path beta = float32_path(a.coefficients, e.coefficients, w.coefficients, 1.0, rtol, atol);
  const Float32Path info = float32_path(a.information, e.information, w.information, jmax, rtol, atol);
  if (beta.same && info.same) return true;
  for (const Float32Path* r : {&beta, &info}) {
    CHECK_MESSAGE(r->near_w, "group ", r->to_w, " and single model ", r->e_to_w, " from the float64 fit");
    if (r->e_to_w > 0) worst_ratio = std::max(worst_ratio, r->to_w / r->e_to_w);
  }
  return false;
}

// host_bitwise: on a host space every β and J has the engine's bits (the same engine, the same compiled code).
template <class T>
void check_host_bitwise(double worst_beta, double worst_info) {
  if (T::Traits::host) {
    CHECK(worst_beta == 0.0);
    CHECK(worst_info == 0.0);
  }
}

// The models' data: model m has its own coefficients and, every 7th row, a gross outlier (the Huber loss matters).
std::vector<Data> model_data(long long models, long long rows, long long p) {
  std::vector<Data> out;
  for (long long m = 0; m < models; ++m) {
    Data d = linear_data(rows, p, 1000 + static_cast<unsigned>(m), 0.3);
    for (long long i = 0; i < rows; i += 7) d.y[static_cast<size_t>(i)] += 25.0 * (i % 2 ? 1 : -1);
    out.push_back(d);
  }
  return out;
}

// One group batch of the scalar S: model m's rows [start[m], start[m] + count[m]) of its data, stacked.
template <class S>
struct Stacked {
  std::vector<S> x, y, w;
  std::vector<std::int64_t> offsets{0};
  GroupBatch batch(long long p) const {
    GroupBatch b = group_batch(x.data(), y.data(), offsets.data(), static_cast<std::int64_t>(offsets.size()) - 1, p,
                               w.empty() ? nullptr : w.data());
    return b;
  }
};
template <class S>
Stacked<S> stack(const std::vector<Data>& data, const std::vector<long long>& start, const std::vector<long long>& count,
                 bool weights, double unit = 1.0) {  // weights unit·1, unit·2, unit·3
  Stacked<S> s;
  for (size_t m = 0; m < data.size(); ++m) {
    const Data& d = data[m];
    for (long long i = start[m]; i < start[m] + count[m]; ++i) {
      for (long long j = 0; j < d.p; ++j) s.x.push_back(static_cast<S>(d.x[static_cast<size_t>(i * d.p + j)]));
      s.y.push_back(static_cast<S>(d.y[static_cast<size_t>(i)]));
      if (weights) s.w.push_back(static_cast<S>(unit * static_cast<double>(1 + (i + static_cast<long long>(m)) % 3)));
    }
    s.offsets.push_back(static_cast<std::int64_t>(s.y.size()));
  }
  return s;
}

// The three batches of the stream: ragged row counts, and models without rows in some batches.
struct Stream {
  std::vector<std::vector<long long>> start, count;
};
Stream ragged_stream(long long models) {
  Stream st;
  std::vector<long long> next(static_cast<size_t>(models), 0);
  for (int b = 0; b < 3; ++b) {
    std::vector<long long> start, count;
    for (long long m = 0; m < models; ++m) {
      const long long c = (m + b) % 4 == 3 ? 0 : 20 + 13 * ((m * 5 + b * 3) % 7);  // 0 or 20..98 rows
      start.push_back(next[static_cast<size_t>(m)]);
      count.push_back(c);
      next[static_cast<size_t>(m)] += c;
    }
    st.start.push_back(start);
    st.count.push_back(count);
  }
  return st;
}

// The default tol (1e-6): well above float64's √ε, where the last accepted steps lower F_b by far more than its
// rounding, so two correct implementations take the same steps (docs/method.md §5, "How far this rule determines
// β"). In float32 √ε ≈ 3e-4 is above it: which of the last tiny steps are accepted is rounding's choice there.
Config group_config() {
  Config c;
  c.tau = 1.0;
  return c;
}

}  // namespace

// FNV-1a over the bits of each value, in order: a digest that changes with any bit of the results.
inline void add_to_digest(std::uint64_t& digest, const std::vector<double>& values) {
  for (double x : values) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    for (int k = 0; k < 8; ++k) digest = (digest ^ ((bits >> (8 * k)) & 0xff)) * 1099511628211ULL;
  }
}

TEST_CASE_TEMPLATE_DEFINE("group models equal single-model fits of the same rows", T, group_1) {
  using S = typename T::S;
  const long long models = 6, p = 4;
  const auto data = model_data(models, 400, p);
  const Stream st = ragged_stream(models);
  for (const bool weights : {false, true})
  for (int code = 0; penalty_known(static_cast<Penalty>(code)); ++code) {  // every penalty of the library
    const Penalty penalty = static_cast<Penalty>(code);
    CAPTURE(weights);
    CAPTURE(std::string(penalty_name(penalty)));
    Config config = group_config();
    config.penalty = penalty;
    RegressorGroup group(T::space, T::dtype, config, models, p);
    std::vector<Regressor> single;
    for (long long m = 0; m < models; ++m) single.emplace_back(T::space, T::dtype, config);
    double worst_beta = 0.0, worst_info = 0.0;
    for (size_t b = 0; b < st.start.size(); ++b) {
      // Weights 0.1, 0.2, 0.3: W_b's rounding depends on the order of its sum (a host group sums it as the engine).
      const auto stacked = stack<S>(data, st.start[b], st.count[b], weights, 0.1);
      std::vector<State> before;
      for (long long m = 0; m < models; ++m) before.push_back(group.state(m));
      long long with_rows = 0;
      for (long long m = 0; m < models; ++m) with_rows += st.count[b][static_cast<size_t>(m)] > 0;
      CHECK(group.partial_fit(stacked.batch(p)) == with_rows);
      for (long long m = 0; m < models; ++m) {
        CAPTURE(b);
        CAPTURE(m);
        const auto mi = static_cast<size_t>(m);
        CHECK(!group.status(m));
        if (st.count[b][mi] == 0) {  // no rows: untouched
          CHECK(same_state(group.state(m), before[mi]));
          continue;
        }
        const auto r0 = stacked.offsets[mi], r1 = stacked.offsets[mi + 1];
        const Batch one = host_batch(stacked.x.data() + r0 * p, stacked.y.data() + r0, r1 - r0, p,
                                     weights ? stacked.w.data() + r0 : nullptr);
        const Diagnostics& d1 = single[mi].partial_fit(one);
        const Diagnostics& dg = group.diagnostics(m);
        CHECK(dg.converged == d1.converged);
        if (T::dtype == Dtype::f64) CHECK(dg.iterations == d1.iterations);
        CHECK(dg.lambda_value == d1.lambda_value);
        CHECK(close<T>(dg.objective, d1.objective));
        CHECK(dg.bandwidth == d1.bandwidth);
        const State a = group.state(m), e = single[mi].state();
        CHECK(a.n_samples_seen == e.n_samples_seen);
        CHECK(a.batch_count == e.batch_count);
        CHECK(a.n_features == e.n_features);
        CHECK(a.weight_sum == e.weight_sum);  // W_b by the single model's chunks and reductions, on every space
        check_close_state<T>(a, e, worst_beta, worst_info);
      }
    }
    MESSAGE(T::name(), " ", std::string(penalty_name(penalty)), " weights=", weights, ": worst |Δβ| ", worst_beta, ", worst |ΔJ|/max|J| ", worst_info);
    check_host_bitwise<T>(worst_beta, worst_info);
    // predict: each row by its own model's coefficients, as that model's single fit predicts it.
    const auto rows = stack<S>(data, st.start[0], std::vector<long long>(models, 5), false);
    std::vector<S> out(rows.y.size());
    group.predict(rows.batch(p), out.data(), T::dtype);
    for (long long m = 0; m < models; ++m) {
      const auto r0 = rows.offsets[static_cast<size_t>(m)];
      const auto e = single[static_cast<size_t>(m)].predict(rows.x.data() + r0 * p, 5, p);
      for (long long i = 0; i < 5; ++i) CHECK(close<T>(out[static_cast<size_t>(r0 + i)], e[static_cast<size_t>(i)]));
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(group_1, Targets);

TEST_CASE_TEMPLATE_DEFINE("one model's bad rows mark only that model, which stays as it was", T, group_2) {
  using S = typename T::S;
  const long long models = 4, p = 3;
  const auto data = model_data(models, 200, p);
  const std::vector<long long> start0(models, 0), start1(models, 60), count(models, 60);
  for (int kind = 0; kind < 4; ++kind) {  // NaN in X, Inf in y, a negative weight, all weights zero
    CAPTURE(kind);
    RegressorGroup clean(T::space, T::dtype, group_config(), models, p);
    RegressorGroup group(T::space, T::dtype, group_config(), models, p);
    const auto first = stack<S>(data, start0, count, true);
    clean.partial_fit(first.batch(p));
    group.partial_fit(first.batch(p));
    auto second = stack<S>(data, start1, count, true);
    clean.partial_fit(second.batch(p));
    const long long bad = 2, r0 = second.offsets[bad];
    const State before = group.state(bad);
    const Diagnostics diag_before = group.diagnostics(bad);
    if (kind == 0) second.x[static_cast<size_t>((r0 + 5) * p + 1)] = std::numeric_limits<S>::quiet_NaN();
    if (kind == 1) second.y[static_cast<size_t>(r0 + 7)] = std::numeric_limits<S>::infinity();
    if (kind == 2) second.w[static_cast<size_t>(r0 + 3)] = S(-1);
    if (kind == 3) std::fill(second.w.begin() + r0, second.w.begin() + second.offsets[bad + 1], S(0));
    CHECK(group.partial_fit(second.batch(p)) == models - 1);
    for (long long m = 0; m < models; ++m) {
      CAPTURE(m);
      if (m == bad) {
        REQUIRE(group.status(m));
        CHECK(*group.status(m) == Errc::invalid_argument);
        CHECK(group.status_message(m).find("model 2") != std::string::npos);
        CHECK(same_state(group.state(m), before));
        CHECK(group.diagnostics(m).iterations == diag_before.iterations);
      } else {  // the others committed exactly what they commit without the bad model's rows
        CHECK(!group.status(m));
        CHECK(same_state(group.state(m), clean.state(m)));
      }
    }
    // The next good batch for the model clears its status and updates it.
    const auto third = stack<S>(data, std::vector<long long>(models, 120), count, true);
    group.partial_fit(third.batch(p));
    CHECK(!group.status(bad));
    CHECK(group.state(bad).batch_count == 2);
  }
}
TEST_CASE_TEMPLATE_APPLY(group_2, Targets);

TEST_CASE_TEMPLATE_DEFINE("bad groups and bad group batches are refused and change nothing", T, group_3) {
  using S = typename T::S;
  const long long models = 3, p = 2;
  const auto code = [](auto&& f) -> std::optional<Errc> {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return std::nullopt;
  };
  Config c = group_config();
  CHECK(code([&] { RegressorGroup(T::space, T::dtype, c, 0, p); }) == Errc::invalid_argument);
  CHECK(code([&] { RegressorGroup(T::space, T::dtype, c, models, 0); }) == Errc::invalid_argument);
  CHECK(code([&] { RegressorGroup(T::space, T::dtype, c, models, p, -1); }) == Errc::invalid_argument);  // device id
  CHECK(code([&] { RegressorGroup(T::space, T::dtype, c, models, group_max_coefficients); }) == Errc::invalid_argument);
  CHECK(!code([&] { RegressorGroup(T::space, T::dtype, c, models, group_max_coefficients - 1); }));
  Config l1 = c;
  l1.penalty = Penalty::l1;
  CHECK(!code([&] { RegressorGroup(T::space, T::dtype, l1, models, p); }));  // every dtype
  Config inference = c;
  inference.inference = true;
  CHECK(code([&] { RegressorGroup(T::space, T::dtype, inference, models, p); }) == Errc::unavailable);
  Config bad_tau = c;
  bad_tau.tau = -1.0;
  CHECK(code([&] { RegressorGroup(T::space, T::dtype, bad_tau, models, p); }) == Errc::invalid_argument);

  RegressorGroup group(T::space, T::dtype, c, models, p);
  CHECK(code([&] { group.diagnostics(0); }) == Errc::invalid_state);
  CHECK(code([&] { group.state(models); }) == Errc::invalid_argument);
  CHECK(code([&] { group.status(-1); }) == Errc::invalid_argument);
  const auto data = model_data(models, 50, p);
  const auto good = stack<S>(data, std::vector<long long>(models, 0), {10, 0, 12}, false);
  std::vector<S> out(good.y.size());
  CHECK(code([&] { group.predict(good.batch(p), out.data(), T::dtype); }) == Errc::invalid_state);  // not fitted
  group.partial_fit(good.batch(p));
  std::vector<State> before;
  for (long long m = 0; m < models; ++m) before.push_back(group.state(m));
  auto refused = [&](auto&& edit) {
    auto s = good;
    GroupBatch b = s.batch(p);
    edit(s, b);
    return code([&] { group.partial_fit(b); });
  };
  CHECK(refused([&](auto&, GroupBatch& b) { b.x.cols = p + 1; }) == Errc::invalid_argument);
  CHECK(refused([&](auto& s, GroupBatch&) { s.offsets[0] = 1; }) == Errc::invalid_argument);
  CHECK(refused([&](auto& s, GroupBatch&) { s.offsets[1] = s.offsets[2] + 1; }) == Errc::invalid_argument);
  CHECK(refused([&](auto& s, GroupBatch&) { s.offsets[models] -= 1; }) == Errc::invalid_argument);
  CHECK(refused([&](auto&, GroupBatch& b) { b.offsets = nullptr; }) == Errc::invalid_argument);
  CHECK(refused([&](auto&, GroupBatch& b) { b.y = nullptr; }) == Errc::invalid_argument);
  CHECK(refused([&](auto&, GroupBatch& b) { b.memory = Memory::device; }) == Errc::invalid_argument);
  CHECK(refused([&](auto&, GroupBatch& b) {
          b.dtype = T::dtype == Dtype::f64 ? Dtype::f32 : Dtype::f64;
        }) == Errc::invalid_argument);
  const auto every = stack<S>(data, std::vector<long long>(models, 20), std::vector<long long>(models, 2), false);
  std::vector<S> out_every(every.y.size());
  CHECK(code([&] { group.predict(every.batch(p), out_every.data(), T::dtype); }) == Errc::invalid_state);  // model 1
  CHECK(code([&] { group.predict(good.batch(p), out.data(), T::dtype); }) == std::nullopt);  // it has no rows there
  for (long long m = 0; m < models; ++m) CHECK(same_state(group.state(m), before[static_cast<size_t>(m)]));
  RegressorGroup moved = std::move(group);
  CHECK(code([&] { group.state(0); }) == Errc::invalid_state);
  CHECK(same_state(moved.state(0), before[0]));
}
TEST_CASE_TEMPLATE_APPLY(group_3, Targets);

// Larger, column-major and padded batches: models of up to 700 rows (more than a device team holds in scratch at
// once, so its sums go tile after tile), q up to 21, with and without the intercept; each model still equals its
// single-model fit. The MESSAGE prints a hash of every model's β and J after the stream: a check that a change to how
// the group sums left its bits alone (compare the lines before and after it), not an expected value.
TEST_CASE_TEMPLATE_DEFINE("group models over large, column-major and padded batches equal single-model fits", T,
                          group_4) {
  using S = typename T::S;
  const long long models = 5;
  // p = 32 with the intercept: q = 33, the few-large shape's, whose row sums take 4×4 register blocks on a device.
  for (const auto& shape :
       {std::pair<long long, bool>{3, true}, {3, false}, {20, true}, {20, false}, {32, true}})
  for (int code = 0; penalty_known(static_cast<Penalty>(code)); ++code) {  // every penalty of the library
    const long long p = shape.first;  // not a structured binding: lambdas below capture it (C++17)
    const bool intercept = shape.second;
    const Penalty penalty = static_cast<Penalty>(code);
    // On a device, not penalty none with p = 20 and no intercept (the data have an intercept of 0.5: a misspecified
    // fit, whose last Newton steps are long, about 5e-8, and change F_b by its rounding, 1e-15): there the last
    // step's acceptance is decided by rounding, and the team kernel's iterates differ from the engine's by 1e-16
    // before it, because the engine carries each row's residual as r + t·u from its line-search pass and updates its
    // Gram by the rows whose curvature changed (kernels/accept_step.hpp), where the kernel forms y − x·β and the whole
    // Gram again each iteration: β differed by up to 4.3e-9 and J by 1.4e-8 of its largest entry (float32: 5.8e-5,
    // 1.4e-4; the kernel's path run on Serial), past the floors, though within the stopping rule's own accuracy (tol
    // 1e-6). docs/api.md, "Model groups". A host space solves it with the engine: bitwise.
    if (penalty == Penalty::none && p == 20 && !intercept && !T::Traits::host) continue;
    CAPTURE(p);
    CAPTURE(intercept);
    CAPTURE(std::string(penalty_name(penalty)));
    const auto data = model_data(models, 1600, p);
    Config config = group_config();
    config.penalty = penalty;
    config.fit_intercept = intercept;
    RegressorGroup group(T::space, T::dtype, config, models, p);
    std::vector<Regressor> single, wide;  // wide: float64 fits of the float32 values (float32 only)
    for (long long m = 0; m < models; ++m) {
      single.emplace_back(T::space, T::dtype, config);
      if (T::dtype == Dtype::f32) wide.emplace_back(T::space, Dtype::f64, config);
    }
    std::vector<long long> next(static_cast<size_t>(models), 0);
    std::uint64_t digest = 1469598103934665603ULL;  // FNV-1a over the bits of every model's β and J
    double worst_beta = 0.0, worst_info = 0.0, worst_ratio = 0.0;
    int other_paths = 0;
    for (int b = 0; b < 3; ++b) {
      CAPTURE(b);
      std::vector<long long> count;
      for (long long m = 0; m < models; ++m) count.push_back((m + b) % 5 == 4 ? 0 : 40 + 220 * ((m * 3 + b) % 4));
      const bool weights = b == 1;
      const auto stacked = stack<S>(data, next, count, weights);
      // Batch 0 row-major, batches 1 and 2 column-major with a leading dimension past the rows.
      const long long n = static_cast<long long>(stacked.y.size()), ld = n + 3 * b;
      std::vector<S> cols(static_cast<size_t>(ld * p), S(-7));
      for (long long i = 0; i < n; ++i)
        for (long long j = 0; j < p; ++j)
          cols[static_cast<size_t>(j * ld + i)] = stacked.x[static_cast<size_t>(i * p + j)];
      GroupBatch batch = stacked.batch(p);
      if (b > 0) batch.x = MatrixRef{cols.data(), n, p, ld, Layout::col_major};
      long long with_rows = 0;
      for (long long c : count) with_rows += c > 0;
      CHECK(group.partial_fit(batch) == with_rows);
      for (long long m = 0; m < models; ++m) {
        CAPTURE(m);
        const auto mi = static_cast<size_t>(m);
        CHECK(!group.status(m));
        if (count[mi] == 0) continue;
        const auto r0 = stacked.offsets[mi], r1 = stacked.offsets[mi + 1];
        const Batch one = host_batch(stacked.x.data() + r0 * p, stacked.y.data() + r0, r1 - r0, p,
                                     weights ? stacked.w.data() + r0 : nullptr);
        const Diagnostics& d1 = single[mi].partial_fit(one);
        const State a = group.state(m), e = single[mi].state();
        bool same_path = true;
        if constexpr (T::dtype == Dtype::f32) {
          const std::vector<double> x64(stacked.x.begin() + r0 * p, stacked.x.begin() + r1 * p),
              y64(stacked.y.begin() + r0, stacked.y.begin() + r1),
              w64 = weights ? std::vector<double>(stacked.w.begin() + r0, stacked.w.begin() + r1) : std::vector<double>{};
          wide[mi].partial_fit(host_batch(x64.data(), y64.data(), r1 - r0, p, weights ? w64.data() : nullptr));
          same_path = float32_same_path(a, e, wide[mi].state(), worst_ratio);
          other_paths += !same_path;
        } else {
          check_close_state<T>(a, e, worst_beta, worst_info);
        }
        if (same_path) {  // else convergence, too, was rounding's choice
          CHECK(group.diagnostics(m).converged == d1.converged);
          CHECK(close<T>(group.diagnostics(m).objective, d1.objective));
          if constexpr (T::dtype == Dtype::f32) check_close_state<T>(a, e, worst_beta, worst_info);
        }
      }
      for (long long m = 0; m < models; ++m) next[static_cast<size_t>(m)] += count[static_cast<size_t>(m)];
    }
    for (long long m = 0; m < models; ++m) {
      const State st = group.state(m);
      add_to_digest(digest, st.coefficients);
      add_to_digest(digest, st.information);
    }
    MESSAGE("group digest ", T::name(), " p=", p, " intercept=", intercept, " ", std::string(penalty_name(penalty)),
            ": ", digest, "; worst |Δβ| ", worst_beta, ", worst |ΔJ|/max|J| ", worst_info, "; float32 models on other paths ",
            other_paths, ", worst distance from the float64 fit against the single model's ", worst_ratio);
    check_host_bitwise<T>(worst_beta, worst_info);
    if (T::Traits::host) CHECK(other_paths == 0);
  }
}
TEST_CASE_TEMPLATE_APPLY(group_4, Targets);

// Only on spaces with their own memory (DeviceTargets is empty without one): the rows of a group batch already in
// the device's memory (column-major, padded, with weights) give the bits of the same batch from host memory, and
// predictions from device rows equal those from host rows; a pointer of the wrong kind is refused, changing nothing.
TEST_CASE_TEMPLATE_DEFINE("a group batch in device memory gives the bits of the same batch in host memory", T,
                          group_5) {
  using S = typename T::S;
  using DeviceMemory = typename T::Traits::execution_space::memory_space;
  const auto to_device = [](const std::vector<S>& v) {
    Kokkos::View<S*, DeviceMemory> d("test_group_device_array", v.size());
    Kokkos::deep_copy(d, Kokkos::View<const S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
    return d;
  };
  const long long models = 7, p = 5;
  const auto data = model_data(models, 1900, p);  // up to 610 rows a batch: several scratch tiles on a device
  RegressorGroup from_host(T::space, T::dtype, group_config(), models, p);
  RegressorGroup from_device(T::space, T::dtype, group_config(), models, p);
  std::vector<long long> next(static_cast<size_t>(models), 0);
  for (int b = 0; b < 3; ++b) {
    CAPTURE(b);
    std::vector<long long> count;
    for (long long m = 0; m < models; ++m) count.push_back((m + b) % 4 == 3 ? 0 : 30 + 290 * ((m + 2 * b) % 3));
    const auto stacked = stack<S>(data, next, count, true);
    const long long n = static_cast<long long>(stacked.y.size()), ld = n + 5;
    std::vector<S> cols(static_cast<size_t>(ld * p), S(0));
    for (long long i = 0; i < n; ++i)
      for (long long j = 0; j < p; ++j) cols[static_cast<size_t>(j * ld + i)] = stacked.x[static_cast<size_t>(i * p + j)];
    GroupBatch host = stacked.batch(p);
    host.x = MatrixRef{cols.data(), n, p, ld, Layout::col_major};
    const auto dx = to_device(cols), dy = to_device(stacked.y), dw = to_device(stacked.w);
    GroupBatch device = host;
    device.x.data = dx.data();
    device.y = dy.data();
    device.weights = dw.data();
    device.memory = Memory::device;
    CHECK(from_host.partial_fit(host) == from_device.partial_fit(device));
    for (long long m = 0; m < models; ++m) {
      CAPTURE(m);
      CHECK(!from_device.status(m));
      CHECK(same_state(from_host.state(m), from_device.state(m)));
    }
    if (b == 2) {
      std::vector<S> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
      from_host.predict(host, want.data(), T::dtype);
      from_device.predict(device, got.data(), T::dtype);
      CHECK(want == got);
      // The memory kind is checked, never guessed: host rows claimed as device memory, and the reverse.
      std::vector<State> before;
      for (long long m = 0; m < models; ++m) before.push_back(from_device.state(m));
      GroupBatch lie = host;
      lie.memory = Memory::device;
      CHECK_THROWS_AS(from_device.partial_fit(lie), Error);
      GroupBatch reverse = device;
      reverse.memory = Memory::host;
      CHECK_THROWS_AS(from_device.partial_fit(reverse), Error);
      for (long long m = 0; m < models; ++m) CHECK(same_state(from_device.state(m), before[static_cast<size_t>(m)]));
    }
    for (long long m = 0; m < models; ++m) next[static_cast<size_t>(m)] += count[static_cast<size_t>(m)];
  }
}
TEST_CASE_TEMPLATE_APPLY(group_5, DeviceTargets);

// The group kernel's device path (every pass over scratch tiles, the row sums in register blocks of edge 1, 2 and 4
// as q picks them (q = 3, 4, 21, 32 with one thread a team), the team Cholesky, host rows through the pooled
// staging), run on a host space one thread a team, against the host path (the single-model engine per model,
// update_on_host), over tiles of several rows and ragged, column-major batches: the same row checks; with penalty
// l1 the same bits in every outcome, β and J (the kernel's LAMM makes the engine's decisions from the engine's sums
// in the engine's order); with penalty none the same status and convergence, β, J and F_b within the floors of
// close<T> (its Newton line search evaluates each step directly: see close<T>). The MESSAGE prints the worst
// difference. A device runs that path with a team of threads; there, test cases above compare it with single models.
template <class Base>
struct DevicePathOf : Base {
  static constexpr bool host = false;
};
TEST_CASE_TEMPLATE_DEFINE("the group's device path gives its host path's bits on a host space", T, group_6) {
  using S = typename T::S;
  using HostPath = detail::GroupEngine<typename T::Traits, S>;
  using DevicePath = detail::GroupEngine<DevicePathOf<typename T::Traits>, S>;
  using Kernel = detail::GroupNewton<DevicePathOf<typename T::Traits>, S>;
  // The register blocks the cases below take with one thread a team: every edge.
  CHECK(Kernel::gram_block(3, 1) == 1);
  CHECK(Kernel::gram_block(4, 1) == 2);
  CHECK(Kernel::gram_block(21, 1) == 4);
  CHECK(Kernel::gram_block(32, 1) == 4);
  const long long models = 5;
  for (const auto& shape :
       {std::pair<long long, bool>{2, true}, {3, true}, {4, false}, {20, true}, {31, true}})
  for (int code = 0; penalty_known(static_cast<Penalty>(code)); ++code) {  // every penalty of the library
    const long long p = shape.first;  // not a structured binding: lambdas below capture it (C++17)
    const bool intercept = shape.second;
    Config config = group_config();
    config.penalty = static_cast<Penalty>(code);
    config.fit_intercept = intercept;
    CAPTURE(p);
    CAPTURE(intercept);
    CAPTURE(code);
    const auto data = model_data(models, 1600, p);
    double worst_beta = 0.0, worst_info = 0.0;
    std::uint64_t digest = 1469598103934665603ULL;  // the device path's β, J and F_b after every batch
    HostPath host(T::Traits::instance(0), 0, models, p, intercept);
    DevicePath device(T::Traits::instance(0), 0, models, p, intercept);
    std::vector<long long> next(static_cast<size_t>(models), 0);
    std::vector<double> weight(static_cast<size_t>(models), 0.0), last_lambda(static_cast<size_t>(models), 0.0);
    for (int b = 0; b < 3; ++b) {
      CAPTURE(b);
      std::vector<long long> count;
      for (long long m = 0; m < models; ++m) count.push_back((m + b) % 5 == 4 ? 0 : 40 + 220 * ((m * 3 + b) % 4));
      const auto stacked = stack<S>(data, next, count, b == 1);
      const long long n = static_cast<long long>(stacked.y.size()), ld = n + 2;
      std::vector<S> cols(static_cast<size_t>(ld * p), S(0));
      for (long long i = 0; i < n; ++i)
        for (long long j = 0; j < p; ++j) cols[static_cast<size_t>(j * ld + i)] = stacked.x[static_cast<size_t>(i * p + j)];
      GroupBatch batch = stacked.batch(p);
      if (b == 2) batch.x = MatrixRef{cols.data(), n, p, ld, Layout::col_major};
      const auto ch = host.stage_and_check(batch), cd = device.stage_and_check(batch);
      std::vector<detail::GroupTask> tasks;
      for (long long m = 0; m < models; ++m) {
        const auto mi = static_cast<size_t>(m);
        REQUIRE(ch[mi].problem == cd[mi].problem);
        CHECK(ch[mi].weight == cd[mi].weight);
        if (count[mi] == 0) continue;
        detail::GroupTask t;
        t.model = m;
        t.r0 = stacked.offsets[mi];
        t.r1 = stacked.offsets[mi + 1];
        const double previous = weight[mi], cumulative = previous + ch[mi].weight;
        t.inv_n = 1.0 / cumulative;
        t.h = detail::bandwidth_for(config.bandwidth_scale, cumulative, p, config.tau);
        detail::with_penalty(config.penalty, [&](auto tag) {
          using P = typename decltype(tag)::type;
          t.lambda = P::lambda(config, cumulative, p);
          t.historical = P::historical(config, previous, cumulative, last_lambda[mi]);
        });
        weight[mi] = cumulative;
        last_lambda[mi] = t.lambda;
        tasks.push_back(t);
      }
      const auto oh = host.update(tasks, config), od = device.update(tasks, config);
      for (const auto& o : od) add_to_digest(digest, {o.objective, static_cast<double>(o.iterations)});
      const bool bitwise = config.penalty == Penalty::l1;
      for (size_t k = 0; k < tasks.size(); ++k) {
        CAPTURE(k);
        CHECK(oh[k].status == od[k].status);
        CHECK(oh[k].converged == od[k].converged);
        if (bitwise) {
          CHECK(oh[k].iterations == od[k].iterations);
          CHECK(std::memcmp(&oh[k].objective, &od[k].objective, sizeof(double)) == 0);
        } else {
          CHECK(close<T>(od[k].objective, oh[k].objective));
        }
      }
      for (long long m = 0; m < models; ++m) {
        CAPTURE(m);
        std::vector<double> bh, jh, bd, jd;
        host.export_arrays(m, bh, jh);
        device.export_arrays(m, bd, jd);
        add_to_digest(digest, bd);
        add_to_digest(digest, jd);
        if (bitwise) {
          CHECK(std::memcmp(bh.data(), bd.data(), bh.size() * sizeof(double)) == 0);
          CHECK(std::memcmp(jh.data(), jd.data(), jh.size() * sizeof(double)) == 0);
        } else {
          State a, e;
          a.coefficients = bd;
          a.information = jd;
          e.coefficients = bh;
          e.information = jh;
          check_close_state<T>(a, e, worst_beta, worst_info);
        }
      }
      for (long long m = 0; m < models; ++m) next[static_cast<size_t>(m)] += count[static_cast<size_t>(m)];
    }
    MESSAGE("device path on ", T::name(), " p=", p, " intercept=", intercept, " ", std::string(penalty_name(config.penalty)),
            ": digest ", digest, ", worst |Δβ| ", worst_beta, ", worst |ΔJ|/max|J| ", worst_info, " against the engine");
  }
}
TEST_CASE_TEMPLATE_APPLY(group_6, HostTargets);

// A model whose rows need more than the memory limit fails the whole call with allocation_failed, rethrown on the
// calling thread wherever it was met (update_on_host: models solved one after another, or spread over workers),
// before any model is written: every model keeps its state, diagnostics and status, and the group goes on with the
// same batch once the limit allows it, as a group that never met the limit. Host spaces: a device's team kernel
// allocates nothing per model.
TEST_CASE_TEMPLATE_DEFINE("a model beyond the memory limit fails the whole call, which changes nothing", T, group_7) {
  using S = typename T::S;
  const long long models = 5, p = 3, big = 40000, bad = 3;
  const auto data = model_data(models, big + 60, p);
  std::vector<long long> count(models, 60);
  const auto first = stack<S>(data, std::vector<long long>(models, 0), count, true);
  count[bad] = big;  // about 2 MB of row buffers in float32, 4 MB in float64; the others 60 rows
  const auto second = stack<S>(data, std::vector<long long>(models, 60), count, true);
  RegressorGroup group(T::space, T::dtype, group_config(), models, p);
  RegressorGroup clean(T::space, T::dtype, group_config(), models, p);
  REQUIRE(group.partial_fit(first.batch(p)) == models);
  clean.partial_fit(first.batch(p));
  std::vector<State> before;
  for (long long m = 0; m < models; ++m) before.push_back(group.state(m));
  struct LimitGuard {
    ~LimitGuard() { set_memory_limit(0); }  // the default again, also when a check below fails
  } guard;
  set_memory_limit(std::uint64_t{1} << 20);
  std::optional<Errc> code;
  try {
    group.partial_fit(second.batch(p));
  } catch (const Error& e) {
    code = e.code();
    MESSAGE(std::string(e.what()));
  }
  CHECK(code == std::optional<Errc>(Errc::allocation_failed));
  for (long long m = 0; m < models; ++m) {
    CAPTURE(m);
    CHECK(same_state(group.state(m), before[static_cast<size_t>(m)]));
    CHECK(!group.status(m));
    CHECK(group.diagnostics(m).iterations == clean.diagnostics(m).iterations);
  }
  set_memory_limit(0);
  CHECK(group.partial_fit(second.batch(p)) == models);
  CHECK(clean.partial_fit(second.batch(p)) == models);
  for (long long m = 0; m < models; ++m) {
    CAPTURE(m);
    CHECK(same_state(group.state(m), clean.state(m)));
  }
}
TEST_CASE_TEMPLATE_APPLY(group_7, HostTargets);

}  // namespace rh::test
