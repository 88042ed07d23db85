// The Gram/gradient pass (Passes::gram_gradient), its delta Gram included: the functor, its dispatch and the
// rules every path shares. Each path is a named piece in its own file (included below): the host's register
// blocks, its SIMD pieces, and the team paths of spaces with their own memory.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/host_simd/row_block.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// Per-chunk partial sums of the weighted Gram Σ c_i x_i x_iᵀ (upper tile pairs) and of the data gradient
// Σ s_i x_i. League = chunks × (tile pairs + gradient tiles). Each entry is a sum over the chunk's rows in row
// order; chunks are summed in order by ReduceAndAssemble, so the result does not depend on the thread count.
// With `use_changes` (the delta Gram), a chunk whose AcceptStep listed its changed rows (count ≥ 0) adds
// Σ Δc_i x_i x_iᵀ over those rows, in row order, to its partial Gram instead of recomputing it: within a batch
// φ is flat (0 or 1) outside the ramps τ ± h, so few rows change once the iterates settle.
//  - Spaces with their own memory (one 256-thread team per job): the team stages `stage_rows` rows of its two
//    column tiles in scratch (coalesced reads of column-major X) and each thread owns one entry of the block
//    (R = 1, tiles of up to 16), or for wide q an R×R block of a 16R × 16R tile held in registers (R > 1: 2R
//    scratch loads per R² multiply-adds instead of 2 per 1). Every entry is the same sum in the same order
//    either way (per staged block of rows from zero, then added to the entry), so R changes no result.
//  - Host spaces (one thread per team): the block is accumulated one output row at a time in registers,
//    reading row-major X directly, so the inner loop is a contiguous, vectorizable axpy.

template <class Traits, class S, class XView, class VView, class PView, class IView, class CView, int R = 1>
struct GramGradient {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using scratch_view = Kokkos::View<S*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int host_tile = host_gram_tile;  // compile-time, so the accumulators stay in registers
  XView x;
  VView s, c;
  PView partial;  // chunks × (q·q + q)
  long long n, q, rows_per_chunk;
  int tile, tiles, pairs, grad_tiles, stage_rows;
  bool use_changes;  // the delta Gram: `changed`, `count` and `dc` below are read
  IView changed;     // row indices listed per chunk from its first row (AcceptStep)
  CView count;       // per chunk: listed rows, or gram_all_rows
  VView dc;          // per row: Δc_i of the last accepted step

  static size_t scratch_bytes(int tile, int stage_rows) {
    if (Traits::host) return 0;
    const size_t staged = scratch_view::shmem_size(stage_rows * tile);  // per column tile
    return 2 * staged + (R == 1 ? scratch_view::shmem_size(tile * tile) : 0);
  }

  // The rows a Gram job of this chunk reads: every row (weight c_i) or the listed ones (weight Δc_i).
  KOKKOS_INLINE_FUNCTION long long listed(long long chunk) const {
    return use_changes ? static_cast<long long>(count(chunk)) : static_cast<long long>(gram_all_rows);
  }
  KOKKOS_INLINE_FUNCTION long long row_of(bool delta, long long r0, long long e) const {
    return delta ? static_cast<long long>(changed(r0 + e)) : r0 + e;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int per_chunk = pairs + grad_tiles;
    const long long chunk = team.league_rank() / per_chunk;
    const int job = team.league_rank() % per_chunk;
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    const bool gram = job < pairs;
    int a = 0, b = 0;
    if (gram) {  // decode the upper tile pair (a, b), a ≤ b, of this job
      int rest = job;
      while (rest >= tiles - a) { rest -= tiles - a; ++a; }
      b = a + rest;
    } else {
      a = job - pairs;
    }
    if constexpr (Traits::host) {
      run_host_isa([&](auto isa) { host_block<decltype(isa)>(chunk, r0, r1, gram, a, b); });
    } else if constexpr (R == 1) {
      team_block(team, chunk, r0, r1, gram, a, b);
    } else {
      register_block(team, chunk, r0, r1, gram, a, b);
    }
  }

  // The paths, each in its own file: host_block (gram_gradient_host.hpp) and its vector pieces host_narrow_pair,
  // host_sweeps_f64 (host_simd/gram_gradient_host.hpp); team_block, register_block and their stage_tiles on
  // spaces with their own memory (gram_gradient_team.hpp).
  template <class Isa>
  KOKKOS_INLINE_FUNCTION void host_block(long long chunk, long long r0, long long r1, bool gram, int a, int b) const;
#if RH_ROW_BLOCKS
  template <class Isa, int K>
  void host_narrow_pair(long long chunk, long long r0, long long m, bool delta, long long ja, int jmax,
                        long long kb) const;
  template <class Isa, int J, int KB>
  void host_sweeps_f64(S (&acc)[host_tile][host_tile], const S (&scaled)[host_gram_rows][host_tile], long long e0,
                       long long e1, bool delta, long long r0, long long ja, int jmax, long long kb, int kmax) const;
#endif
  KOKKOS_INLINE_FUNCTION void team_block(const member_type& team, long long chunk, long long r0, long long r1,
                                         bool gram, int a, int b) const;
  KOKKOS_INLINE_FUNCTION void stage_tiles(const member_type& team, const scratch_view& xa, const scratch_view& xb,
                                          long long r0, long long base, int m, bool gram, bool delta, int a,
                                          int b) const;
  KOKKOS_INLINE_FUNCTION void register_block(const member_type& team, long long chunk, long long r0, long long r1,
                                             bool gram, int a, int b) const;

  // The J × KB sweeps of a tile pair's block that hold entries on or above the diagonal: f(j0, k0) for each.
  template <int J, int KB, class F>
  KOKKOS_INLINE_FUNCTION static void for_each_sweep(long long ja, int jmax, long long kb, int kmax, const F& f) {
    for (int j0 = 0; j0 < jmax; j0 += J) {
      if (ja + j0 > kb + kmax - 1) break;  // the rest of this block lies below the diagonal
      for (int k0 = 0; k0 < kmax; k0 += KB) {
        if (kb + k0 + KB - 1 < ja + j0) continue;  // every entry of these columns lies below the diagonal
        f(j0, k0);
      }
    }
  }
};

}  // namespace rh::detail

#include "rh/detail/kernels/gram_gradient_host.hpp"
#include "rh/detail/kernels/gram_gradient_team.hpp"
#include "rh/detail/kernels/host_simd/gram_gradient_host.hpp"
