// platform.hpp for POSIX systems (see the header for what a Windows port writes instead).
#include "platform.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utility>

#include "rh/error.hpp"

namespace rh::platform {

namespace {

[[noreturn]] void fail(const char* action, const std::string& path, int err) {
  throw Error(Errc::invalid_argument, fmt::format("checkpoint: cannot {} {}: {}", action, path, std::strerror(err)));
}

[[noreturn]] void refuse(const std::string& path, const char* what) {
  throw Error(Errc::invalid_argument, fmt::format("checkpoint: {} is {}", path, what));
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int release() { return std::exchange(fd_, -1); }
  int close() { return ::close(release()); }

 private:
  int fd_;
};

void write_all(int fd, const std::uint8_t* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", path, errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void flush_folder(const std::string& folder) {
  Descriptor dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) fail("open the folder", folder, errno);
  // EINVAL: this file system cannot flush folders (the rename is then as durable as it can be made).
  if (::fsync(dir.get()) != 0 && errno != EINVAL) fail("flush the folder", folder, errno);
}

}  // namespace

void replace_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  struct stat target;
  const bool exists = ::lstat(path.c_str(), &target) == 0;
  if (!exists && errno != ENOENT) fail("inspect", path, errno);
  if (exists && !S_ISREG(target.st_mode)) refuse(path, kind_of(target.st_mode));

  // O_EXCL with O_CREAT never opens an existing name, links included (O_NOFOLLOW says so once more).
  std::string temporary;
  Descriptor file;
  for (int attempt = 0; file.get() < 0; ++attempt) {
    temporary = fmt::format("{}.tmp-{:016x}", path, temporary_suffix());
    file.reset(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (file.get() < 0 && (errno != EEXIST || attempt == 99)) fail("create a temporary file beside", path, errno);
  }
  try {
    // Failures name the target: the temporary file's random name would tell the caller nothing.
    write_all(file.get(), data, size, path);
    if (exists && ::fchmod(file.get(), target.st_mode & 0777) != 0) fail("set the permissions for", path, errno);
    if (::fsync(file.get()) != 0) fail("flush", path, errno);
    if (file.close() != 0) fail("close", path, errno);
    if (::rename(temporary.c_str(), path.c_str()) != 0) fail("rename the finished checkpoint to", path, errno);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  flush_folder(folder_of(path));
}

InputFile::InputFile(const std::string& path) : path_(path), handle_(-1) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below, before any read.
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) fail("open", path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) fail("inspect", path, errno);
  if (!S_ISREG(st.st_mode)) refuse(path, kind_of(st.st_mode));
  handle_ = fd.release();
}

InputFile::~InputFile() { ::close(static_cast<int>(handle_)); }

std::size_t InputFile::read(std::uint8_t* buffer, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(static_cast<int>(handle_), buffer + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("read", path_, errno);
    }
    if (n == 0) break;  // end of file
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::uint64_t process_id() noexcept { return static_cast<std::uint64_t>(::getpid()); }

std::uint64_t physical_memory_bytes() noexcept {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

namespace {
double clock_seconds(clockid_t clock) noexcept {
  timespec t{};
  if (::clock_gettime(clock, &t) != 0) return -1.0;
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
}  // namespace

double thread_cpu_seconds() noexcept {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  return clock_seconds(CLOCK_THREAD_CPUTIME_ID);
#else
  return -1.0;
#endif
}

bool thread_cpu_clock(std::intptr_t* clock) noexcept {
#if defined(_POSIX_THREAD_CPUTIME) && _POSIX_THREAD_CPUTIME >= 0
  clockid_t id{};
  if (::pthread_getcpuclockid(::pthread_self(), &id) != 0) return false;
  *clock = static_cast<std::intptr_t>(id);
  return true;
#else
  (void)clock;
  return false;
#endif
}

double thread_cpu_seconds(std::intptr_t clock) noexcept { return clock_seconds(static_cast<clockid_t>(clock)); }

int runnable_threads() noexcept {
  // "0.72 0.82 0.99 3/92 12281": the fourth field is runnable/total scheduling entities.
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128] = {};
  const ssize_t got = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (got <= 0) return -1;
  const char* p = text;
  for (int field = 0; field < 3; ++field) {
    while (*p != '\0' && *p != ' ') ++p;
    while (*p == ' ') ++p;
  }
  int running = 0, digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 9; ++p, ++digits) running = 10 * running + (*p - '0');
  return digits > 0 && *p == '/' ? running : -1;
}

std::vector<std::intptr_t> run_recording_new_threads(const std::function<void()>& start) {
  start();
  return {};
}

void wait_for_threads_to_end(std::vector<std::intptr_t>& threads, int, double) noexcept { threads.clear(); }

}  // namespace rh::platform
