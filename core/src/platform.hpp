// The library's only operating-system-specific code, behind a portable interface: checkpoint files and the process
// identity. platform_posix.cpp implements it for Linux/macOS/BSD, platform_win32.cpp for Windows (UTF-8 paths
// converted to UTF-16; CREATE_NEW temporary, FlushFileBuffers, ReplaceFileW / MoveFileExW(MOVEFILE_WRITE_THROUGH);
// reparse points refused; QueryThreadCycleTime for the thread clocks). CMake compiles the one for the target.
// Every failure throws rh::Error(Errc::invalid_argument) whose message names the path and the system's reason.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace rh::platform {

// Replaces the file at `path` by `size` bytes so that `path` is always either the old file or the complete new one,
// and the new one is on stable storage when this returns. The bytes go to a temporary file created exclusively
// (never through an existing name or link) with a unique name in `path`'s folder; it is flushed, renamed over
// `path`, and the folder is flushed. On failure the temporary file is removed and `path` is untouched.
// `path` must be absent or a regular file: a symbolic link or anything else there is refused, not followed.
// A replaced file's permission bits are kept; a new file gets the usual default (0666 less the umask on POSIX).
void replace_file(const std::string& path, const std::uint8_t* data, std::size_t size);

// A regular file open for reading. A symbolic link is followed; what it names must be a regular file (a directory,
// FIFO, socket or device is refused before anything is read, so opening can never block or read endlessly).
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to `size` bytes into `buffer`; fewer only at the end of the file.
  std::size_t read(std::uint8_t* buffer, std::size_t size);

 private:
  std::string path_;
  std::intptr_t handle_;  // a file descriptor (POSIX) or a HANDLE (Windows)
};

// Identifies this process, e.g. to notice that it is a child created by fork().
std::uint64_t process_id() noexcept;

// The random part of a temporary file's name (replace_file): unpredictable enough that another user cannot
// pre-create the names; the exclusive create makes a collision harmless anyway.
inline std::uint64_t temporary_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  try {
    std::random_device device;
    seed ^= (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (...) {
    // No entropy source: the clock, the process and the counter still make the name unique enough.
  }
  std::mt19937_64 mix(seed ^ (process_id() << 20) ^ counter.fetch_add(1));
  return mix();
}

// The host's physical memory in bytes (0 when unknown). Windows: GlobalMemoryStatusEx's ullTotalPhys.
std::uint64_t physical_memory_bytes() noexcept;

// Seconds of CPU time the calling thread has used (user and system), or -1 when the platform cannot say. It tells
// whether the thread waited for a core during an interval (rh/detail/thread_choice.hpp).
double thread_cpu_seconds() noexcept;

// The calling thread's CPU clock, for another thread to read with thread_cpu_seconds(clock) while this one lives
// (false when the platform has none). POSIX: pthread_getcpuclockid.
bool thread_cpu_clock(std::intptr_t* clock) noexcept;
// Seconds of CPU time the thread of `clock` has used, or -1 when it cannot be read (the thread has ended).
double thread_cpu_seconds(std::intptr_t clock) noexcept;

// The machine's threads that run or wait for a core now, the calling one included, or -1 when the platform cannot
// say. Linux: /proc/loadavg's fourth field (the whole machine's, also inside a container).
int runnable_threads() noexcept;

// Runs `start` and returns the threads it created and left running (Kokkos::initialize's host workers), for
// wait_for_threads_to_end. Kokkos::finalize tells those workers to stop but does not join them (they are
// detached), so they may still be on their way out when the program returns from main. A Windows process's exit
// ends every other thread wherever it is, and one ended while it held a lock of the C runtime or the heap leaves
// the exit waiting for that lock forever (docs/windows.md, "Shutdown"). POSIX: none are recorded, as the end of a
// process there runs nothing that such a thread could block.
std::vector<std::intptr_t> run_recording_new_threads(const std::function<void()>& start);
// Waits until `count` threads of `threads` have ended (the others, e.g. a GPU runtime's, live on to the process's
// end), at most `seconds` in all, then forgets them all (closes the handles).
void wait_for_threads_to_end(std::vector<std::intptr_t>& threads, int count, double seconds) noexcept;

}  // namespace rh::platform
