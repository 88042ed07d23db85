// rh_solve_bench: the dense solve of one Newton iteration (docs/method.md §8), H d = g with H q×q symmetric
// positive definite, on every compiled space: the factor_solve pass with Cholesky first (as the solver runs it when
// ridge > 0) against the same pass with LU alone (ridge 0, and the fallback), and on spaces with their own memory
// the Cholesky at other panel widths than the traits' choice (the tuning of backends/<space>/traits.hpp).
//
// H = GᵀG/(4q) + 10⁻³·I with G standard normal (condition ≈ 10³), as in docs/evidence/h200.md. Each
// timed operation factors, solves and fences; the median and minimum of the repetitions are printed, with the
// residual ‖H d − g‖∞ / ‖g‖∞ of the last one. No Google Benchmark: the binary runs on the GPU machine as built.
//
//   rh_solve_bench [--reps N] [--q 17,91,257] [--space NAME]
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/dense_solve.hpp"
#include "rh/detail/passes.hpp"
#include "rh/regressor.hpp"

namespace {

struct Options {
  int reps = 30;
  std::vector<int> qs = {17, 91, 257};
  std::string space;  // empty: every compiled space
};

struct Timing {
  double median_ms = 0, min_ms = 0;
};

template <class F>
Timing time_it(int reps, F&& op) {
  op();  // warm-up (allocations, first launch)
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

template <class Traits, class S>
void bench_space(const Options& opt) {
  using Passes = rh::detail::Passes<Traits, S>;
  using Matrix = typename Passes::Matrix;
  using Vector = typename Passes::Vector;
  const auto space = Traits::instance(0);
  const Passes passes(space, 0);
  const char* dtype = sizeof(S) == 8 ? "f64" : "f32";
  for (const int q : opt.qs) {
    std::mt19937_64 rng(4242 + q);
    std::normal_distribution<double> normal;
    const int m = 4 * q;
    std::vector<double> g(static_cast<size_t>(m) * q), a(static_cast<size_t>(q) * q), b(q);
    for (auto& v : g) v = normal(rng);
    for (auto& v : b) v = normal(rng);
    for (int i = 0; i < q; ++i)
      for (int j = 0; j <= i; ++j) {
        double sum = 0;
        for (int r = 0; r < m; ++r) sum += g[static_cast<size_t>(r) * q + i] * g[static_cast<size_t>(r) * q + j];
        a[static_cast<size_t>(i) * q + j] = a[static_cast<size_t>(j) * q + i] = sum / m + (i == j ? 1e-3 : 0.0);
      }
    Matrix h("h", q, q), factor("factor", q, q);
    Vector rhs("g", q), d("d", q);
    typename Passes::Status report("report");
    auto hh = Kokkos::create_mirror_view(h);
    auto hr = Kokkos::create_mirror_view(rhs);
    for (int i = 0; i < q; ++i) {
      hr(i) = static_cast<S>(b[i]);
      for (int j = 0; j < q; ++j) hh(i, j) = static_cast<S>(a[static_cast<size_t>(i) * q + j]);
    }
    Kokkos::deep_copy(h, hh);
    Kokkos::deep_copy(rhs, hr);
    const auto line = [&](const char* what, int panel, const Timing& t) {
      const auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
      const auto rep = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), report);
      double res = 0, gmax = 0;
      for (int i = 0; i < q; ++i) {
        double r = -static_cast<double>(hr(i));
        for (int j = 0; j < q; ++j) r += static_cast<double>(hh(i, j)) * static_cast<double>(hd(j));
        res = std::max(res, std::fabs(r));
        gmax = std::max(gmax, std::fabs(static_cast<double>(hr(i))));
      }
      std::printf("%-7s %s q=%-4d %-22s panel=%-4d median_ms=%.4f min_ms=%.4f residual=%.1e report=%s/%d\n",
                  rh::space_name(Traits::id), dtype, q, what, panel, t.median_ms, t.min_ms, res / gmax,
                  rep().method == rh::detail::solve_by_cholesky ? "cholesky" : "lu", rep().status);
    };
    const int panel = Traits::cholesky_panel(q);
    line("cholesky_first", panel, time_it(opt.reps, [&] {
           passes.factor_solve(h, rhs, factor, d, report, true);
           space.fence();
         }));
    line("lu", 0, time_it(opt.reps, [&] {
           passes.factor_solve(h, rhs, factor, d, report, false);
           space.fence();
         }));
    if (!Traits::host)
      for (const int nb : {8, 16, 32, q}) {  // q: the one-team kernel
        line("cholesky_only", nb, time_it(opt.reps, [&] {
               rh::detail::cholesky_solve<Traits>(space, h, rhs, factor, d, report, nb);
               space.fence();
             }));
      }
  }
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--reps") opt.reps = std::atoi(v.c_str());
    else if (k == "--q") opt.qs = parse_list(v);
    else if (k == "--space") opt.space = v;
    else {
      std::fprintf(stderr, "usage: rh_solve_bench [--reps N] [--q 17,91,257] [--space NAME]\n");
      return 2;
    }
  }
  rh::initialize_runtime();  // the library finalizes Kokkos at exit
  rh::detail::for_each_type(rh::detail::CompiledSpaces{}, [&](auto tag) {
    using Traits = typename decltype(tag)::type;
    if (!opt.space.empty() && opt.space != rh::space_name(Traits::id)) return;
    if (Traits::device_count() == 0) return;
    bench_space<Traits, double>(opt);
    bench_space<Traits, float>(opt);
  });
  return 0;
}
