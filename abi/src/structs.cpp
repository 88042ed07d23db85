#include "structs.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fmt/format.h>

#include "rh/error.hpp"

namespace rh::abi {

// The layouts of docs/abi.md, frozen for ABI major 1 (64-bit platforms). A change here is an ABI break.
static_assert(sizeof(void*) == 8, "the documented struct layouts are those of 64-bit platforms");
static_assert(sizeof(rh_config) == 88 && offsetof(rh_config, tau) == 8 && offsetof(rh_config, ridge) == 40 &&
              offsetof(rh_config, penalty) == 48 && offsetof(rh_config, max_iter) == 56 &&
              offsetof(rh_config, dtype) == 60 && offsetof(rh_config, space) == 64 &&
              offsetof(rh_config, host_threads) == 72 && offsetof(rh_config, reserved0) == 76 &&
              offsetof(rh_config, inference) == 80 && offsetof(rh_config, reserved1) == 84);
static_assert(sizeof(rh_batch) == 72 && offsetof(rh_batch, x) == 8 && offsetof(rh_batch, weights) == 24 &&
              offsetof(rh_batch, rows) == 32 && offsetof(rh_batch, ld) == 48 && offsetof(rh_batch, layout) == 56 &&
              offsetof(rh_batch, memory) == 64 && offsetof(rh_batch, reserved0) == 68);
static_assert(sizeof(rh_diagnostics) == 48 && offsetof(rh_diagnostics, iterations) == 8 &&
              offsetof(rh_diagnostics, objective) == 24 && offsetof(rh_diagnostics, bandwidth) == 40);
static_assert(sizeof(rh_state) == 112 && offsetof(rh_state, coefficients) == 8 &&
              offsetof(rh_state, coefficients_length) == 24 && offsetof(rh_state, n_features) == 40 &&
              offsetof(rh_state, previous_lambda) == 64 && offsetof(rh_state, fit_intercept) == 80 &&
              offsetof(rh_state, reserved0) == 84 && offsetof(rh_state, score_variance) == 88 &&
              offsetof(rh_state, score_variance_length) == 96 && offsetof(rh_state, score_variance_batches) == 104);
static_assert(sizeof(rh_space_info) == 48 && offsetof(rh_space_info, space) == 8 &&
              offsetof(rh_space_info, name) == 24 && offsetof(rh_space_info, own_memory) == 40 &&
              offsetof(rh_space_info, reserved1) == 44);

namespace {

// Larger than any struct this ABI will grow to; a bigger size is garbage, not a newer caller.
constexpr std::uint32_t kMaxStructSize = 4096;

[[noreturn]] void bad_argument(const std::string& message) { throw Error(Errc::invalid_argument, message); }

std::string abi_string(std::uint32_t v) {
  return fmt::format("{}.{}", RH_ABI_VERSION_MAJOR_OF(v), RH_ABI_VERSION_MINOR_OF(v));
}

// The caller's struct header, read without assuming anything about the rest of the struct.
struct Header {
  std::uint32_t abi_version;
  std::uint32_t struct_size;
};

// Whether a caller's struct of `size` bytes holds the field at `offset` of `bytes` bytes.
constexpr bool holds(std::uint32_t size, std::size_t offset, std::size_t bytes) { return offset + bytes <= size; }
// The same for a field of rh_state by name.
#define RH_STATE_HOLDS(size, field) holds(size, offsetof(rh_state, field), sizeof(rh_state::field))
// Whether the caller gives the array `name` in rh_state `s` of `size` bytes. An array added after the first ABI (its
// state list `since` > 1) is optional: code written before it existed leaves its pointer NULL (RH_STRUCT_INIT's
// zeros), and then it is neither read (set_state: absent, zeros) nor written (get_state: only its length is set).
#define RH_STATE_ARRAY_GIVEN(s, size, name, since) \
  (RH_STATE_HOLDS(size, name##_length) && ((since) == 1 || (s)->name != nullptr))

// A copy of a struct the library reads, of the caller's struct_size (checked first): fields its version lacks are 0.
template <class T>
T read_struct(const T* s, const char* what, std::uint32_t* struct_size = nullptr) {
  const std::uint32_t size = check_header(s, what, Access::read);
  if (struct_size) *struct_size = size;
  T copy;
  std::memset(&copy, 0, sizeof copy);
  std::memcpy(&copy, s, std::min<std::size_t>(size, sizeof copy));
  return copy;
}

bool flag_from(std::int32_t v, const char* field) {
  if (v != 0 && v != 1) bad_argument(fmt::format("{} must be 0 or 1 (got {})", field, v));
  return v == 1;
}

void check_reserved(std::int32_t v, const char* what) {
  if (v != 0) bad_argument(fmt::format("{}.reserved0 must be 0 (got {})", what, v));
}

Dtype dtype_from(std::int32_t v, const char* what) {
  switch (v) {
    case RH_DTYPE_F32: return Dtype::f32;
    case RH_DTYPE_F64: return Dtype::f64;
  }
  bad_argument(fmt::format("{}.dtype: unknown dtype enum value {}", what, v));
}
std::int32_t dtype_to(Dtype d) { return d == Dtype::f32 ? RH_DTYPE_F32 : RH_DTYPE_F64; }

// RH_SPACE_* and RH_PENALTY_* are the C++ enum value + 1 (0 is never valid), checked here for every name.
// A space of the generated list (rh/known_spaces.hpp) without its RH_SPACE_<NAME> in rh.h does not compile.
#define RH_CHECK_SPACE_CODE(name, NAME, own_memory) \
  static_assert(RH_SPACE_##NAME == static_cast<int>(Space::name) + 1, "RH_SPACE_" #NAME " is rh::Space::" #name " + 1");
RH_FOR_EACH_KNOWN_SPACE(RH_CHECK_SPACE_CODE)
#undef RH_CHECK_SPACE_CODE
// Likewise a penalty of the generated list RH_FOR_EACH_PENALTY (rh/known_penalties.hpp) without its RH_PENALTY_<NAME>.
#define RH_CHECK_PENALTY_CODE(name, NAME) \
  static_assert(RH_PENALTY_##NAME == static_cast<int>(Penalty::name) + 1, "RH_PENALTY_" #NAME " is rh::Penalty::" #name " + 1");
RH_FOR_EACH_PENALTY(RH_CHECK_PENALTY_CODE)
#undef RH_CHECK_PENALTY_CODE

Space space_from(std::int32_t v) {
  if (v < 1 || !space_known(static_cast<Space>(v - 1)))
    bad_argument(fmt::format("config.space: unknown execution space enum value {}", v));
  return static_cast<Space>(v - 1);
}
std::int32_t space_to(Space s) { return static_cast<std::int32_t>(s) + 1; }

Penalty penalty_from(std::int32_t v) {
  if (v < 1 || !penalty_known(static_cast<Penalty>(v - 1)))
    bad_argument(fmt::format("config.penalty: unknown penalty enum value {}", v));
  return static_cast<Penalty>(v - 1);
}
std::int32_t penalty_to(Penalty p) { return static_cast<std::int32_t>(p) + 1; }

Layout layout_from(std::int32_t v) {
  switch (v) {
    case RH_LAYOUT_ROW_MAJOR: return Layout::row_major;
    case RH_LAYOUT_COL_MAJOR: return Layout::col_major;
  }
  bad_argument(fmt::format("batch.layout: unknown layout enum value {}", v));
}

Memory memory_from(std::int32_t v) {
  switch (v) {
    case RH_MEMORY_HOST: return Memory::host;
    case RH_MEMORY_DEVICE: return Memory::device;
  }
  bad_argument(fmt::format("batch.memory: unknown memory enum value {}", v));
}

}  // namespace

void check_abi_version(std::uint32_t abi_version, const char* what) {
  if (RH_ABI_VERSION_MAJOR_OF(abi_version) != RH_ABI_VERSION_MAJOR)
    throw Error(Errc::version_mismatch, fmt::format("{} was compiled against ABI {}, but this library implements "
                                                    "ABI {} (the major versions differ)",
                                                    what, abi_string(abi_version), abi_string(RH_ABI_VERSION)));
}

std::uint32_t check_header(const void* s, std::size_t oldest_size, std::size_t known_size, const char* what,
                           Access access) {
  if (!s) bad_argument(fmt::format("{} is a NULL pointer", what));
  Header h;
  std::memcpy(&h, s, sizeof h);
  check_abi_version(h.abi_version, what);
  if (h.struct_size < oldest_size)
    throw Error(Errc::version_mismatch, fmt::format("{}.struct_size is {}, smaller than the {} bytes of ABI 1.0", what,
                                                    h.struct_size, oldest_size));
  if (h.struct_size > kMaxStructSize)
    throw Error(Errc::version_mismatch,
                fmt::format("{}.struct_size is {}, beyond any version of this struct (max {})", what, h.struct_size,
                            kMaxStructSize));
  if (access == Access::read) {
    const auto* bytes = static_cast<const unsigned char*>(s);
    for (std::size_t i = known_size; i < h.struct_size; ++i)
      if (bytes[i] != 0)
        throw Error(Errc::version_mismatch,
                    fmt::format("{} sets byte {} (of {}), a field newer than this library's ABI {}; it cannot be "
                                "honoured",
                                what, i, h.struct_size, abi_string(RH_ABI_VERSION)));
  }
  return h.struct_size;
}

ModelSettings default_settings() {
  ModelSettings s;
  s.space = space_from(RH_ABI_DEFAULT_SPACE);
  return s;
}

ModelSettings settings_from(const rh_config* config) {
  const rh_config copy = read_struct(config, "config");  // fields newer than the caller's struct are 0
  const rh_config* c = &copy;
  check_reserved(c->reserved0, "config");
  if (c->reserved1 != 0) bad_argument(fmt::format("config.reserved1 must be 0 (got {})", c->reserved1));
  ModelSettings s;
  s.config.tau = c->tau;
  s.config.lambda_scale = c->lambda_scale;
  s.config.bandwidth_scale = c->bandwidth_scale;
  s.config.tol = c->tol;
  s.config.ridge = c->ridge;
  s.config.penalty = penalty_from(c->penalty);
  s.config.fit_intercept = flag_from(c->fit_intercept, "config.fit_intercept");
  s.config.max_iter = c->max_iter;
  s.config.inference = flag_from(c->inference, "config.inference");
  validate(s.config);
  s.dtype = dtype_from(c->dtype, "config");
  s.space = space_from(c->space);
  // Checked here as well as by Regressor, because both values reach the runtime start-up before any Regressor.
  if (c->device_id < 0) bad_argument(fmt::format("config.device_id must be >= 0 (got {})", c->device_id));
  if (c->host_threads < 0) bad_argument(fmt::format("config.host_threads must be >= 0 (got {})", c->host_threads));
  s.device_id = c->device_id;
  s.host_threads = c->host_threads;
  return s;
}

void write_config(const ModelSettings& s, rh_config* out) {
  const std::uint32_t size = check_header(out, "config", Access::write);
  out->tau = s.config.tau;
  out->lambda_scale = s.config.lambda_scale;
  out->bandwidth_scale = s.config.bandwidth_scale;
  out->tol = s.config.tol;
  out->ridge = s.config.ridge;
  out->penalty = penalty_to(s.config.penalty);
  out->fit_intercept = s.config.fit_intercept ? 1 : 0;
  out->max_iter = s.config.max_iter;
  out->dtype = dtype_to(s.dtype);
  out->space = space_to(s.space);
  out->device_id = s.device_id;
  out->host_threads = s.host_threads;
  out->reserved0 = 0;
  if (holds(size, offsetof(rh_config, inference), sizeof out->inference)) out->inference = s.config.inference ? 1 : 0;
  if (holds(size, offsetof(rh_config, reserved1), sizeof out->reserved1)) out->reserved1 = 0;
}

Batch batch_from(const rh_batch* b) {
  check_header(b, "batch", Access::read);
  check_reserved(b->reserved0, "batch");
  Batch out;
  out.x.data = b->x;
  out.x.rows = b->rows;
  out.x.cols = b->cols;
  out.x.ld = b->ld;
  out.x.layout = layout_from(b->layout);
  out.y = b->y;
  out.weights = b->weights;
  out.dtype = dtype_from(b->dtype, "batch");
  out.memory = memory_from(b->memory);
  return out;
}

void write_diagnostics(const Diagnostics& d, rh_diagnostics* out) {
  out->iterations = d.iterations;
  out->converged = d.converged ? 1 : 0;
  out->used_regularized_fallback = d.used_regularized_fallback ? 1 : 0;
  out->reserved0 = 0;
  out->objective = d.objective;
  out->lambda_value = d.lambda_value;
  out->bandwidth = d.bandwidth;
}

void write_space_info(const SpaceInfo& info, rh_space_info* out) {
  const std::uint32_t size = check_header(out, "info", Access::write);
  out->space = space_to(info.space);
  out->device_count = info.device_count;
  out->concurrency = info.concurrency;
  out->reserved0 = 0;
  std::memset(out->name, 0, sizeof out->name);
  std::snprintf(out->name, sizeof out->name, "%s", info.name.c_str());
  if (holds(size, offsetof(rh_space_info, own_memory), sizeof out->own_memory)) out->own_memory = info.own_memory;
  if (holds(size, offsetof(rh_space_info, reserved1), sizeof out->reserved1)) out->reserved1 = 0;
}

// rh_state carries every field of the state list (rh/types.hpp) under the same name: each scalar as int64_t, double
// or int32_t (a bool, 0 or 1), each array as a `double*` and its `<name>_length`.
namespace {
void scalar_from(std::int64_t v, std::int64_t& out, const char*) { out = v; }
void scalar_from(double v, double& out, const char*) { out = v; }
void scalar_from(std::int32_t v, bool& out, const char* field) { out = flag_from(v, field); }
std::int64_t scalar_to(std::int64_t v) { return v; }
double scalar_to(double v) { return v; }
std::int32_t scalar_to(bool v) { return v ? 1 : 0; }
}  // namespace

State state_from(const rh_state* state) {
  std::uint32_t size = 0;
  const rh_state copy = read_struct(state, "state", &size);  // fields newer than the caller's struct are 0
  const rh_state* s = &copy;
  check_reserved(s->reserved0, "state");
  // Before reading anything: each array's length is q or q² (q = coefficients_length <= 2^31 keeps q² exact), and
  // a non-zero length comes with a pointer.
  const std::int64_t q = s->coefficients_length;
  const auto check_array = [q](const double* values, std::int64_t length, const char* name, int rank) {
    if (length < 0) bad_argument(fmt::format("state.{}_length must be >= 0 (got {})", name, length));
    if (length > 0 && !values) bad_argument(fmt::format("state.{} is NULL but {}_length is not 0", name, name));
    if (q < 0 || q > (std::int64_t{1} << 31) || length != (rank == 1 ? q : q * q))
      throw Error(Errc::invalid_state, fmt::format("invalid state: {}_length {} is not coefficients_length{} ({})",
                                                   name, length, rank == 1 ? "" : " squared", q));
  };
  // A field the caller's struct does not hold (an older minor's) is absent: a scalar keeps its default, an array
  // stays empty, which rh::validate_state reads as zeros (the state list's rule for fields an older checkpoint lacks).
  // So is an optional array given as NULL.
#define RH_CHECK_ABI_ARRAY(name, rank, since) \
  if (RH_STATE_ARRAY_GIVEN(s, size, name, since)) check_array(s->name, s->name##_length, #name, rank);
  RH_STATE_ARRAYS(RH_CHECK_ABI_ARRAY)
#undef RH_CHECK_ABI_ARRAY
  State st;
#define RH_SCALAR_FROM_ABI(type, name, init, since) \
  if (RH_STATE_HOLDS(size, name)) scalar_from(s->name, st.name, "state." #name);
  RH_STATE_SCALARS(RH_SCALAR_FROM_ABI)
#undef RH_SCALAR_FROM_ABI
#define RH_ARRAY_FROM_ABI(name, rank, since) \
  if (RH_STATE_ARRAY_GIVEN(s, size, name, since)) st.name.assign(s->name, s->name + s->name##_length);
  RH_STATE_ARRAYS(RH_ARRAY_FROM_ABI)
#undef RH_ARRAY_FROM_ABI
  return st;
}

void write_state(const State& st, rh_state* out) {
  const std::uint32_t size = check_header(out, "state", Access::read);  // it carries the caller's buffers
  check_reserved(out->reserved0, "state");
  // Only the fields the caller's struct holds are read or written (an older minor's struct lacks the newer ones).
  bool any_buffer = false;
#define RH_ANY_BUFFER(name, rank, since) any_buffer = any_buffer || (RH_STATE_HOLDS(size, name##_length) && out->name != nullptr);
  RH_STATE_ARRAYS(RH_ANY_BUFFER)
#undef RH_ANY_BUFFER
  if (any_buffer) {  // all buffers large enough, or nothing is written
    const auto check_buffer = [](const double* buffer, std::int64_t capacity, const std::vector<double>& values,
                                 const char* name, bool optional) {
      if (!buffer && optional) return;  // not asked for
      if (!values.empty() && !buffer)
        bad_argument(fmt::format("give every state buffer (state.{} is NULL), or none to query the lengths", name));
      if (capacity < static_cast<std::int64_t>(values.size()))
        bad_argument(fmt::format("state.{} holds {} values, but the state has {}", name, capacity, values.size()));
    };
#define RH_CHECK_BUFFER(name, rank, since) \
  if (RH_STATE_HOLDS(size, name##_length)) check_buffer(out->name, out->name##_length, st.name, #name, (since) > 1);
    RH_STATE_ARRAYS(RH_CHECK_BUFFER)
#undef RH_CHECK_BUFFER
#define RH_COPY_ARRAY(name, rank, since)                                \
  if (RH_STATE_HOLDS(size, name##_length) && out->name && !st.name.empty()) \
    std::memcpy(out->name, st.name.data(), sizeof(double) * st.name.size());
    RH_STATE_ARRAYS(RH_COPY_ARRAY)
#undef RH_COPY_ARRAY
  }
#define RH_ARRAY_LENGTH_TO_ABI(name, rank, since) \
  if (RH_STATE_HOLDS(size, name##_length)) out->name##_length = static_cast<std::int64_t>(st.name.size());
  RH_STATE_ARRAYS(RH_ARRAY_LENGTH_TO_ABI)
#undef RH_ARRAY_LENGTH_TO_ABI
#define RH_SCALAR_TO_ABI(type, name, init, since) \
  if (RH_STATE_HOLDS(size, name)) out->name = scalar_to(st.name);
  RH_STATE_SCALARS(RH_SCALAR_TO_ABI)
#undef RH_SCALAR_TO_ABI
}

}  // namespace rh::abi
