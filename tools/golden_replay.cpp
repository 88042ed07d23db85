#include "golden_replay.hpp"

#include "golden_floors.h"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace rh::golden {

using nlohmann::json;

Tolerance floor_for(Space space, Dtype dtype) {
  if (space == Space::cuda && dtype == Dtype::f64)
    return {RH_GOLDEN_CUDA_F64_FLOOR_RTOL, RH_GOLDEN_CUDA_F64_FLOOR_ATOL};
  return {0.0, 0.0};  // Serial and OpenMP meet every case's own tolerance (golden_floors.h)
}

Config config_from(const json& c) {
  Config cfg;
  cfg.tau = c.at("tau").get<double>();
  cfg.penalty = penalty_from_name(c.at("penalty").get<std::string>());  // unknown: an error, never another
  cfg.lambda_scale = c.at("lambda_scale").get<double>();
  cfg.bandwidth_scale = c.at("bandwidth_scale").get<double>();
  cfg.fit_intercept = c.at("fit_intercept").get<bool>();
  cfg.max_iter = c.at("max_iter").get<int>();
  cfg.tol = c.at("tol").get<double>();
  cfg.ridge = c.at("ridge").get<double>();
  return cfg;
}

namespace {

// Compares values, tracking the worst scaled error and the first failure.
struct Comparer {
  Tolerance tol;
  CaseResult& result;
  void value(double got, double want, const std::string& field) {
    const double budget = tol.atol + tol.rtol * std::fabs(want);
    const double scaled = !std::isfinite(got) ? INFINITY : got == want ? 0.0 : std::fabs(got - want) / budget;
    if (scaled > result.worst) {
      result.worst = scaled;
      result.worst_field = field;
    }
    if (!(scaled <= 1.0) && result.passed) {
      result.passed = false;
      result.failure = fmt::format("{}: got {:.17g}, want {:.17g} (|diff| {:.3g} > {:.3g})", field, got, want,
                                   std::fabs(got - want), budget);
    }
  }
  void exact(long long got, long long want, const std::string& field) {
    if (got != want && result.passed) {
      result.passed = false;
      result.failure = fmt::format("{}: got {}, want {}", field, got, want);
    }
  }
};

template <class S>
std::vector<S> flatten_rows(const json& rows, long long& n, long long& p) {
  n = static_cast<long long>(rows.size());
  p = n > 0 ? static_cast<long long>(rows.at(0).size()) : 0;
  std::vector<S> out;
  out.reserve(static_cast<size_t>(n * p));
  for (const auto& r : rows) {
    if (static_cast<long long>(r.size()) != p) throw std::runtime_error("ragged X in corpus");
    for (const auto& v : r) out.push_back(static_cast<S>(v.get<double>()));
  }
  return out;
}

template <class S>
std::vector<S> vector_of(const json& v) {
  std::vector<S> out;
  for (const auto& x : v) out.push_back(static_cast<S>(x.get<double>()));
  return out;
}

// K with the case rtol and the state's score_variance_atol (at least the case atol, or the floor's); the covariance
// within the state's covariance_atol, the bound that the tolerances of J and K imply (golden/README.md,
// "Inference"); a null covariance: J is singular (numerical_error).
void compare_inference(const Regressor& model, const State& st, const json& want, const std::string& at,
                       Comparer& cmp) {
  const size_t q = st.coefficients.size();
  const auto& k = want.at("score_variance");
  Comparer k_cmp{{cmp.tol.rtol, std::max(cmp.tol.atol, want.at("score_variance_atol").get<double>())}, cmp.result};
  for (size_t j = 0; j < q; ++j)
    for (size_t l = 0; l < q; ++l)
      k_cmp.value(st.score_variance[j * q + l], k.at(j).at(l).get<double>(),
                  fmt::format("{}score_variance[{}][{}]", at, j, l));
  cmp.exact(st.score_variance_batches, st.batch_count, at + "score_variance_batches");
  const auto& cov = want.at("covariance");
  if (cov.is_null()) {
    try {
      model.covariance();
      cmp.exact(1, 0, at + "covariance of a singular J (expected numerical_error)");
    } catch (const Error& e) {
      cmp.exact(static_cast<long long>(e.code()), static_cast<long long>(Errc::numerical_error), at + "covariance error");
    }
    return;
  }
  const auto& bound = want.at("covariance_atol");
  if (bound.is_null()) return;  // the case tolerance does not determine it (κ(J) too large)
  const std::vector<double> got = model.covariance();
  Comparer within{{0.0, bound.get<double>()}, cmp.result};
  for (size_t j = 0; j < q; ++j)
    for (size_t l = 0; l < q; ++l)
      within.value(got[j * q + l], cov.at(j).at(l).get<double>(), fmt::format("{}covariance[{}][{}]", at, j, l));
}

template <class S>
CaseResult replay_case(const json& c, Space space, Dtype dtype, bool use_floors) {
  CaseResult result;
  result.id = c.at("id").get<std::string>();
  result.space = space;
  result.dtype = dtype;
  const Tolerance fl = use_floors ? floor_for(space, dtype) : Tolerance{0.0, 0.0};
  Comparer cmp{{std::max(fl.rtol, c.at("rtol").get<double>()), std::max(fl.atol, c.at("atol").get<double>())},
               result};
  const auto& batches = c.at("batches");
  const auto& states = c.at("expected").at("states");
  // Cases with expected K (ours, penalty none) replay with inference on (docs/method.md §12).
  Config config = config_from(c.at("config"));
  config.inference = !states.empty() && states[0].contains("score_variance");
  Regressor model(space, dtype, config);
  if (batches.size() != states.size()) throw std::runtime_error(result.id + ": batches and states differ in count");
  for (size_t b = 0; b < batches.size(); ++b) {
    long long n = 0, p = 0;
    const auto x = flatten_rows<S>(batches[b].at("X"), n, p);
    const auto y = vector_of<S>(batches[b].at("y"));
    std::vector<S> w;
    const auto& jw = batches[b].at("sample_weight");
    if (!jw.is_null()) w = vector_of<S>(jw);
    const Diagnostics& d = model.partial_fit(host_batch(x.data(), y.data(), n, p, w.empty() ? nullptr : w.data()));
    result.iterations.push_back(d.iterations);
    const State st = model.state();
    const auto& want = states[b];
    const std::string at = fmt::format("batch {} ", b + 1);
    const auto coef = want.at("coefficients").get<std::vector<double>>();
    cmp.exact(static_cast<long long>(st.coefficients.size()), static_cast<long long>(coef.size()), at + "q");
    if (!result.passed) return result;
    for (size_t j = 0; j < coef.size(); ++j) cmp.value(st.coefficients[j], coef[j], fmt::format("{}coef[{}]", at, j));
    const auto& info = want.at("information");
    for (size_t j = 0; j < coef.size(); ++j)
      for (size_t k = 0; k < coef.size(); ++k)
        cmp.value(st.information[j * coef.size() + k], info.at(j).at(k).get<double>(),
                  fmt::format("{}information[{}][{}]", at, j, k));
    if (config.inference) compare_inference(model, st, want, at, cmp);
    cmp.exact(st.n_samples_seen, want.at("n_samples_seen").get<long long>(), at + "n_samples_seen");
    cmp.exact(st.batch_count, want.at("batch_count").get<long long>(), at + "batch_count");
    cmp.value(st.previous_lambda, want.at("previous_lambda").get<double>(), at + "previous_lambda");
    cmp.value(st.weight_sum, want.at("weight_sum").get<double>(), at + "weight_sum");
    const auto& wd = want.at("diagnostics");
    cmp.exact(d.converged, wd.at("converged").get<bool>(), at + "converged");
    cmp.value(d.objective, wd.at("objective").get<double>(), at + "objective");
    cmp.value(d.lambda_value, wd.at("lambda_value").get<double>(), at + "lambda_value");
    cmp.value(d.bandwidth, wd.at("bandwidth").get<double>(), at + "bandwidth");
  }
  long long n = 0, p = 0;
  const auto probe = flatten_rows<S>(c.at("probe_X"), n, p);
  const auto pred = model.predict(probe.data(), n, p);
  const auto want = c.at("expected").at("predictions").get<std::vector<double>>();
  cmp.exact(static_cast<long long>(pred.size()), static_cast<long long>(want.size()), "predictions count");
  for (size_t i = 0; i < want.size() && i < pred.size(); ++i)
    cmp.value(pred[i], want[i], fmt::format("prediction[{}]", i));
  return result;
}

}  // namespace

std::vector<CaseResult> replay_file(const std::string& path, const std::vector<Space>& spaces, bool use_floors) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  const json doc = json::parse(in);
  // Versions 1 and 2 have the same fields (golden/README.md, "Schema versions"); a later version may not.
  const int version = doc.at("schema_version").get<int>();
  if (doc.at("schema").get<std::string>() != "renewable-huber-native-golden" || (version != 1 && version != 2))
    throw std::runtime_error(path + ": not a renewable-huber-native-golden file of schema_version 1 or 2");
  std::vector<CaseResult> results;
  for (const auto& c : doc.at("cases")) {
    const Dtype dtype = c.at("config").at("dtype").get<std::string>() == "float32" ? Dtype::f32 : Dtype::f64;
    for (Space space : spaces) {
      CaseResult r;
      try {
        r = dtype == Dtype::f32 ? replay_case<float>(c, space, dtype, use_floors)
                                  : replay_case<double>(c, space, dtype, use_floors);
      } catch (const Error& e) {
        r.id = c.at("id").get<std::string>();
        r.space = space;
        r.dtype = dtype;
        r.passed = false;
        r.failure = fmt::format("error ({}): {}", errc_name(e.code()), e.what());
      }
      results.push_back(r);
    }
  }
  return results;
}

}  // namespace rh::golden
