// What the libFuzzer targets share: how a broken property is reported (an abort, which libFuzzer records as a
// crash with the input that caused it) and bitwise comparisons.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/same_state.hpp"
#include "rh/checkpoint.hpp"
#include "rh/error.hpp"

namespace rh_fuzz {

[[noreturn]] inline void violated(const char* property, const char* detail = "") {
  std::fprintf(stderr, "property violated: %s %s\n", property, detail);
  std::abort();
}

// Equal as stored: every field of the state list by its bits (NaN and the sign of zero included; K too).
using rh::test::same_state;

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
