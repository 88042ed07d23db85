// Names, configuration and state validation: the host-side rules that need no execution space.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "rh/config.hpp"
#include "rh/error.hpp"
#include "rh/regressor.hpp"
#include "rh/types.hpp"
#include "rh/version.hpp"

namespace rh {

const char* errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid argument";
    case Errc::invalid_state: return "invalid state";
    case Errc::unavailable: return "unavailable";
    case Errc::allocation_failed: return "allocation failed";
    case Errc::numerical_error: return "numerical error";
    case Errc::device_error: return "device error";
    case Errc::corrupt_data: return "corrupt data";
    case Errc::version_mismatch: return "version mismatch";
    case Errc::internal_error: return "internal error";
  }
  return "unknown error";
}

const char* space_name(Space s) noexcept {
  switch (s) {
    case Space::serial: return "serial";
    case Space::openmp: return "openmp";
    case Space::cuda: return "cuda";
  }
  return "unknown";
}

const char* dtype_name(Dtype d) noexcept {
  switch (d) {
    case Dtype::f32: return "float32";
    case Dtype::f64: return "float64";
  }
  return "unknown";
}

const char* library_version() noexcept { return RH_VERSION_STRING; }

namespace {
[[noreturn]] void bad_config(const std::string& message) { throw Error(Errc::invalid_argument, message); }
}  // namespace

void validate(const Config& c) {
  if (!(std::isfinite(c.tau) && c.tau > 0)) bad_config(fmt::format("tau must be finite and > 0 (got {})", c.tau));
  if (c.penalty != Penalty::none && c.penalty != Penalty::l1)
    bad_config(fmt::format("penalty must be none or l1 (got enum value {})", static_cast<int>(c.penalty)));
  if (!(std::isfinite(c.lambda_scale) && c.lambda_scale >= 0))
    bad_config(fmt::format("lambda_scale must be finite and >= 0 (got {})", c.lambda_scale));
  if (!(std::isfinite(c.bandwidth_scale) && c.bandwidth_scale > 0))
    bad_config(fmt::format("bandwidth_scale must be finite and > 0 (got {})", c.bandwidth_scale));
  if (c.max_iter < 1) bad_config(fmt::format("max_iter must be >= 1 (got {})", c.max_iter));
  if (!(std::isfinite(c.tol) && c.tol > 0)) bad_config(fmt::format("tol must be finite and > 0 (got {})", c.tol));
  if (!(std::isfinite(c.ridge) && c.ridge >= 0))
    bad_config(fmt::format("ridge must be finite and >= 0 (got {})", c.ridge));
}

void validate_state(const State& st) {
  auto bad = [](const std::string& m) { throw Error(Errc::invalid_state, "invalid state: " + m); };
  if (st.n_features < 0) bad(fmt::format("n_features is negative ({})", st.n_features));
  if (st.n_samples_seen < 0 || st.batch_count < 0) bad("counters must be non-negative");
  // Room for the counts of any batches that fit in memory: the next update adds to them (found by
  // tests/fuzz/state_import: n_samples_seen = 2^63-1 made the next batch overflow).
  constexpr std::int64_t max_count = std::int64_t{1} << 62;
  if (st.n_samples_seen >= max_count || st.batch_count >= max_count)
    bad(fmt::format("counters must be below 2^62 (n_samples_seen {}, batch_count {})", st.n_samples_seen,
                    st.batch_count));
  if (!(std::isfinite(st.previous_lambda) && st.previous_lambda >= 0))
    bad("previous_lambda must be finite and >= 0");
  if (!(std::isfinite(st.weight_sum) && st.weight_sum >= 0)) bad("weight_sum must be finite and >= 0");
  if (st.n_samples_seen > 0 && st.weight_sum == 0) bad("samples were seen but weight_sum is 0");
  if (st.n_samples_seen == 0 && (st.batch_count != 0 || st.weight_sum != 0))
    bad("no samples were seen but batch_count or weight_sum is not 0");
  if (st.n_features == 0) {
    if (st.n_samples_seen != 0 || !st.coefficients.empty() || !st.information.empty())
      bad("a state without features must be empty");
    return;
  }
  // Unsigned and without q*q: n_features may be anything up to 2^63-1 here (found by tests/fuzz/state_import).
  const std::uint64_t q = static_cast<std::uint64_t>(st.n_features) + (st.fit_intercept ? 1 : 0);
  if (st.coefficients.size() != q) bad(fmt::format("expected {} coefficients, got {}", q, st.coefficients.size()));
  if (st.information.size() / q != q || st.information.size() % q != 0)
    bad(fmt::format("expected a {}x{} information matrix, got {} values", q, q, st.information.size()));
  for (double v : st.coefficients)
    if (!std::isfinite(v)) bad("coefficients must be finite");
  for (double v : st.information)
    if (!std::isfinite(v)) bad("the information matrix must be finite");
  // The next batch after an empty state starts from zero (docs/method.md §9): any other content would be ignored.
  const auto nonzero = [](double v) { return v != 0; };
  if (st.n_samples_seen == 0 &&
      (st.previous_lambda != 0 || std::any_of(st.coefficients.begin(), st.coefficients.end(), nonzero) ||
       std::any_of(st.information.begin(), st.information.end(), nonzero)))
    bad("an empty state (n_samples_seen = 0) must have zero coefficients, information and previous_lambda");
}

void validate_state(const State& st, Dtype dtype) {
  validate_state(st);
  if (dtype != Dtype::f32) return;
  // A float32 model holds floats: another value would be rounded, or become infinite beyond float's range.
  const auto not_float = [](double v) { return static_cast<double>(static_cast<float>(v)) != v; };
  auto bad = [](const std::string& m) { throw Error(Errc::invalid_state, "invalid state: " + m); };
  if (std::any_of(st.coefficients.begin(), st.coefficients.end(), not_float))
    bad("a float32 state holds a coefficient that is not a float");
  if (std::any_of(st.information.begin(), st.information.end(), not_float))
    bad("a float32 state holds an information value that is not a float");
}

}  // namespace rh
