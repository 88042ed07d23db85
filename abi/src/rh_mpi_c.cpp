// The C entry points of rh/rh_mpi.h (library renewable_huber_mpi): a model whose batches are spread over MPI
// processes. The model is an ordinary one (rh_c.cpp) with an rh::mpi::Spread attached, which makes its updates and
// its checkpoint files collective.
#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <vector>

#include "mpi_spread.hpp"
#include "rh/rh_mpi.h"
#include "structs.hpp"
#include "support.hpp"

using rh::Errc;
using rh::Error;
using namespace rh::abi;

namespace {

rh::mpi::Spread& spread_of(Model& m, const char* function) {
  if (!m.spread)
    throw Error(Errc::invalid_argument, fmt::format("{}: the model was not created by rh_mpi_model_create", function));
  return *m.spread;
}

// This process's spread models (rh_mpi_model_create), the destroyed ones dropped as they are found.
std::mutex spread_mutex;
std::vector<rh_model*> spread_handles;

// The one live spread model of this process, or NULL when it holds none or several.
rh_model* only_spread_model() {
  std::lock_guard<std::mutex> lock(spread_mutex);
  std::vector<rh_model*> live;
  for (rh_model* h : spread_handles)
    if (registry().find(h)) live.push_back(h);
  spread_handles = live;
  return live.size() == 1 ? live[0] : nullptr;
}

// body(spread, model) for the spread model of `handle`, a collective call. A process whose handle is no spread
// model (NULL, destroyed, or a plain model) cannot reach the communicator the others are waiting on; when it holds
// exactly one spread model, it takes part in that model's call as a failed process, so that every process returns
// the same status and no model changes (otherwise it can only fail alone: rh/rh_mpi.h).
template <class F>
rh_status with_spread_model(const rh_model* handle, const char* function, F&& body) {
  const std::shared_ptr<Model> given = registry().find(handle);
  if (!given || !given->spread) {
    if (rh_model* only = only_spread_model(); only && only != handle)
      return with_model(only, function, [&](Model& m) {
        m.spread->collectively([&] {
          if (!handle) throw Error(Errc::invalid_argument, fmt::format("{}: the model handle is NULL", function));
          if (!given) not_live(handle);
          spread_of(*given, function);
        });
      });
  }
  return with_model(handle, function, [&](Model& m) { body(spread_of(m, function)); });
}

rh_status update(rh_model* handle, const rh_batch* batch, rh_diagnostics* diagnostics, bool from_empty,
                 const char* function) {
  return with_spread_model(handle, function, [&](rh::mpi::Spread& spread) {
    rh::Batch b;
    spread.collectively([&] {  // a malformed struct on one process is an error on all
      b = batch_from(batch);
      if (diagnostics) check_header(diagnostics, "diagnostics", Access::write);
    });
    const rh::Diagnostics& d = spread.update(b, from_empty, from_empty ? "fit" : "partial_fit");
    if (diagnostics) write_diagnostics(d, diagnostics);
  });
}

}  // namespace

extern "C" {

rh_status rh_mpi_model_create(uint32_t abi_version, const rh_config* config, MPI_Fint comm, rh_model** model) noexcept {
  return run("rh_mpi_model_create", [&] {
    const MPI_Comm c = MPI_Comm_f2c(comm);
    // The communicator first: from there on, every failure is every process's.
    auto spread = std::make_shared<rh::mpi::Spread>(c);
    ModelSettings s;
    bool concurrent = false;
    spread->collectively([&] {
      check_abi_version(abi_version, "the caller");
      if (!model) throw Error(Errc::invalid_argument, "model is a NULL pointer");
      s = settings_from(config);
    });
    on_runtime_thread([&] {
      spread->collectively([&] {
        start_runtime(s.host_threads, s.device_id);
        concurrent = concurrent_models(s.space);
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        if (!concurrent && provided < MPI_THREAD_SERIALIZED)
          throw Error(Errc::unavailable,
                      "this build makes a model's calls on the library's runtime thread: initialize MPI with "
                      "MPI_Init_thread and MPI_THREAD_SERIALIZED (or MPI_THREAD_MULTIPLE)");
      });
      std::shared_ptr<Model> created;
      spread->collectively([&] {
        created =
            std::make_shared<Model>(rh::Regressor(s.space, s.dtype, s.config, s.device_id), s.host_threads, concurrent);
      });
      spread->attach(*created->regressor);
      created->spread = spread;
      *model = registry().add(std::move(created));
      std::lock_guard<std::mutex> lock(spread_mutex);
      spread_handles.push_back(*model);
    });
  });
}

rh_status rh_mpi_model_partial_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) noexcept {
  return update(model, batch, diagnostics, false, "rh_mpi_model_partial_fit");
}

rh_status rh_mpi_model_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) noexcept {
  return update(model, batch, diagnostics, true, "rh_mpi_model_fit");
}

rh_status rh_mpi_model_save_checkpoint_file(const rh_model* model, const char* path) noexcept {
  return with_spread_model(model, "rh_mpi_model_save_checkpoint_file", [&](rh::mpi::Spread& spread) {
    spread.collectively([&] {
      if (!path) throw Error(Errc::invalid_argument, "path is a NULL pointer");
    });
    spread.save_checkpoint_file(path);
  });
}

rh_status rh_mpi_model_load_checkpoint_file(rh_model* model, const char* path) noexcept {
  return with_spread_model(model, "rh_mpi_model_load_checkpoint_file", [&](rh::mpi::Spread& spread) {
    spread.collectively([&] {
      if (!path) throw Error(Errc::invalid_argument, "path is a NULL pointer");
    });
    spread.load_checkpoint_file(path);
  });
}

}  // extern "C"
