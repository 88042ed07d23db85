// Exact symmetry of a q × q matrix on the space: what decides whether the Cholesky may run (dense/cholesky.hpp)
// and whether the passes may read J by rows (kernels/information.hpp).
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compat.hpp"
#include "rh/detail/host_isa.hpp"  // paired_rows

namespace rh::detail {

// 1 when entry e = i·q + j of the q × q matrix a lies above the diagonal and a(i, j) != a(j, i) (NaN is never
// equal), else 0: summed over every e, the count of entries that keep a from being exactly symmetric.
template <class MView>
KOKKOS_INLINE_FUNCTION int asymmetric_at(const MView& a, long long q, long long e) {
  const long long i = e / q, j = e % q;
  return j > i && !(a(i, j) == a(j, i)) ? 1 : 0;
}
// The same count over row i's entries above the diagonal, in order: the host's walk by rows (host_memory_v). Over
// the flat range, the index decode was half of the host Cholesky's time at q = 257 (perf annotate of
// rh_solve_bench, Serial), more than the factorization's q³/6 multiply-adds.
template <class MView>
KOKKOS_INLINE_FUNCTION int asymmetric_in_row(const MView& a, long long q, long long i) {
  int count = 0;
  for (long long j = i + 1; j < q; ++j) count += a(i, j) == a(j, i) ? 0 : 1;
  return count;
}

// The entries that keep a q × q matrix from being exactly symmetric (asymmetric_at), counted over q·q indices, or
// on a host (by_rows) over paired_rows(q) indices by rows (asymmetric_in_row).
template <class MView>
struct CountAsymmetric {
  MView a;
  long long q;
  bool by_rows;
  KOKKOS_INLINE_FUNCTION long long items() const { return by_rows ? paired_rows(q) : q * q; }
  KOKKOS_INLINE_FUNCTION void operator()(const long long e, long long& count) const {
    if (by_rows)
      for_paired_rows(e, q, [&](long long i) { count += asymmetric_in_row(a, q, i); });
    else
      count += asymmetric_at(a, q, e);
  }
};

}  // namespace rh::detail
