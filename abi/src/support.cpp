#include "support.hpp"

#include "platform.hpp"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <thread>
#include <utility>

namespace rh::abi {

// rh_status is rh::Errc plus success: the C codes must stay equal to the C++ ones.
static_assert(RH_INVALID_ARGUMENT == static_cast<int>(Errc::invalid_argument));
static_assert(RH_INVALID_STATE == static_cast<int>(Errc::invalid_state));
static_assert(RH_UNAVAILABLE == static_cast<int>(Errc::unavailable));
static_assert(RH_ALLOCATION_FAILED == static_cast<int>(Errc::allocation_failed));
static_assert(RH_NUMERICAL_ERROR == static_cast<int>(Errc::numerical_error));
static_assert(RH_DEVICE_ERROR == static_cast<int>(Errc::device_error));
static_assert(RH_CORRUPT_DATA == static_cast<int>(Errc::corrupt_data));
static_assert(RH_VERSION_MISMATCH == static_cast<int>(Errc::version_mismatch));
static_assert(RH_INTERNAL_ERROR == static_cast<int>(Errc::internal_error));

namespace {
// Fixed buffers: recording an error never allocates, so it cannot fail while reporting a failure.
thread_local char thread_error[kMessageCapacity] = "";
thread_local char thread_model_error[kMessageCapacity] = "";  // what rh_model_last_error last returned here

std::uintptr_t token_of(const rh_model* handle) { return reinterpret_cast<std::uintptr_t>(handle); }

class RuntimeThread {
 public:
  RuntimeThread() : worker_([this] { serve(); }) { worker_.detach(); }

  void run(const std::function<void()>& task) {
    // A forked child has no copy of this thread (nor of the OpenMP pool): refuse rather than wait forever.
    if (platform::process_id() != owner_pid_)
      throw Error(Errc::invalid_state, "the library cannot be used in a child process created by fork()");
    std::lock_guard<std::mutex> one_caller_at_a_time(submit_);
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = &task;
    done_ = false;
    wake_.notify_one();
    finished_.wait(lock, [this] { return done_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return task_ != nullptr; });
      const std::function<void()>* task = std::exchange(task_, nullptr);
      lock.unlock();
      std::exception_ptr error;
      try {
        (*task)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      error_ = error;
      done_ = true;
      finished_.notify_one();
    }
  }

  std::mutex submit_, mutex_;
  std::condition_variable wake_, finished_;
  const std::function<void()>* task_ = nullptr;
  std::exception_ptr error_;
  bool done_ = false;
  const std::uint64_t owner_pid_ = platform::process_id();
  std::thread worker_;  // last: starts once everything it uses exists
};

}  // namespace

void on_runtime_thread(const std::function<void()>& task) {
  // Never destroyed: the detached thread waits on its members until the process ends.
  static auto* runtime = new RuntimeThread;
  runtime->run(task);
}

void start_runtime(int host_threads, int device_id) {
  rh::RuntimeOptions options{host_threads, device_id};
  options.finalize_at_exit = false;  // not on the thread that exits: on the runtime thread, below
  rh::initialize_runtime(options);
#if !defined(_WIN32)
  static const bool registered = [] {
    std::atexit([] {
      try {
        on_runtime_thread([] { rh::finalize_runtime(); });
      } catch (...) {  // a forked child has no runtime thread: nothing of ours to finalize there
      }
    });
    return true;
  }();
  (void)registered;
#endif
}

Registry& registry() {
  static auto* instance = new Registry;  // never destroyed, see the header
  return *instance;
}

rh_model* Registry::add(std::shared_ptr<Model> model) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uintptr_t token = next_token_++;
  live_.emplace(token, std::move(model));
  return reinterpret_cast<rh_model*>(token);
}

std::shared_ptr<Model> Registry::find(const rh_model* handle) const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(token_of(handle));
  return it == live_.end() ? nullptr : it->second;
}

void not_live(const rh_model* handle) {
  if (!handle) throw Error(Errc::invalid_argument, "the model handle is NULL");
  throw Error(Errc::invalid_argument,
              fmt::format("{} is not a live model handle (destroyed, or never created)", static_cast<const void*>(handle)));
}

std::shared_ptr<Model> Registry::get(const rh_model* handle) const {
  std::shared_ptr<Model> model = find(handle);
  if (!model) not_live(handle);
  return model;
}

std::size_t Registry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.size();
}

std::shared_ptr<Model> Registry::take(const rh_model* handle) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto it = live_.find(token_of(handle));
  if (it == live_.end()) {
    lock.unlock();
    not_live(handle);
  }
  std::shared_ptr<Model> model = std::move(it->second);
  live_.erase(it);
  return model;
}

void copy_message(char (&to)[kMessageCapacity], const char* from) noexcept {
  std::snprintf(to, kMessageCapacity, "%s", from);
}

const char* model_last_error(const rh_model* handle) noexcept {
  if (!handle) return "rh_model_last_error: the model handle is NULL";
  const std::shared_ptr<Model> model = registry().find(handle);
  if (model) {
    std::lock_guard<std::mutex> guard(model->message);
    copy_message(thread_model_error, model->last_error);
    return thread_model_error;
  }
  return "rh_model_last_error: not a live model handle (destroyed, or never created)";
}

void clear_thread_error() noexcept { thread_error[0] = '\0'; }

rh_status fail(const char* function, rh_status status, const char* message) noexcept {
  std::snprintf(thread_error, kMessageCapacity, "%s: %s", function, message);
  return status;
}

}  // namespace rh::abi

extern "C" const char* rh_last_error(void) noexcept { return rh::abi::thread_error; }
