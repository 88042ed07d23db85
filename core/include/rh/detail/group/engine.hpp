// The group engine of one execution space and dtype: the group's β and J on the space, the staging of a ragged
// batch, and the one launch per update (rh/detail/group/solve.hpp) and per prediction.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <vector>

#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/group/engine_base.hpp"
#include "rh/detail/instances.hpp"
#include "rh/detail/group/solve.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/detail/kernels/row_dots.hpp"

namespace rh::detail {

template <class Traits, class S>
class GroupEngine final : public GroupEngineBase {
  using Newton = GroupNewton<Traits, S>;
  using Space = typename Traits::execution_space;
  using Mem = typename Space::memory_space;
  using Vector = Kokkos::View<S*, Mem>;
  using Rows = Kokkos::View<S**, Kokkos::LayoutRight, Mem>;
  using Matrices = Kokkos::View<S***, Kokkos::LayoutRight, Mem>;

 public:
  GroupEngine(Space space, long long n_models, long long p, bool fit_intercept)
      : space_(std::move(space)), q_(p + (fit_intercept ? 1 : 0)), p_(p),
        beta_("rh::group_beta", n_models, q_), info_("rh::group_information", n_models, q_, q_),
        info_new_("rh::group_information_new", n_models, q_, q_) {}

  std::vector<GroupOutcome> update(const GroupBatch& batch, const std::vector<GroupTask>& tasks,
                                   const Config& config) override {
    stage(batch);
    Kokkos::View<GroupTask*, Mem> task_view("rh::group_tasks", tasks.size());
    Kokkos::View<GroupOutcome*, Mem> outcome_view("rh::group_outcomes", tasks.size());
    {
      Kokkos::View<const GroupTask*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(tasks.data(), tasks.size());
      Kokkos::deep_copy(space_, task_view, h);
    }
    Newton k;
    k.x = x_;
    k.y = y_;
    k.w = w_;
    k.s = s_;
    k.c = c_;
    k.beta = beta_;
    k.info = info_;
    k.info_new = info_new_;
    k.tasks = task_view;
    k.outcomes = outcome_view;
    k.q = static_cast<int>(q_);
    k.max_iter = config.max_iter;
    k.has_w = batch.weights != nullptr;
    k.l1 = config.penalty == Penalty::l1;
    k.penalized = p_;  // every feature; the intercept (q > p) never
    k.tau = config.tau;
    k.tol = config.tol;
    k.ridge = config.ridge;
    const size_t bytes = Newton::scratch_bytes(k.q);
    const int league = static_cast<int>(tasks.size());
    typename Newton::Policy probe(space_, league, Kokkos::AUTO);
    k.level = bytes <= static_cast<size_t>(probe.scratch_size_max(0)) ? 0 : 1;
    typename Newton::Policy policy(space_, league, team_size());
    Kokkos::parallel_for("rh::group_newton", policy.set_scratch_size(k.level, Kokkos::PerTeam(bytes)), k);
    std::vector<GroupOutcome> out(tasks.size());
    Kokkos::View<GroupOutcome*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(out.data(), out.size());
    Kokkos::deep_copy(space_, h, outcome_view);
    space_.fence();
    return out;
  }

  void predict(const GroupBatch& x, void* out) override {
    stage(x);
    const long long n = x.x.rows;
    std::vector<long long> model_of(static_cast<size_t>(n));
    const long long models = static_cast<long long>(beta_.extent(0));
    for (long long m = 0; m < models; ++m)
      for (long long i = x.offsets[m]; i < x.offsets[m + 1]; ++i) model_of[static_cast<size_t>(i)] = m;
    Kokkos::View<long long*, Mem> models_view("rh::group_row_models", n);
    Kokkos::deep_copy(space_, models_view,
                      Kokkos::View<const long long*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(model_of.data(), n));
    Vector result("rh::group_prediction", n);
    const auto xs = x_;
    const auto beta = beta_;
    const long long q = q_;
    Kokkos::parallel_for("rh::group_predict", Kokkos::RangePolicy<Space>(space_, 0, n),
                         KOKKOS_LAMBDA(const long long i) {
                           const auto b = Kokkos::subview(beta, models_view(i), Kokkos::ALL());
                           result(i) = row_dot<S, BaselineIsa>(xs, i, b, q);
                         });
    Kokkos::deep_copy(space_, Kokkos::View<S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(static_cast<S*>(out), n),
                      result);
    space_.fence();
  }

  void export_arrays(long long m, std::vector<double>& beta, std::vector<double>& info) const override {
    const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(beta_, m, Kokkos::ALL()));
    const auto j = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(info_, m, Kokkos::ALL(), Kokkos::ALL()));
    beta.assign(static_cast<size_t>(q_), 0.0);
    info.assign(static_cast<size_t>(q_ * q_), 0.0);
    for (long long a = 0; a < q_; ++a) {
      beta[static_cast<size_t>(a)] = static_cast<double>(b(a));
      for (long long e = 0; e < q_; ++e) info[static_cast<size_t>(a * q_ + e)] = static_cast<double>(j(a, e));
    }
  }

  void import_arrays(long long m, const std::vector<double>& beta, const std::vector<double>& info) override {
    const auto b_dst = Kokkos::subview(beta_, m, Kokkos::ALL());
    const auto j_dst = Kokkos::subview(info_, m, Kokkos::ALL(), Kokkos::ALL());
    auto b = Kokkos::create_mirror_view(b_dst);
    auto j = Kokkos::create_mirror_view(j_dst);
    for (long long a = 0; a < q_; ++a) {
      b(a) = beta.empty() ? S(0) : static_cast<S>(beta[static_cast<size_t>(a)]);
      for (long long e = 0; e < q_; ++e)
        j(a, e) = info.empty() ? S(0) : static_cast<S>(info[static_cast<size_t>(a * q_ + e)]);
    }
    Kokkos::deep_copy(space_, b_dst, b);
    Kokkos::deep_copy(space_, j_dst, j);
    space_.fence();
  }

 private:
  static int team_size() {
    if constexpr (Traits::host) return 1;
    else return 64;  // a warp pair per model: q ≤ 64 entries of the small systems, rows for the sums
  }

  // The batch's rows as design rows (features, then 1 for the intercept), y and the weights, on the space. The
  // row buffers only grow.
  void stage(const GroupBatch& b) {
    const long long n = b.x.rows;
    if (n > static_cast<long long>(y_.extent(0))) {
      x_ = Rows("rh::group_x", n, q_);
      y_ = Vector("rh::group_y", n);
      w_ = Vector("rh::group_w", n);
      s_ = Vector("rh::group_score_weights", n);
      c_ = Vector("rh::group_curvature_weights", n);
    }
    auto hx = Kokkos::create_mirror_view(x_);
    auto hy = Kokkos::create_mirror_view(y_);
    auto hw = Kokkos::create_mirror_view(w_);
    const S* xs = static_cast<const S*>(b.x.data);
    const bool rows = b.x.layout == Layout::row_major;
    const long long ld = b.x.ld != 0 ? b.x.ld : (rows ? b.x.cols : b.x.rows);
    for (long long i = 0; i < n; ++i) {
      for (long long j = 0; j < p_; ++j) hx(i, j) = rows ? xs[i * ld + j] : xs[j * ld + i];
      if (q_ > p_) hx(i, p_) = S(1);
      if (b.y) hy(i) = static_cast<const S*>(b.y)[i];
      if (b.weights) hw(i) = static_cast<const S*>(b.weights)[i];
    }
    Kokkos::deep_copy(space_, x_, hx);
    Kokkos::deep_copy(space_, y_, hy);
    Kokkos::deep_copy(space_, w_, hw);
  }

  Space space_;
  long long q_, p_;
  Rows beta_;
  Matrices info_, info_new_;
  Rows x_;
  Vector y_, w_, s_, c_;
};

template <class Traits>
std::unique_ptr<GroupEngineBase> make_group_engine_for(Dtype dtype, int device_id, long long n_models, long long p,
                                                       bool fit_intercept) {
  auto space = Traits::instance(device_id);
  if (dtype == Dtype::f32) return std::make_unique<GroupEngine<Traits, float>>(space, n_models, p, fit_intercept);
  return std::make_unique<GroupEngine<Traits, double>>(space, n_models, p, fit_intercept);
}

}  // namespace rh::detail

// The group engine and its factory, as an X-macro arm like those of rh/detail/instances.hpp: backends/
// instantiate.cpp.in defines them once per space, every other translation unit sees them as extern.
#define RH_GROUP_INSTANCES(name, TRAITS, MODE)                                 \
  RH_INSTANCE_##MODE template class ::rh::detail::GroupEngine<TRAITS, float>;  \
  RH_INSTANCE_##MODE template class ::rh::detail::GroupEngine<TRAITS, double>; \
  RH_INSTANCE_##MODE template std::unique_ptr<::rh::detail::GroupEngineBase>   \
      rh::detail::make_group_engine_for<TRAITS>(Dtype, int, long long, long long, bool);
RH_FOR_EACH_COMPILED_SPACE(RH_GROUP_INSTANCES, DECLARE)
