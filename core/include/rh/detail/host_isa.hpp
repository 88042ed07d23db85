// The instruction set the host kernels' inner loops run with. On x86-64, GCC and Clang compile them twice: for the
// baseline ISA (SSE2) and for AVX2, and the AVX2 copy runs where the CPU has it (docs/performance.md, "Host kernels
// and the CPU"). AVX2 without FMA: no multiply-add is contracted, and every sum keeps its order and lanes, so the
// two copies give the same bits; results do not depend on the CPU (tests/parity checks both copies).
// RH_HOST_ISA=baseline in the environment keeps the baseline copy.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

namespace rh::detail {

struct BaselineIsa {
  static constexpr int vector_bytes = 16;
};
struct Avx2Isa {
  static constexpr int vector_bytes = 32;
};

// x86-64 host code compiled by GCC or Clang: where an AVX2 copy of the host kernels can exist.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__NVCC__) && !defined(__CUDA_ARCH__)
#define RH_HOST_X86_GNU 1
// The CPU has AVX2 and RH_HOST_ISA is not "baseline" (read once; core/src/host_isa.cpp). Declared and defined in
// every such build, -march=native included: code compiled without -march (a test, a user's program instantiating
// the kernels) dispatches with it even where the library itself was built for this CPU.
bool host_avx2_enabled();
#else
#define RH_HOST_X86_GNU 0
#endif

#if RH_HOST_X86_GNU && !defined(__AVX2__)
#define RH_HOST_AVX2_DISPATCH 1

// flatten: everything f calls is inlined here and compiled for AVX2 (a function without the attribute may be
// inlined into one with it, not the other way round).
template <class F>
__attribute__((target("avx2"), flatten)) void run_avx2(const F& f) {
  f(Avx2Isa{});
}
#else
#define RH_HOST_AVX2_DISPATCH 0
#endif

// "avx2" or "baseline": what the host kernels of this process run with (for records and reports).
const char* host_isa_name();

// f(isa) with the ISA this process's host kernels use. A build for an AVX2 CPU (-march) uses it everywhere.
template <class F>
KOKKOS_INLINE_FUNCTION void run_host_isa(const F& f) {
#if RH_HOST_AVX2_DISPATCH
  if (host_avx2_enabled()) {
    run_avx2(f);
    return;
  }
  f(BaselineIsa{});
#elif defined(__AVX2__)
  f(Avx2Isa{});
#else
  f(BaselineIsa{});
#endif
}

// Whether a space's (or a view's) memory is host memory: its kernels take their host paths. A host walks a q × q
// matrix by rows; a device's threads take entries e = i·q + j of a flat range (coalesced), a decode that costs a
// host an integer division per entry.
template <class SpaceOrView>
inline constexpr bool host_memory_v = std::is_same<typename SpaceOrView::memory_space, Kokkos::HostSpace>::value;

// Host launches over the rows of a triangle: index p takes rows p and q − 1 − p, so that a launch over
// paired_rows(q) indices gives each index the same work.
KOKKOS_INLINE_FUNCTION long long paired_rows(long long q) { return (q + 1) / 2; }
template <class F>
KOKKOS_INLINE_FUNCTION void for_paired_rows(long long p, long long q, const F& row) {
  row(p);
  if (q - 1 - p != p) row(q - 1 - p);
}

}  // namespace rh::detail
