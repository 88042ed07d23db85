// Whether the host kernels take their AVX2 copy (rh/detail/host_isa.hpp).
#include "rh/detail/host_isa.hpp"

#include <cstdlib>
#include <cstring>

namespace rh::detail {

#if RH_HOST_X86_GNU
bool host_avx2_enabled() {
  static const bool enabled = [] {
    const char* choice = std::getenv("RH_HOST_ISA");
    if (choice && std::strcmp(choice, "baseline") == 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;  // also checks that the OS saves the AVX registers
  }();
  return enabled;
}
#endif

const char* host_isa_name() {
#if RH_HOST_AVX2_DISPATCH
  return host_avx2_enabled() ? "avx2" : "baseline";
#elif defined(__AVX2__)
  return "avx2";
#else
  return "baseline";
#endif
}

}  // namespace rh::detail
