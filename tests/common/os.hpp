// The tests' only operating-system-specific code (the library's is core/src/platform_*.cpp): what a test needs from
// the system beyond the C++ standard library. os_posix.cpp and os_win32.cpp implement it; CMake compiles the one
// for the target. Where the system has no such thing, the function says so and the test states what it skipped.
#pragma once
#include <cstdint>
#include <string>

namespace test_os {

// Creates a FIFO at `path`; false where file systems have none (Windows: pipes live outside them, under \\.\pipe).
bool make_fifo(const std::string& path);

// Creates a symbolic link at `link` to `target`; false where the system or this user cannot (Windows without the
// privilege or developer mode; wine).
bool make_symlink(const std::string& target, const std::string& link);

// Writes junk to the FIFO at `path` from a thread of its own until destroyed, for a reader that would wait for a
// writer (SIGPIPE blocked in that thread: a write after the reader closed fails instead of ending the process).
class FifoWriter {
 public:
  explicit FifoWriter(const std::string& path);
  ~FifoWriter();
  FifoWriter(const FifoWriter&) = delete;
  FifoWriter& operator=(const FifoWriter&) = delete;

 private:
  struct State;
  State* state_;
};

// While it lives, files of this process cannot grow past `bytes` (a write beyond fails with an error, not a
// signal); active() is false where the system has no such limit (Windows).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::uint64_t bytes);
  ~FileSizeLimit();
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  std::uint64_t old_[2] = {0, 0};
  void (*old_handler_)(int) = nullptr;
};

// Runs `child` in a child process created by fork() and returns its exit status (-1: it did not exit normally);
// false where the system has no fork (Windows).
bool run_forked(int (*child)(), int* status);

// The most memory this process has held in RAM so far, in KiB (POSIX: getrusage's ru_maxrss; Windows: the peak
// working set).
long long peak_memory_kib();

// Bytes this process has read so far through the system (Linux: /proc/self/io's rchar; Windows:
// GetProcessIoCounters' ReadTransferCount); -1 where the system does not count them. Under wine a Windows program
// must not read /proc/self/io: that counts wine's own reads too (its server's pipes), thousands of bytes a call.
long long bytes_read_so_far();

// A device that reads without end (/dev/zero), or one that is not a file at all where there is none (Windows: NUL);
// its kind as the library names it ("a device").
const char* device_path();

}  // namespace test_os
