// The C entry points of model groups (rh_group_*): like rh_c.cpp's, each validates its arguments into C++ values,
// then calls rh::RegressorGroup (whose calls change nothing when they throw). Nothing is written to the caller's
// outputs before everything succeeded.
#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <limits>

#include "rh/checkpoint.hpp"
#include "rh/group.hpp"
#include "rh/rh.h"
#include "structs.hpp"
#include "support.hpp"

using rh::Errc;
using rh::Error;
using namespace rh::abi;

namespace {

// The group batch of the C arguments: the rh_batch (checked by batch_from) and the caller's offsets, which must hold
// exactly the group's n_models + 1 values, so that no more than the caller gave is ever read.
rh::GroupBatch group_batch_from(const rh::RegressorGroup& group, const rh_batch* batch, const int64_t* offsets,
                                int64_t offsets_length) {
  const rh::Batch b = batch_from(batch);
  require(offsets, "offsets");
  if (offsets_length != group.n_models() + 1)
    bad_argument(fmt::format("offsets_length is {}, but a group of {} models needs {} offsets", offsets_length,
                             group.n_models(), group.n_models() + 1));
  rh::GroupBatch g;
  g.x = b.x;
  g.y = b.y;
  g.weights = b.weights;
  g.offsets = offsets;
  g.dtype = b.dtype;
  g.memory = b.memory;
  return g;
}

}  // namespace

extern "C" {

rh_status rh_group_create(uint32_t abi_version, const rh_config* config, int64_t n_models, int64_t n_features,
                          rh_group** group) noexcept {
  return run("rh_group_create", [&] {
    check_abi_version(abi_version, "the caller");
    require(group, "group");
    const ModelSettings s = settings_from(config);
    // Registered on the runtime thread too, so that a failed registration also tears the group down there.
    on_runtime_thread([&] {
      start_runtime(s.host_threads, s.device_id);
      auto created = std::make_shared<Group>(
          rh::RegressorGroup(s.space, s.dtype, s.config, n_models, n_features, s.device_id), s.host_threads,
          concurrent_models(s.space));
      *group = group_registry().add(std::move(created));
    });
  });
}

rh_status rh_group_destroy(rh_group* group) noexcept {
  return run("rh_group_destroy", [&] {
    if (!group) return;  // like free(NULL)
    const std::shared_ptr<Group> dying = group_registry().take(group);  // from now on no call can find it
    std::lock_guard<std::mutex> lock(dying->call);                      // waits for the call in flight, if any
    if (dying->on_caller_thread) dying->group.reset();
    else on_runtime_thread([&] { dying->group.reset(); });
  });
}

const char* rh_group_last_error(const rh_group* group) noexcept { return group_last_error(group); }

rh_status rh_group_get_config(const rh_group* group, rh_config* config) noexcept {
  return with_group(group, "rh_group_get_config", [&](Group& g) {
    check_header(config, "config", Access::write);
    ModelSettings s;
    s.config = g.group->config();
    s.space = g.group->space();
    s.dtype = g.group->dtype();
    s.device_id = g.group->device_id();
    s.host_threads = g.host_threads;
    write_config(s, config);
  });
}

rh_status rh_group_n_models(const rh_group* group, int64_t* n_models) noexcept {
  return with_group(group, "rh_group_n_models", [&](Group& g) {
    require(n_models, "n_models");
    *n_models = g.group->n_models();
  });
}

rh_status rh_group_n_features(const rh_group* group, int64_t* n_features) noexcept {
  return with_group(group, "rh_group_n_features", [&](Group& g) {
    require(n_features, "n_features");
    *n_features = g.group->n_features();
  });
}

rh_status rh_group_partial_fit(rh_group* group, const rh_batch* batch, const int64_t* offsets, int64_t offsets_length,
                               int64_t* committed) noexcept {
  return with_group(group, "rh_group_partial_fit", [&](Group& g) {
    const rh::GroupBatch b = group_batch_from(*g.group, batch, offsets, offsets_length);
    const std::int64_t n = g.group->partial_fit(b);
    if (committed) *committed = n;
  });
}

rh_status rh_group_predict(rh_group* group, const rh_batch* batch, const int64_t* offsets, int64_t offsets_length,
                           void* out, int64_t out_length) noexcept {
  return with_group(group, "rh_group_predict", [&](Group& g) {
    const rh::GroupBatch b = group_batch_from(*g.group, batch, offsets, offsets_length);
    require(out, "out");
    if (out_length < 0) bad_argument(fmt::format("out_length must be >= 0 (got {})", out_length));
    if (out_length < b.x.rows) bad_argument(fmt::format("out holds {} values, but X has {} rows", out_length, b.x.rows));
    g.group->predict(b, out, b.dtype);
  });
}

rh_status rh_group_get_state(const rh_group* group, int64_t model, rh_state* state) noexcept {
  return with_group(group, "rh_group_get_state", [&](Group& g) {
    check_header(state, "state", Access::read);  // read: it carries the caller's buffers and capacities
    write_state(g.group->state(model), state);
  });
}

rh_status rh_group_diagnostics(const rh_group* group, int64_t model, rh_diagnostics* diagnostics) noexcept {
  return with_group(group, "rh_group_diagnostics", [&](Group& g) {
    check_header(diagnostics, "diagnostics", Access::write);
    write_diagnostics(g.group->diagnostics(model), diagnostics);
  });
}

rh_status rh_group_model_status(const rh_group* group, int64_t model, rh_status* model_status, char* message,
                                int64_t capacity) noexcept {
  return with_group(group, "rh_group_model_status", [&](Group& g) {
    require(model_status, "model_status");
    if (message && capacity < 1)
      bad_argument(fmt::format("capacity must be >= 1 when message is given (got {})", capacity));
    const std::optional<Errc> code = g.group->status(model);
    const std::string& why = g.group->status_message(model);
    *model_status = code ? status_of(*code) : RH_SUCCESS;
    if (message) {
      const std::size_t n = std::min<std::size_t>(why.size(), static_cast<std::uint64_t>(capacity) - 1);
      std::memcpy(message, why.data(), n);
      message[n] = '\0';
    }
  });
}

rh_status rh_group_set_state(rh_group* group, int64_t model, const rh_state* state) noexcept {
  return with_group(group, "rh_group_set_state", [&](Group& g) { g.group->set_state(model, state_from(state)); });
}

rh_status rh_group_reset(rh_group* group, int64_t model) noexcept {
  return with_group(group, "rh_group_reset", [&](Group& g) { g.group->reset(model); });
}

rh_status rh_group_save_checkpoint(const rh_group* group, void* buffer, int64_t capacity, int64_t* size) noexcept {
  return with_group(group, "rh_group_save_checkpoint", [&](Group& g) {
    require(size, "size");
    copy_checkpoint(rh::save_checkpoint(*g.group), buffer, capacity, size);
  });
}

rh_status rh_group_save_checkpoint_file(const rh_group* group, const char* path) noexcept {
  return with_group(group, "rh_group_save_checkpoint_file", [&](Group& g) {
    require(path, "path");
    rh::save_checkpoint_file(*g.group, path);
  });
}

rh_status rh_group_load_checkpoint(rh_group* group, const void* data, int64_t size) noexcept {
  return with_group(group, "rh_group_load_checkpoint", [&](Group& g) {
    const std::size_t n = checkpoint_size(data, size);
    rh::load_checkpoint(*g.group, static_cast<const std::uint8_t*>(data), n);
  });
}

rh_status rh_group_load_checkpoint_file(rh_group* group, const char* path) noexcept {
  return with_group(group, "rh_group_load_checkpoint_file", [&](Group& g) {
    require(path, "path");
    rh::load_checkpoint_file(*g.group, path);
  });
}

}  // extern "C"
