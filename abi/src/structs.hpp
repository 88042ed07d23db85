// Versioned C structs <-> C++ API types. Every reader here validates the header and the enum values; the values
// themselves (shapes, finiteness, config ranges) are left to rh::Regressor and rh::validate.
#pragma once
#include <cstdint>

#include "rh/config.hpp"
#include "rh/regressor.hpp"
#include "rh/rh.h"
#include "rh/types.hpp"

namespace rh::abi {

// Throws Errc::version_mismatch unless `abi_version` has this library's ABI major.
void check_abi_version(std::uint32_t abi_version, const char* what);

enum class Access { read, write };
// The size of each struct in ABI 1.0: the least struct_size a caller of major 1 passes. The fields appended since
// (docs/abi.md, "Versioning") are absent from a smaller struct: read as 0, their default, and never written.
template <class T>
inline constexpr std::size_t abi_1_0_size = sizeof(T);
template <>
inline constexpr std::size_t abi_1_0_size<rh_config> = 80;
template <>
inline constexpr std::size_t abi_1_0_size<rh_state> = 88;
template <>
inline constexpr std::size_t abi_1_0_size<rh_space_info> = 40;

// Checks the header of a versioned struct: not NULL, same ABI major, struct_size between its ABI 1.0 size and a sane
// bound; for a struct the library reads, every byte beyond the fields it knows must be zero. Returns struct_size.
std::uint32_t check_header(const void* s, std::size_t oldest_size, std::size_t known_size, const char* what,
                           Access access);
template <class T>
std::uint32_t check_header(const T* s, const char* what, Access access) {
  return check_header(static_cast<const void*>(s), abi_1_0_size<T>, sizeof(T), what, access);
}

struct ModelSettings {
  Config config;
  Space space = Space::serial;
  Dtype dtype = Dtype::f64;
  int device_id = 0;
  int host_threads = 0;
};

ModelSettings settings_from(const rh_config* config);  // validated completely (rh::validate included)
void write_config(const ModelSettings& settings, rh_config* out);  // only the fields its struct_size holds
ModelSettings default_settings();

Batch batch_from(const rh_batch* batch);
void write_diagnostics(const Diagnostics& d, rh_diagnostics* out);  // header already checked
void write_space_info(const SpaceInfo& info, rh_space_info* out);   // header already checked

// Buffers and lengths are checked so that no more than the caller's stated lengths is ever read; the content is
// validated by Regressor::set_state.
State state_from(const rh_state* state);
// Copies `state` into the caller's buffers (or reports only the lengths when every pointer is NULL); only the fields
// its struct_size holds.
void write_state(const State& state, rh_state* out);

}  // namespace rh::abi
