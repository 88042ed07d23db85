// A group of independent renewable Huber models of one space, dtype, configuration and p, updated together: one
// ragged batch per call (the rows of every model stacked, with per-model row offsets), solved by one launch for the
// whole group (a team per model). Each model computes the method of rh::Regressor (docs/method.md); docs/api.md,
// "Model groups", says what a group can do so far.
//
//   rh::RegressorGroup group(rh::Space::openmp, rh::Dtype::f64, config, n_models, p);
//   group.partial_fit(rh::group_batch(x, y, offsets.data(), n_models, p));   // offsets: n_models + 1 values
//   group.status(m);   // Errc of model m's last update, or nullopt when it committed (or had no rows)
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rh/config.hpp"
#include "rh/error.hpp"
#include "rh/regressor.hpp"
#include "rh/types.hpp"

namespace rh {

namespace detail { class GroupEngineBase; }

// Rows of several models stacked: model m owns rows [offsets[m], offsets[m + 1]) of x (and of y, weights).
// offsets has n_models + 1 values, offsets[0] = 0, non-decreasing, offsets[n_models] = x.rows. x, y and weights
// are host memory or, with memory = Memory::device, the group's device's memory (as rh::Batch); offsets are always
// host memory.
struct GroupBatch {
  MatrixRef x;
  const void* y = nullptr;
  const void* weights = nullptr;  // nullptr: every weight is 1
  const std::int64_t* offsets = nullptr;
  Dtype dtype = Dtype::f64;
  Memory memory = Memory::host;
};

template <class S>
GroupBatch group_batch(const S* x, const S* y, const std::int64_t* offsets, std::int64_t n_models, std::int64_t p,
                       const S* weights = nullptr) {
  GroupBatch b;
  b.x = host_matrix(x, offsets[n_models], p);
  b.y = y;
  b.weights = weights;
  b.offsets = offsets;
  b.dtype = dtype_of<S>();
  return b;
}

// The largest number of coefficients (q = p + fit_intercept) of a group's models: the Newton system of each model
// is solved in its team's scratch memory.
inline constexpr std::int64_t group_max_coefficients = 64;

class RegressorGroup {
 public:
  // Throws Errc::invalid_argument for a bad configuration, n_models < 1, p < 1, q above group_max_coefficients, and
  // Errc::unavailable for what groups cannot do yet (inference) or a space not compiled in.
  RegressorGroup(Space space, Dtype dtype, const Config& config, std::int64_t n_models, std::int64_t p,
                 int device_id = 0);
  ~RegressorGroup();
  RegressorGroup(RegressorGroup&&) noexcept;
  RegressorGroup& operator=(RegressorGroup&&) noexcept;
  RegressorGroup(const RegressorGroup&) = delete;
  RegressorGroup& operator=(const RegressorGroup&) = delete;

  Space space() const noexcept { return space_; }
  Dtype dtype() const noexcept { return dtype_; }
  const Config& config() const noexcept { return config_; }
  std::int64_t n_models() const noexcept { return n_models_; }
  std::int64_t n_features() const noexcept { return p_; }
  int device_id() const noexcept { return device_id_; }

  // One renewable update of every model with rows in the batch; a model without rows is untouched. A bad batch
  // as a whole (shape, offsets, dtype, pointers) throws rh::Error and changes nothing. A model whose own rows are
  // bad (NaN/Inf, negative or all-zero weights, N_b out of range) or whose update fails (a non-finite result, a
  // singular Newton system) keeps its state and diagnostics, and status(m) says why; the other models commit.
  // Returns how many models committed.
  std::int64_t partial_fit(const GroupBatch& batch);
  // out[i] = x_iᵀβ_m for every row i of model m (out has x.rows values of the group's dtype, host memory; x where
  // x.memory says). Every
  // model with rows must have been fitted (Errc::invalid_state names the first that was not).
  void predict(const GroupBatch& x, void* out, Dtype out_dtype);

  // Of model m (0 ≤ m < n_models; Errc::invalid_argument otherwise):
  bool fitted(std::int64_t m) const;
  State state(std::int64_t m) const;                    // its committed state (empty before its first batch)
  const Diagnostics& diagnostics(std::int64_t m) const;  // of its last committed batch; invalid_state before one
  // The error of its last update attempt, and its message; nullopt when that attempt committed (or it never had
  // rows). Cleared by the next batch with rows for m.
  std::optional<Errc> status(std::int64_t m) const;
  const std::string& status_message(std::int64_t m) const;
  // Replaces its state (validated as Regressor::set_state does; n_features 0 or p; a group keeps no score variance K,
  // so K must be zeros or absent: Errc::invalid_state otherwise) and clears its diagnostics and status.
  void set_state(std::int64_t m, const State& state);
  void reset(std::int64_t m);  // forgets its stream: the empty state, no diagnostics, no status

 private:
  void check_model(std::int64_t m, const char* what) const;
  void check_batch(const GroupBatch& b, const char* what, bool with_y) const;
  detail::GroupEngineBase& engine(const char* what) const;

  Space space_;
  Dtype dtype_;
  Config config_;
  std::int64_t n_models_ = 0, p_ = 0;
  int device_id_ = 0;
  std::unique_ptr<detail::GroupEngineBase> engine_;
  std::vector<StateScalars> scalars_;             // per model (the arrays live on the space, in the engine)
  std::vector<std::optional<Diagnostics>> diagnostics_;
  std::vector<std::optional<Errc>> status_;
  std::vector<std::string> messages_;
};

}  // namespace rh
