// What the libFuzzer targets share: how a broken property is reported (an abort, which libFuzzer records as a
// crash with the input that caused it) and bitwise comparisons.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rh/checkpoint.hpp"
#include "rh/error.hpp"

namespace rh_fuzz {

[[noreturn]] inline void violated(const char* property, const char* detail = "") {
  std::fprintf(stderr, "property violated: %s %s\n", property, detail);
  std::abort();
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// Equal as stored: a state's values compared by their bit patterns (NaN and the sign of zero included).
inline bool same_state(const rh::State& a, const rh::State& b) {
  return a.n_features == b.n_features && a.fit_intercept == b.fit_intercept &&
         same_bits(a.coefficients, b.coefficients) && same_bits(a.information, b.information) &&
         a.n_samples_seen == b.n_samples_seen && a.batch_count == b.batch_count &&
         std::memcmp(&a.previous_lambda, &b.previous_lambda, sizeof(double)) == 0 &&
         std::memcmp(&a.weight_sum, &b.weight_sum, sizeof(double)) == 0;
}

// The outcome of decoding: the checkpoint and its canonical bytes, or the error code.
struct Decoded {
  bool ok = false;
  rh::Errc code = rh::Errc::internal_error;
  rh::Checkpoint checkpoint;
  std::vector<std::uint8_t> canonical;
};

template <class F>
Decoded outcome_of(F&& decode) {
  Decoded d;
  try {
    d.checkpoint = decode();
    d.canonical = rh::encode_checkpoint(d.checkpoint);
    d.ok = true;
  } catch (const rh::Error& e) {
    d.code = e.code();
  }
  return d;
}

}  // namespace rh_fuzz
