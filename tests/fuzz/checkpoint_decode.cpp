// libFuzzer target: rh::decode_checkpoint on arbitrary bytes.
// Properties: it either throws rh::Error with corrupt_data or version_mismatch, or returns a checkpoint whose
// encoding is exactly the input (the format has one encoding per checkpoint, so nothing is "loaded as something else").
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const rh_fuzz::Decoded d = rh_fuzz::outcome_of([&] { return rh::decode_checkpoint(data, size); });
  if (!d.ok) {
    if (d.code != rh::Errc::corrupt_data && d.code != rh::Errc::version_mismatch)
      rh_fuzz::violated("a decoding failure is corrupt_data or version_mismatch");
    return 0;
  }
  if (d.canonical.size() != size || std::memcmp(d.canonical.data(), data, size) != 0)
    rh_fuzz::violated("a decoded checkpoint re-encodes to its input");
  return 0;
}
