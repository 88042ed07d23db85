// Which execution spaces this build has (the generated list of backends/), Kokkos start-up, and the engine
// factory over them. Nothing here names a space: each one's traits say what it is.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <thread>

#include "platform.hpp"
#include "rh/detail/compat.hpp"
#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/engine_base.hpp"
#include "rh/detail/group/engine_base.hpp"
#include "rh/regressor.hpp"

namespace rh {
namespace detail {
#define RH_DECLARE_FACTORY(name, TRAITS, ARG) \
  extern template std::unique_ptr<EngineBase> make_engine_for<TRAITS>(Dtype, int);
RH_FOR_EACH_COMPILED_SPACE(RH_DECLARE_FACTORY, unused)
#undef RH_DECLARE_FACTORY
#define RH_DECLARE_GROUP_FACTORY(name, TRAITS, ARG)                                   \
  extern template std::unique_ptr<GroupEngineBase> make_group_engine_for<TRAITS>(Dtype, int, long long, long long, \
                                                                                 bool);
RH_FOR_EACH_COMPILED_SPACE(RH_DECLARE_GROUP_FACTORY, unused)
#undef RH_DECLARE_GROUP_FACTORY

// Calls f(Tag<Traits>) for the compiled space `space`; returns whether there is one.
template <class F>
bool with_compiled_space(Space space, F&& f) {
  bool found = false;
  for_each_type(CompiledSpaces{}, [&](auto tag) {
    if (!found && decltype(tag)::type::id == space) {
      found = true;
      f(tag);
    }
  });
  return found;
}
}  // namespace detail

namespace {
std::mutex init_mutex;
bool initialized_by_us = false;
// The threads Kokkos::initialize started (Windows only; platform.hpp says why some are waited for).
std::vector<std::intptr_t> kokkos_threads;

// The workers Kokkos::finalize lets go: the Threads backend's pool less the calling thread. A GPU runtime's threads,
// started by the same initialize, live on to the process's end and are not waited for.
int host_workers() {
#if defined(KOKKOS_ENABLE_THREADS)
  if (Kokkos::Threads::impl_is_initialized()) return Kokkos::Threads().concurrency() - 1;
#endif
  return 0;
}

void finalize_kokkos() {
  const int workers = host_workers();
  Kokkos::finalize();
  platform::wait_for_threads_to_end(kokkos_threads, workers, 5.0);  // they end within milliseconds of being let go
}

void finalize_at_exit() {
  if (Kokkos::is_initialized()) finalize_kokkos();
}
}  // namespace

int max_host_threads() {
  const unsigned cpus = std::thread::hardware_concurrency();  // 0 when unknown
  return std::max(64, 8 * static_cast<int>(std::min(cpus, 1u << 20)));
}

void initialize_runtime(const RuntimeOptions& options) {
  // Checked even when Kokkos already runs: a value that would end the process at start-up is refused everywhere.
  if (options.num_threads > max_host_threads())
    throw Error(Errc::invalid_argument,
                fmt::format("host_threads {} is more than this library allows (8 per logical CPU, at least 64)",
                            options.num_threads));
  std::lock_guard<std::mutex> lock(init_mutex);
  if (Kokkos::is_initialized()) return;  // the host program (or an earlier call) owns the configuration
  if (initialized_by_us)  // Kokkos cannot be initialized twice in one process
    throw Error(Errc::invalid_state, "Kokkos was already finalized; the library cannot be used any more");
  try {
    kokkos_threads = platform::run_recording_new_threads(
        [&] { compat::initialize_kokkos(options.num_threads, options.device_id); });
  } catch (const std::exception& e) {  // e.g. a CUDA build on a machine without a usable GPU driver
    throw Error(Errc::unavailable, fmt::format("Kokkos could not be initialized: {}", e.what()));
  }
  if (options.finalize_at_exit) std::atexit(finalize_at_exit);
  initialized_by_us = true;
}

void finalize_runtime() {
  std::lock_guard<std::mutex> lock(init_mutex);
  if (initialized_by_us && Kokkos::is_initialized()) finalize_kokkos();
  initialized_by_us = true;  // from now on initialize_runtime refuses, whether or not Kokkos had been started
}

std::vector<SpaceInfo> compiled_spaces() {
  initialize_runtime();
  std::vector<SpaceInfo> out;
  detail::for_each_type(detail::CompiledSpaces{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_assert(space_has_own_memory(T::id) == !T::host, "cmake/RhSpaces.cmake's RH_HOST_SPACES and the traits agree");
    out.push_back({T::id, space_name(T::id), T::concurrency(), T::device_count(), T::independent_instances,
                   space_has_own_memory(T::id)});
  });
  return out;
}

bool space_compiled(Space space) { return detail::with_compiled_space(space, [](auto) {}); }

int device_count(Space space) {
  int count = 0;
  detail::with_compiled_space(space, [&](auto tag) { count = decltype(tag)::type::device_count(); });
  return count;
}

std::string kokkos_version() {
  return fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100);
}

void detail::check_host_pointer(const void* ptr, const char* what) {
  for_each_type(CompiledSpaces{}, [&](auto tag) { decltype(tag)::type::check_host_pointer(ptr, what); });
}

namespace {
// Refuses a space that is not compiled in (or not a space at all).
[[noreturn]] void space_unavailable(Space space) {
  if (!space_known(space))
    throw Error(Errc::invalid_argument, fmt::format("unknown execution space enum value {}", static_cast<int>(space)));
  throw Error(Errc::unavailable,
              fmt::format("execution space {} is not compiled into this build of the library", space_name(space)));
}
}  // namespace

std::unique_ptr<detail::EngineBase> detail::make_engine(Space space, Dtype dtype, int device_id) {
  std::unique_ptr<EngineBase> engine;
  if (with_compiled_space(space, [&](auto tag) { engine = make_engine_for<typename decltype(tag)::type>(dtype, device_id); }))
    return engine;
  space_unavailable(space);
}

std::unique_ptr<detail::GroupEngineBase> detail::make_group_engine(Space space, Dtype dtype, int device_id,
                                                                   long long n_models, long long p,
                                                                   bool fit_intercept) {
  std::unique_ptr<GroupEngineBase> engine;
  if (with_compiled_space(space, [&](auto tag) {
        engine = make_group_engine_for<typename decltype(tag)::type>(dtype, device_id, n_models, p, fit_intercept);
      }))
    return engine;
  space_unavailable(space);
}

}  // namespace rh
