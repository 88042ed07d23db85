// What every C entry point shares: exception capture into an rh_status, the last-error messages, and the
// registry of live model handles.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "rh/regressor.hpp"
#include "rh/rh.h"

namespace rh::mpi {
class Spread;  // a model whose batches are spread over MPI processes (rh/rh_mpi.h; the MPI library only)
}  // namespace rh::mpi

namespace rh::abi {

constexpr std::size_t kMessageCapacity = 1024;

// One live model behind a handle. Calls on one handle hold its `call` mutex from the lookup to the end, so they run
// one at a time and a destroy waits until none is in flight; `regressor` is empty once the model was destroyed
// (a call that was waiting for the mutex then finds it so and reports a dead handle).
struct Model {
  Model(Regressor r, int threads, bool concurrent)
      : regressor(std::move(r)), host_threads(threads), on_caller_thread(concurrent) {}
  std::mutex call;
  std::optional<Regressor> regressor;  // guarded by `call`
  int host_threads;                    // as requested at creation (applies only if that creation started the runtime)
  // Its space runs models concurrently (rh::SpaceInfo::concurrent_models): calls run on the calling thread, not on
  // the runtime thread.
  const bool on_caller_thread;
  // Its own mutex, so that reading the message never waits for a call in flight.
  std::mutex message;
  char last_error[kMessageCapacity] = "";  // guarded by `message`
  // Set for a model of rh_mpi_model_create (library renewable_huber_mpi), whose updates it makes; guarded by `call`.
  std::shared_ptr<mpi::Spread> spread;
};

// Runs `task` on the library's runtime thread, waits for it, and rethrows here whatever it threw. Starting the
// runtime, creating and destroying models, and every call on a model whose space shares one execution-space instance
// (Traits::independent_instances false: Kokkos 3.4, or a device space) go through it: Kokkos 3.4 works only on the thread that initialized it (the OpenMP instance
// is thread-local) and its default instances are not reentrant (Serial keeps one global team scratch buffer).
// Callers on any thread are thus served, one call at a time. A model whose space gives it an instance of its own
// (Kokkos >= 4, host spaces) runs its calls on the calling thread instead, in parallel with other models.
void on_runtime_thread(const std::function<void()>& task);

// Starts the runtime (rh::initialize_runtime) with these settings; call it on the runtime thread. Kokkos is finalized
// at exit on the runtime thread too, where it was initialized (Kokkos 3.4's Threads refuses any other thread), except
// in a Windows DLL: its exit handlers run at process detach, after Windows has ended the Threads workers that
// Kokkos::finalize waits for, and the process would never end; rh_finalize does it there (docs/abi.md, "Lifecycle").
void start_runtime(int host_threads, int device_id);

// Live handles. A handle is a token that is never reused, so a destroyed handle stays invalid for good, even when
// a new model is created afterwards. Models are shared: a call in flight keeps its model alive while another thread
// removes the handle.
class Registry {
 public:
  rh_model* add(std::shared_ptr<Model> model);
  // The live model of `handle`; throws Errc::invalid_argument for NULL or a handle that is not live.
  std::shared_ptr<Model> get(const rh_model* handle) const;
  std::shared_ptr<Model> find(const rh_model* handle) const noexcept;  // nullptr when not live
  std::shared_ptr<Model> take(const rh_model* handle);  // removes it; throws like get()
  std::size_t size() const;  // live models

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::uintptr_t, std::shared_ptr<Model>> live_;
  std::uintptr_t next_token_ = 1;  // 0 would be NULL
};
[[noreturn]] void not_live(const rh_model* handle);
Registry& registry();  // process-wide, never destroyed (models left alive at exit are not torn down)

void clear_thread_error() noexcept;
rh_status fail(const char* function, rh_status status, const char* message) noexcept;
void copy_message(char (&to)[kMessageCapacity], const char* from) noexcept;
// rh_model_last_error: a copy of the model's message in a buffer of the calling thread, or a static text for a NULL
// or dead handle.
const char* model_last_error(const rh_model* handle) noexcept;

inline rh_status status_of(Errc code) noexcept { return static_cast<rh_status>(code); }  // 1:1, asserted in support.cpp

// Runs body(), turning every exception into its status and this thread's message. Clears the message first.
template <class F>
rh_status run(const char* function, F&& body) noexcept {
  clear_thread_error();
  try {
    body();
    return RH_SUCCESS;
  } catch (const Error& e) {
    return fail(function, status_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(function, RH_ALLOCATION_FAILED, "out of memory");
  } catch (const std::length_error& e) {
    return fail(function, RH_ALLOCATION_FAILED, e.what());
  } catch (const std::exception& e) {
    return fail(function, RH_INTERNAL_ERROR, e.what());
  } catch (...) {
    return fail(function, RH_INTERNAL_ERROR, "an exception of unknown type");
  }
}

// run() with body(regressor) on the runtime thread (or the calling thread, see Model), for the live model of `handle`, holding the model's call mutex;
// the outcome's message is also kept on the model.
template <class F>
rh_status with_model(const rh_model* handle, const char* function, F&& body) noexcept {
  std::shared_ptr<Model> model;
  std::unique_lock<std::mutex> lock;
  const rh_status status = run(function, [&] {
    model = registry().get(handle);
    lock = std::unique_lock<std::mutex>(model->call);
    if (!model->regressor) not_live(handle);  // destroyed while this call waited
    if (model->on_caller_thread) body(*model);
    else on_runtime_thread([&] { body(*model); });
  });
  if (lock && model->regressor) {
    std::lock_guard<std::mutex> guard(model->message);
    copy_message(model->last_error, rh_last_error());
  }
  return status;
}

}  // namespace rh::abi
