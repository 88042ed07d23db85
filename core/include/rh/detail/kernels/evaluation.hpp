// The evaluation pass (Passes::evaluate): a candidate's row part of the objective (EvaluateRows, one team per
// chunk, with the gradient at the candidate when asked) and its coefficient part and in-order sums
// (FinishEvaluation); MakeCandidate forms the candidate. The host's row blocks are in
// host_simd/evaluate_rows.hpp.
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compat.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/host_simd/row_block.hpp"
#include "rh/detail/kernels/in_order.hpp"
#include "rh/detail/kernels/information.hpp"
#include "rh/detail/kernels/row_dots.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// cand = S(cur − step·dir, threshold·m): a damped Newton step (threshold 0) or a proximal step.
template <class S, class VView>
struct MakeCandidate {
  VView cand, cur, dir;
  S step, threshold;
  long long penalized;  // coefficients [0, penalized) carry the L1 penalty; the intercept does not
  KOKKOS_INLINE_FUNCTION void operator()(const long long j) const {
    const S v = cur(j) - step * dir(j);
    cand(j) = j < penalized ? soft_threshold(v, threshold) : v;
  }
};

// Row part of the objective at a candidate, over fixed row chunks (one team per chunk): residuals, Σ w ρ(r)
// per chunk, and the per-row score and curvature weights. Fixed chunks summed in order (FinishEvaluation) make
// the loss independent of the thread count, which matters because the line search compares losses that differ
// in the last bits near convergence. With `gradient`, the same pass also writes the chunk's Σ s_i x_i (the data
// gradient at the candidate, in row order like GramGradient's) to the gradient part of `partial`, so an accepted
// L1 candidate needs no second pass for the next iteration's gradient.
template <class Traits, class S, class XView, class VView, class DView, class PView>
struct EvaluateRows {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  XView x;
  VView y, w, s, c, cand;
  DView chunk_loss;
  PView partial;  // chunks × (q² + q); written only with `gradient`
  long long n, q, rows_per_chunk;
  S tau, h;
  bool has_w, gradient;
  bool weights;  // write s_i, c_i (false: the objective only, the row weights stay those of the current point)
  template <class Isa = BaselineIsa>
  KOKKOS_INLINE_FUNCTION S row(long long i, double& acc) const {
    const S r = y(i) - row_dot<S, Isa>(x, i, cand, q);
    const S wi = has_w ? w(i) : S(1);
    acc += static_cast<double>(wi * huber_loss(r, tau));
    const S si = wi * huber_score(r, tau);
    if (weights) {
      s(i) = si;
      c(i) = wi * smoothed_curvature(r, tau, h);
    }
    return si;
  }
#if RH_ROW_BLOCKS
  // row() for the block's W rows, as vectors (host_simd/evaluate_rows.hpp).
  template <class Block>
  void row_block(const Block& b, long long i, double& acc, S* g) const;
#endif
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long chunk = team.league_rank();
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    double loss = 0.0;
    if constexpr (Traits::host) {  // one thread per chunk: the gradient is an axpy per row while it is in cache
      run_host_isa([&](auto isa) {
        using Isa = decltype(isa);
        S* g = gradient ? &partial(chunk, q * q) : nullptr;
        if (g)
          for (long long j = 0; j < q; ++j) g[j] = S(0);
        long long i = r0;
#if RH_ROW_BLOCKS
        if constexpr (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value) {
          const RowBlock<S, Isa> block(cand.data(), cand.data(), q);
          for (; i + block.rows <= r1; i += block.rows) row_block(block, i, loss, g);
        }
#endif
        for (; i < r1; ++i) {
          const S si = row<Isa>(i, loss);
          if (g) {
            const S* xi = &x(i, 0);
            for (long long j = 0; j < q; ++j) g[j] += si * xi[j];
          }
        }
      });
    } else {
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1),
                              [&](const long long i, double& acc) { row(i, acc); }, loss);
      if (gradient) {
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
          S g = S(0);
          for (long long i = r0; i < r1; ++i) g += s(i) * x(i, j);
          partial(chunk, q * q + j) = g;
        });
      }
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_loss(chunk) = loss; });
  }
};

// Coefficient part of the objective, and the final in-order sums, in one team: the EvaluationSums that the host
// reads back in one copy (with the status of the last dense solve). Each coefficient's terms are written to
// `terms` first and summed in coefficient order, so the sums do not depend on the team size. (Jδ)_j is left in
// `j_delta` for the next gradient (ReduceAndAssemble) when the candidate is accepted. ByThreads: each (Jδ)_j in a
// thread of its own, the device's way, which a test also runs on a host space.
template <class Space, class Penalty, class VView, class MView, class DView, class TView, class StatusView,
          class SumsView, bool ByThreads = !host_memory_v<Space>>
struct FinishEvaluation {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  VView cand, cur, tilde, grad;
  MView info;
  DView chunk_loss;
  DView delta;    // q: β_cand − β̃ in double, formed once instead of once per entry of J
  DView j_delta;  // q: (Jδ)_j = Σ_k J(j,k)·δ_k, each over k in order
  TView terms;    // q EvaluationSums<Penalty>: one coefficient's terms each
  StatusView solve_status;
  SumsView sums;
  long long q, chunks, penalized;
  bool info_symmetric;  // J(j,k) == J(k,j) everywhere: a host may sum over J's rows, a device read them (j_entry)
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long k) {
      delta(k) = static_cast<double>(cand(k)) - static_cast<double>(tilde(k));
    });
    team.team_barrier();
    long long first = 0;  // (Jδ)_j of j < first are formed by the host path below
    if constexpr (!ByThreads) {
      // One host thread. Σ_k J(j,k)·δ_k for every j at once, k after k: each sum still runs over k in order from
      // 0.0, so it is the same sum, now over rows of J (contiguous: vectors across j) instead of q dependent
      // chains, which cost a wide L1 stream a few percent (docs/performance.md, "Why the code is so").
      if (info_symmetric) {
        double* out = j_delta.data();
        run_host_isa([&](auto) {
          for (long long j = 0; j < q; ++j) out[j] = 0.0;
          for (long long k = 0; k < q; ++k) {
            const double dk = delta(k);
            const auto* row = &info(k, 0);
            for (long long j = 0; j < q; ++j) out[j] += static_cast<double>(row[j]) * dk;
          }
        });
        first = q;
      } else {  // eight coefficients' sums side by side, each over k in order
        constexpr int G = 8;
        for (; first + G <= q; first += G) {
          double sums_j[G] = {};
          for (long long k = 0; k < q; ++k) {
            const double dk = delta(k);
            for (int e = 0; e < G; ++e) sums_j[e] += static_cast<double>(info(first + e, k)) * dk;
          }
          for (int e = 0; e < G; ++e) j_delta(first + e) = sums_j[e];
        }
      }
    }
    const bool transposed = reads_j_transposed(info_symmetric, host_memory_v<Space>);
    // Index q sums the chunks' losses beside the (Jδ)_j (they do not depend on each other), into sums().loss, which
    // the final sums take up.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, q + 1), [&](const long long j) {
      if (j == q) {
        sums().loss = sum_in_order<double>(chunks, [&](long long ch) { return chunk_loss(ch); });
        return;
      }
      double sum = 0.0;
      for (long long k = 0; k < q; ++k) sum += j_entry(info, transposed, j, k) * delta(k);
      j_delta(j) = sum;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) {
      CoefficientInputs c;
      c.cand = static_cast<double>(cand(j));
      c.cur = static_cast<double>(cur(j));
      c.tilde = static_cast<double>(tilde(j));
      c.grad = static_cast<double>(grad(j));
      c.delta = c.cand - c.tilde;
      c.step = c.cand - c.cur;
      c.penalized = j < penalized ? 1.0 : 0.0;
      EvaluationSums<Penalty> t;
      t.quad = c.delta * j_delta(j);
      t.step2 = c.step * c.step;
      t.cand2 = c.cand * c.cand;
      Penalty::coefficient_terms(c, t.penalty);
      terms(j) = t;
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      EvaluationSums<Penalty> out;  // each sum from 0.0 in order, the loads of a few terms ahead (in_order.hpp)
      out.loss = sums().loss;
      for_each_in_order<4, EvaluationSums<Penalty>>(
          q, [&](long long j) { return terms(j); }, [&](const EvaluationSums<Penalty>& t) { out.add_terms(t); });
      out.solve_status = solve_status().status;
      out.solve_method = solve_status().method;
      sums() = out;
    });
  }
};

}  // namespace rh::detail

#include "rh/detail/kernels/host_simd/evaluate_rows.hpp"
