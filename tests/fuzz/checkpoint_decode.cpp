// libFuzzer target: rh::decode_checkpoint on arbitrary bytes.
// Properties: it either throws rh::Error with corrupt_data or version_mismatch, or returns a checkpoint whose
// current-format encoding decodes and re-encodes to itself (one encoding per checkpoint: nothing is "loaded as
// something else").
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const rh_fuzz::Decoded d = rh_fuzz::outcome_of([&] { return rh::decode_checkpoint(data, size); });
  if (!d.ok) {
    if (d.code != rh::Errc::corrupt_data && d.code != rh::Errc::version_mismatch)
      rh_fuzz::violated("a decoding failure is corrupt_data or version_mismatch");
    return 0;
  }
  // An older format version is re-encoded in the current one (format 2 added K); the current encoding is unique:
  // decoding it again gives the same bytes back.
  const rh_fuzz::Decoded again =
      rh_fuzz::outcome_of([&] { return rh::decode_checkpoint(d.canonical.data(), d.canonical.size()); });
  if (!again.ok || again.canonical.size() != d.canonical.size() ||
      std::memcmp(again.canonical.data(), d.canonical.data(), d.canonical.size()) != 0)
    rh_fuzz::violated("a decoded checkpoint re-encodes to a checkpoint that re-encodes to itself");
  return 0;
}
