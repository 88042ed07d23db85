// Turning foreign exceptions of an engine call into rh::Error (rh::Regressor, rh::RegressorGroup), so that only
// typed errors leave the API.
#pragma once
#include <exception>
#include <fmt/format.h>
#include <new>
#include <string>

#include "rh/error.hpp"

namespace rh {

// Kokkos reports a failed allocation of any memory space as a std::runtime_error ("... memory space failed to
// allocate ..." in 4.x, "Kokkos failed to allocate memory ..." or "Memory allocation failure" in 3.4, on the host
// and on CUDA alike); its type says nothing more.
inline bool is_allocation_failure(const std::exception& e) {
  const std::string what = e.what();
  return what.find("allocate") != std::string::npos || what.find("allocation failure") != std::string::npos;
}

// Runs an engine call, turning foreign exceptions into rh::Error so that only typed errors leave the API.
template <class F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(Errc::allocation_failed, fmt::format("{}: out of memory", what));
  } catch (const std::exception& e) {
    if (is_allocation_failure(e)) throw Error(Errc::allocation_failed, fmt::format("{}: {}", what, e.what()));
    throw Error(Errc::device_error, fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace rh
