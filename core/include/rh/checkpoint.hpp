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
#include "rh/group.hpp"
#include "rh/regressor.hpp"
#include "rh/types.hpp"

namespace rh {

namespace detail {
// The newest format version that stores a field of the configuration (core/src/checkpoint.cpp, config_size: format 2
// added `inference`). The configuration is not list-driven: a new field of it raises this by hand.
inline constexpr std::uint32_t newest_config_field_version = 2;

// The newest `since` of the state's fields (RH_STATE_SCALARS, RH_STATE_ARRAYS): the only place a state field's
// format version is written.
constexpr std::uint32_t newest_state_field_version() {
  std::uint32_t newest = 1;
#define RH_NEWEST_SCALAR(type, name, init, since) \
  newest = static_cast<std::uint32_t>(since) > newest ? static_cast<std::uint32_t>(since) : newest;
  RH_STATE_SCALARS(RH_NEWEST_SCALAR)
#undef RH_NEWEST_SCALAR
#define RH_NEWEST_ARRAY(name, rank, since) \
  newest = static_cast<std::uint32_t>(since) > newest ? static_cast<std::uint32_t>(since) : newest;
  RH_STATE_ARRAYS(RH_NEWEST_ARRAY)
#undef RH_NEWEST_ARRAY
  return newest;
}
}  // namespace detail

// The format version this library writes (the newest that stores any field), and the oldest it reads: it reads every
// version ever written (each proven by a sample file under tests/checkpoints/). Any other version gives
// Errc::version_mismatch.
inline constexpr std::uint32_t checkpoint_format_version =
    detail::newest_state_field_version() > detail::newest_config_field_version ? detail::newest_state_field_version()
                                                                               : detail::newest_config_field_version;
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

// Group checkpoints: one file for a whole RegressorGroup (docs/abi.md, "Group checkpoint format"): a header with the
// group's shape, then each model as a checkpoint of the single-model format above, holding the group's configuration
// and dtype and that model's state. Its own format version, read as the single-model one is.
inline constexpr std::uint32_t group_checkpoint_format_version = 1;
inline constexpr std::uint32_t oldest_group_checkpoint_format_version = 1;

struct GroupCheckpoint {
  Config config;
  Dtype dtype = Dtype::f64;
  std::int64_t n_models = 0, n_features = 0;
  std::vector<State> states;  // one per model; the empty state for a model never fitted
};

// Errc::invalid_argument / invalid_state for what encode_checkpoint refuses, a shape that is not a group's, or a state
// of other than n_features features.
std::vector<std::uint8_t> encode_group_checkpoint(const GroupCheckpoint& checkpoint);
// Errc::corrupt_data for anything truncated, altered, oversized or inconsistent (models of differing configurations
// included), Errc::version_mismatch for another format version (of the group's or of a model's record).
GroupCheckpoint decode_group_checkpoint(const std::uint8_t* data, std::size_t size);
GroupCheckpoint read_group_checkpoint_file(const std::string& path);

std::vector<std::uint8_t> save_checkpoint(const RegressorGroup& group);
void save_checkpoint_file(const RegressorGroup& group, const std::string& path);  // as for a Regressor
// Replaces the group's configuration, n_models, p and every model's state with the checkpoint's; the group keeps its
// space and device, and its dtype must be the checkpoint's (Errc::invalid_argument otherwise). Diagnostics and
// per-model statuses are cleared. Transactional.
void load_checkpoint(RegressorGroup& group, const std::uint8_t* data, std::size_t size);
void load_checkpoint_file(RegressorGroup& group, const std::string& path);

}  // namespace rh
