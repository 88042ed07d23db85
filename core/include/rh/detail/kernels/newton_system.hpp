// The assemble pass (Passes::reduce_assemble): the Newton system from the summed Gram and gradient.
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/kernels/gram_sum.hpp"
#include "rh/detail/kernels/information.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// The Newton system from the summed Gram G and data gradient u (docs/method.md §4, §5). Index j < q is
// g_j = (−u + J(β − β̃))_j/N plus the penalty's term (first: the longest sums, J(β − β̃) over q terms, start first);
// the indices after them build H = (G + J)/N + ridge·I. The gradient alone (proximal solver) launches only the
// first q: the Gram partials are stale then. A device takes one entry (j, k) of G's upper triangle per index
// (upper_pair_entry: coalesced reads, each partial read once), a host two rows of it (gram_upper_row); either
// writes H(j, k) and H(k, j). Every entry is the same sum in the same order either way.
template <class S, class Penalty, class VView, class MView, class PView, class DView>
struct ReduceAndAssemble {
  PView partial;
  MView info, hessian;
  VView grad, cur, tilde;
  DView known_j_delta;  // J(β − β̃) as the last evaluation summed it, when that was at this β; else empty
  long long q, chunks, penalized;
  double inv_n, ridge, historical;
  bool by_rows;         // host
  bool info_symmetric;  // J(j,k) == J(k,j) everywhere (j_entry)
  KOKKOS_INLINE_FUNCTION static long long hessian_items(long long q, bool by_rows) {
    return by_rows ? paired_rows(q) : upper_pair_entries(q);
  }
  KOKKOS_INLINE_FUNCTION S entry(double g, long long j, long long k) const {
    return static_cast<S>((g + static_cast<double>(info(j, k))) * inv_n + (j == k ? ridge : 0.0));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
    if (e < q) {
      gradient(e);
      return;
    }
#ifndef __CUDA_ARCH__  // (by_rows is for hosts; device code need not carry gram_upper_row's row buffer)
    if (by_rows) {
      for_gram_row_pair<S>(partial, chunks, q, e - q, [&](long long j, long long k, S g) {
        hessian(j, k) = entry(static_cast<double>(g), j, k);
      });
      return;
    }
#endif
    long long j = 0, k = 0;
    if (!upper_pair_entry(e - q, q, j, k)) return;
    const double g = static_cast<double>(gram_entry<S>(partial, chunks, q, j, k));
    hessian(j, k) = entry(g, j, k);
    if (k != j) hessian(k, j) = entry(g, k, j);
  }

 private:
  KOKKOS_INLINE_FUNCTION void gradient(const long long j) const {
    const S u = sum_in_order<S>(chunks, [&](long long ch) { return partial(ch, q * q + j); });
    double j_delta = 0.0;
    if (known_j_delta.extent(0) != 0) {
      j_delta = known_j_delta(j);  // the same sum, in the same order (FinishEvaluation)
    } else {
      const bool transposed = reads_j_transposed(info_symmetric, by_rows);  // by_rows: a host
      for (long long k = 0; k < q; ++k)
        j_delta += j_entry(info, transposed, j, k) * (static_cast<double>(cur(k)) - static_cast<double>(tilde(k)));
    }
    const double mj = j < penalized ? 1.0 : 0.0;
    grad(j) = static_cast<S>(
        Penalty::gradient((j_delta - static_cast<double>(u)) * inv_n, historical, mj, static_cast<double>(tilde(j))));
  }
};

}  // namespace rh::detail
