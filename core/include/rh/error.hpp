// Typed errors of the C++ API. Every failure carries one code; the C ABI maps each code to one status.
#pragma once
#include <stdexcept>
#include <string>

namespace rh {

enum class Errc {
  invalid_argument = 1,   // bad config value, bad shape, NaN/Inf, negative weight, null pointer, wrong dtype
  invalid_state = 2,      // operation needs a fitted model, or the state to import is inconsistent
  unavailable = 3,        // execution space not compiled, device id absent
  allocation_failed = 4,  // memory could not be obtained
  numerical_error = 5,    // the solver produced a non-finite state; nothing is committed
  device_error = 6,       // an execution-space runtime call failed
  corrupt_data = 7,       // a checkpoint failed its structure or checksum test
  version_mismatch = 8,   // caller compiled against another ABI / struct version
  internal_error = 9,     // a bug: an exception nobody anticipated
};

const char* errc_name(Errc code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace rh
