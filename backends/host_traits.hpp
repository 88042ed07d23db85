// What the host spaces (Serial, OpenMP) share: host memory and the host kernel paths, where a team is one thread
// and teams are the unit of parallelism.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <fmt/format.h>
#include <limits>

#include "rh/detail/compat.hpp"
#include "rh/error.hpp"
#include "rh/types.hpp"

namespace rh::backends {

template <class ExecutionSpace, Space Id>
struct HostTraits {
  using execution_space = ExecutionSpace;
  static constexpr Space id = Id;
  static constexpr bool host = true;
  using calling_thread = void;  // a host space's own threads (OpenMP overrides it)
  static constexpr int team_size = 1;
  static constexpr int group_team_size = 1;
  static constexpr int gram_tile = 16;  // unused: the host Gram path has its own fixed 16-wide blocks
  static constexpr int gram_wide_tile = 0;  // no register-tiled team path (the host path already is one)
  static constexpr int stage_rows = 32;
  // Row chunks: the count depends only on n and q (Passes::chunks_for), never on the thread count, so results
  // are bitwise identical for any number of OpenMP threads. 64 teams keep a many-core host busy.
  static constexpr long long min_chunks = 8;
  static constexpr long long max_chunks = 64;
  // Host arrays are read in place: no staging (the members exist for the concept).
  using staging_space = Kokkos::HostSpace;
  static constexpr long long staging_chunk_bytes = 4LL << 20;
  static int lu_team_size(long long /*q*/) { return 1; }  // one thread: the row-by-row LU vectorizes
  // One Cholesky panel: the whole factorization by one thread in one launch, its updates along contiguous rows.
  static int cholesky_panel(long long q) { return static_cast<int>(q); }

  static int device_count() { return 1; }
  static int concurrency() { return compat::concurrency(ExecutionSpace()); }
  // Each engine its own instance where Kokkos has them (>= 4; compat.hpp): models on different threads run at once.
  static constexpr bool independent_instances = compat::independent_instances;
  static ExecutionSpace instance(int /*device_id*/) { return compat::independent_instance(ExecutionSpace()); }
  // Host memory is bounded by the memory limit alone (rh::memory_limit, by default the physical memory).
  static std::uint64_t available_memory(int /*device_id*/) { return std::numeric_limits<std::uint64_t>::max(); }
  static void check_device_pointer(const void*, const char* what, int /*device_id*/) {
    throw Error(Errc::invalid_argument,
                fmt::format("{} was passed as device memory, but this execution space has no device memory", what));
  }
  static void check_host_pointer(const void*, const char*) {}  // host memory is all a host space knows
};

}  // namespace rh::backends
