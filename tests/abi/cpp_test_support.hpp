// Helpers shared by the tests of the C++ API: the space under test, the rh::Error a call throws, bitwise equality.
#pragma once
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "rh/error.hpp"
#include "rh/regressor.hpp"
#include "rh/types.hpp"

namespace cpp_test {

// AddressSanitizer's operator new ends the process on an impossible size instead of throwing std::bad_alloc, so a
// test of an allocation failure through operator new cannot run under it (malloc, as Kokkos uses, returns NULL).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool operator_new_can_fail = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool operator_new_can_fail = false;
#else
inline constexpr bool operator_new_can_fail = true;
#endif
#else
inline constexpr bool operator_new_can_fail = true;
#endif

// RH_TEST_SPACE selects the execution space (ctest sets it per entry); serial when unset.
inline rh::Space space_under_test() {
  const char* s = std::getenv("RH_TEST_SPACE");
  return rh::space_from_name(s ? s : "serial");
}

// The code and message of the rh::Error that f throws; the test fails when f throws anything else, or nothing.
inline std::pair<rh::Errc, std::string> failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const rh::Error& e) {
    return {e.code(), e.what()};
  } catch (const std::exception& e) {
    FAIL("not an rh::Error: " << std::string(e.what()));
  }
  FAIL("no rh::Error was thrown");
  return {rh::Errc::internal_error, ""};
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace cpp_test
