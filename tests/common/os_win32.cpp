// tests/common/os.hpp for Windows: no FIFOs in the file system, no file size limit, no fork.
#include "common/os.hpp"

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <psapi.h>

#include <string>

namespace test_os {

namespace {
std::wstring wide(const std::string& utf8) {
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n > 0 ? n : 0), L'\0');
  if (n > 0) ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), out.data(), n);
  return out;
}
}  // namespace

bool make_fifo(const std::string&) { return false; }

bool make_symlink(const std::string& target, const std::string& link) {
#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif
  // Developer mode lets an unprivileged user create links; elsewhere this needs SeCreateSymbolicLinkPrivilege.
  const std::wstring name = wide(link);
  if (!::CreateSymbolicLinkW(name.c_str(), wide(target).c_str(), SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE)) return false;
  // Only a reparse point counts (an emulation that made something else is no link).
  const DWORD attributes = ::GetFileAttributesW(name.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
}

struct FifoWriter::State {};
FifoWriter::FifoWriter(const std::string&) : state_(nullptr) {}
FifoWriter::~FifoWriter() = default;

FileSizeLimit::FileSizeLimit(std::uint64_t) {}
FileSizeLimit::~FileSizeLimit() = default;

bool run_forked(int (*)(), int* status) {
  *status = -1;
  return false;
}

const char* device_path() { return "NUL"; }

long long bytes_read_so_far() {
  IO_COUNTERS counters;
  if (!::GetProcessIoCounters(::GetCurrentProcess(), &counters)) return -1;
  return static_cast<long long>(counters.ReadTransferCount);
}

long long peak_memory_kib() {
  PROCESS_MEMORY_COUNTERS counters;
  if (!::GetProcessMemoryInfo(::GetCurrentProcess(), &counters, sizeof counters)) return -1;
  return static_cast<long long>(counters.PeakWorkingSetSize / 1024);
}

}  // namespace test_os
