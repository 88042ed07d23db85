// platform.hpp for Windows (MSVC or MinGW-w64). Paths arrive as UTF-8 and reach the system as UTF-16.
#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// after windows.h, which it needs
#include <tlhelp32.h>

#if defined(_M_X64) || defined(__x86_64__)
#include <intrin.h>
#endif

#include <fmt/format.h>
#include <algorithm>
#include <utility>

#include "platform.hpp"
#include "rh/error.hpp"

namespace rh::platform {

namespace {

std::string narrow(const wchar_t* text, int length) {
  const int bytes = ::WideCharToMultiByte(CP_UTF8, 0, text, length, nullptr, 0, nullptr, nullptr);
  std::string out(bytes > 0 ? static_cast<std::size_t>(bytes) : 0, '\0');
  if (bytes > 0) ::WideCharToMultiByte(CP_UTF8, 0, text, length, out.data(), bytes, nullptr, nullptr);
  return out;
}

// The system's text for an error code, in UTF-8, without its trailing line break.
std::string reason(DWORD code) {
  wchar_t* text = nullptr;
  const DWORD length = ::FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code,
      0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = length > 0 ? narrow(text, static_cast<int>(length)) : std::string();
  if (text != nullptr) ::LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ' || out.back() == '.'))
    out.pop_back();
  return out.empty() ? fmt::format("Windows error {}", code) : fmt::format("{} (Windows error {})", out, code);
}

[[noreturn]] void fail(const char* action, const std::string& path, DWORD code) {
  throw Error(Errc::invalid_argument, fmt::format("checkpoint: cannot {} {}: {}", action, path, reason(code)));
}

[[noreturn]] void refuse(const std::string& path, const char* what) {
  throw Error(Errc::invalid_argument, fmt::format("checkpoint: {} is {}", path, what));
}

// UTF-8 to the UTF-16 the system takes; a path that is not valid UTF-8 is refused, never guessed at.
std::wstring wide(const std::string& path) {
  if (path.empty()) return std::wstring();
  const int length = static_cast<int>(path.size());
  const int chars = ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.data(), length, nullptr, 0);
  if (chars <= 0) refuse(path, "not a valid UTF-8 path");
  std::wstring out(static_cast<std::size_t>(chars), L'\0');
  ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.data(), length, out.data(), chars);
  if (out.find(L'\0') != std::wstring::npos) refuse(path, "not a valid path (it holds a NUL character)");
  return out;
}

// The absolute form of a path (ReplaceFileW fails on relative ones under wine: ERROR_DIRECTORY).
std::wstring absolute(const std::wstring& path) {
  const DWORD chars = ::GetFullPathNameW(path.c_str(), 0, nullptr, nullptr);
  if (chars == 0) return path;
  std::wstring out(chars, L'\0');
  const DWORD written = ::GetFullPathNameW(path.c_str(), chars, out.data(), nullptr);
  if (written == 0 || written >= chars) return path;
  out.resize(written);
  return out;
}

// A reparse point is a symbolic link, a junction or a mount point; only the first has a POSIX name.
const char* reparse_kind(const std::wstring& path) {
  WIN32_FIND_DATAW found;
  const HANDLE search = ::FindFirstFileW(path.c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return "a reparse point";
  ::FindClose(search);
  return found.dwReserved0 == IO_REPARSE_TAG_SYMLINK ? "a symbolic link" : "a reparse point";
}

class Handle {
 public:
  explicit Handle(HANDLE h = INVALID_HANDLE_VALUE) : h_(h) {}
  ~Handle() {
    if (valid()) ::CloseHandle(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  bool valid() const { return h_ != INVALID_HANDLE_VALUE && h_ != nullptr; }
  HANDLE get() const { return h_; }
  void reset(HANDLE h) {
    if (valid()) ::CloseHandle(h_);
    h_ = h;
  }
  HANDLE release() { return std::exchange(h_, INVALID_HANDLE_VALUE); }
  bool close() { return ::CloseHandle(release()) != 0; }

 private:
  HANDLE h_;
};

void write_all(HANDLE file, const std::uint8_t* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(size, 1u << 30));
    DWORD written = 0;
    if (!::WriteFile(file, data, chunk, &written, nullptr)) fail("write", path, ::GetLastError());
    data += written;
    size -= written;
  }
}

}  // namespace

void replace_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  const std::wstring target = absolute(wide(path));
  const DWORD attributes = ::GetFileAttributesW(target.c_str());
  const bool exists = attributes != INVALID_FILE_ATTRIBUTES;
  if (!exists) {
    const DWORD error = ::GetLastError();  // a missing folder fails below, when the temporary file is created
    if (error != ERROR_FILE_NOT_FOUND && error != ERROR_PATH_NOT_FOUND) fail("inspect", path, error);
  }
  if (exists && (attributes & FILE_ATTRIBUTE_REPARSE_POINT)) refuse(path, reparse_kind(target));
  if (exists && (attributes & FILE_ATTRIBUTE_DIRECTORY)) refuse(path, "a directory");
  if (exists && (attributes & FILE_ATTRIBUTE_DEVICE)) refuse(path, "a device");

  // CREATE_NEW never opens an existing name, links included: a link at the temporary name fails the create.
  std::wstring temporary;
  Handle file;
  for (int attempt = 0; !file.valid(); ++attempt) {
    temporary = target + wide(fmt::format(".tmp-{:016x}", temporary_suffix()));
    file.reset(::CreateFileW(temporary.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                             FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr));
    const DWORD error = ::GetLastError();
    if (!file.valid() && ((error != ERROR_FILE_EXISTS && error != ERROR_ALREADY_EXISTS) || attempt == 99))
      fail("create a temporary file beside", path, error);
  }
  try {
    // Failures name the target: the temporary file's random name would tell the caller nothing.
    write_all(file.get(), data, size, path);
    if (!::FlushFileBuffers(file.get())) fail("flush", path, ::GetLastError());
    if (!file.close()) fail("close", path, ::GetLastError());
    // A replaced file keeps its security descriptor and attributes (ReplaceFileW), as POSIX keeps the permission
    // bits; a new one gets its folder's inherited permissions. The write-through move stands for the folder flush.
    const bool moved =
        exists ? ::ReplaceFileW(target.c_str(), temporary.c_str(), nullptr, REPLACEFILE_IGNORE_MERGE_ERRORS,
                                nullptr, nullptr) != 0
               : ::MoveFileExW(temporary.c_str(), target.c_str(), MOVEFILE_WRITE_THROUGH) != 0;
    if (!moved) fail("rename the finished checkpoint to", path, ::GetLastError());
  } catch (...) {
    ::DeleteFileW(temporary.c_str());
    throw;
  }
}

InputFile::InputFile(const std::string& path) : path_(path), handle_(-1) {
  // FILE_FLAG_BACKUP_SEMANTICS opens a directory too, so that it is named as one below; links are followed.
  Handle file(::CreateFileW(wide(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                            nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!file.valid()) fail("open", path, ::GetLastError());
  switch (::GetFileType(file.get())) {
    case FILE_TYPE_DISK: break;
    case FILE_TYPE_CHAR: refuse(path, "a device");
    case FILE_TYPE_PIPE: refuse(path, "a pipe");
    default: refuse(path, "not a regular file");
  }
  BY_HANDLE_FILE_INFORMATION info;
  if (!::GetFileInformationByHandle(file.get(), &info)) fail("inspect", path, ::GetLastError());
  if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) refuse(path, "a directory");
  handle_ = reinterpret_cast<std::intptr_t>(file.release());
}

InputFile::~InputFile() { ::CloseHandle(reinterpret_cast<HANDLE>(handle_)); }

std::size_t InputFile::read(std::uint8_t* buffer, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(size - done, 1u << 30));
    DWORD got = 0;
    if (!::ReadFile(reinterpret_cast<HANDLE>(handle_), buffer + done, chunk, &got, nullptr))
      fail("read", path_, ::GetLastError());
    if (got == 0) break;  // end of file
    done += got;
  }
  return done;
}

std::uint64_t process_id() noexcept { return static_cast<std::uint64_t>(::GetCurrentProcessId()); }

std::uint64_t physical_memory_bytes() noexcept {
  MEMORYSTATUSEX status;
  status.dwLength = sizeof(status);
  return ::GlobalMemoryStatusEx(&status) ? static_cast<std::uint64_t>(status.ullTotalPhys) : 0;
}

namespace {
// QueryThreadCycleTime counts the time-stamp counter's cycles (GetThreadTimes advances only at the scheduler tick,
// ~15.6 ms: too coarse for a batch of a few ms). Their rate, measured once against the performance counter over
// 20 ms; 0 where there is no time-stamp counter to read (not x86-64).
double cycles_per_second() noexcept {
#if defined(_M_X64) || defined(__x86_64__)
  static const double rate = [] {
    LARGE_INTEGER frequency, start, now;
    if (!::QueryPerformanceFrequency(&frequency) || !::QueryPerformanceCounter(&start)) return 0.0;
    const unsigned long long first = __rdtsc();
    do {
      ::Sleep(1);
      ::QueryPerformanceCounter(&now);
    } while (now.QuadPart - start.QuadPart < frequency.QuadPart / 50);
    const double seconds = static_cast<double>(now.QuadPart - start.QuadPart) / static_cast<double>(frequency.QuadPart);
    return static_cast<double>(__rdtsc() - first) / seconds;
  }();
  return rate;
#else
  return 0.0;
#endif
}

double cycle_seconds(HANDLE thread) noexcept {
  const double rate = cycles_per_second();
  ULONG64 cycles = 0;
  if (rate <= 0.0 || !::QueryThreadCycleTime(thread, &cycles)) return -1.0;
  return static_cast<double>(cycles) / rate;
}

// The calling thread's own handle for other threads to read its clock with, closed when the thread ends.
struct OwnThreadHandle {
  HANDLE handle = ::OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, ::GetCurrentThreadId());
  ~OwnThreadHandle() {
    if (handle != nullptr) ::CloseHandle(handle);
  }
};
}  // namespace

double thread_cpu_seconds() noexcept { return cycle_seconds(::GetCurrentThread()); }

bool thread_cpu_clock(std::intptr_t* clock) noexcept {
  thread_local OwnThreadHandle own;
  // A clock that cannot be read is none (wine does not implement QueryThreadCycleTime).
  if (own.handle == nullptr || cycle_seconds(own.handle) < 0.0) return false;
  *clock = reinterpret_cast<std::intptr_t>(own.handle);
  return true;
}

double thread_cpu_seconds(std::intptr_t clock) noexcept { return cycle_seconds(reinterpret_cast<HANDLE>(clock)); }

// Windows has no cheap count of the threads that run or wait for a core.
int runnable_threads() noexcept { return -1; }

namespace {
// The ids of this process's threads now (none when the system cannot list them).
std::vector<DWORD> thread_ids() {
  std::vector<DWORD> ids;
  const HANDLE snapshot = ::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
  if (snapshot == INVALID_HANDLE_VALUE) return ids;
  THREADENTRY32 entry{};
  entry.dwSize = sizeof(entry);
  const DWORD self = ::GetCurrentProcessId();
  for (BOOL more = ::Thread32First(snapshot, &entry); more; more = ::Thread32Next(snapshot, &entry))
    if (entry.th32OwnerProcessID == self) ids.push_back(entry.th32ThreadID);
  ::CloseHandle(snapshot);
  std::sort(ids.begin(), ids.end());
  return ids;
}
}  // namespace

std::vector<std::intptr_t> run_recording_new_threads(const std::function<void()>& start) {
  const std::vector<DWORD> before = thread_ids();
  start();
  std::vector<std::intptr_t> started;
  for (DWORD id : thread_ids()) {
    if (std::binary_search(before.begin(), before.end(), id)) continue;
    // A thread that has ended already, or that another of the program's threads started meanwhile and that has
    // ended by the time of the wait, costs nothing; one that cannot be opened is not waited for.
    if (HANDLE thread = ::OpenThread(SYNCHRONIZE, FALSE, id)) started.push_back(reinterpret_cast<std::intptr_t>(thread));
  }
  return started;
}

void wait_for_threads_to_end(std::vector<std::intptr_t>& threads, int count, double seconds) noexcept {
  const ULONGLONG deadline = ::GetTickCount64() + static_cast<ULONGLONG>(seconds * 1000.0);
  for (;;) {
    int ended = 0;
    for (std::intptr_t thread : threads)
      if (::WaitForSingleObject(reinterpret_cast<HANDLE>(thread), 0) == WAIT_OBJECT_0) ++ended;
    if (ended >= count || ::GetTickCount64() >= deadline) break;
    ::Sleep(1);
  }
  for (std::intptr_t thread : threads) ::CloseHandle(reinterpret_cast<HANDLE>(thread));
  threads.clear();
}

}  // namespace rh::platform
