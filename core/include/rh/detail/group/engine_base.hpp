// The interface between rh::RegressorGroup (host-side validation and the per-model scalars) and the group numerics
// instantiated per execution space and scalar (rh::detail::GroupEngine<Traits, S>).
#pragma once
#include <memory>
#include <vector>

#include "rh/group.hpp"

namespace rh::detail {

// The penalties whose solver the group's team kernel runs (rh/detail/group/solve.hpp); a group refuses any other.
inline bool group_solves(Penalty penalty) { return penalty == Penalty::none || penalty == Penalty::l1; }

// One model's update of a group batch, as the host prepared it (docs/method.md §3: scalars in double).
struct GroupTask {
  long long model = 0;
  long long r0 = 0, r1 = 0;  // its rows in the batch
  double inv_n = 0.0;        // 1 / N_b
  double h = 0.0;            // h_b
  double lambda = 0.0;       // λ_b (0 without the L1 penalty)
  double historical = 0.0;   // c_b, the weight of the historical L1 subgradient term (§4)
};

// What one model's solve gave (the engine commits β and J of the models with status group_ok itself).
// group_bad_x: a host space checks X as its engine stages each model's rows for its solve (stage_and_check checks y
// and the weights): X has a NaN or an infinite value in row bad_row of the batch (its first), and the model was not solved.
enum GroupSolveStatus : int { group_ok = 0, group_singular = 1, group_non_finite = 2, group_bad_x = 3 };
struct GroupOutcome {
  int iterations = 0;
  int converged = 0;
  double objective = 0.0;  // F_b at the returned β
  int status = group_ok;
  long long bad_row = -1;  // with group_bad_x
};

// What one model's rows of a staged batch are (docs/method.md §10, as the single model's pass 1 checks them).
enum GroupRowProblem : int { rows_ok = 0, bad_x = 1, bad_y = 2, bad_weight = 3, negative_weight = 4 };
struct GroupRowCheck {
  long long row = -1;        // the first row of the batch with a problem (-1: none)
  int problem = rows_ok;     // that row's first problem, in the order of GroupRowProblem
  double weight = 0.0;       // W_b: Σ w_i (1 without weights) over the model's rows in double (host: by row chunks)
};

class GroupEngineBase {
 public:
  virtual ~GroupEngineBase() = default;
  // Copies the batch's rows (host or this space's device memory, as batch.memory says) to the space as design
  // rows and checks every model's rows there; the next update solves this batch. The batch's shape was checked by
  // the caller; a pointer of the wrong kind of memory throws Errc::invalid_argument. A host space forms and checks
  // X model by model in update (group_bad_x), reading the caller's arrays then: they must live until it returns.
  virtual std::vector<GroupRowCheck> stage_and_check(const GroupBatch& batch) = 0;
  // Solves every task's model on the batch staged last from its committed state (or the empty one: its arrays are
  // zero until its first commit) and commits β and J of those whose outcome is group_ok and whose objective is
  // finite; the others stay as they were. Every task's rows passed the check.
  virtual std::vector<GroupOutcome> update(const std::vector<GroupTask>& tasks, const Config& config) = 0;
  // out[i] = x_iᵀβ of row i's model; out has the group's dtype (host memory; x as x.memory says).
  virtual void predict(const GroupBatch& x, void* out) = 0;
  // β and J of model m, in double.
  virtual void export_arrays(long long m, std::vector<double>& beta, std::vector<double>& info) const = 0;
  // Sets β and J of model m (q and q·q values, already validated for the dtype; empty: zeros).
  virtual void import_arrays(long long m, const std::vector<double>& beta, const std::vector<double>& info) = 0;
};

// Defined in backends/registry.cpp: creates the group engine of a compiled space, or throws Errc::unavailable.
std::unique_ptr<GroupEngineBase> make_group_engine(Space space, Dtype dtype, int device_id, long long n_models,
                                                   long long p, bool fit_intercept);

// The group engine of one space (explicitly instantiated per compiled space, see rh/detail/instantiate.hpp).
template <class Traits>
std::unique_ptr<GroupEngineBase> make_group_engine_for(Dtype dtype, int device_id, long long n_models, long long p,
                                                       bool fit_intercept);

}  // namespace rh::detail
