// rh_lu_bench: the dense solve of one Newton iteration, H d = g with H q×q, timed side by side on Kokkos::OpenMP
// (docs/architecture.md, "Kokkos Kernels"):
//
//   rh_factor_solve      the library's factor_solve pass with LU alone (partial pivoting, one team), as the solver
//                        runs it with ridge 0 and as the fallback
//   rh_cholesky_first    the same pass with Cholesky first, as the solver runs it with ridge > 0 (H is SPD here)
//   kk_team_lu/T         KokkosBatched::TeamLU + TeamSolveLU (no pivoting) in one team of T threads
//   kk_serial_lu         KokkosBatched::SerialLU + SerialSolveLU (no pivoting) in one work item
//
// Each timed operation copies H into the factor storage first (the library keeps H for the fallback), factors,
// solves and fences. H is a random symmetric, diagonally dominant matrix shaped like a scaled Newton Hessian (no
// pivoting is needed for it, which favours the Kokkos Kernels variants). max_abs_diff compares d with ours.
// Shapes: q = 17 (smoke), 91 (the reference batch, 90 features + intercept), 257 (wide).
#include <benchmark/benchmark.h>

#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Serial_Impl.hpp>
#include <KokkosBatched_LU_Team_Impl.hpp>
#include <KokkosBatched_SolveLU_Decl.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "machine_load.hpp"
#include "openmp/traits.hpp"
#include "rh/detail/passes.hpp"
#include "rh/regressor.hpp"

namespace {

using Passes = rh::detail::Passes<rh::backends::openmp::Traits, double>;
using Matrix = Passes::Matrix;
using Vector = Passes::Vector;
using Rhs = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;  // q × 1, as the batched solves take

struct System {
  Matrix h;
  Vector g;
};

System make_system(int q) {
  std::mt19937_64 rng(4242 + q);
  std::normal_distribution<double> normal;
  System s{Matrix("h", q, q), Vector("g", q)};
  for (int j = 0; j < q; ++j) {
    for (int k = 0; k <= j; ++k) s.h(j, k) = s.h(k, j) = 0.1 * normal(rng);
    s.h(j, j) = 1.0 + q * 0.1 + std::fabs(normal(rng));
    s.g(j) = normal(rng);
  }
  return s;
}

Vector ours(const System& s) {
  const int q = static_cast<int>(s.g.extent(0));
  Passes passes(Kokkos::OpenMP(), 0);
  Matrix lu("lu", q, q);
  Vector d("d", q);
  Passes::Status status("status");
  passes.factor_solve(s.h, s.g, lu, d, status, false);
  Kokkos::fence();
  return d;
}

double max_abs_diff(const Vector& a, const Rhs& b) {
  double worst = 0.0;
  for (size_t j = 0; j < a.extent(0); ++j) worst = std::max(worst, std::fabs(a(j) - b(j, 0)));
  return worst;
}

void factor_solve(benchmark::State& state, bool cholesky_first) {
  const int q = static_cast<int>(state.range(0));
  const System s = make_system(q);
  Passes passes(Kokkos::OpenMP(), 0);
  Matrix lu("lu", q, q);
  Vector d("d", q);
  Passes::Status status("status");
  const auto load = rh_perf::cpu_snapshot();
  for (auto _ : state) {
    passes.factor_solve(s.h, s.g, lu, d, status, cholesky_first);
    Kokkos::fence();
  }
  state.counters["other_cores"] = rh_perf::other_cores(load, rh_perf::cpu_snapshot());
  if (cholesky_first) {
    const Vector reference = ours(s);
    double worst = 0.0;
    for (int j = 0; j < q; ++j) worst = std::max(worst, std::fabs(d(j) - reference(j)));
    state.counters["max_abs_diff"] = worst;  // against LU
    state.counters["by_cholesky"] = status().method == rh::detail::solve_by_cholesky ? 1 : 0;
  }
}
void rh_factor_solve(benchmark::State& state) { factor_solve(state, false); }
void rh_cholesky_first(benchmark::State& state) { factor_solve(state, true); }

// KokkosBatched in one team: copy, TeamLU, TeamSolveLU.
struct TeamLuSolve {
  Matrix h, lu;
  Vector g;
  Rhs x;
  using member = Kokkos::TeamPolicy<Kokkos::OpenMP>::member_type;
  void operator()(const member& team) const {
    const int q = static_cast<int>(g.extent(0));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) { lu(e / q, e % q) = h(e / q, e % q); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q), [&](const int j) { x(j, 0) = g(j); });
    team.team_barrier();
    KokkosBatched::TeamLU<member, KokkosBatched::Algo::LU::Unblocked>::invoke(team, lu);
    team.team_barrier();
    KokkosBatched::TeamSolveLU<member, KokkosBatched::Trans::NoTranspose, KokkosBatched::Algo::SolveLU::Unblocked>::invoke(
        team, lu, x);
  }
};

void kk_team_lu(benchmark::State& state) {
  const int q = static_cast<int>(state.range(0)), team = static_cast<int>(state.range(1));
  const System s = make_system(q);
  TeamLuSolve f{s.h, Matrix("lu", q, q), s.g, Rhs("x", q, 1)};
  const auto load = rh_perf::cpu_snapshot();
  for (auto _ : state) {
    Kokkos::parallel_for("kk_team_lu", Kokkos::TeamPolicy<Kokkos::OpenMP>(1, team), f);
    Kokkos::fence();
  }
  state.counters["other_cores"] = rh_perf::other_cores(load, rh_perf::cpu_snapshot());
  state.counters["max_abs_diff"] = max_abs_diff(ours(s), f.x);
}

struct SerialLuSolve {
  Matrix h, lu;
  Vector g;
  Rhs x;
  void operator()(const int) const {
    const int q = static_cast<int>(g.extent(0));
    for (int j = 0; j < q; ++j) {
      for (int k = 0; k < q; ++k) lu(j, k) = h(j, k);
      x(j, 0) = g(j);
    }
    KokkosBatched::SerialLU<KokkosBatched::Algo::LU::Unblocked>::invoke(lu);
    KokkosBatched::SerialSolveLU<KokkosBatched::Trans::NoTranspose, KokkosBatched::Algo::SolveLU::Unblocked>::invoke(lu, x);
  }
};

void kk_serial_lu(benchmark::State& state) {
  const int q = static_cast<int>(state.range(0));
  const System s = make_system(q);
  SerialLuSolve f{s.h, Matrix("lu", q, q), s.g, Rhs("x", q, 1)};
  const auto load = rh_perf::cpu_snapshot();
  for (auto _ : state) {
    Kokkos::parallel_for("kk_serial_lu", Kokkos::RangePolicy<Kokkos::OpenMP>(0, 1), f);
    Kokkos::fence();
  }
  state.counters["other_cores"] = rh_perf::other_cores(load, rh_perf::cpu_snapshot());
  state.counters["max_abs_diff"] = max_abs_diff(ours(s), f.x);
}

}  // namespace

int main(int argc, char** argv) {
  rh::initialize_runtime();  // Kokkos, with the library's settings (OMP_NUM_THREADS)
  const int threads = Kokkos::OpenMP::concurrency();
  for (int q : {17, 91, 257}) {
    benchmark::RegisterBenchmark(("rh_factor_solve/" + std::to_string(q)).c_str(), rh_factor_solve)->Arg(q);
    benchmark::RegisterBenchmark(("rh_cholesky_first/" + std::to_string(q)).c_str(), rh_cholesky_first)->Arg(q);
    for (int team : {1, threads})
      benchmark::RegisterBenchmark(("kk_team_lu/" + std::to_string(q) + "/team" + std::to_string(team)).c_str(),
                                   kk_team_lu)
          ->Args({q, team});
    benchmark::RegisterBenchmark(("kk_serial_lu/" + std::to_string(q)).c_str(), kk_serial_lu)->Arg(q);
  }
  benchmark::AddCustomContext("kokkos_openmp_concurrency", std::to_string(threads));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
