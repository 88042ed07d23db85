// Binary checkpoints: a Regressor's configuration, dtype and whole renewable state, bit-exact and versioned.
// The byte layout is specified in docs/abi.md ("Checkpoint format"); the C ABI exposes the same bytes.
//
//   const auto bytes = rh::save_checkpoint(model);
//   rh::load_checkpoint(other, bytes.data(), bytes.size());  // other continues the stream exactly as model would
//
// Loading parses and validates everything before it touches the model: on any error the model is unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rh/config.hpp"
#include "rh/regressor.hpp"
#include "rh/types.hpp"

namespace rh {

// The format version this library writes, and the oldest it reads: it reads every version ever written (each
// proven by a sample file under tests/checkpoints/). Any other version gives Errc::version_mismatch.
inline constexpr std::uint32_t checkpoint_format_version = 2;
inline constexpr std::uint32_t oldest_checkpoint_format_version = 1;

// What a checkpoint holds. Diagnostics are not part of it; the space and device are the loader's choice.
struct Checkpoint {
  Config config;
  Dtype dtype = Dtype::f64;
  State state;
  // The format it was decoded from (encode writes checkpoint_format_version whatever this says). Format 1 has no
  // inference setting and no K: loading one keeps the loading model's Config::inference (where the penalty allows
  // it), and the loaded model reports inference unavailable until it is reset.
  std::uint32_t format_version = checkpoint_format_version;
};

// Serializes a checkpoint (validated first: Errc::invalid_argument / invalid_state for a bad config or state).
std::vector<std::uint8_t> encode_checkpoint(const Checkpoint& checkpoint);
// Parses and validates bytes; Errc::corrupt_data for anything truncated, altered or inconsistent,
// Errc::version_mismatch for another format version.
Checkpoint decode_checkpoint(const std::uint8_t* data, std::size_t size);

std::vector<std::uint8_t> save_checkpoint(const Regressor& model);
// Writes through a temporary sibling file and a rename: the target is either the old file or the new one.
void save_checkpoint_file(const Regressor& model, const std::string& path);
Checkpoint read_checkpoint_file(const std::string& path);

// Replaces the model's configuration and state with the checkpoint's; the model keeps its space and device.
// The checkpoint's dtype must be the model's (Errc::invalid_argument otherwise). Transactional.
void load_checkpoint(Regressor& model, const std::uint8_t* data, std::size_t size);
void load_checkpoint_file(Regressor& model, const std::string& path);

}  // namespace rh
