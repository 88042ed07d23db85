// The commit passes: the squared-score weights of the score Gram, the renewable J and K updates from the
// summed Grams, and the non-finite check of the solved state before it is committed.
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compat.hpp"
#include "rh/detail/kernels/gram_sum.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// k_i = w_i ψ(r_i)², from the score weight s_i = w_i ψ(r_i) and w_i (s_i·(s_i/w_i): no overflow for large w_i).
template <class S>
KOKKOS_INLINE_FUNCTION S squared_score_weight(S s, S w, bool has_w) {
  if (!has_w) return s * s;
  return w > S(0) ? s * (s / w) : S(0);
}

// The row weights of the squared-score Gram Σ k_i x_i x_iᵀ (docs/method.md §12): k_i = w_i ψ(r_i)².
template <class S, class VView>
struct SquaredScores {
  VView s, w, k;
  bool has_w;
  KOKKOS_INLINE_FUNCTION void operator()(const long long i) const {
    k(i) = squared_score_weight(s(i), has_w ? w(i) : S(1), has_w);
  }
};

// The renewable information update J_new = J + G (docs/method.md §7), G from the curvature weights at the final β.
template <class S, class MView, class PView>
struct CommitInformation {
  PView partial;
  MView info, info_new;
  long long q, chunks;
  bool by_rows;  // host: over paired_rows(q) indices, as ReduceAndAssemble; device: over q·q entries
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
#ifndef __CUDA_ARCH__
    if (by_rows) {
      for_gram_row_pair<S>(partial, chunks, q, e,
                           [&](long long j, long long k, S g) { info_new(j, k) = info(j, k) + g; });
      return;
    }
#endif
    const long long j = e / q, k = e % q;
    info_new(j, k) = info(j, k) + gram_entry<S>(partial, chunks, q, j, k);
  }
};

// The score variance update K_new = K + Σ w ψ(r)² x xᵀ (docs/method.md §12) with inference, from the per-chunk
// squared-score Gram of the commit (score_gram); K_new = 0 without inference (K is kept only while inference is on).
template <class S, class MView, class PView>
struct CommitScoreVariance {
  PView partial;
  MView score, score_new;
  long long q, chunks;
  bool inference;
  bool by_rows;  // as CommitInformation
  KOKKOS_INLINE_FUNCTION void operator()(const long long e) const {
#ifndef __CUDA_ARCH__
    if (by_rows && inference) {
      for_gram_row_pair<S>(partial, chunks, q, e,
                           [&](long long j, long long k, S g) { score_new(j, k) = score(j, k) + g; });
      return;
    }
    if (by_rows) {  // without inference the partials are not formed: zeros only
      for_paired_rows(e, q, [&](long long j) {
        for (long long k = j; k < q; ++k) score_new(j, k) = score_new(k, j) = S(0);
      });
      return;
    }
#endif
    const long long j = e / q, k = e % q;
    score_new(j, k) = inference ? score(j, k) + gram_entry<S>(partial, chunks, q, j, k) : S(0);
  }
};

// Non-finite count of the solved state (β and J) before it is committed: indices [0, entries) are J's entries, or
// on a host (by_rows) its rows (no index decode: host_memory_v), and the q after them β's.
template <class VView, class MView>
struct CountNonFinite {
  VView beta;
  MView info;
  long long q;
  bool by_rows;
  KOKKOS_INLINE_FUNCTION long long entries() const { return by_rows ? q : q * q; }
  KOKKOS_INLINE_FUNCTION void operator()(const long long e, long long& bad) const {
    if (e >= entries()) {
      if (!compat::isfinite(beta(e - entries()))) ++bad;
    } else if (by_rows) {
      for (long long k = 0; k < q; ++k)
        if (!compat::isfinite(info(e, k))) ++bad;
    } else if (!compat::isfinite(info(e / q, e % q))) {
      ++bad;
    }
  }
};

}  // namespace rh::detail
