// The line search pass tests: every space and dtype against the sequential reference (tests/reference/passes.hpp);
// the tolerances are rounding-error bounds (tests/unit/pass_tests.hpp says how).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "pass_tests.hpp"
#include "rh/detail/kernels.hpp"

using namespace rh;
using namespace rh::test;
using namespace rh::test::pass_tests;
namespace ref = rh::reference;
using ref::Values;

// Lever 1 of issue 12: one pass prices every step. The reference evaluates F_b directly at each rounded candidate
// (ref::evaluate); the pass must agree with it to the rounding of such an evaluation, take the same decision
// wherever the reference's decision is not itself a matter of rounding, and decide these clear-cut searches itself.
TEST_CASE_TEMPLATE_DEFINE("line_search prices every step as a direct evaluation does and takes the reference's decision",
                          T, pass_line_search) {
  using S = typename T::S;
  const double eps = std::numeric_limits<S>::epsilon();
  OnSpace<T> sp;
  typename OnSpace<T>::Passes::LineSearchScratch scratch;
  int searches = 0, decided = 0;
  for (const Shape& shape : kShapes)
    for (Scenario sc : kScenarios) {
      CAPTURE(name_of(sc));
      CAPTURE(shape.p);
      const Problem pr = make_problem<S>(sc, shape.n, shape.p, shape.intercept, 61);
      const ref::Rows rows = reference_rows(pr);
      auto st = sp.stage(pr);
      add_newton_rows<T>(st, pr.n);
      const detail::BatchScalars bs = scalars_of(pr);
      typename OnSpace<T>::Passes::Coefficients coef;
      coef.cur = OnSpace<T>::vector(pr.cur);
      coef.tilde = OnSpace<T>::vector(pr.tilde);
      coef.info = OnSpace<T>::matrix(pr.info, pr.q);
      coef.cand = typename OnSpace<T>::Vector("cand", pr.q);
      typename OnSpace<T>::Passes::Status status("status");
      // d = α(β − β_fit): t = 1/α lands on the point y was generated from; α > 1 overshoots, so larger steps
      // are rejected first.
      for (double alpha : {1.0, 3.0, 40.0}) {
        CAPTURE(alpha);
        Values dir;
        for (long long j = 0; j < pr.q; ++j)
          dir.push_back(round_to<S>(alpha * (pr.cur[static_cast<size_t>(j)] - pr.cand[static_cast<size_t>(j)])));
        coef.dir = OnSpace<T>::vector(dir);
        const detail::LineSearch got = sp.passes.line_search(st.rows, st.chunks, bs, coef, status, scratch);
        // The reference: F_b at β and at every rounded candidate, with a bound on a direct evaluation's rounding
        // (the evaluate test's: residuals in S, sums in double).
        const auto objective = [&](const Values& at, double& bound) {
          const ref::Evaluation e = ref::evaluate(rows, at, pr.cur, pr.tilde, pr.info, pr.tau, pr.h);
          double loss_bound = 0, quad_abs = 0;
          for (long long i = 0; i < pr.n; ++i) {
            double fit_abs = std::fabs(rows.y[static_cast<size_t>(i)]);
            for (long long j = 0; j < pr.q; ++j)
              fit_abs += std::fabs(rows.at(i, j)) * (std::fabs(at[static_cast<size_t>(j)]) + std::fabs(dir[static_cast<size_t>(j)]));
            const double dr = (pr.q + 2) * eps * fit_abs + eps * pr.tau;
            loss_bound += rows.weight(i) * (pr.tau * dr + 4 * eps * (pr.tau * fit_abs + fit_abs * fit_abs + pr.tau * pr.tau));
          }
          for (long long j = 0; j < pr.q; ++j)
            for (long long k = 0; k < pr.q; ++k)
              quad_abs += std::fabs((at[static_cast<size_t>(j)] - pr.tilde[static_cast<size_t>(j)]) *
                                    pr.info[static_cast<size_t>(j * pr.q + k)] *
                                    (at[static_cast<size_t>(k)] - pr.tilde[static_cast<size_t>(k)]));
          bound = (loss_bound + 4.0 * (pr.q + 2) * kEps64 * quad_abs) * bs.inv_n;
          return (e.loss + 0.5 * e.quad) * bs.inv_n;
        };
        double bound0 = 0;
        const double f0 = objective(pr.cur, bound0);
        CHECK_WITHIN(got.objective_current, f0, bound0 + 4 * kEps64 * std::fabs(f0), "F(beta)");
        // Every step the pass rejected or accepted, the reference rejects or accepts too, unless the two objectives
        // it compares lie within their rounding bounds (then either decision is a direct evaluation's).
        const int last = got.step >= 0 ? got.step : (got.undecided >= 0 ? got.undecided : detail::line_search_steps - 1);
        double t = 1.0;
        for (int k = 0; k <= last; ++k, t *= 0.5) {
          CAPTURE(k);
          Values cand = ref::candidate(pr.cur, dir, t, 0.0, bs.penalized);
          for (auto& v : cand) v = round_to<S>(v);
          double bound = 0;
          const double f = objective(cand, bound);
          const bool decisive = std::fabs(f - f0) > bound + bound0;
          if (k == got.undecided) break;
          if (k < got.step || got.step < 0) CHECK((f > f0 || !decisive));
          if (k == got.step) {
            CHECK((f <= f0 || !decisive));
            CHECK_WITHIN(got.objective, f, bound + 4 * kEps64 * std::fabs(f), "F(candidate)");
            const Values c = OnSpace<T>::values(coef.cand);
            for (long long j = 0; j < pr.q; ++j) CHECK(c[static_cast<size_t>(j)] == cand[static_cast<size_t>(j)]);
          }
        }
        ++searches;
        decided += got.undecided < 0 ? 1 : 0;
        // r = y − Xβ and u = X·d are left for accept_step.
        const Values r = OnSpace<T>::values(st.rows.r), u = OnSpace<T>::values(st.rows.u);
        for (long long i = 0; i < pr.n; ++i) {
          double fit = 0, fit_abs = 0, step = 0, step_abs = 0;
          for (long long j = 0; j < pr.q; ++j) {
            fit += rows.at(i, j) * pr.cur[static_cast<size_t>(j)];
            fit_abs += std::fabs(rows.at(i, j) * pr.cur[static_cast<size_t>(j)]);
            step += rows.at(i, j) * dir[static_cast<size_t>(j)];
            step_abs += std::fabs(rows.at(i, j) * dir[static_cast<size_t>(j)]);
          }
          const size_t I = static_cast<size_t>(i);
          CHECK_WITHIN(r[I], rows.y[I] - fit, (pr.q + 2) * eps * (fit_abs + std::fabs(rows.y[I])), "r_" << i);
          CHECK_WITHIN(u[I], step, (pr.q + 2) * eps * step_abs, "u_" << i);
        }
      }
    }
  // These steps change F_b by far more than rounding: the pass must decide them itself, not hand them back.
  CHECK(decided == searches);
}
TEST_CASE_TEMPLATE_APPLY(pass_line_search, Targets);

// J for the finish kernels' path tests: a positive diagonal, and every entry large enough that its terms are not lost
// in the rows' sums, so that a sum taken in another order shows in the results.
template <class Matrix>
void fill_large_information(const Matrix& info, long long q, bool symmetric, std::mt19937_64& rng,
                            std::normal_distribution<double>& normal) {
  using S = typename Matrix::non_const_value_type;
  for (long long j = 0; j < q; ++j)
    for (long long k = 0; k <= j; ++k) {
      info(j, k) = static_cast<S>(1000.0 * (j == k ? 2.0 + std::fabs(normal(rng)) : 0.1 * normal(rng)));
      if (k < j) info(k, j) = symmetric ? info(j, k) : static_cast<S>(1000.0 * 0.1 * normal(rng));
    }
}

// line_search_finish's device path (ByThreads: each in-order sum in a thread of its own, as a CUDA team runs it) on
// a host space, a team of as many threads as it has, against the host path (one thread walks every sum): the same
// decision, objectives, ‖cand − β‖², ‖cand‖² and candidate, bit for bit. The chunks' sums come from rows priced as
// line_search_rows prices them; the direction's length spreads the decisions over accepted steps, rejected ones
// and steps within rounding (a negative length points uphill). CI has no GPU: here its path is checked.
TEST_CASE_TEMPLATE("line_search_finish's device path gives its host path's bits on a host space", S, double, float) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Vector = Kokkos::View<S*, Kokkos::HostSpace>;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using SumsView = Kokkos::View<detail::LineSearchSums*, Kokkos::HostSpace>;
  using DView = Kokkos::View<double*, Kokkos::HostSpace>;
  using Status = Kokkos::View<detail::SolveReport, Kokkos::HostSpace>;
  using Result = Kokkos::View<detail::LineSearch, Kokkos::HostSpace>;
  using HostPath = detail::FinishLineSearch<Space, S, Vector, Matrix, SumsView, DView, Status, Result, false>;
  using DevicePath = detail::FinishLineSearch<Space, S, Vector, Matrix, SumsView, DView, Status, Result, true>;
  int accepted_first = 0, accepted_later = 0, undecided = 0, rejected = 0;
  for (long long q : {1LL, 7LL, 91LL})
    for (long long chunks : {1LL, 5LL, 89LL})
      for (double length : {1.0, 0.3, 3.0, 40.0, 1e-9, -1.0}) {
        CAPTURE(q);
        CAPTURE(chunks);
        CAPTURE(length);
        const long long seed = 1000 * q + 10 * chunks + static_cast<long long>(length * 7);
        std::mt19937_64 rng(static_cast<unsigned long long>(seed));
        std::normal_distribution<double> normal;
        const double tau = 1.345;
        SumsView sums("sums", chunks);
        for (long long ch = 0; ch < chunks; ++ch)
          for (int i = 0; i < 40; ++i) {  // r = y − Xβ, and u = X·d pulls r towards 0 by `length`
            const double r = 2.0 * normal(rng), u = -length * r * (0.5 + 0.1 * normal(rng));
            const double w = 1.0 + 0.2 * normal(rng);
            const double loss = w * detail::huber_loss(r, tau);
            sums(ch).add_row(w, r, u, tau, loss, std::fabs(r) + 1.0);
          }
        Vector cur("cur", q), dir("dir", q), tilde("tilde", q);
        Vector cand_host("cand_host", q), cand_device("cand_device", q);
        Matrix info("info", q, q);
        for (long long j = 0; j < q; ++j) {
          cur(j) = static_cast<S>(normal(rng));
          tilde(j) = static_cast<S>(cur(j) + 0.1 * normal(rng));
          dir(j) = static_cast<S>(length * 0.01 * normal(rng));
        }
        fill_large_information(info, q, true, rng, normal);
        DView terms_host("terms_host", 3 * q), terms_device("terms_device", 3 * q);
        Status status("status");
        Result host_result("host_result"), device_result("device_result");
        const double inv_n = 1.0 / static_cast<double>(40 * chunks), eps = std::numeric_limits<S>::epsilon();
        const HostPath host{cur,    dir,    tilde, cand_host, info, sums, terms_host, status, host_result,
                            q,      chunks, inv_n, eps,       true};
        const DevicePath device{cur,    dir,    tilde, cand_device, info, sums, terms_device, status, device_result,
                                q,      chunks, inv_n, eps,         true};
        Kokkos::parallel_for(Kokkos::TeamPolicy<Space>(1, 1), host);
        Kokkos::TeamPolicy<Space> probe(1, 1);
        probe.set_scratch_size(0, Kokkos::PerTeam(DevicePath::scratch_bytes()));
        const int threads = probe.team_size_max(device, Kokkos::ParallelForTag());
        for (int team : {1, threads}) {
          CAPTURE(team);
          Kokkos::TeamPolicy<Space> policy(1, team);
          policy.set_scratch_size(0, Kokkos::PerTeam(DevicePath::scratch_bytes()));
          Kokkos::parallel_for(policy, device);
          Kokkos::fence();
          const detail::LineSearch a = host_result(), b = device_result();
          CHECK(a.step == b.step);
          CHECK(a.undecided == b.undecided);
          CHECK(a.objective_current == b.objective_current);
          CHECK(a.objective == b.objective);
          CHECK(a.step2 == b.step2);
          CHECK(a.cand2 == b.cand2);
          int differ = 0;
          for (long long j = 0; j < q; ++j) differ += (a.step < 0 || cand_host(j) == cand_device(j)) ? 0 : 1;
          CHECK(differ == 0);
        }
        const detail::LineSearch a = host_result();
        accepted_first += a.step == 0 ? 1 : 0;
        accepted_later += a.step > 0 ? 1 : 0;
        undecided += a.step < 0 && a.undecided >= 0 ? 1 : 0;
        rejected += a.step < 0 && a.undecided < 0 ? 1 : 0;
      }
  MESSAGE("accepted at t = 1: " << accepted_first << ", later: " << accepted_later << ", undecided: " << undecided
                                << ", none: " << rejected);
  CHECK(accepted_first > 0);  // every kind of outcome, or the comparison above could miss a path
  CHECK(accepted_later > 0);
  CHECK(undecided + rejected > 0);
}

// finish_evaluation's device path ((Jδ)_j each in a thread of its own) on a host space against its host path (one
// thread: every (Jδ)_j at once along J's rows when J is symmetric, eight side by side when not), every penalty: the
// same (Jδ)_j and the same sums, bit for bit.
template <class Penalty, class S>
void finish_evaluation_paths_agree() {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Vector = Kokkos::View<S*, Kokkos::HostSpace>;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using DView = Kokkos::View<double*, Kokkos::HostSpace>;
  using Sums = detail::EvaluationSums<Penalty>;
  using TView = Kokkos::View<Sums*, Kokkos::HostSpace>;
  using Status = Kokkos::View<detail::SolveReport, Kokkos::HostSpace>;
  using SumsView = Kokkos::View<Sums, Kokkos::HostSpace>;
  using HostPath = detail::FinishEvaluation<Space, Penalty, Vector, Matrix, DView, TView, Status, SumsView, false>;
  using DevicePath = detail::FinishEvaluation<Space, Penalty, Vector, Matrix, DView, TView, Status, SumsView, true>;
  for (long long q : {1LL, 7LL, 9LL, 91LL})
    for (bool symmetric : {true, false}) {
      CAPTURE(q);
      CAPTURE(symmetric);
      std::mt19937_64 rng(static_cast<unsigned long long>(31 * q + (symmetric ? 1 : 0)));
      std::normal_distribution<double> normal;
      const long long chunks = 13;
      Vector cand("cand", q), cur("cur", q), tilde("tilde", q), grad("grad", q);
      Matrix info("info", q, q);
      DView chunk_loss("chunk_loss", chunks);
      for (long long ch = 0; ch < chunks; ++ch) chunk_loss(ch) = std::fabs(normal(rng));
      for (long long j = 0; j < q; ++j) {
        cur(j) = static_cast<S>(normal(rng));
        cand(j) = static_cast<S>(cur(j) + 0.1 * normal(rng));
        tilde(j) = static_cast<S>(cur(j) + 0.1 * normal(rng));
        grad(j) = static_cast<S>(normal(rng));
      }
      fill_large_information(info, q, symmetric, rng, normal);
      Status status("status");
      const auto run = [&](auto path, int team) {
        using Path = decltype(path);
        DView delta("delta", q), j_delta("j_delta", q);
        TView terms("terms", q);
        SumsView sums("sums");
        Kokkos::parallel_for(Kokkos::TeamPolicy<Space>(1, team),
                             Path{cand, cur, tilde, grad, info, chunk_loss, delta, j_delta, terms, status, sums, q,
                                  chunks, q - 1, symmetric});
        Kokkos::fence();
        return std::make_pair(sums(), j_delta);
      };
      const auto host = run(HostPath{}, 1);
      const int threads = Kokkos::TeamPolicy<Space>(1, 1).team_size_max(DevicePath{}, Kokkos::ParallelForTag());
      for (int team : {1, threads}) {
        CAPTURE(team);
        const auto device = run(DevicePath{}, team);
        int differ = 0;
        for (long long j = 0; j < q; ++j) differ += host.second(j) == device.second(j) ? 0 : 1;
        CHECK(differ == 0);
        CHECK(host.first.loss == device.first.loss);
        CHECK(host.first.quad == device.first.quad);
        CHECK(host.first.step2 == device.first.step2);
        CHECK(host.first.cand2 == device.first.cand2);
        if constexpr (!std::is_empty_v<typename Penalty::Sums>)  // an empty struct's one byte is not a value
          CHECK(std::memcmp(&host.first.penalty, &device.first.penalty, sizeof(host.first.penalty)) == 0);
      }
    }
}
TEST_CASE_TEMPLATE("finish_evaluation's device path gives its host path's bits on a host space", S, double, float) {
  detail::for_each_type(detail::Penalties{}, [](auto tag) {  // every penalty of the library
    CAPTURE(decltype(tag)::type::name);
    finish_evaluation_paths_agree<typename decltype(tag)::type, S>();
  });
}
