#include "structs.hpp"

#include <cstddef>
#include <cstring>
#include <fmt/format.h>

#include "rh/error.hpp"

namespace rh::abi {

// The layouts of docs/abi.md, frozen for ABI major 1 (64-bit platforms). A change here is an ABI break.
static_assert(sizeof(void*) == 8, "the documented struct layouts are those of 64-bit platforms");
static_assert(sizeof(rh_config) == 80 && offsetof(rh_config, tau) == 8 && offsetof(rh_config, ridge) == 40 &&
              offsetof(rh_config, penalty) == 48 && offsetof(rh_config, max_iter) == 56 &&
              offsetof(rh_config, dtype) == 60 && offsetof(rh_config, space) == 64 &&
              offsetof(rh_config, host_threads) == 72 && offsetof(rh_config, reserved0) == 76);
static_assert(sizeof(rh_batch) == 72 && offsetof(rh_batch, x) == 8 && offsetof(rh_batch, weights) == 24 &&
              offsetof(rh_batch, rows) == 32 && offsetof(rh_batch, ld) == 48 && offsetof(rh_batch, layout) == 56 &&
              offsetof(rh_batch, memory) == 64 && offsetof(rh_batch, reserved0) == 68);
static_assert(sizeof(rh_diagnostics) == 48 && offsetof(rh_diagnostics, iterations) == 8 &&
              offsetof(rh_diagnostics, objective) == 24 && offsetof(rh_diagnostics, bandwidth) == 40);
static_assert(sizeof(rh_state) == 88 && offsetof(rh_state, coefficients) == 8 &&
              offsetof(rh_state, coefficients_length) == 24 && offsetof(rh_state, n_features) == 40 &&
              offsetof(rh_state, previous_lambda) == 64 && offsetof(rh_state, fit_intercept) == 80 &&
              offsetof(rh_state, reserved0) == 84);
static_assert(sizeof(rh_space_info) == 40 && offsetof(rh_space_info, space) == 8 &&
              offsetof(rh_space_info, name) == 24);

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
static_assert(RH_SPACE_SERIAL == static_cast<int>(Space::serial) + 1 &&
              RH_SPACE_OPENMP == static_cast<int>(Space::openmp) + 1 && RH_SPACE_CUDA == static_cast<int>(Space::cuda) + 1);
static_assert(RH_PENALTY_NONE == static_cast<int>(Penalty::none) + 1 && RH_PENALTY_L1 == static_cast<int>(Penalty::l1) + 1);

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

void check_header(const void* s, std::size_t known_size, const char* what, Access access) {
  if (!s) bad_argument(fmt::format("{} is a NULL pointer", what));
  Header h;
  std::memcpy(&h, s, sizeof h);
  check_abi_version(h.abi_version, what);
  if (h.struct_size < known_size)
    throw Error(Errc::version_mismatch, fmt::format("{}.struct_size is {}, smaller than the {} bytes of ABI {}", what,
                                                    h.struct_size, known_size, abi_string(RH_ABI_VERSION)));
  if (h.struct_size > kMaxStructSize)
    throw Error(Errc::version_mismatch,
                fmt::format("{}.struct_size is {}, beyond any version of this struct (max {})", what, h.struct_size,
                            kMaxStructSize));
  if (access == Access::write) return;
  const auto* bytes = static_cast<const unsigned char*>(s);
  for (std::size_t i = known_size; i < h.struct_size; ++i)
    if (bytes[i] != 0)
      throw Error(Errc::version_mismatch,
                  fmt::format("{} sets byte {} (of {}), a field newer than this library's ABI {}; it cannot be "
                              "honoured",
                              what, i, h.struct_size, abi_string(RH_ABI_VERSION)));
}

ModelSettings default_settings() {
  ModelSettings s;
  s.space = space_from(RH_ABI_DEFAULT_SPACE);
  return s;
}

ModelSettings settings_from(const rh_config* c) {
  check_header(c, "config", Access::read);
  check_reserved(c->reserved0, "config");
  ModelSettings s;
  s.config.tau = c->tau;
  s.config.lambda_scale = c->lambda_scale;
  s.config.bandwidth_scale = c->bandwidth_scale;
  s.config.tol = c->tol;
  s.config.ridge = c->ridge;
  s.config.penalty = penalty_from(c->penalty);
  s.config.fit_intercept = flag_from(c->fit_intercept, "config.fit_intercept");
  s.config.max_iter = c->max_iter;
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
  out->space = space_to(info.space);
  out->device_count = info.device_count;
  out->concurrency = info.concurrency;
  out->reserved0 = 0;
  std::memset(out->name, 0, sizeof out->name);
  std::snprintf(out->name, sizeof out->name, "%s", info.name.c_str());
}

State state_from(const rh_state* s) {
  check_header(s, "state", Access::read);
  check_reserved(s->reserved0, "state");
  const std::int64_t q = s->coefficients_length, q2 = s->information_length;
  if (q < 0 || q2 < 0)
    bad_argument(fmt::format("state lengths must be >= 0 (coefficients_length {}, information_length {})", q, q2));
  if (q > 0 && !s->coefficients) bad_argument("state.coefficients is NULL but coefficients_length is not 0");
  if (q2 > 0 && !s->information) bad_argument("state.information is NULL but information_length is not 0");
  // Before reading anything: the two lengths must describe one q x q matrix (q <= 2^31 keeps q*q exact).
  if (q > (std::int64_t{1} << 31) || q2 != q * q)
    throw Error(Errc::invalid_state, fmt::format("invalid state: information_length {} is not coefficients_length "
                                                 "squared ({} squared)",
                                                 q2, q));
  State st;
  st.n_features = s->n_features;
  st.fit_intercept = flag_from(s->fit_intercept, "state.fit_intercept");
  st.n_samples_seen = s->n_samples_seen;
  st.batch_count = s->batch_count;
  st.previous_lambda = s->previous_lambda;
  st.weight_sum = s->weight_sum;
  st.coefficients.assign(s->coefficients, s->coefficients + q);
  st.information.assign(s->information, s->information + q2);
  return st;
}

void write_state(const State& st, rh_state* out) {
  check_reserved(out->reserved0, "state");
  const auto q = static_cast<std::int64_t>(st.coefficients.size());
  const auto q2 = static_cast<std::int64_t>(st.information.size());
  const bool lengths_only = !out->coefficients && !out->information;
  if (!lengths_only) {
    if (q > 0 && (!out->coefficients || !out->information))
      bad_argument("give both state.coefficients and state.information, or neither to query the lengths");
    if (out->coefficients_length < q || out->information_length < q2)
      bad_argument(fmt::format("the buffers hold {} coefficients and {} information values, but the state has {} "
                               "and {}",
                               out->coefficients_length, out->information_length, q, q2));
    if (q > 0) std::memcpy(out->coefficients, st.coefficients.data(), sizeof(double) * st.coefficients.size());
    if (q2 > 0) std::memcpy(out->information, st.information.data(), sizeof(double) * st.information.size());
  }
  out->coefficients_length = q;
  out->information_length = q2;
  out->n_features = st.n_features;
  out->n_samples_seen = st.n_samples_seen;
  out->batch_count = st.batch_count;
  out->previous_lambda = st.previous_lambda;
  out->weight_sum = st.weight_sum;
  out->fit_intercept = st.fit_intercept ? 1 : 0;
}

}  // namespace rh::abi
