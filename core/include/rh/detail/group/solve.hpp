// The whole batch of every model of a group in one launch: a team per model runs its solve (damped Newton,
// docs/method.md §5, with its dense solves, §8; or LAMM for the L1 penalty, §6) and its commit (§7) in team
// scratch, and finishes alone: no host round trip per iteration, and a converged model's team simply ends while the
// others go on.
//
// It is the method of the single-model engine (rh/detail/engine.hpp with the policies of rh/detail/penalties/), with the
// formulas of rh/detail/method.hpp, the L1 policy's gradient, MakeCandidate, the Cholesky factor of
// dense/cholesky.hpp and the LU of dense/lu.hpp. It differs in how it sums (per model in one team: each Gram and
// gradient entry in double, row after row; see row_sums) and in its Newton line search, which evaluates F_b at each step directly,
// as §5 states the rule, instead of pricing every step from one pass. Results agree with rh::Regressor within the
// golden floors (tests/unit/test_group.cpp).
#pragma once
#include <Kokkos_Core.hpp>

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

namespace rh::detail {

template <class Traits, class S>
struct GroupNewton {
  using Space = typename Traits::execution_space;
  using Policy = Kokkos::TeamPolicy<Space>;
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
  int tile_rows = 0;        // rows per scratch tile of row_sums' device path (level 0); 0 on a host space
  long long penalized = 0;  // coefficients [0, penalized) carry the L1 penalty (p: the intercept never does)
  bool has_w = false;
  bool l1 = false;          // the LAMM solver of §6 (the L1 penalty); false: Newton (§5)
  double tau = 0.0, tol = 0.0, ridge = 0.0;

  // A team's scratch: β̃, β, the candidate, d, g; H and its factor; δ and Jδ in double; the row sums (the Gram's
  // upper triangle row by row, then the gradient's u) in double; the solve's report. On a device, in level 0, a
  // tile of the model's design rows and their weights c and s.
  struct Work {
    SVec tilde, cur, cand, dir, grad;
    SMat hess, fac;
    DVec delta, jd, sums;
    Report report;
    SVec tile_x, tile_c, tile_s;
  };
  KOKKOS_INLINE_FUNCTION static int triangle(int q) { return q * (q + 1) / 2; }
  static size_t scratch_bytes(int q) {
    return 5 * (SVec::shmem_size(q) + 64) + 2 * (SMat::shmem_size(q, q) + 64) + 2 * (DVec::shmem_size(q) + 64) +
           DVec::shmem_size(triangle(q) + q) + 64 + Report::shmem_size() + 64;
  }
  static size_t tile_bytes(int q, int rows) {
    return SVec::shmem_size(static_cast<size_t>(rows) * q) + 2 * SVec::shmem_size(rows) + 3 * 64;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const GroupTask t = tasks(team.league_rank());
    // A copy of a scratch space allocates from where the copy was made: the tiles come from the same object as the
    // work when both are in level 0, else their allocations would overlap.
    auto scratch = team.team_scratch(level), level0 = team.team_scratch(0);
    auto& tiles = level == 0 ? scratch : level0;
    Work k{SVec(scratch, q), SVec(scratch, q), SVec(scratch, q), SVec(scratch, q), SVec(scratch, q),
           SMat(scratch, q, q), SMat(scratch, q, q), DVec(scratch, q), DVec(scratch, q),
           DVec(scratch, triangle(q) + q), Report(scratch),
           SVec(tiles, static_cast<size_t>(tile_rows) * q), SVec(tiles, tile_rows), SVec(tiles, tile_rows)};
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
  // Damped Newton with backtracking (§5), from β = β̃.
  KOKKOS_INLINE_FUNCTION GroupOutcome newton(const member_type& team, const GroupTask& t, const Work& k) const {
    GroupOutcome out;
    double f = objective(team, t, k, k.cur);  // §5 step 1
    for (int it = 1; it <= max_iter; ++it) {
      out.iterations = it;
      newton_system(team, t, k, true);
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
        const double fc = objective(team, t, k, k.cand);
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
  // below the quadratic majorizer, else φ doubles (at most 40 times).
  KOKKOS_INLINE_FUNCTION GroupOutcome lamm(const member_type& team, const GroupTask& t, const Work& k) const {
    GroupOutcome out;
    double f = objective(team, t, k, k.cur);
    double phi = 1.0;
    for (int it = 1; it <= max_iter; ++it) {
      out.iterations = it;
      newton_system(team, t, k, false);  // g at β
      bool accepted = false;
      double fc = 0.0, step2 = 0.0;
      for (int attempt = 0; attempt < 40 && !accepted; ++attempt) {
        const MakeCandidate<S, SVec> candidate{k.cand, k.cur, k.grad, static_cast<S>(1.0 / phi),
                                               static_cast<S>(t.lambda / phi), penalized};
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { candidate(j); });
        team.team_barrier();
        fc = objective(team, t, k, k.cand);
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

  KOKKOS_INLINE_FUNCTION S residual(long long i, const SVec& v) const {
    return y(i) - row_dot<S, BaselineIsa>(x, i, v, q);
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
  KOKKOS_INLINE_FUNCTION double objective(const member_type& team, const GroupTask& t, const Work& k,
                                          const SVec& v) const {
    j_delta(team, t, k, v);
    double loss = 0.0, quad = 0.0;
    const S tau_s = static_cast<S>(tau);
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, t.r0, t.r1), [&](const long long i, double& acc) {
      acc += static_cast<double>(weight(i) * huber_loss(residual(i, v), tau_s));
    }, loss);
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
  KOKKOS_INLINE_FUNCTION void newton_system(const member_type& team, const GroupTask& t, const Work& k,
                                            bool with_hessian) const {
    row_weights(team, t, k, true);
    j_delta(team, t, k, k.cur);
    row_sums(team, t, k, with_hessian, true);
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

  // s_i = w ψ(r_i) (with `scores`) and c_i = w φ(r_i) at the current β.
  KOKKOS_INLINE_FUNCTION void row_weights(const member_type& team, const GroupTask& t, const Work& k,
                                          bool scores) const {
    const S tau_s = static_cast<S>(tau), h_s = static_cast<S>(t.h);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, t.r0, t.r1), [&](const long long i) {
      const S r = residual(i, k.cur);
      const S wi = weight(i);
      if (scores) s(i) = wi * huber_score(r, tau_s);
      c(i) = wi * smoothed_curvature(r, tau_s, h_s);
    });
    team.team_barrier();
  }

  // The position of Gram entry (j, m), j ≤ m, in the row sums: the upper triangle row after row.
  KOKKOS_INLINE_FUNCTION int packed(int j, int m) const { return j * q - j * (j - 1) / 2 + (m - j); }

  // The row sums of the model's rows at the current c and s, each entry in double over rows r0, ..., r1 − 1 in
  // order: with `gram`, the upper triangle Σ c_i x_ij x_im (k.sums(packed(j, m))); with `grad`, u_j = Σ s_i x_ij
  // (k.sums(triangle + j)). Only where the rows are read from and which loop is outer differ between the paths: a
  // host space's one thread passes over the rows once, adding each row to every entry; a device team loads the rows
  // a tile at a time into scratch (coalesced) and each thread adds the tile to its entries.
  KOKKOS_INLINE_FUNCTION void row_sums(const member_type& team, const GroupTask& t, const Work& k, bool gram,
                                       bool grad) const {
    const int tri = triangle(q);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tri + q), [&](const int e) { k.sums(e) = 0.0; });
    team.team_barrier();
    if constexpr (Traits::host) {
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (long long i = t.r0; i < t.r1; ++i) {
          if (gram) {
            const S ci = c(i);
            int e = 0;
            for (int j = 0; j < q; ++j) {
              const S cx = ci * x(i, j);  // c x_j x_m is (c x_j) x_m
              for (int m = j; m < q; ++m, ++e) k.sums(e) += static_cast<double>(cx * x(i, m));
            }
          }
          if (grad) {
            const S si = s(i);
            for (int j = 0; j < q; ++j) k.sums(tri + j) += static_cast<double>(si * x(i, j));
          }
        }
      });
    } else {
      const int n_gram = gram ? tri : 0, entries = n_gram + (grad ? q : 0);
      for (long long base = t.r0; base < t.r1; base += tile_rows) {
        const int rows = static_cast<int>(t.r1 - base < tile_rows ? t.r1 - base : tile_rows);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * q), [&](const int e) {
          k.tile_x(e) = x(base + e / q, e % q);
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int i) {
          if (gram) k.tile_c(i) = c(base + i);
          if (grad) k.tile_s(i) = s(base + i);
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, entries), [&](const int e) {
          if (e < n_gram) {
            int j = 0, r = e;  // e = packed(j, m)
            while (r >= q - j) r -= q - j++;
            const int m = j + r;
            double a = k.sums(e);
            for (int i = 0; i < rows; ++i) a += static_cast<double>(k.tile_c(i) * k.tile_x(i * q + j) * k.tile_x(i * q + m));
            k.sums(e) = a;
          } else {
            const int j = e - n_gram;
            double a = k.sums(tri + j);
            for (int i = 0; i < rows; ++i) a += static_cast<double>(k.tile_s(i) * k.tile_x(i * q + j));
            k.sums(tri + j) = a;
          }
        });
        team.team_barrier();
      }
    }
    team.team_barrier();
  }

  // d = H⁻¹ g: Cholesky when the ridge makes H positive definite (H is assembled symmetric), else or when it gives
  // way LU with partial pivoting (§8 steps 1-2). Returns the SolveStatus.
  KOKKOS_INLINE_FUNCTION int solve(const member_type& team, const Work& k) const {
    int done = 0;
    if (ridge > 0) {
      if constexpr (Traits::host) {  // one thread: factor_upper's blocked loops
        Kokkos::single(Kokkos::PerTeam(team), [&](int& ok) {
          for (int i = 0; i < q; ++i)
            for (int j = i; j < q; ++j) k.fac(i, j) = k.hess(i, j);
          if (factor_upper(k.fac, 0, q)) ok = substitute(k);
        }, done);
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) {
          if (e % q >= e / q) k.fac(e / q, e % q) = k.hess(e / q, e % q);
        });
        team.team_barrier();
        if (team_factor_upper(team, k.fac)) Kokkos::single(Kokkos::PerTeam(team), [&](int& ok) { ok = substitute(k); }, done);
      }
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
    row_weights(team, t, k, false);
    row_sums(team, t, k, true, false);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) {
      const int j = e / q, m = e % q;
      if (m < j) return;
      const S v = info(t.model, j, m) + static_cast<S>(k.sums(packed(j, m)));
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
