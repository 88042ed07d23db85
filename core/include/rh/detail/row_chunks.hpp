// The row chunks of a batch (docs/method.md §10): a batch's n rows are cut into chunks of consecutive rows fixed by n
// and q alone, and every sum over rows is each chunk's sum in row order, then the chunks' sums in chunk order. Host
// spaces then give the same bits for any thread count, and a model of a group (rh/detail/group/solve.hpp), which
// sums its rows by the same chunks, the bits of a single model on its space.
#pragma once
#include <Kokkos_Core.hpp>

namespace rh::detail {

struct ChunkShape {
  long long rows = 1;  // rows per chunk; the last chunk may have fewer
  long long count = 1;
};

// The per-chunk partial Gram costs chunks·(q²+q) values written and read back each iteration: keep it below a
// quarter of X (n·q values) where that still leaves Traits::min_chunks chunks, and never give a chunk fewer rows
// than one staging block (Traits::stage_rows).
template <class Traits>
KOKKOS_INLINE_FUNCTION ChunkShape row_chunks(long long n, long long q) {
  const long long by_size = (n * q) / (4 * (q * q + q));
  long long count = by_size > Traits::min_chunks ? by_size : Traits::min_chunks;
  if (count > Traits::max_chunks) count = Traits::max_chunks;
  const long long by_staging = n / Traits::stage_rows > 1 ? n / Traits::stage_rows : 1;
  if (count > by_staging) count = by_staging;
  ChunkShape c;
  c.rows = n > 0 ? (n + count - 1) / count : 1;
  c.count = (n + c.rows - 1) / c.rows;
  return c;
}

}  // namespace rh::detail
