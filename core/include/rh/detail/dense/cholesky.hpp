// The Cholesky solve of the Newton system (dense_solve.hpp): blocked by panels, or in one team on a device.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <type_traits>

#include "rh/detail/compat.hpp"
#include "rh/detail/dense/lu.hpp"
#include "rh/detail/dense/symmetry.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/penalty.hpp"  // SolveReport

namespace rh::detail {

// Cholesky of the b×b symmetric block of u at (o, o) in place, upper factor (block = UᵀU, U in its upper
// triangle), right-looking by panels of `panel` rows: a panel's rows are factored one after the other, then the
// rows below take the panel's updates, four rows of U at a time, along their rows (contiguous: a host thread
// vectorizes them). Every entry still receives u(m, i)·u(m, j) for m = 0, 1, … one at a time, as in the unblocked
// algorithm, so the factor is bitwise the same; the blocking only reads the trailing rows once per panel instead of
// once per column, about half the time (docs/performance.md, "Why the code is so"). False on a pivot that is not > 0 (or NaN): the
// matrix is not (numerically) positive definite.
template <class Block>
KOKKOS_INLINE_FUNCTION bool factor_upper(const Block& u, int o, int b) {
  constexpr int panel = 16;
  const int end = o + b;
  for (int k = o; k < end; k += panel) {
    const int e = k + panel < end ? k + panel : end;
    for (int c = k; c < e; ++c) {
      const auto d = u(c, c);
      if (!(d > 0)) return false;
      const auto r = compat::sqrt(d);
      u(c, c) = r;
      for (int j = c + 1; j < end; ++j) u(c, j) = u(c, j) / r;
      for (int i = c + 1; i < e; ++i) {
        const auto l = u(c, i);
        for (int j = i; j < end; ++j) u(i, j) -= l * u(c, j);
      }
    }
    for (int i = e; i < end; ++i) {
      int m = k;
      for (; m + 4 <= e; m += 4) {
        const auto l0 = u(m, i), l1 = u(m + 1, i), l2 = u(m + 2, i), l3 = u(m + 3, i);
        for (int j = i; j < end; ++j) {
          auto v = u(i, j);
          v -= l0 * u(m, j);
          v -= l1 * u(m + 1, j);
          v -= l2 * u(m + 2, j);
          v -= l3 * u(m + 3, j);
          u(i, j) = v;
        }
      }
      for (; m < e; ++m) {
        const auto l = u(m, i);
        for (int j = i; j < end; ++j) u(i, j) -= l * u(m, j);
      }
    }
  }
  return true;
}

// The report of a Cholesky attempt, before it starts: Cholesky when a is exactly symmetric, else LU (then false:
// LU takes over). Ends with a team barrier, so every thread sees the report.
template <class Member, class MView, class ReportView>
KOKKOS_INLINE_FUNCTION bool cholesky_report(const Member& team, const MView& a, const ReportView& report, int q) {
  int asymmetric = 0;
  if constexpr (host_memory_v<MView>) {  // one host thread (a host team has one): by rows
    Kokkos::single(Kokkos::PerTeam(team), [&](int& n) {
      for (int i = 0; i < q; ++i) n += asymmetric_in_row(a, q, i);
    }, asymmetric);
  } else {
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, q * q), [&](const int e, int& n) {
      n += asymmetric_at(a, q, e);
    }, asymmetric);
  }
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    SolveReport r;
    r.status = solve_ok;
    r.method = asymmetric ? solve_by_lu : solve_by_cholesky;
    report() = r;
  });
  team.team_barrier();
  return asymmetric == 0;
}

// The start of the panel Cholesky: H's upper triangle into f, g into sol, and the report.
template <class Member, class MView, class VView, class ReportView>
KOKKOS_INLINE_FUNCTION void cholesky_start(const Member& team, const MView& a, const MView& f, const VView& rhs,
                                           const VView& sol, const ReportView& report, int q) {
  if constexpr (host_memory_v<MView>) {  // one host thread: by rows
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int i = 0; i < q; ++i)
        for (int j = i; j < q; ++j) f(i, j) = a(i, j);
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) {
      if (e % q >= e / q) f(e / q, e % q) = a(e / q, e % q);
    });
  }
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { sol(j) = rhs(j); });
  cholesky_report(team, a, report, q);
}

// The end of the last launch of every Cholesky route: when the report says the Cholesky gave way (not symmetric, a
// pivot that is not > 0, a solution that is not finite), the same team runs the LU (LuSolve: its result does not
// depend on the team size), so no launch of its own waits behind every successful Cholesky. The barrier lets every
// thread see the report, whichever thread wrote it and wherever the Cholesky left off.
template <class Traits, class Member, class MView, class VView, class ReportView>
KOKKOS_INLINE_FUNCTION void lu_if_cholesky_gave_way(const Member& team, const MView& a, const MView& f,
                                                    const VView& rhs, const VView& sol, const ReportView& report,
                                                    int q) {
  team.team_barrier();
  LuSolve<Traits, MView, VView, ReportView>{a, f, rhs, sol, report, q, true}(team);
}

// Blocked Cholesky with the forward substitution Uᵀy = g folded in, one launch per panel of nb rows of U:
//   panel k (one team): the diagonal block factored by one thread (in team scratch on a device, in place on a
//     host); each column j right of it solved for U12(:, j) = U11⁻ᵀ A12(:, j) by one thread, which also takes the
//     block's y out of g_j; the first panel copies H's upper triangle into f and checks symmetry, the last one runs
//     the back substitution U x = y by blocks of nb, then the LU where the Cholesky gave way (in any panel).
//   update k (a team per nb×nb tile of the upper triangle right of and below the panel): A22 −= U12ᵀ U12.
// Every entry is computed by one thread in a fixed order: the result depends on nb only, never on the team size or
// thread count (host spaces use nb = q: one launch, the sequential algorithm).
template <class Traits, class MView, class VView, class ReportView>
struct CholeskyPanel {
  using execution_space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<execution_space>::member_type;
  using Scalar = typename MView::non_const_value_type;
  using Block = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename execution_space::scratch_memory_space,
                             Kokkos::MemoryUnmanaged>;
  MView a, f;  // a is kept intact; f receives U
  VView rhs, sol;
  ReportView report;
  int q, k, nb;

  static size_t scratch_bytes(int nb) { return Traits::host ? 0 : Block::shmem_size(nb, nb); }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    panel(team);
    if (k + nb >= q) lu_if_cholesky_gave_way<Traits>(team, a, f, rhs, sol, report, q);
  }

 private:
  KOKKOS_INLINE_FUNCTION void panel(const member_type& team) const {
    if (k == 0) cholesky_start(team, a, f, rhs, sol, report, q);
    if (report().method != solve_by_cholesky) return;  // not symmetric, or an earlier panel failed
    const int b = q - k < nb ? q - k : nb;
    if constexpr (Traits::host) {  // one thread, in place
      if (!diagonal(team, f, k, b)) return;
      columns(team, f, k, b);
    } else {  // the diagonal block in team scratch
      const Block d(team.team_scratch(0), nb, nb);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b * b), [&](const int e) {
        if (e % b >= e / b) d(e / b, e % b) = f(k + e / b, k + e % b);
      });
      team.team_barrier();
      if (!diagonal(team, d, 0, b)) return;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b * b), [&](const int e) {
        if (e % b >= e / b) f(k + e / b, k + e % b) = d(e / b, e % b);
      });
      columns(team, d, 0, b);
    }
    if (k + b == q) {
      team.team_barrier();
      back_substitution(team);
    }
  }

  // Factors the diagonal block (b×b at (o, o) of u) and solves its share of Uᵀy = g (y in sol); false when a
  // pivot is not > 0, which hands the system to LU. One thread: the block is small on a device, the whole matrix
  // on a host.
  template <class U>
  KOKKOS_INLINE_FUNCTION bool diagonal(const member_type& team, const U& u, int o, int b) const {
    int ok = 0;
    Kokkos::single(Kokkos::PerTeam(team), [&](int& good) {
      if constexpr (Traits::host) {  // the host ISA's copy (rh/detail/host_isa.hpp): its row updates are wider
        bool factored = false;
        run_host_isa([&](auto) { factored = factor_upper(u, o, b); });
        good = factored ? 1 : 0;
      } else {
        good = factor_upper(u, o, b) ? 1 : 0;
      }
      if (!good) {
        report().method = solve_by_lu;
        return;
      }
      for (int c = 0; c < b; ++c) {  // column-oriented: the inner loop runs along row c
        const auto y = sol(k + c) / u(o + c, o + c);
        sol(k + c) = y;
        for (int j = c + 1; j < b; ++j) sol(k + j) -= u(o + c, o + j) * y;
      }
    }, ok);
    team.team_barrier();
    return ok != 0;
  }

  // Columns j right of the block: U12(:, j) = U11⁻ᵀ A12(:, j), and g_j −= U12(:, j)ᵀ y_block.
  template <class U>
  KOKKOS_INLINE_FUNCTION void columns(const member_type& team, const U& u, int o, int b) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + b, q), [&](const int j) {
      auto g = sol(j);
      for (int m = 0; m < b; ++m) {
        auto v = f(k + m, j);
        for (int t = 0; t < m; ++t) v -= u(o + t, o + m) * f(k + t, j);
        v = v / u(o + m, o + m);
        f(k + m, j) = v;
        g -= v * sol(k + m);
      }
      sol(j) = g;
    });
  }

  // U x = y by blocks of nb rows from the bottom: one thread solves a block, the team takes it out of the rows
  // above. Then a solution that is not finite hands the system to LU.
  KOKKOS_INLINE_FUNCTION void back_substitution(const member_type& team) const {
    for (int s = ((q - 1) / nb) * nb; s >= 0; s -= nb) {
      const int e = q - s < nb ? q : s + nb;
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = e - 1; i >= s; --i) {
          auto x = sol(i);
          for (int j = i + 1; j < e; ++j) x -= f(i, j) * sol(j);
          sol(i) = x / f(i, i);
        }
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, s), [&](const int i) {
        auto x = sol(i);
        for (int j = s; j < e; ++j) x -= f(i, j) * sol(j);
        sol(i) = x;
      });
      team.team_barrier();
    }
    int bad = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, q), [&](const int j, int& n) {
      if (!compat::isfinite(sol(j))) n += 1;
    }, bad);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (bad) report().method = solve_by_lu;
    });
  }
};

template <class Traits, class MView, class ReportView>
struct CholeskyUpdate {
  using member_type = typename Kokkos::TeamPolicy<typename Traits::execution_space>::member_type;
  MView f;
  ReportView report;
  int q, k, nb, tiles;  // tiles: tile rows of the trailing matrix [k + nb, q)

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if (report().method != solve_by_cholesky) return;
    int r = 0, t = team.league_rank();  // the team's tile (r, c), c ≥ r, numbered row by row
    while (t >= tiles - r) {
      t -= tiles - r;
      ++r;
    }
    const int c = r + t, s = k + nb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb * nb), [&](const int e) {
      const int i = s + r * nb + e / nb, j = s + c * nb + e % nb;
      if (i >= q || j >= q || j < i) return;
      auto v = f(i, j);
      for (int m = 0; m < nb; ++m) v -= f(k + m, i) * f(k + m, j);
      f(i, j) = v;
    });
  }
};

// Entries start, start + step, start + 2·step, … of a row-major array `width` wide, as (row, col): one integer
// division when the walk starts, not one per entry. A team's thread walks its share of a triangle's entries this way.
struct RowMajorWalk {
  int row, col;
  int drow, dcol, width;
  KOKKOS_INLINE_FUNCTION RowMajorWalk(int start, int step, int width_)
      : row(start / width_), col(start % width_), drow(step / width_), dcol(step % width_), width(width_) {}
  KOKKOS_INLINE_FUNCTION void next() {
    row += drow;
    col += dcol;
    if (col >= width) {
      col -= width;
      ++row;
    }
  }
};

// Level-0 scratch a one-team Cholesky takes at most: a CUDA block's 48 KB without opting in, less what Kokkos keeps
// for team reductions at 1024 threads (it allows 40,960 bytes in 3.4, 40,936 in 4.6).
inline constexpr std::size_t one_team_scratch = 40000;

// The whole Cholesky solve in one team (devices, when its panel fits in team scratch): blocked right-looking. A
// panel of nb rows of U is factored in team scratch (two team barriers per column, at scratch latency), written
// back, and the rows below take its rank-nb update in one sweep over them; the back substitution runs by blocks of
// nb columns of U staged in scratch. g and y stay in scratch throughout. The panel version (one launch per panel and
// per update) spent its time in launches and in global-memory latency (docs/performance.md, "Why the code is so").
// Each entry of U gets the sequential algorithm's operations in its order (factor_upper), and the substitutions are
// column-oriented in a fixed order, so the result depends on neither the team size nor the thread count.
template <class Traits, class MView, class VView, class ReportView>
struct CholeskyTeam {
  using execution_space = typename Traits::execution_space;
  using member_type = typename Kokkos::TeamPolicy<execution_space>::member_type;
  using Scalar = typename MView::non_const_value_type;
  using Scratch = typename execution_space::scratch_memory_space;
  using Panel = Kokkos::View<Scalar**, Kokkos::LayoutRight, Scratch, Kokkos::MemoryUnmanaged>;
  using Buffer = Kokkos::View<Scalar*, Scratch, Kokkos::MemoryUnmanaged>;
  static constexpr int unroll = 4;  // trailing entries each thread loads before it stores: loads in flight
  MView a, f;
  VView rhs, sol;
  ReportView report;
  int q, nb;

  static std::size_t scratch_bytes(int q, int nb) { return Panel::shmem_size(nb, q) + 2 * Buffer::shmem_size(q); }
  // Panels of 16 rows, or of 8 where 16 do not fit one_team_scratch (from q = 278 in float64, 556 in float32); up to
  // q = 32 one panel of 32 rows, so that a small system is not split. 32 rows were 3–4 % slower than 16 at
  // q = 65–129 and no faster elsewhere (docs/performance.md, issue 32's lever 6).
  static int panel_rows(int q, std::size_t scratch_max) {
    for (int nb = q <= 32 ? 32 : 16; nb >= 8; nb /= 2)
      if (scratch_bytes(q, nb) <= std::min(scratch_max, one_team_scratch)) return nb;
    return 0;
  }
  // About four threads per column, in multiples of 4 warps, at most a block of 1024: a column's steps touch about q·nb
  // entries, and the team's barriers cost more with every warp, so threads past ~4q wait more than they work
  // (measured best within a few % at q = 33…320, docs/performance.md, issue 32's lever 6).
  static int team_threads(int q) { return std::min(1024, ((4 * q + 127) / 128) * 128); }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    cholesky(team);
    lu_if_cholesky_gave_way<Traits>(team, a, f, rhs, sol, report, q);
  }

 private:
  KOKKOS_INLINE_FUNCTION void cholesky(const member_type& team) const {
    const Panel p(team.team_scratch(0), nb, q);
    const Buffer y(team.team_scratch(0), q), x(team.team_scratch(0), q);
    const int t = team.team_rank(), nt = team.team_size();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { y(j) = rhs(j); });
    if (!cholesky_report(team, a, report, q)) return;
    for (int k = 0; k < q; k += nb) {
      const int b = q - k < nb ? q - k : nb;
      const MView& from = k == 0 ? a : f;  // f's rows are first written by the first panel's write-back and update
      for (int e = t; e < b * q; e += nt)
        if (e % q >= k + e / q) p(e / q, e % q) = from(k + e / q, e % q);
      team.team_barrier();
      if (!factor_panel(team, p, y, k, b)) return;
      for (int e = t; e < b * q; e += nt)
        if (e % q >= k + e / q) f(k + e / q, e % q) = p(e / q, e % q);
      trailing_update(t, nt, p, from, k, b);
      team.team_barrier();
    }
    back_substitution(team, p, y, x);
  }

  // Rows k … k+b−1 of U in p (all their columns), and their share of Uᵀy = g. Every thread reads the same pivot, so
  // on a pivot that is not > 0 all leave together (LU takes over). Only the threads that scale an entry of row c (and
  // thread 0, which writes the pivot) take its square root; each thread walks its entries of the rank-1 update by
  // steps of the team size, so one integer division per column instead of one per entry.
  KOKKOS_INLINE_FUNCTION bool factor_panel(const member_type& team, const Panel& p, const Buffer& y, int k,
                                            int b) const {
    const int t = team.team_rank(), nt = team.team_size();
    for (int c = 0; c < b; ++c) {
      const int cc = k + c, width = q - cc - 1;  // row c's entries right of the pivot
      const Scalar d = p(c, cc);
      if (!(d > 0)) {
        if (t == 0) report().method = solve_by_lu;
        return false;
      }
      Scalar r = 0, yc = 0;
      if (t < width || t == 0) {
        r = compat::sqrt(d);
        yc = y(cc) / r;
        for (int j = cc + 1 + t; j < q; j += nt) p(c, j) = p(c, j) / r;
      }
      team.team_barrier();
      if (t == 0) {  // written only now: every thread read p(c, cc) above, the scaling threads y(cc)
        p(c, cc) = r;
        y(cc) = yc;
      }
      for (int j = cc + 1 + t; j < q; j += nt) y(j) -= p(c, j) * yc;
      const int rows = b - 1 - c, total = rows * width;  // the panel's later rows i, columns j ≥ k + i
      if (t < total)
        for (RowMajorWalk w(t, nt, width); w.row < rows; w.next()) {
          const int i = c + 1 + w.row, j = cc + 1 + w.col;
          if (j >= k + i) p(i, j) -= p(c, k + i) * p(c, j);
        }
      team.team_barrier();
    }
    return true;
  }

  // Rows k+b … q−1: A22 −= U12ᵀ U12 with the panel's rows in order, over the upper triangle (m rows of m, m−1, …,
  // 1 entries) folded into ⌈m/2⌉ rows of m + 1 (row r beside row m−1−r) so that consecutive threads take
  // consecutive entries of a row. A thread's entries are t, t + nt, …: their (pair row, column) advance by steps.
  KOKKOS_INLINE_FUNCTION void trailing_update(int t, int nt, const Panel& p, const MView& from, int k, int b) const {
    const int s = k + b, m = q - s, width = m + 1, total = ((m + 1) / 2) * width;
    if (t >= total) return;
    RowMajorWalk w(t, nt, width);  // at entry e below
    for (int base = t; base < total; base += unroll * nt) {
      int ii[unroll], jj[unroll];
      Scalar v[unroll];
      for (int u = 0; u < unroll; ++u) {
        const int e = base + u * nt;
        ii[u] = -1;
        if (e >= total) continue;
        int row = w.row, off = w.col;
        w.next();
        if (off >= m - row) {  // the second row of the pair
          off -= m - row;
          row = m - 1 - row;
          if (row == m - 1 - row) continue;  // m odd: the middle row has no partner
        }
        ii[u] = s + row;
        jj[u] = ii[u] + off;
        v[u] = from(ii[u], jj[u]);
      }
      for (int u = 0; u < unroll; ++u) {
        if (ii[u] < 0) continue;
        auto w = v[u];
        for (int c = 0; c < b; ++c) w -= p(c, ii[u]) * p(c, jj[u]);
        f(ii[u], jj[u]) = w;
      }
    }
  }

  // U x = y by blocks of nb columns from the right, each staged in p as its transpose (p(c − s0, i) = U(i, c)), one
  // column at a time; x_c goes to x (y(c) is read in its step by the threads with an entry above c). Then a solution
  // that is not finite hands the system to LU.
  KOKKOS_INLINE_FUNCTION void back_substitution(const member_type& team, const Panel& p, const Buffer& y,
                                                const Buffer& x) const {
    const int t = team.team_rank(), nt = team.team_size();
    for (int e = q; e > 0;) {
      const int s0 = e - nb > 0 ? e - nb : 0, w = e - s0;
      for (int idx = t; idx < w * e; idx += nt) {
        const int i = idx / w, c = s0 + idx % w;
        if (i <= c) p(c - s0, i) = f(i, c);
      }
      team.team_barrier();
      for (int c = e - 1; c >= s0; --c) {
        if (t < c || t == 0) {  // the threads with an entry above c, and thread 0, which writes x_c
          const Scalar xc = y(c) / p(c - s0, c);
          if (t == 0) x(c) = xc;
          for (int i = t; i < c; i += nt) y(i) -= p(c - s0, i) * xc;
        }
        team.team_barrier();
      }
      e = s0;
    }
    int bad = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, q), [&](const int j, int& n) {
      sol(j) = x(j);
      if (!compat::isfinite(x(j))) n += 1;
    }, bad);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (bad) report().method = solve_by_lu;
    });
  }
};

// Traits::toolkit_cholesky where the traits name one (the CUDA space's opt-in cuSOLVER build), else void.
template <class Traits, class = void>
struct ToolkitCholeskyOf {
  using type = void;
};
template <class Traits>
struct ToolkitCholeskyOf<Traits, std::void_t<typename Traits::toolkit_cholesky>> {
  using type = typename Traits::toolkit_cholesky;
};

// The toolkit's Cholesky (Traits::toolkit_cholesky, an opt-in A/B build) between two one-team kernels of ours:
// before it, H's upper triangle into f, g into sol and the report (cholesky_start); after it, the report hands the
// system to LU when potrf found a pivot that is not > 0 (`info`) or the solution is not finite, as ours does, and
// the same team runs the LU then.
template <class Traits, class MView, class VView, class ReportView>
struct ToolkitCholeskyStart {
  using member_type = typename Kokkos::TeamPolicy<typename Traits::execution_space>::member_type;
  MView a, f;
  VView rhs, sol;
  ReportView report;
  int q;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    cholesky_start(team, a, f, rhs, sol, report, q);
  }
};
template <class Traits, class MView, class VView, class ReportView>
struct ToolkitCholeskyCheck {
  using member_type = typename Kokkos::TeamPolicy<typename Traits::execution_space>::member_type;
  MView a, f;
  VView rhs, sol;
  ReportView report;
  const int* info;
  int q;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    int bad = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, q), [&](const int j, int& n) {
      if (!compat::isfinite(sol(j))) n += 1;
    }, bad);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (report().method == solve_by_cholesky && (bad || *info != 0)) report().method = solve_by_lu;
    });
    lu_if_cholesky_gave_way<Traits>(team, a, f, rhs, sol, report, q);
  }
};

// Launches the Cholesky of a (panels of nb rows; on a device with nb ≥ q, one team) into f and its solve of
// a x = rhs into sol; the report says solve_by_cholesky on success, else solve_by_lu with the LU's status, the LU
// having run in the last launch (lu_if_cholesky_gave_way) with its factors in f. Asynchronous, on `space`.
template <class Traits, class MView, class VView, class ReportView>
void cholesky_solve(const typename Traits::execution_space& space, const MView& a, const VView& rhs, const MView& f,
                    const VView& sol, const ReportView& report, int nb) {
  using Space = typename Traits::execution_space;
  using Panel = CholeskyPanel<Traits, MView, VView, ReportView>;
  const int q = static_cast<int>(a.extent(0));
  if constexpr (!Traits::host) {
    using Toolkit = typename ToolkitCholeskyOf<Traits>::type;
    if constexpr (!std::is_void_v<Toolkit>) {
      Kokkos::parallel_for("rh::cholesky_start", Kokkos::TeamPolicy<Space>(space, 1, Traits::team_size),
                           ToolkitCholeskyStart<Traits, MView, VView, ReportView>{a, f, rhs, sol, report, q});
      Toolkit::solve(space, f.data(), sol.data(), q);
      Kokkos::parallel_for("rh::cholesky_check", Kokkos::TeamPolicy<Space>(space, 1, Traits::team_size),
                           ToolkitCholeskyCheck<Traits, MView, VView, ReportView>{a, f, rhs, sol, report,
                                                                                  Toolkit::info(), q});
      return;
    }
    using Team = CholeskyTeam<Traits, MView, VView, ReportView>;
    const auto scratch_max = static_cast<std::size_t>(Kokkos::TeamPolicy<Space>(space, 1, 1).scratch_size_max(0));
    const int rows = Team::panel_rows(q, scratch_max);
    if (nb >= q && rows > 0) {  // one team
      const Team functor{a, f, rhs, sol, report, q, rows};
      const auto scratch = Kokkos::PerTeam(Team::scratch_bytes(q, rows));
      Kokkos::TeamPolicy<Space> probe(space, 1, 1);
      probe.set_scratch_size(0, scratch);
      const int size = std::min(Team::team_threads(q), probe.team_size_max(functor, Kokkos::ParallelForTag()));
      Kokkos::TeamPolicy<Space> policy(space, 1, size);
      policy.set_scratch_size(0, scratch);
      Kokkos::parallel_for("rh::cholesky_team", policy, functor);
      return;
    }
    if (nb >= q) nb = 8;  // the panel does not fit: panels of 8 rows
  }
  const int team = Traits::host ? 1 : Traits::team_size;
  for (int k = 0; k < q; k += nb) {
    Kokkos::TeamPolicy<Space> panel(space, 1, team);
    panel.set_scratch_size(0, Kokkos::PerTeam(Panel::scratch_bytes(nb)));
    Kokkos::parallel_for("rh::cholesky_panel", panel, Panel{a, f, rhs, sol, report, q, k, nb});
    const int rest = q - k - nb;
    if (rest <= 0) break;
    const int tiles = (rest + nb - 1) / nb;
    Kokkos::parallel_for("rh::cholesky_update", Kokkos::TeamPolicy<Space>(space, tiles * (tiles + 1) / 2, team),
                         CholeskyUpdate<Traits, MView, ReportView>{f, report, q, k, nb, tiles});
  }
}

}  // namespace rh::detail
