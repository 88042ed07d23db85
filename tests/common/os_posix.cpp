// tests/common/os.hpp for POSIX systems.
#include "common/os.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace test_os {

bool make_fifo(const std::string& path) { return ::mkfifo(path.c_str(), 0600) == 0; }

bool make_symlink(const std::string& target, const std::string& link) { return ::symlink(target.c_str(), link.c_str()) == 0; }

struct FifoWriter::State {
  std::atomic<bool> done{false};
  std::thread thread;
};

FifoWriter::FifoWriter(const std::string& path) : state_(new State) {
  state_->thread = std::thread([path, state = state_] {
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    while (!state->done) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) {
        const char junk[] = "junk on a pipe";
        (void)!::write(fd, junk, sizeof junk);
        ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
}

FifoWriter::~FifoWriter() {
  state_->done = true;
  state_->thread.join();
  delete state_;
}

FileSizeLimit::FileSizeLimit(std::uint64_t bytes) {
  struct rlimit old_limit;
  if (::getrlimit(RLIMIT_FSIZE, &old_limit) != 0) return;
  old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  struct rlimit small = old_limit;
  small.rlim_cur = static_cast<rlim_t>(bytes);
  active_ = ::setrlimit(RLIMIT_FSIZE, &small) == 0;
  old_[0] = static_cast<std::uint64_t>(old_limit.rlim_cur);
  old_[1] = static_cast<std::uint64_t>(old_limit.rlim_max);
  if (!active_) std::signal(SIGXFSZ, old_handler_);
}

FileSizeLimit::~FileSizeLimit() {
  if (!active_) return;
  struct rlimit old_limit;
  old_limit.rlim_cur = static_cast<rlim_t>(old_[0]);
  old_limit.rlim_max = static_cast<rlim_t>(old_[1]);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler_);
}

bool run_forked(int (*child)(), int* status) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    *status = -1;
    return true;
  }
  if (pid == 0) ::_exit(child());  // no doctest in the child, only an exit code
  int raw = 0;
  *status = ::waitpid(pid, &raw, 0) == pid && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return true;
}

const char* device_path() { return "/dev/zero"; }

long long bytes_read_so_far() {
  std::ifstream io("/proc/self/io");  // Linux only: elsewhere the file does not open and this says -1
  std::string key;
  long long value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return -1;
}

long long peak_memory_kib() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace test_os
