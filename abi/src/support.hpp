// What every C entry point shares: exception capture into an rh_status, the last-error messages, and the
// registries of live model and group handles.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rh/group.hpp"
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
  bool live() const { return regressor.has_value(); }
};

// One live model group behind a handle (rh_group_*), with the same rules as Model.
struct Group {
  Group(RegressorGroup g, int threads, bool concurrent)
      : group(std::move(g)), host_threads(threads), on_caller_thread(concurrent) {}
  std::mutex call;
  std::optional<RegressorGroup> group;  // guarded by `call`
  int host_threads;
  const bool on_caller_thread;
  std::mutex message;
  char last_error[kMessageCapacity] = "";  // guarded by `message`
  bool live() const { return group.has_value(); }
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

// Live handles of one kind (models, groups). A handle is a token that is never reused, by either kind, so a
// destroyed handle stays invalid for good, even when a new model or group is created afterwards, and a handle of one
// kind is never live in the other's registry. Objects are shared: a call in flight keeps its object alive while
// another thread removes the handle.
std::uintptr_t next_handle_token();
// Throws Errc::invalid_argument naming a NULL or dead handle of `kind`.
[[noreturn]] void not_live_handle(const void* handle, const char* kind);
template <class Handle, class Object>
class HandleRegistry {
 public:
  explicit HandleRegistry(const char* kind) : kind_(kind) {}
  Handle* add(std::shared_ptr<Object> object) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uintptr_t token = next_handle_token();
    live_.emplace(token, std::move(object));
    return reinterpret_cast<Handle*>(token);
  }
  // The live object of `handle`; throws Errc::invalid_argument for NULL or a handle that is not live.
  std::shared_ptr<Object> get(const Handle* handle) const {
    std::shared_ptr<Object> object = find(handle);
    if (!object) not_live(handle);
    return object;
  }
  std::shared_ptr<Object> find(const Handle* handle) const noexcept {  // nullptr when not live
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = live_.find(reinterpret_cast<std::uintptr_t>(handle));
    return it == live_.end() ? nullptr : it->second;
  }
  std::shared_ptr<Object> take(const Handle* handle) {  // removes it; throws like get()
    std::shared_ptr<Object> object;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = live_.find(reinterpret_cast<std::uintptr_t>(handle));
      if (it != live_.end()) {
        object = std::move(it->second);
        live_.erase(it);
      }
    }
    if (!object) not_live(handle);
    return object;
  }
  std::size_t size() const {  // live objects
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  [[noreturn]] void not_live(const Handle* handle) const { not_live_handle(handle, kind_); }
  const char* kind() const noexcept { return kind_; }

 private:
  const char* kind_;  // "model", "group": for messages
  mutable std::mutex mutex_;
  std::unordered_map<std::uintptr_t, std::shared_ptr<Object>> live_;
};
using Registry = HandleRegistry<rh_model, Model>;
using GroupRegistry = HandleRegistry<rh_group, Group>;
[[noreturn]] inline void not_live(const rh_model* handle) { not_live_handle(handle, "model"); }
Registry& registry();  // process-wide, never destroyed (models left alive at exit are not torn down)
GroupRegistry& group_registry();  // likewise for groups

void clear_thread_error() noexcept;
rh_status fail(const char* function, rh_status status, const char* message) noexcept;
void copy_message(char (&to)[kMessageCapacity], const char* from) noexcept;
// rh_model_last_error, rh_group_last_error: a copy of the object's message in a buffer of the calling thread, or a
// static text for a NULL or dead handle.
const char* model_last_error(const rh_model* handle) noexcept;
const char* group_last_error(const rh_group* handle) noexcept;

[[noreturn]] inline void bad_argument(const std::string& message) { throw Error(Errc::invalid_argument, message); }
template <class T>
void require(const T* p, const char* what) {
  if (!p) bad_argument(std::string(what) + " is a NULL pointer");
}

// The checkpoint calls' buffer protocol (rh_model_save_checkpoint, rh_group_save_checkpoint): `buffer` NULL asks for
// the size; otherwise `capacity` must hold the bytes. *size is set on success only.
void copy_checkpoint(const std::vector<std::uint8_t>& bytes, void* buffer, int64_t capacity, int64_t* size);
// A caller's checkpoint (data, size) checked: size >= 0, data given unless size is 0, size within this platform's.
std::size_t checkpoint_size(const void* data, int64_t size);

// Whether objects of `space` run their calls on the calling thread (rh::SpaceInfo::concurrent_models); call it on the
// runtime thread, after start_runtime.
bool concurrent_models(Space space);

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

// run() with body(object) on the runtime thread (or the calling thread, see Model), for the live object of `handle`,
// holding the object's call mutex; the outcome's message is also kept on the object.
template <class Handle, class Object, class F>
rh_status with_live(const HandleRegistry<Handle, Object>& live, const Handle* handle, const char* function,
                    F&& body) noexcept {
  std::shared_ptr<Object> object;
  std::unique_lock<std::mutex> lock;
  const rh_status status = run(function, [&] {
    object = live.get(handle);
    lock = std::unique_lock<std::mutex>(object->call);
    if (!object->live()) live.not_live(handle);  // destroyed while this call waited
    if (object->on_caller_thread) body(*object);
    else on_runtime_thread([&] { body(*object); });
  });
  if (lock && object->live()) {
    std::lock_guard<std::mutex> guard(object->message);
    copy_message(object->last_error, rh_last_error());
  }
  return status;
}

template <class F>
rh_status with_model(const rh_model* handle, const char* function, F&& body) noexcept {
  return with_live(registry(), handle, function, std::forward<F>(body));
}

template <class F>
rh_status with_group(const rh_group* handle, const char* function, F&& body) noexcept {
  return with_live(group_registry(), handle, function, std::forward<F>(body));
}

}  // namespace rh::abi
