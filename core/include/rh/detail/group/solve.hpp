// The whole batch of every model of a group in one launch: a team per model runs its solve (damped Newton,
// docs/method.md §5, with its dense solves, §8; or LAMM for the L1 penalty, §6) and its commit (§7) in team
// scratch, and finishes alone: no host round trip per iteration, and a converged model's team simply ends while the
// others go on.
//
// It is the method of the single-model engine (rh/detail/engine.hpp with the policies of rh/detail/penalties/), with the
// formulas of rh/detail/method.hpp, the L1 policy's gradient, MakeCandidate, the Cholesky factor of
// dense/cholesky.hpp and the LU of dense/lu.hpp, and it sums a model's rows as the engine sums a batch's: in the dtype,
// by the engine's row chunks (rh/detail/row_chunks.hpp; see weighted_sums and objective). It differs in its Newton
// line search, which evaluates F_b at each step directly, as §5 states the rule, instead of pricing every step from
// one pass. LAMM's evaluations form u (the gradient's row sums) at their point in the same pass, so the accepted
// point's serve its next iteration, which then reads the rows once (twice before). Host spaces do not run it (their group solves
// each model with the single-model engine, rh/detail/group/engine.hpp); run on a host space one thread a team, as
// tests/unit/test_group.cpp does, LAMM (L1) gives the engine's bits and Newton agrees within the golden floors.
//
// Every pass over a model's rows goes tile by tile through team scratch (over_tiles): a tile of rows is
// copied in with coalesced loads, then each row's residual is formed from scratch by one thread, then (for the sums)
// each thread adds the tile to its block of entries in registers. H and its factor live in the tiles' scratch, which
// no pass uses while they do: a team needs little enough scratch that many share a multiprocessor.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "rh/detail/compat.hpp"
#include "rh/detail/dense/cholesky.hpp"
#include "rh/detail/dense/lu.hpp"
#include "rh/detail/group/engine_base.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/row_dots.hpp"
#include "rh/detail/kernels/evaluation.hpp"  // MakeCandidate
#include "rh/detail/method.hpp"
#include "rh/detail/penalties/l1.hpp"
#include "rh/detail/penalty.hpp"
#include "rh/detail/row_chunks.hpp"

// A device function the compiler must not inline (empty in host code, where tile_sums stays an inline member).
#if defined(__CUDA_ARCH__)
#define RH_DEVICE_NOINLINE __noinline__
#else
#define RH_DEVICE_NOINLINE
#endif

namespace rh::detail {

template <class Traits, class S>
struct GroupNewton {
  static_assert(!Traits::host, "a host space solves a group's models with the single-model engine (group/engine.hpp)");
  using Space = typename Traits::execution_space;
  // Teams a device's multiprocessor holds at once (8 × 64 threads): the launch bounds keep each thread's registers
  // and `scratch_budget` each team's level-0 scratch (with Kokkos' reduction space and the 1 KiB the driver keeps a
  // block, 8 teams fit the 228 KiB of an SM 9.0 multiprocessor) small enough for it.
  static constexpr int resident_teams = 8;
  static constexpr long long scratch_budget = 26 * 1024;
  using Policy = Kokkos::TeamPolicy<Space, Kokkos::LaunchBounds<Traits::group_team_size, resident_teams>>;
  using member_type = typename Policy::member_type;
  using Mem = typename Space::memory_space;
  using Shmem = typename Space::scratch_memory_space;
  using SVec = Kokkos::View<S*, Shmem, Kokkos::MemoryUnmanaged>;
  using SMat = Kokkos::View<S**, Kokkos::LayoutRight, Shmem, Kokkos::MemoryUnmanaged>;
  using DVec = Kokkos::View<double*, Shmem, Kokkos::MemoryUnmanaged>;
  using Report = Kokkos::View<SolveReport, Shmem, Kokkos::MemoryUnmanaged>;

  Kokkos::View<S**, Kokkos::LayoutRight, Mem> x;  // the batch's design rows (intercept column last), all models
  Kokkos::View<S*, Mem> y, w;
  Kokkos::View<S*, Mem> s, c;                           // per row: w ψ(r) and w φ(r) at the current β
  Kokkos::View<S**, Kokkos::LayoutRight, Mem> beta;     // n_models × q: committed β
  Kokkos::View<S***, Kokkos::LayoutRight, Mem> info;    // n_models × q × q: committed J
  Kokkos::View<S***, Kokkos::LayoutRight, Mem> info_new;  // J_b before it is known to be finite
  Kokkos::View<GroupTask*, Mem> tasks;                  // one per team
  Kokkos::View<GroupOutcome*, Mem> outcomes;
  int q = 0, max_iter = 0, level = 0;
  int tile_rows = 0;        // rows per scratch tile (level 0)
  bool shared_area = false; // H and its factor in the tiles' area (ScratchLayout)
  long long penalized = 0;  // coefficients [0, penalized) carry the L1 penalty (p: the intercept never does)
  bool has_w = false;
  bool l1 = false;          // the LAMM solver of §6 (the L1 penalty); false: Newton (§5)
  double tau = 0.0, tol = 0.0, ridge = 0.0;

  // A team's scratch: β̃, β, the candidate, d, g; H and its factor; δ and Jδ in double; the row sums (the Gram's
  // upper triangle row by row, then the gradient's u) and the current row chunk's part of them; the solve's report.
  // On a device, a tile of the model's design rows and their weights c and s, in one area with H and its factor when
  // they fit in level 0 (`shared_area`: no pass over the rows runs between H's assembly and the end of its solve).
  struct Work {
    SVec tilde, cur, cand, dir, grad;
    SMat hess, fac;
    DVec delta, jd;
    SVec sums, part;
    Report report;
    SVec tile_x, tile_c, tile_s;
  };
  KOKKOS_INLINE_FUNCTION static int triangle(int q) { return q * (q + 1) / 2; }
  // Scratch of everything but H, its factor and the tiles.
  static size_t vector_bytes(int q) {
    return 5 * (SVec::shmem_size(q) + 64) + 2 * (DVec::shmem_size(q) + 64) + SVec::shmem_size(triangle(q) + q) + 64 +
           Report::shmem_size() + 64;
  }
  // The current row chunk's part of the row sums (k.part): level 1 on a device, where only the passes over the rows
  // touch it (a tile's worth of sums at a tile's ends), so that it takes nothing from the teams' level 0.
  static size_t part_bytes(int q) { return SVec::shmem_size(triangle(q) + q) + 64; }
  static size_t square_bytes(int q) { return 2 * (SMat::shmem_size(q, q) + 64); }
  static size_t area_bytes(long long elements) { return SVec::shmem_size(static_cast<size_t>(elements)) + 64; }
  static long long tile_elements(int q, int rows) { return static_cast<long long>(rows) * (q + 2); }

  // Where a team's scratch goes (level 0 is the fast one, at most max0 bytes a team).
  struct ScratchLayout {
    int level = 0;       // of the vectors (and of H and its factor unless shared_area)
    int tile_rows = 0;   // rows per scratch tile
    bool shared_area = false;
    size_t level0 = 0, level1 = 0;  // bytes a team
  };
  // Tiles of a multiple of the team's threads in rows (each thread then owns the same rows of every tile: over_tiles), as many as fit, with the
  // vectors, in `budget` bytes (at least 32 rows of one thread, at most 256); H and its factor share their area
  // when the vectors and they fit in level 0, else all but the tiles go to level 1; the chunk parts (part_bytes) are
  // in level 1 always.
  static ScratchLayout layout(int q, int threads, long long max0, long long budget) {
    ScratchLayout l;
    const long long vec = static_cast<long long>(vector_bytes(q)), squares = static_cast<long long>(square_bytes(q));
    const long long square_elements = 2LL * q * q;
    l.shared_area = vec + static_cast<long long>(area_bytes(square_elements)) <= max0;
    const long long beside = l.shared_area ? vec : 0;
    const long long room = std::max(budget, l.shared_area ? vec + static_cast<long long>(area_bytes(square_elements)) : 0LL);
    const long long row_bytes = (q + 2) * static_cast<long long>(sizeof(S));
    long long rows = std::clamp<long long>((room - beside - 64) / row_bytes, 32, 256);
    rows = std::max<long long>(threads, rows / threads * threads);
    const auto area = [&](long long r) {
      return static_cast<long long>(area_bytes(std::max(tile_elements(q, static_cast<int>(r)), l.shared_area ? square_elements : 0LL)));
    };
    while (rows > threads && beside + area(rows) > max0) rows -= threads;
    l.tile_rows = static_cast<int>(rows);
    l.level = l.shared_area ? 0 : 1;
    l.level0 = static_cast<size_t>(beside + area(rows));
    l.level1 = (l.shared_area ? 0 : static_cast<size_t>(vec + squares)) + part_bytes(q);
    return l;
  }

  // The edge of the register blocks of tile_sums for q and a team of `threads`: the one whose rounds (blocks per
  // thread) times its work per row (loads, products and sums) is least.
  KOKKOS_INLINE_FUNCTION static int gram_block(int q, int threads) {
    int best = 1, best_cost = 0;
    for (int b = 1; b <= 4; b *= 2) {
      const int nb = (q + b - 1) / b, items = nb * (nb + 1) / 2 + nb;
      const int cost = (items + threads - 1) / threads * (b * b + b + 2 * b + 1);
      if (b == 1 || cost < best_cost) {
        best = b;
        best_cost = cost;
      }
    }
    return best;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const GroupTask t = tasks(team.league_rank());
    // A copy of a scratch space allocates from where the copy was made: one object per region, else allocations
    // would overlap. Kokkos' host teams have one region for both levels (team_scratch(1) is team_scratch(0)).
    auto level0 = team.team_scratch(0), level1 = team.team_scratch(1);
    auto& scratch = level == 0 || host_memory_v<Space> ? level0 : level1;
    const long long tile = static_cast<long long>(tile_rows) * q, square = static_cast<long long>(q) * q;
    SVec area(level0, static_cast<size_t>(shared_area ? (tile + 2 * tile_rows > 2 * square ? tile + 2 * tile_rows : 2 * square)
                                                        : tile + 2 * tile_rows));
    Work k{SVec(scratch, q), SVec(scratch, q), SVec(scratch, q), SVec(scratch, q), SVec(scratch, q),
           shared_area ? SMat(area.data(), q, q) : SMat(scratch, q, q),
           shared_area ? SMat(area.data() + square, q, q) : SMat(scratch, q, q),
           DVec(scratch, q), DVec(scratch, q), SVec(scratch, triangle(q) + q),
           SVec(level == 0 && !host_memory_v<Space> ? level1 : scratch, triangle(q) + q), Report(scratch),
           SVec(area.data(), static_cast<size_t>(tile)), SVec(area.data() + tile, tile_rows),
           SVec(area.data() + tile + tile_rows, tile_rows)};
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) {
      k.tilde(j) = beta(t.model, j);
      k.cur(j) = k.tilde(j);
    });
    team.team_barrier();
    GroupOutcome out = l1 ? lamm(team, t, k) : newton(team, t, k);
    if (out.status == group_ok) commit(team, t, k, out);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { outcomes(team.league_rank()) = out; });
  }

 private:
  // Damped Newton with backtracking (§5), from β = β̃. Its evaluations form no sums: a rejected step's would be lost,
  // and a group's update lasts as long as its slowest model (docs/performance.md, "Model groups: fused passes").
  KOKKOS_INLINE_FUNCTION GroupOutcome newton(const member_type& team, const GroupTask& t, const Work& k) const {
    GroupOutcome out;
    double f = objective(team, t, k, k.cur, false);  // §5 step 1
    for (int it = 1; it <= max_iter; ++it) {
      out.iterations = it;
      newton_system(team, t, k, true, false);
      if (solve(team, k) != solve_ok) {  // the minimum-norm fallback (§8 step 3) is not in groups yet
        out.status = group_singular;
        break;
      }
      // §5 step 2.2: the first t = 2⁻ᵏ whose F_b does not exceed f, each evaluated directly.
      int step = -1;
      double f_step = 0.0;
      for (int ks = 0; ks < line_search_steps && step < 0; ++ks) {
        const S ts = static_cast<S>(1.0 / static_cast<double>(1LL << ks));
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { k.cand(j) = k.cur(j) - ts * k.dir(j); });
        team.team_barrier();
        const double fc = objective(team, t, k, k.cand, false);
        if (fc <= f) {
          step = ks;
          f_step = fc;
        }
      }
      if (step < 0) break;  // no step accepted: β stays, not converged
      const double step2 = squared_step(team, k), cand2 = squared_norm(team, k.cand);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { k.cur(j) = k.cand(j); });
      team.team_barrier();
      f = f_step;
      if (compat::sqrt(step2) <= tol * (1.0 + compat::sqrt(cand2))) {
        out.converged = 1;
        break;
      }
    }
    out.objective = f;
    return out;
  }

  // LAMM proximal gradient (§6), from β = β̃ with φ = 1: the candidate S(β − g/φ, λ_b/φ) is accepted when F_b stays
  // below the quadratic majorizer, else φ doubles (at most 40 times). Each evaluation of F_b also forms u at its point
  // (q sums a row, beside the loss): the accepted candidate's are the next iteration's gradient sums.
  KOKKOS_INLINE_FUNCTION GroupOutcome lamm(const member_type& team, const GroupTask& t, const Work& k) const {
    GroupOutcome out;
    double f = objective(team, t, k, k.cur, true);
    double phi = 1.0;
    for (int it = 1; it <= max_iter; ++it) {
      out.iterations = it;
      // g at β from u in k.sums: formed by β's evaluation, the first above or the accepted candidate's (a rejected
      // one's never reaches here: the loop stops), which was the last evaluated
      newton_system(team, t, k, false, true);
      bool accepted = false;
      double fc = 0.0, step2 = 0.0;
      for (int attempt = 0; attempt < 40 && !accepted; ++attempt) {
        const MakeCandidate<S, SVec> candidate{k.cand, k.cur, k.grad, static_cast<S>(1.0 / phi),
                                               static_cast<S>(t.lambda / phi), penalized};
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { candidate(j); });
        team.team_barrier();
        fc = objective(team, t, k, k.cand, true);
        double gstep = 0.0;  // gᵀ(c − β)
        Kokkos::single(Kokkos::PerTeam(team), [&](double& a) {
          for (int j = 0; j < q; ++j)
            a += static_cast<double>(k.grad(j)) * (static_cast<double>(k.cand(j)) - static_cast<double>(k.cur(j)));
        }, gstep);
        step2 = squared_step(team, k);
        const double step_norm = compat::sqrt(step2);
        if (fc <= f + gstep + 0.5 * phi * step_norm * step_norm + 1e-12) accepted = true;
        else phi *= 2.0;
      }
      if (!accepted) break;  // β stays, not converged
      const double cand2 = squared_norm(team, k.cand);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { k.cur(j) = k.cand(j); });
      team.team_barrier();
      f = fc;
      phi = phi / 2.0 > 1e-8 ? phi / 2.0 : 1e-8;
      if (compat::sqrt(step2) <= tol * (1.0 + compat::sqrt(cand2))) {
        out.converged = 1;
        break;
      }
    }
    double l1_norm = 0.0;  // Σ m_j |β_j|, in coefficient order
    Kokkos::single(Kokkos::PerTeam(team), [&](double& a) {
      for (int j = 0; j < penalized; ++j) a += compat::fabs(static_cast<double>(k.cur(j)));
    }, l1_norm);
    out.objective = f + t.lambda * l1_norm;
    return out;
  }

  // ‖cand − β‖² and ‖v‖², in double, in coefficient order.
  KOKKOS_INLINE_FUNCTION double squared_step(const member_type& team, const Work& k) const {
    double a = 0.0;
    Kokkos::single(Kokkos::PerTeam(team), [&](double& sum) {
      for (int j = 0; j < q; ++j) {
        const double d = static_cast<double>(k.cand(j)) - static_cast<double>(k.cur(j));
        sum += d * d;
      }
    }, a);
    return a;
  }
  KOKKOS_INLINE_FUNCTION double squared_norm(const member_type& team, const SVec& v) const {
    double a = 0.0;
    Kokkos::single(Kokkos::PerTeam(team), [&](double& sum) {
      for (int j = 0; j < q; ++j) sum += static_cast<double>(v(j)) * static_cast<double>(v(j));
    }, a);
    return a;
  }

  KOKKOS_INLINE_FUNCTION S weight(long long i) const { return has_w ? w(i) : S(1); }

  // δ = v − β̃ and Jδ (each (Jδ)_j summed over k in order), as FinishEvaluation forms them.
  KOKKOS_INLINE_FUNCTION void j_delta(const member_type& team, const GroupTask& t, const Work& k, const SVec& v) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) {
      k.delta(j) = static_cast<double>(v(j)) - static_cast<double>(k.tilde(j));
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) {
      double sum = 0.0;
      for (int m = 0; m < q; ++m) sum += static_cast<double>(info(t.model, j, m)) * k.delta(m);
      k.jd(j) = sum;
    });
    team.team_barrier();
  }

  // F_b(v) = (Σ w ρ(r) + ½ δᵀJδ) / N_b − c_b Σ m_j sign(β̃_j) δ_j (§4; the last term with L1 only), sums in double.
  // With `with_u`, the same pass forms weighted_sums(false, true) at v (u) into k.sums, with the same operations in the
  // same order as that function's own pass (they share its parts), and k.delta and k.jd are v's: when v becomes β,
  // newton_system takes them as they are.
  KOKKOS_INLINE_FUNCTION double objective(const member_type& team, const GroupTask& t, const Work& k,
                                          const SVec& v, bool with_u) const {
    j_delta(team, t, k, v);
    if (with_u) clear_sums(team, k);
    double loss = 0.0, quad = 0.0;
    const S tau_s = static_cast<S>(tau);
    // By the single model's row chunks (rh/detail/row_chunks.hpp): each chunk's rows in order from 0, then the chunks
    // in order, as the engine sums F_b's loss; a thread does so over the rows it owns.
    const long long chunk = row_chunks<Traits>(t.r1 - t.r0, q).rows;
    // Thread y sums rows r0 + y, r0 + y + threads, ... in order (it owns those rows in every tile), a chunk's part
    // at a time, then the team's reduction. A team of one thread sums as the engine does.
    double part = 0.0;
    over_tiles(team, t, k, v, [&](const long long i, const int row, const S r) {
      if (i != t.r0 && (i - t.r0) % chunk == 0) {
        loss += part;
        part = 0.0;
      }
      part += static_cast<double>(weight(i) * huber_loss(r, tau_s));
      if (with_u) row_weights(t, k, i, row, r, false, true);
    }, [&](const int rows, const long long base) {
      if (with_u) add_tile(team, t, k, rows, base, chunk, 1, false, true);
    });
    loss += part;
    if (with_u) fold_parts(team, k);
    team.team_reduce(Kokkos::Sum<double>(loss));
    Kokkos::single(Kokkos::PerTeam(team), [&](double& a) {
      for (int j = 0; j < q; ++j) a += k.delta(j) * k.jd(j);
    }, quad);
    if (!l1) return (loss + 0.5 * quad) * t.inv_n;
    double hist = 0.0;  // Σ_j m_j sign(β̃_j) δ_j: the historical subgradient term (§4)
    Kokkos::single(Kokkos::PerTeam(team), [&](double& a) {
      for (int j = 0; j < penalized; ++j) a += sign_of(static_cast<double>(k.tilde(j))) * k.delta(j);
    }, hist);
    return (loss + 0.5 * quad) * t.inv_n - t.historical * hist;
  }

  // g = (J(β − β̃) − Σ w ψ x)/N_b − c_b m ∘ sign(β̃) at β (§4) and, with_hessian, H = (Σ w φ x xᵀ + J)/N_b + ridge·I;
  // sums over rows in order.
  // With sums_at_cur, k.sums, k.delta and k.jd are already β's (objective formed them when it evaluated β).
  KOKKOS_INLINE_FUNCTION void newton_system(const member_type& team, const GroupTask& t, const Work& k,
                                            bool with_hessian, bool sums_at_cur) const {
    if (!sums_at_cur) {
      j_delta(team, t, k, k.cur);
      weighted_sums(team, t, k, with_hessian, true);
    }
    const int hessian = with_hessian ? q * q : 0;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, hessian + q), [&](const int e) {
      if (e < hessian) {
        const int j = e / q, m = e % q;
        if (m < j) return;
        const double g = k.sums(packed(j, m));
        const S v = static_cast<S>((g + static_cast<double>(info(t.model, j, m))) * t.inv_n + (j == m ? ridge : 0.0));
        k.hess(j, m) = v;
        k.hess(m, j) = v;
      } else {
        const int j = e - hessian;
        const double u = k.sums(triangle(q) + j);
        const double data = (k.jd(j) - u) * t.inv_n;
        k.grad(j) = static_cast<S>(l1 ? penalty::L1::gradient(data, t.historical, j < penalized ? 1.0 : 0.0,
                                                              static_cast<double>(k.tilde(j)))
                                      : data);
      }
    });
    team.team_barrier();
  }

  // The position of Gram entry (j, m), j ≤ m, in the row sums: the upper triangle row after row.
  KOKKOS_INLINE_FUNCTION int packed(int j, int m) const { return j * q - j * (j - 1) / 2 + (m - j); }

  // The row sums of the model's rows at the current β, each entry in the dtype as the single model sums it
  // (rh/detail/row_chunks.hpp): over each chunk of the model's rows in order, then the chunks in order. With `gram`,
  // the upper triangle Σ c_i x_ij x_im (k.sums(packed(j, m))); with `grad`, u_j = Σ s_i x_ij (k.sums(triangle + j));
  // c = w φ(r) and s = w ψ(r) at the current β. The team goes tile by tile (tile_sums), the current chunk's part of
  // each entry in k.part between tiles.
  KOKKOS_INLINE_FUNCTION void weighted_sums(const member_type& team, const GroupTask& t, const Work& k, bool gram,
                                            bool grad) const {
    clear_sums(team, k);
    const int block = gram ? gram_block(q, team.team_size()) : 1;
    const long long chunk = row_chunks<Traits>(t.r1 - t.r0, q).rows;
    over_tiles(team, t, k, k.cur, [&](const long long i, const int row, const S r) { row_weights(t, k, i, row, r, gram, grad); },
               [&](const int rows, const long long base) { add_tile(team, t, k, rows, base, chunk, block, gram, grad); });
    fold_parts(team, k);
  }
  // weighted_sums' parts, also run by objective in its pass: the sums and the chunk's part set to zero; row i's
  // weights (s = w ψ(r), c = w φ(r)) beside the tile; a tile's rows added by the current chunk (`chunk`, the row
  // chunks' length, the pass computes once); the last chunk's part added to the sums.
  KOKKOS_INLINE_FUNCTION void clear_sums(const member_type& team, const Work& k) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, triangle(q) + q), [&](const int e) {
      k.sums(e) = S(0);
      k.part(e) = S(0);
    });
    team.team_barrier();
  }
  KOKKOS_INLINE_FUNCTION void row_weights(const GroupTask& t, const Work& k, long long i, int row, S r, bool gram,
                                          bool grad) const {
    const S tau_s = static_cast<S>(tau), wi = weight(i);
    if (grad) k.tile_s(row) = wi * huber_score(r, tau_s);
    if (gram) k.tile_c(row) = wi * smoothed_curvature(r, tau_s, static_cast<S>(t.h));
  }
  KOKKOS_INLINE_FUNCTION void add_tile(const member_type& team, const GroupTask& t, const Work& k, int rows,
                                       long long base, long long chunk, int block, bool gram, bool grad) const {
    const long long into = (base - t.r0) % chunk, first = into == 0 ? 0 : chunk - into;  // a chunk's first row
    if (block == 4) tile_sums<4>(team, k, rows, gram, grad, first, chunk);
    else if (block == 2) tile_sums<2>(team, k, rows, gram, grad, first, chunk);
    else tile_sums<1>(team, k, rows, gram, grad, first, chunk);
  }
  KOKKOS_INLINE_FUNCTION void fold_parts(const member_type& team, const Work& k) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, triangle(q) + q), [&](const int e) { k.sums(e) += k.part(e); });
    team.team_barrier();
  }

  // A device's pass over the model's rows at v, tile after tile: the tile's rows are copied into scratch (X is
  // row-major with rows of q: the tile is one contiguous stretch, read coalesced), then each row's residual
  // y_i − x_iᵀv is formed from scratch by the thread that owns row i (i − r0 = rank + threads·n) and given to
  // row(i, i − base, r), then tile(rows, base) runs on the whole team.
  static constexpr int load_depth = 8;
  template <class Row, class Tile>
  KOKKOS_INLINE_FUNCTION void over_tiles(const member_type& team, const GroupTask& t, const Work& k, const SVec& v,
                                         const Row& row, const Tile& tile) const {
    const int threads = team.team_size(), rank = team.team_rank();
    for (long long base = t.r0; base < t.r1; base += tile_rows) {
      const int rows = static_cast<int>(t.r1 - base < tile_rows ? t.r1 - base : tile_rows);
      const S* from = &x(base, 0);
      const int n = rows * q;
      for (int e0 = rank; e0 < n; e0 += threads * load_depth) {  // load_depth loads in flight per thread
        S v[load_depth];
        for (int u = 0; u < load_depth; ++u) v[u] = e0 + u * threads < n ? from[e0 + u * threads] : S(0);
        for (int u = 0; u < load_depth; ++u)
          if (e0 + u * threads < n) k.tile_x(e0 + u * threads) = v[u];
      }
      team.team_barrier();
      const SMat rows_x(k.tile_x.data(), rows, q);
      for (int i = rank; i < rows; i += threads) row(base + i, i, y(base + i) - row_dot<S, BaselineIsa>(rows_x, i, v, q));
      team.team_barrier();
      tile(rows, base);
      team.team_barrier();
    }
  }

  // The first row after i of a tile of `rows` whose chunks start at rows first, first + chunk, ... (rows: none).
  KOKKOS_INLINE_FUNCTION static int next_start(int i, long long first, long long chunk, int rows) {
    const long long next = i < first ? first : first + ((i - first) / chunk + 1) * chunk;
    return next < rows ? static_cast<int>(next) : rows;
  }
  // Adds a tile's rows to the row sums: each thread takes B×B blocks (J, M), J ≤ M, of the Gram's upper triangle
  // (then B-blocks of the gradient) and keeps the current chunk's part of their entries in registers while it goes
  // over the rows in order, a chunk's stretch of the tile at a time (rows first, first + chunk, ... of the tile start
  // chunks), adding the part to k.sums where a chunk ends and leaving the last one in k.part for the next tile; each
  // entry (j, m) still adds (c x_j) x_m, row after row, as the engine's Gram does. A column past q reads column q − 1 and
  // its entries are never stored. On a device it is a function of its own: inlined into the solve, its register
  // blocks and the solve's state spilled, and few-large's group update took 1.4-1.6x longer on an H200
  // (docs/performance.md, "Model groups: fused passes").
  template <int B>
  KOKKOS_FUNCTION RH_DEVICE_NOINLINE void tile_sums(const member_type& team, const Work& k, int rows, bool gram,
                                                    bool grad, long long first, long long chunk) const {
    const int nb = (q + B - 1) / B, pairs = gram ? nb * (nb + 1) / 2 : 0, items = pairs + (grad ? nb : 0);
    const int tri = triangle(q);
    const S* tx = k.tile_x.data();
    for (int item = team.team_rank(); item < items; item += team.team_size()) {
      if (item < pairs) {
        int jb = 0, r = item;  // item = the packed index of block (jb, mb) over nb blocks
        while (r >= nb - jb) r -= nb - jb++;
        const int mb = jb + r;
        int jc[B], mc[B];
        for (int a = 0; a < B; ++a) {
          jc[a] = jb * B + a < q ? jb * B + a : q - 1;
          mc[a] = mb * B + a < q ? mb * B + a : q - 1;
        }
        const auto stored = [&](int a, int b) { return jb * B + a < q && mb * B + b < q && jb * B + a <= mb * B + b; };
        S acc[B][B];
        for (int a = 0; a < B; ++a)
          for (int b = 0; b < B; ++b) acc[a][b] = stored(a, b) ? k.part(packed(jb * B + a, mb * B + b)) : S(0);
        for (int i = 0, end = 0; i < rows; i = end) {
          if (i >= first && (i - first) % chunk == 0) {  // a chunk ends before row i
            for (int a = 0; a < B; ++a)
              for (int b = 0; b < B; ++b) {
                if (stored(a, b)) k.sums(packed(jb * B + a, mb * B + b)) += acc[a][b];
                acc[a][b] = S(0);
              }
          }
          end = next_start(i, first, chunk, rows);
          for (int u = i; u < end; ++u) {
            const S* xi = tx + u * q;
            const S ci = k.tile_c(u);
            S cx[B], xm[B];
            for (int a = 0; a < B; ++a) cx[a] = ci * xi[jc[a]];
            for (int b = 0; b < B; ++b) xm[b] = xi[mc[b]];
            for (int a = 0; a < B; ++a)
              for (int b = 0; b < B; ++b) acc[a][b] += cx[a] * xm[b];
          }
        }
        for (int a = 0; a < B; ++a)
          for (int b = 0; b < B; ++b)
            if (stored(a, b)) k.part(packed(jb * B + a, mb * B + b)) = acc[a][b];
      } else {
        const int jb = item - pairs;
        int jc[B];
        S acc[B];
        for (int a = 0; a < B; ++a) {
          jc[a] = jb * B + a < q ? jb * B + a : q - 1;
          acc[a] = jb * B + a < q ? k.part(tri + jb * B + a) : S(0);
        }
        for (int i = 0, end = 0; i < rows; i = end) {
          if (i >= first && (i - first) % chunk == 0) {
            for (int a = 0; a < B; ++a) {
              if (jb * B + a < q) k.sums(tri + jb * B + a) += acc[a];
              acc[a] = S(0);
            }
          }
          end = next_start(i, first, chunk, rows);
          for (int u = i; u < end; ++u) {
            const S* xi = tx + u * q;
            const S si = k.tile_s(u);
            for (int a = 0; a < B; ++a) acc[a] += si * xi[jc[a]];
          }
        }
        for (int a = 0; a < B; ++a)
          if (jb * B + a < q) k.part(tri + jb * B + a) = acc[a];
      }
    }
  }

  // d = H⁻¹ g: Cholesky when the ridge makes H positive definite (H is assembled symmetric), else or when it gives
  // way LU with partial pivoting (§8 steps 1-2). Returns the SolveStatus.
  KOKKOS_INLINE_FUNCTION int solve(const member_type& team, const Work& k) const {
    int done = 0;
    if (ridge > 0) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) {
        if (e % q >= e / q) k.fac(e / q, e % q) = k.hess(e / q, e % q);
      });
      team.team_barrier();
      if (team_factor_upper(team, k.fac)) Kokkos::single(Kokkos::PerTeam(team), [&](int& ok) { ok = substitute(k); }, done);
    }
    team.team_barrier();
    if (done) return solve_ok;
    LuSolve<Traits, SMat, SVec, Report>{k.hess, k.fac, k.grad, k.dir, k.report, q, false}(team);
    team.team_barrier();
    return k.report().status;
  }

  // Uᵀy = g, then U d = y, each entry's sum in coefficient order; 1 when d is finite.
  KOKKOS_INLINE_FUNCTION int substitute(const Work& k) const {
    for (int i = 0; i < q; ++i) {
      S v = k.grad(i);
      for (int m = 0; m < i; ++m) v -= k.fac(m, i) * k.dir(m);
      k.dir(i) = v / k.fac(i, i);
    }
    for (int i = q - 1; i >= 0; --i) {
      S v = k.dir(i);
      for (int m = i + 1; m < q; ++m) v -= k.fac(i, m) * k.dir(m);
      k.dir(i) = v / k.fac(i, i);
    }
    int ok = 1;
    for (int i = 0; i < q; ++i) ok = ok && compat::isfinite(k.dir(i));
    return ok;
  }

  // factor_upper(u, 0, q) by a whole team, right-looking a row at a time: the pivot row is scaled, then every
  // trailing entry (i, j), i ≤ j, takes u(c, i)·u(c, j) at once. Each entry receives the same operations in the same
  // order as in factor_upper (its panels only change which loop is outer), so the factor has the same bits. False
  // on a pivot that is not > 0 (or NaN), for every thread of the team.
  KOKKOS_INLINE_FUNCTION bool team_factor_upper(const member_type& team, const SMat& u) const {
    for (int c = 0; c < q; ++c) {
      const S d = u(c, c);
      if (!(d > 0)) return false;
      const S r = compat::sqrt(d);
      team.team_barrier();  // every thread has read the pivot before it is replaced
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c, q), [&](const int j) {
        u(c, j) = j == c ? r : u(c, j) / r;
      });
      team.team_barrier();
      const int w = q - c - 1;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w * w), [&](const int e) {
        const int i = c + 1 + e / w, j = c + 1 + e % w;
        if (j >= i) u(i, j) -= u(c, i) * u(c, j);
      });
      team.team_barrier();
    }
    return true;
  }

  // J_b = J + Σ w φ(r(β_b)) x xᵀ (§7); β_b and J_b replace the committed ones only when every value and F_b are
  // finite (else the model keeps its state and the outcome says so).
  KOKKOS_INLINE_FUNCTION void commit(const member_type& team, const GroupTask& t, const Work& k,
                                     GroupOutcome& out) const {
    weighted_sums(team, t, k, true, false);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) {
      const int j = e / q, m = e % q;
      if (m < j) return;
      const S v = info(t.model, j, m) + k.sums(packed(j, m));
      info_new(t.model, j, m) = v;
      info_new(t.model, m, j) = v;
    });
    team.team_barrier();
    int bad = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, q * q + q), [&](const int e, int& b) {
      const S v = e < q * q ? info_new(t.model, e / q, e % q) : k.cur(e - q * q);
      if (!compat::isfinite(v)) ++b;
    }, bad);
    if (bad > 0 || !compat::isfinite(out.objective)) {
      out.status = group_non_finite;
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q + q), [&](const int e) {
      if (e < q * q) info(t.model, e / q, e % q) = info_new(t.model, e / q, e % q);
      else beta(t.model, e - q * q) = k.cur(e - q * q);
    });
    team.team_barrier();
  }
};

}  // namespace rh::detail
