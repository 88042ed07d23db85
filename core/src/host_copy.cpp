// Host-to-host copies of large caller arrays into the staging slots, split over a few threads: one thread copies
// pageable into pinned memory far slower than the transfers that follow, so the copy, not the link, would set the
// host-input time (docs/performance.md, "Why the code is so").
#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>

#include "rh/detail/staging_pool.hpp"

namespace rh::detail {

void copy_host(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t min_piece = std::size_t{1} << 20;  // below this a thread's start costs more than it saves
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t pieces = std::min<std::size_t>({host_copy_threads, cores, std::max<std::size_t>(1, bytes / min_piece)});
  const std::size_t step = (bytes + pieces - 1) / pieces;
  const auto piece = [&](std::size_t k) {
    const std::size_t o = k * step;
    if (o < bytes) std::memcpy(static_cast<char*>(dst) + o, static_cast<const char*>(src) + o, std::min(step, bytes - o));
  };
  std::thread helpers[host_copy_threads];
  std::size_t started = 0;
  try {
    for (; started + 1 < pieces; ++started) helpers[started] = std::thread(piece, started + 1);
  } catch (const std::system_error&) {  // no more threads: the caller copies what was not handed out
  }
  piece(0);
  for (std::size_t k = started + 1; k < pieces; ++k) piece(k);
  for (std::size_t k = 0; k < started; ++k) helpers[k].join();
}

}  // namespace rh::detail
