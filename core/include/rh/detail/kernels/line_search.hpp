// The Newton line search pass (Passes::line_search): the row pass (LineSearchRows, one team per chunk) and the
// decision in one team (FinishLineSearch). The host's row blocks are in host_simd/line_search_rows.hpp.
#pragma once
#include <Kokkos_Core.hpp>
#include <cfloat>

#include "rh/detail/compat.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/host_simd/row_block.hpp"
#include "rh/detail/kernels/in_order.hpp"
#include "rh/detail/kernels/information.hpp"
#include "rh/detail/kernels/row_dots.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/passes.hpp"

namespace rh::detail {

// The row pass of a Newton line search (one team per chunk): r = y − x·β and u = x·d per row (kept for AcceptStep)
// and the chunk's LineSearchSums, from which FinishLineSearch prices every step without reading X again.
template <class Traits, class S, class XView, class VView, class SumsView>
struct LineSearchRows {
  using Space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  XView x;
  VView y, w, r, u, beta, dir;
  SumsView chunk_sums;
  long long n, q, rows_per_chunk;
  double tau;
  bool has_w;
  template <class Isa = BaselineIsa>
  KOKKOS_INLINE_FUNCTION void row(long long i, LineSearchSums& acc) const {
    S fit, step, magnitude;
    row_dots<true, S, Isa>(x, i, beta, dir, q, fit, step, magnitude);
    const S ri = y(i) - fit;
    r(i) = ri;
    u(i) = step;
    const S wi = has_w ? w(i) : S(1);
    acc.add_row(static_cast<double>(wi), static_cast<double>(ri), static_cast<double>(step), tau,
                static_cast<double>(wi * huber_loss(ri, static_cast<S>(tau))),
                static_cast<double>(magnitude) + compat::fabs(static_cast<double>(y(i))));
  }
#if RH_ROW_BLOCKS
  // row() for the block's W rows (host_simd/line_search_rows.hpp).
  template <class Block>
  void row_block(const Block& b, long long i, LineSearchSums& acc) const;
#endif
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const long long chunk = team.league_rank();
    const long long r0 = chunk * rows_per_chunk;
    const long long r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
    LineSearchSums sums;
    if constexpr (Traits::host) {  // one thread per chunk: rows in order
      run_host_isa([&](auto isa) {
        using Isa = decltype(isa);
        long long i = r0;
#if RH_ROW_BLOCKS
        if constexpr (std::is_same<typename XView::array_layout, Kokkos::LayoutRight>::value) {
          const RowBlock<S, Isa> block(beta.data(), dir.data(), q);
          for (; i + block.rows <= r1; i += block.rows) row_block(block, i, sums);
        }
#endif
        for (; i < r1; ++i) row<Isa>(i, sums);
      });
    } else {
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, r0, r1),
                              [&](const long long i, LineSearchSums& acc) { row(i, acc); }, sums);
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_sums(chunk) = sums; });
  }
};

// The decision of a Newton line search, in one team (docs/method.md §5): F_b(β − t·d) for t = 1, ½, …, 2⁻²⁶ from
// the chunks' LineSearchSums (in chunk order) and the quadratic term ½δᵀJδ with δ = β − β̃ − t·d, which is
// ½δ₀ᵀJδ₀ − ½t(dᵀJδ₀ + δ₀ᵀJd) + ½t²·dᵀJd; the first step whose F_b does not exceed F_b(β) is accepted, its candidate
// β − t·d written to `cand` (as MakeCandidate would), and the LineSearch result left for the one readback.
// A host thread sums everything itself; a device team gives each sum (a LineSearchSums field over the chunks, a
// column of `terms` over the coefficients, ‖cand − β‖², ‖cand‖²) a thread of its own, each in the same order, so
// the same bits come out without one thread walking every sum in turn (ByThreads: the device's way, which a test
// also runs on a host space).
template <class Space, class S, class VView, class MView, class SumsView, class DView, class StatusView,
          class ResultView, bool ByThreads = !host_memory_v<Space>>
struct FinishLineSearch {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using Shared = Kokkos::View<double*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int shared_values = LineSearchSums::fields + 3;  // the fields, then quad, cross, dir_quad
  static size_t scratch_bytes() { return ByThreads ? Shared::shmem_size(shared_values) : 0; }
  VView cur, dir, tilde, cand;
  MView info;
  SumsView chunk_sums;
  DView terms;  // 3 per coefficient: δ₀ⱼ(Jδ₀)ⱼ, dⱼ(Jδ₀)ⱼ + δ₀ⱼ(Jd)ⱼ, dⱼ(Jd)ⱼ
  StatusView solve_status;
  ResultView result;
  long long q, chunks;
  double inv_n, eps;    // eps: machine epsilon of the dtype S
  bool info_symmetric;  // J(j,k) == J(k,j) everywhere (j_entry)
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const bool transposed = reads_j_transposed(info_symmetric, host_memory_v<Space>);
    Shared shared;
    if constexpr (ByThreads) shared = Shared(team.team_scratch(0), shared_values);
    // On a device the fields of the chunk sums (indices q, q + 1, …) are summed beside the coefficients' terms: the
    // two do not depend on each other, so their chains of loads overlap instead of following one another.
    const long long field_sums = ByThreads ? LineSearchSums::fields : 0;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q + field_sums), [&](const long long j) {
      if (j >= q) {
        const int f = static_cast<int>(j - q);
        shared(f) = sum_in_order<double>(chunks, [&](long long ch) { return chunk_sums(ch).field(f); });
        return;
      }
      double j_delta = 0.0, j_dir = 0.0;
      for (long long k = 0; k < q; ++k) {
        const double jk = j_entry(info, transposed, j, k);
        j_delta += jk * (static_cast<double>(cur(k)) - static_cast<double>(tilde(k)));
        j_dir += jk * static_cast<double>(dir(k));
      }
      const double delta = static_cast<double>(cur(j)) - static_cast<double>(tilde(j)), d = static_cast<double>(dir(j));
      terms(3 * j) = delta * j_delta;
      terms(3 * j + 1) = d * j_delta + delta * j_dir;
      terms(3 * j + 2) = d * j_dir;
    });
    team.team_barrier();
    if constexpr (ByThreads) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 3), [&](const int c) {
        shared(LineSearchSums::fields + c) = sum_in_order<double>(q, [&](long long j) { return terms(3 * j + c); });
      });
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        LineSearchSums total;
        for (int f = 0; f < LineSearchSums::fields; ++f) total.field(f) = shared(f);
        const int c = LineSearchSums::fields;
        result() = decide(total, shared(c), shared(c + 1), shared(c + 2));
      });
    } else {
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        LineSearchSums total;
        for (long long ch = 0; ch < chunks; ++ch) total += chunk_sums(ch);
        double quad = 0.0, cross = 0.0, dir_quad = 0.0;
        for (long long j = 0; j < q; ++j) {
          quad += terms(3 * j);
          cross += terms(3 * j + 1);
          dir_quad += terms(3 * j + 2);
        }
        result() = decide(total, quad, cross, dir_quad);
      });
    }
    team.team_barrier();
    const int step = result().step;
    if (step < 0) return;
    const S t = static_cast<S>(1.0 / static_cast<double>(1LL << step));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const long long j) { cand(j) = cur(j) - t * dir(j); });
    team.team_barrier();
    if constexpr (ByThreads) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2), [&](const int which) {
        double sum = 0.0;  // the expressions of the host's loop, each sum in its own loop
        if (which == 0) {
          for (long long j = 0; j < q; ++j) {
            const double e = static_cast<double>(cand(j)) - static_cast<double>(cur(j));
            sum += e * e;
          }
          result().step2 = sum;
        } else {
          for (long long j = 0; j < q; ++j) {
            const double c = static_cast<double>(cand(j));
            sum += c * c;
          }
          result().cand2 = sum;
        }
      });
    } else {
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        double step2 = 0.0, cand2 = 0.0;
        for (long long j = 0; j < q; ++j) {
          const double c = static_cast<double>(cand(j)), e = c - static_cast<double>(cur(j));
          step2 += e * e;
          cand2 += c * c;
        }
        result().step2 = step2;
        result().cand2 = cand2;
      });
    }
  }

  // The LineSearch of the summed pass: F_b(β), the first step decided as accepted, or the first undecided one.
  KOKKOS_INLINE_FUNCTION LineSearch decide(const LineSearchSums& total, double quad, double cross,
                                           double dir_quad) const {
    LineSearch out;
    const double at_current = total.base + 0.5 * quad;
    out.objective_current = at_current * inv_n;
    // How far a direct evaluation of F_b (a pass over X at the rounded candidate, as the reference computes it)
    // can land from these values: its residuals' rounding (ε of the dtype, about √q of it per row, through ψ)
    // and the double sums. A step whose F_b differs from F_b(β) by more is decided here as any direct
    // evaluation would decide it; from the first one that does not, direct evaluations decide (the host).
    const double margin = (8.0 * eps * compat::sqrt(static_cast<double>(q) * total.noise) +
                           8.0 * DBL_EPSILON * compat::sqrt(static_cast<double>(q + chunks)) *
                               (compat::fabs(total.base) + compat::fabs(quad))) * inv_n;
    double t = 1.0;
    for (int k = 0; k < line_search_steps; ++k, t *= 0.5) {
      const double change = (t * total.linear + 0.5 * t * t * total.square + total.crossing[k]) +
                            (-0.5 * t * cross + 0.5 * t * t * dir_quad);
      const double f = (at_current + change) * inv_n;
      if (f - out.objective_current < -margin) {
        out.step = k;
        out.objective = f;
        break;
      }
      if (!(f - out.objective_current > margin)) {  // within rounding (or not a number): not decided here
        out.undecided = k;
        break;
      }
    }
    out.solve_status = solve_status().status;
    out.solve_method = solve_status().method;
    return out;
  }
};

}  // namespace rh::detail

#include "rh/detail/kernels/host_simd/line_search_rows.hpp"
