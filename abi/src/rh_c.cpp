// The C entry points: each one validates its arguments into C++ values, then calls rh::Regressor (which is
// transactional) or the checkpoint layer. Nothing is written to the caller's outputs before everything succeeded.
#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <string>
#include <vector>

#include "rh/checkpoint.hpp"
#include "rh/regressor.hpp"
#include "rh/rh.h"
#include "structs.hpp"
#include "support.hpp"

using rh::Errc;
using rh::Error;
using namespace rh::abi;

namespace {

const rh::SpaceInfo& space_at(const std::vector<rh::SpaceInfo>& spaces, std::int32_t index) {
  if (index < 0 || static_cast<std::size_t>(index) >= spaces.size())
    bad_argument(fmt::format("space index {} is out of range (this build has {} spaces)", index, spaces.size()));
  return spaces[static_cast<std::size_t>(index)];
}

rh_status update(rh_model* handle, const rh_batch* batch, rh_diagnostics* diagnostics, bool from_empty,
                 const char* function) {
  return with_model(handle, function, [&](Model& m) {
    const rh::Batch b = batch_from(batch);
    if (diagnostics) check_header(diagnostics, "diagnostics", Access::write);
    const rh::Diagnostics& d = from_empty ? m.regressor->fit(b) : m.regressor->partial_fit(b);
    if (diagnostics) write_diagnostics(d, diagnostics);
  });
}

// Writes one inference result (q or q·q values) to the caller's buffer of `length` values.
void write_values(const std::vector<double>& values, double* out, int64_t length, const char* name) {
  if (length < static_cast<int64_t>(values.size()))
    bad_argument(fmt::format("{} holds {} values, but the result has {}", name, length, values.size()));
  std::copy(values.begin(), values.end(), out);
}

// An inference call returning one array: the output is checked, computed, then written.
template <class F>
rh_status inference(const rh_model* handle, double* out, int64_t length, const char* function, F&& compute) {
  return with_model(handle, function, [&](Model& m) {
    require(out, "out");
    if (length < 0) bad_argument(fmt::format("length must be >= 0 (got {})", length));
    write_values(compute(*m.regressor), out, length, "out");
  });
}

}  // namespace

extern "C" {

uint32_t rh_abi_version(void) noexcept { return RH_ABI_VERSION; }

const char* rh_library_version(void) noexcept { return rh::library_version(); }

const char* rh_status_string(rh_status status) noexcept {
  if (status == RH_SUCCESS) return "success";
  if (status < RH_INVALID_ARGUMENT || status > RH_INTERNAL_ERROR) return "unknown status";
  return rh::errc_name(static_cast<Errc>(status));
}

rh_status rh_init(uint32_t abi_version, int32_t host_threads, int32_t device_id) noexcept {
  return run("rh_init", [&] {
    check_abi_version(abi_version, "the caller");
    if (host_threads < 0) bad_argument(fmt::format("host_threads must be >= 0 (got {})", host_threads));
    if (device_id < -1) bad_argument(fmt::format("device_id must be >= -1 (got {})", device_id));
    on_runtime_thread([&] { start_runtime(host_threads, device_id); });
  });
}

rh_status rh_finalize(void) noexcept {
  return run("rh_finalize", [&] {
    const std::size_t live = registry().size();
    if (live > 0)
      throw Error(Errc::invalid_state, fmt::format("{} model{} still alive: destroy every model first", live,
                                                   live == 1 ? " is" : "s are"));
    const std::size_t groups = group_registry().size();
    if (groups > 0)
      throw Error(Errc::invalid_state, fmt::format("{} model group{} still alive: destroy every group first", groups,
                                                   groups == 1 ? " is" : "s are"));
    on_runtime_thread([] { rh::finalize_runtime(); });
  });
}

rh_status rh_set_memory_limit(uint64_t bytes) noexcept {
  return run("rh_set_memory_limit", [&] { rh::set_memory_limit(bytes); });
}

rh_status rh_get_memory_limit(uint64_t* bytes) noexcept {
  return run("rh_get_memory_limit", [&] {
    require(bytes, "bytes");
    *bytes = rh::memory_limit();
  });
}

rh_status rh_space_count(int32_t* count) noexcept {
  return run("rh_space_count", [&] {
    require(count, "count");
    on_runtime_thread([&] {
      start_runtime(0, -1);
      *count = static_cast<int32_t>(rh::compiled_spaces().size());
    });
  });
}

rh_status rh_space_get(int32_t index, rh_space_info* info) noexcept {
  return run("rh_space_get", [&] {
    check_header(info, "info", Access::write);
    on_runtime_thread([&] {
      start_runtime(0, -1);
      write_space_info(space_at(rh::compiled_spaces(), index), info);
    });
  });
}

rh_status rh_space_name(int32_t space, const char** name) noexcept {
  return run("rh_space_name", [&] {
    require(name, "name");
    if (space < 1 || !rh::space_known(static_cast<rh::Space>(space - 1)))
      bad_argument(fmt::format("unknown execution space enum value {}", space));
    *name = rh::space_name(static_cast<rh::Space>(space - 1));
  });
}

rh_status rh_penalty_name(int32_t penalty, const char** name) noexcept {
  return run("rh_penalty_name", [&] {
    require(name, "name");
    if (penalty < 1 || !rh::penalty_known(static_cast<rh::Penalty>(penalty - 1)))
      bad_argument(fmt::format("unknown penalty enum value {}", penalty));
    *name = rh::penalty_name(static_cast<rh::Penalty>(penalty - 1));
  });
}

rh_status rh_config_init(rh_config* config) noexcept {
  return run("rh_config_init", [&] {
    check_header(config, "config", Access::write);
    write_config(default_settings(), config);
  });
}

rh_status rh_model_create(uint32_t abi_version, const rh_config* config, rh_model** model) noexcept {
  return run("rh_model_create", [&] {
    check_abi_version(abi_version, "the caller");
    require(model, "model");
    const ModelSettings s = settings_from(config);
    // Registered on the runtime thread too, so that a failed registration also tears the model down there.
    on_runtime_thread([&] {
      start_runtime(s.host_threads, s.device_id);
      auto created = std::make_shared<Model>(rh::Regressor(s.space, s.dtype, s.config, s.device_id), s.host_threads,
                                             concurrent_models(s.space));
      *model = registry().add(std::move(created));
    });
  });
}

rh_status rh_model_destroy(rh_model* model) noexcept {
  return run("rh_model_destroy", [&] {
    if (!model) return;  // like free(NULL)
    const std::shared_ptr<Model> dying = registry().take(model);  // from now on no call can find it
    std::lock_guard<std::mutex> lock(dying->call);                  // waits for the call in flight, if any
    if (dying->on_caller_thread) dying->regressor.reset();
    else on_runtime_thread([&] { dying->regressor.reset(); });
  });
}

const char* rh_model_last_error(const rh_model* model) noexcept { return model_last_error(model); }

rh_status rh_model_get_config(const rh_model* model, rh_config* config) noexcept {
  return with_model(model, "rh_model_get_config", [&](Model& m) {
    check_header(config, "config", Access::write);
    ModelSettings s;
    s.config = m.regressor->config();
    s.space = m.regressor->space();
    s.dtype = m.regressor->dtype();
    s.device_id = m.regressor->device_id();
    s.host_threads = m.host_threads;
    write_config(s, config);
  });
}

rh_status rh_model_partial_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) noexcept {
  return update(model, batch, diagnostics, false, "rh_model_partial_fit");
}

rh_status rh_model_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) noexcept {
  return update(model, batch, diagnostics, true, "rh_model_fit");
}

rh_status rh_model_predict(rh_model* model, const rh_batch* batch, void* out, int64_t out_length) noexcept {
  return with_model(model, "rh_model_predict", [&](Model& m) {
    const rh::Batch b = batch_from(batch);
    require(out, "out");
    if (out_length < 0) bad_argument(fmt::format("out_length must be >= 0 (got {})", out_length));
    if (b.x.rows > 0 && out_length < b.x.rows)
      bad_argument(fmt::format("out holds {} values, but X has {} rows", out_length, b.x.rows));
    m.regressor->predict(b.x, out, b.dtype, b.memory);
  });
}

rh_status rh_model_score(rh_model* model, const rh_batch* batch, double* r2) noexcept {
  return with_model(model, "rh_model_score", [&](Model& m) {
    const rh::Batch b = batch_from(batch);
    require(r2, "r2");
    *r2 = m.regressor->score(b);
  });
}

rh_status rh_model_diagnostics(const rh_model* model, rh_diagnostics* diagnostics) noexcept {
  return with_model(model, "rh_model_diagnostics", [&](Model& m) {
    check_header(diagnostics, "diagnostics", Access::write);
    write_diagnostics(m.regressor->diagnostics(), diagnostics);
  });
}

rh_status rh_model_reset(rh_model* model) noexcept {
  return with_model(model, "rh_model_reset", [&](Model& m) { m.regressor->reset(); });
}

rh_status rh_model_covariance(const rh_model* model, double* out, int64_t length) noexcept {
  return inference(model, out, length, "rh_model_covariance", [](const rh::Regressor& r) { return r.covariance(); });
}

rh_status rh_model_standard_errors(const rh_model* model, double* out, int64_t length) noexcept {
  return inference(model, out, length, "rh_model_standard_errors",
                   [](const rh::Regressor& r) { return r.standard_errors(); });
}

rh_status rh_model_z_statistics(const rh_model* model, double* out, int64_t length) noexcept {
  return inference(model, out, length, "rh_model_z_statistics", [](const rh::Regressor& r) { return r.z_statistics(); });
}

rh_status rh_model_p_values(const rh_model* model, double* out, int64_t length) noexcept {
  return inference(model, out, length, "rh_model_p_values", [](const rh::Regressor& r) { return r.p_values(); });
}

rh_status rh_model_confidence_intervals(const rh_model* model, double level, double* lower, double* upper,
                                        int64_t length) noexcept {
  return with_model(model, "rh_model_confidence_intervals", [&](Model& m) {
    require(lower, "lower");
    require(upper, "upper");
    if (length < 0) bad_argument(fmt::format("length must be >= 0 (got {})", length));
    const rh::ConfidenceIntervals ci = m.regressor->confidence_intervals(level);
    if (length < static_cast<int64_t>(ci.lower.size()))
      bad_argument(fmt::format("lower and upper hold {} values, but the result has {}", length, ci.lower.size()));
    std::copy(ci.lower.begin(), ci.lower.end(), lower);
    std::copy(ci.upper.begin(), ci.upper.end(), upper);
  });
}

rh_status rh_model_get_state(const rh_model* model, rh_state* state) noexcept {
  return with_model(model, "rh_model_get_state", [&](Model& m) {
    check_header(state, "state", Access::read);  // read: it carries the caller's buffers and capacities
    write_state(m.regressor->state(), state);
  });
}

rh_status rh_model_set_state(rh_model* model, const rh_state* state) noexcept {
  return with_model(model, "rh_model_set_state", [&](Model& m) {
    m.regressor->set_state(state_from(state));
  });
}

rh_status rh_model_save_checkpoint(const rh_model* model, void* buffer, int64_t capacity, int64_t* size) noexcept {
  return with_model(model, "rh_model_save_checkpoint", [&](Model& m) {
    require(size, "size");
    copy_checkpoint(rh::save_checkpoint(*m.regressor), buffer, capacity, size);
  });
}

rh_status rh_model_save_checkpoint_file(const rh_model* model, const char* path) noexcept {
  return with_model(model, "rh_model_save_checkpoint_file", [&](Model& m) {
    require(path, "path");
    rh::save_checkpoint_file(*m.regressor, path);
  });
}

rh_status rh_model_load_checkpoint(rh_model* model, const void* data, int64_t size) noexcept {
  return with_model(model, "rh_model_load_checkpoint", [&](Model& m) {
    const std::size_t n = checkpoint_size(data, size);
    rh::load_checkpoint(*m.regressor, static_cast<const std::uint8_t*>(data), n);
  });
}

rh_status rh_model_load_checkpoint_file(rh_model* model, const char* path) noexcept {
  return with_model(model, "rh_model_load_checkpoint_file", [&](Model& m) {
    require(path, "path");
    rh::load_checkpoint_file(*m.regressor, path);
  });
}

}  // extern "C"
