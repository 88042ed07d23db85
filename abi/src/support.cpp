#include "support.hpp"

#include "platform.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
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
thread_local char thread_model_error[kMessageCapacity] = "";  // what rh_model_/rh_group_last_error last returned here

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

void copy_checkpoint(const std::vector<std::uint8_t>& bytes, void* buffer, int64_t capacity, int64_t* size) {
  require(size, "size");
  if (capacity < 0) bad_argument(fmt::format("capacity must be >= 0 (got {})", capacity));
  const auto needed = static_cast<int64_t>(bytes.size());
  if (buffer) {
    if (capacity < needed)
      bad_argument(fmt::format("the buffer holds {} bytes, but the checkpoint needs {}", capacity, needed));
    std::memcpy(buffer, bytes.data(), bytes.size());
  }
  *size = needed;
}

std::size_t checkpoint_size(const void* data, int64_t size) {
  if (size < 0) bad_argument(fmt::format("size must be >= 0 (got {})", size));
  if (size > 0) require(data, "data");
  if (static_cast<std::uint64_t>(size) > std::numeric_limits<std::size_t>::max())
    bad_argument(fmt::format("size {} does not fit in this platform's address space", size));
  return static_cast<std::size_t>(size);
}

bool concurrent_models(Space space) {
  for (const rh::SpaceInfo& info : rh::compiled_spaces())
    if (info.space == space) return info.concurrent_models;
  return false;
}

std::uintptr_t next_handle_token() {
  static std::atomic<std::uintptr_t> next{1};  // 0 would be NULL
  return next.fetch_add(1);
}

Registry& registry() {
  static auto* instance = new Registry("model");  // never destroyed, see the header
  return *instance;
}

GroupRegistry& group_registry() {
  static auto* instance = new GroupRegistry("group");
  return *instance;
}

void not_live_handle(const void* handle, const char* kind) {
  if (!handle) throw Error(Errc::invalid_argument, fmt::format("the {} handle is NULL", kind));
  throw Error(Errc::invalid_argument,
              fmt::format("{} is not a live {} handle (destroyed, or never created)", handle, kind));
}

void copy_message(char (&to)[kMessageCapacity], const char* from) noexcept {
  std::snprintf(to, kMessageCapacity, "%s", from);
}

namespace {
template <class Handle, class Object>
const char* last_error_of(const HandleRegistry<Handle, Object>& live, const Handle* handle, const char* null_message,
                          const char* dead_message) noexcept {
  if (!handle) return null_message;
  const std::shared_ptr<Object> object = live.find(handle);
  if (object) {
    std::lock_guard<std::mutex> guard(object->message);
    copy_message(thread_model_error, object->last_error);
    return thread_model_error;
  }
  return dead_message;
}
}  // namespace

const char* model_last_error(const rh_model* handle) noexcept {
  return last_error_of(registry(), handle, "rh_model_last_error: the model handle is NULL",
                       "rh_model_last_error: not a live model handle (destroyed, or never created)");
}

const char* group_last_error(const rh_group* handle) noexcept {
  return last_error_of(group_registry(), handle, "rh_group_last_error: the group handle is NULL",
                       "rh_group_last_error: not a live group handle (destroyed, or never created)");
}

void clear_thread_error() noexcept { thread_error[0] = '\0'; }

rh_status fail(const char* function, rh_status status, const char* message) noexcept {
  std::snprintf(thread_error, kMessageCapacity, "%s: %s", function, message);
  return status;
}

}  // namespace rh::abi

extern "C" const char* rh_last_error(void) noexcept { return rh::abi::thread_error; }
