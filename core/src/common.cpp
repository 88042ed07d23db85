// Names, configuration and state validation: the host-side rules that need no execution space.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <fmt/format.h>

#include "inference.hpp"  // score_variance_defect
#include "rh/config.hpp"
#include "rh/detail/engine_base.hpp"  // max_state_count
#include "rh/detail/penalties.hpp"
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

namespace {
// The names of rh::Space, compiled or not: the public vocabulary of tools, tests and the C ABI's space info.
#define RH_SPACE_NAME(name, NAME, own_memory) {Space::name, #name},
constexpr std::pair<Space, const char*> kSpaceNames[] = {RH_FOR_EACH_KNOWN_SPACE(RH_SPACE_NAME)};
#undef RH_SPACE_NAME
}  // namespace

const char* space_name(Space s) noexcept {
  for (const auto& [space, name] : kSpaceNames)
    if (space == s) return name;
  return "unknown";
}

bool space_known(Space s) noexcept { return std::string(space_name(s)) != "unknown"; }

Space space_from_name(const std::string& name) {
  std::string known;
  for (const auto& [space, space_name] : kSpaceNames) {
    if (name == space_name) return space;
    known += known.empty() ? space_name : std::string(", ") + space_name;
  }
  throw Error(Errc::invalid_argument, fmt::format("unknown execution space '{}' (known: {})", name, known));
}

namespace {
// The names of the penalty policies, in list order, joined by `separator`.
std::string penalty_names(const char* separator) {
  std::string out;
  detail::for_each_type(detail::Penalties{}, [&](auto tag) {
    out += (out.empty() ? "" : separator) + std::string(decltype(tag)::type::name);
  });
  return out;
}
}  // namespace

const char* penalty_name(Penalty p) noexcept {
  const char* name = "unknown";
  detail::for_each_type(detail::Penalties{}, [&](auto tag) {
    if (decltype(tag)::type::id == p) name = decltype(tag)::type::name;
  });
  return name;
}

bool penalty_known(Penalty p) noexcept { return std::string(penalty_name(p)) != "unknown"; }

Penalty penalty_from_name(const std::string& name) {
  Penalty found = Penalty::none;
  bool known = false;
  detail::for_each_type(detail::Penalties{}, [&](auto tag) {
    if (name == decltype(tag)::type::name) {
      found = decltype(tag)::type::id;
      known = true;
    }
  });
  if (!known) throw Error(Errc::invalid_argument, fmt::format("unknown penalty '{}' (known: {})", name, penalty_names(", ")));
  return found;
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
  if (!penalty_known(c.penalty))
    bad_config(fmt::format("penalty must be {} (got enum value {})", penalty_names(" or "), static_cast<int>(c.penalty)));
  if (!(std::isfinite(c.lambda_scale) && c.lambda_scale >= 0))
    bad_config(fmt::format("lambda_scale must be finite and >= 0 (got {})", c.lambda_scale));
  if (!(std::isfinite(c.bandwidth_scale) && c.bandwidth_scale > 0))
    bad_config(fmt::format("bandwidth_scale must be finite and > 0 (got {})", c.bandwidth_scale));
  if (c.max_iter < 1) bad_config(fmt::format("max_iter must be >= 1 (got {})", c.max_iter));
  if (!(std::isfinite(c.tol) && c.tol > 0)) bad_config(fmt::format("tol must be finite and > 0 (got {})", c.tol));
  if (!(std::isfinite(c.ridge) && c.ridge >= 0))
    bad_config(fmt::format("ridge must be finite and >= 0 (got {})", c.ridge));
  if (c.inference && c.penalty != Penalty::none)
    bad_config(fmt::format("inference needs penalty none (got {}): {}", penalty_name(c.penalty),
                           inference_penalty_reason));
}

void validate_state(const State& st) {
  auto bad = [](const std::string& m) { throw Error(Errc::invalid_state, "invalid state: " + m); };
  if (st.n_features < 0) bad(fmt::format("n_features is negative ({})", st.n_features));
  if (st.n_samples_seen < 0 || st.batch_count < 0) bad("counters must be non-negative");
  // Room for the counts of any batches that fit in memory: the next update adds to them (found by
  // tests/fuzz/state_import: n_samples_seen = 2^63-1 made the next batch overflow).
  if (st.n_samples_seen >= detail::max_state_count || st.batch_count >= detail::max_state_count)
    bad(fmt::format("counters must be below 2^62 (n_samples_seen {}, batch_count {})", st.n_samples_seen,
                    st.batch_count));
  if (!(std::isfinite(st.previous_lambda) && st.previous_lambda >= 0))
    bad("previous_lambda must be finite and >= 0");
  if (!(std::isfinite(st.weight_sum) && st.weight_sum >= 0)) bad("weight_sum must be finite and >= 0");
  if (st.n_samples_seen > 0 && st.weight_sum == 0) bad("samples were seen but weight_sum is 0");
  if (st.n_samples_seen == 0 && (st.batch_count != 0 || st.weight_sum != 0))
    bad("no samples were seen but batch_count or weight_sum is not 0");
  if (st.score_variance_batches < 0 || st.score_variance_batches > st.batch_count)
    bad(fmt::format("score_variance_batches must be between 0 and batch_count {} (got {})", st.batch_count,
                    st.score_variance_batches));
  // An array added after checkpoint format 1 (since > 1) may be left empty by a caller written before it existed:
  // absent, it means zeros of its shape (complete_state). K absent cannot hold any batch.
  if (st.score_variance.empty() && st.score_variance_batches != 0)
    bad(fmt::format("score_variance_batches is {}, but score_variance is not given", st.score_variance_batches));
  if (st.n_features == 0) {
    const auto empty = [&] {
#define RH_STATE_ARRAY_EMPTY(name, rank, since) if (!st.name.empty()) return false;
      RH_STATE_ARRAYS(RH_STATE_ARRAY_EMPTY)
#undef RH_STATE_ARRAY_EMPTY
      return true;
    };
    if (st.n_samples_seen != 0 || !empty()) bad("a state without features must be empty");
    return;
  }
  // Unsigned and without q*q: n_features may be anything up to 2^63-1 here (found by tests/fuzz/state_import).
  const std::uint64_t q = static_cast<std::uint64_t>(st.n_features) + (st.fit_intercept ? 1 : 0);
  const auto check_array = [&](const std::vector<double>& values, const char* name, int rank) {
    const bool shape_ok = rank == 1 ? values.size() == q : values.size() / q == q && values.size() % q == 0;
    if (!shape_ok)
      bad(rank == 1 ? fmt::format("{}: expected {} values, got {}", name, q, values.size())
                    : fmt::format("{}: expected {}x{} values, got {}", name, q, q, values.size()));
    for (double v : values)
      if (!std::isfinite(v)) bad(fmt::format("{} must be finite", name));
  };
#define RH_CHECK_STATE_ARRAY(name, rank, since) \
  if ((since) == 1 || !st.name.empty()) check_array(st.name, #name, rank);
  RH_STATE_ARRAYS(RH_CHECK_STATE_ARRAY)
#undef RH_CHECK_STATE_ARRAY
  // The next batch after an empty state starts from zero (docs/method.md §9): any other content would be ignored.
  if (st.n_samples_seen == 0) {
    const auto nonzero = [](const std::vector<double>& v) {
      return std::any_of(v.begin(), v.end(), [](double x) { return x != 0; });
    };
    bool content = st.previous_lambda != 0;
    std::string names;
#define RH_STATE_ARRAY_NONZERO(name, rank, since) \
  content = content || nonzero(st.name);          \
  names += #name ", ";
    RH_STATE_ARRAYS(RH_STATE_ARRAY_NONZERO)
#undef RH_STATE_ARRAY_NONZERO
    if (content)
      bad(fmt::format("an empty state (n_samples_seen = 0) must have zero {}and previous_lambda", names));
  }
  // A made-up K would give standard errors of 0 or NaN (docs/method.md §12 says what a valid one is).
  if (!st.score_variance.empty())
    if (const std::string defect = detail::score_variance_defect(st.score_variance, static_cast<long long>(q));
        !defect.empty())
      bad(defect);
}

State complete_state(const State& st) {
  State out = st;
  const size_t q = st.n_features > 0 ? static_cast<size_t>(st.n_features) + (st.fit_intercept ? 1 : 0) : 0;
#define RH_COMPLETE_ARRAY(name, rank, since) \
  if ((since) > 1 && out.name.empty()) out.name.assign((rank) == 1 ? q : q * q, 0.0);
  RH_STATE_ARRAYS(RH_COMPLETE_ARRAY)
#undef RH_COMPLETE_ARRAY
  return out;
}

void validate_state(const State& st, Dtype dtype) {
  validate_state(st);
  if (dtype != Dtype::f32) return;
  // A float32 model holds floats: another value would be rounded, or become infinite beyond float's range.
  const auto not_float = [](double v) { return static_cast<double>(static_cast<float>(v)) != v; };
  const auto check = [&](const std::vector<double>& values, const char* name) {
    if (std::any_of(values.begin(), values.end(), not_float))
      throw Error(Errc::invalid_state,
                  fmt::format("invalid state: a float32 state holds a value of {} that is not a float", name));
  };
#define RH_CHECK_FLOAT_ARRAY(name, rank, since) check(st.name, #name);
  RH_STATE_ARRAYS(RH_CHECK_FLOAT_ARRAY)
#undef RH_CHECK_FLOAT_ARRAY
}

}  // namespace rh
