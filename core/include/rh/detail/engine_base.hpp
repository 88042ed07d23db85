// The interface between the runtime-dispatched API (rh::Regressor) and the numerics instantiated per execution
// space and scalar (rh::detail::Engine<Space, S>). Callers have already checked shapes, pointers and dtypes.
#pragma once
#include <cstdint>
#include <memory>

#include "rh/types.hpp"

namespace rh::detail {

class ChunkExchange;

// Counters of a state stay below this (validate_state refuses more, and an update that would reach it is refused),
// leaving room for the counts of any batches that fit in memory.
inline constexpr std::int64_t max_state_count = std::int64_t{1} << 62;

// The scalar fields of the state (RH_STATE_SCALARS) after a committed batch of `rows` rows (docs/method.md §7), from
// those before it, or from the empty state when the batch started there (the first batch, fit()). The engine and
// the model group (rh/group.hpp) both commit through it.
inline StateScalars scalars_after_batch(const StateScalars& before, bool from_empty, std::int64_t p, std::int64_t rows,
                                        double lambda, double cumulative_weight, const Config& config) {
  StateScalars c = from_empty ? StateScalars() : before;
  c.n_features = p;
  c.n_samples_seen += rows;
  c.batch_count += 1;
  c.previous_lambda = lambda;
  c.weight_sum = cumulative_weight;
  c.fit_intercept = config.fit_intercept;
  c.score_variance_batches = config.inference ? c.score_variance_batches + 1 : 0;
  return c;
}

class EngineBase {
 public:
  virtual ~EngineBase() = default;
  // One renewable update. from_empty: start from the empty state (fit) instead of the committed one
  // (partial_fit). Transactional: on any exception the committed state is exactly as before.
  virtual Diagnostics update(const Batch& batch, const Config& config, bool from_empty) = 0;
  // out[i] = x_iᵀβ for every row of x; out has the model's dtype and lives in `memory`.
  virtual void predict(const MatrixRef& x, Memory memory, void* out) = 0;
  // Ordinary (optionally weighted) R² of the current coefficients on the batch.
  virtual double score(const Batch& batch) = 0;
  virtual State export_state() const = 0;
  virtual void import_state(const State& state) = 0;  // already validated by the caller
  virtual void reset() = 0;
  // From now on each update's rows are spread over processes through `exchange` (rh/detail/chunk_exchange.hpp),
  // which outlives the engine's use of it; nullptr: this process's rows are the whole batch.
  virtual void set_exchange(ChunkExchange* exchange) = 0;
};

// Defined in backends/registry.cpp: throws Errc::invalid_argument when memory passed as host memory is known to be
// device memory by any compiled space (only a space with its own memory can know). `what` names the array.
void check_host_pointer(const void* ptr, const char* what);

// Defined in backends/registry.cpp: creates the engine of a compiled space, or throws Errc::unavailable.
std::unique_ptr<EngineBase> make_engine(Space space, Dtype dtype, int device_id);

// The engine of one space (explicitly instantiated per compiled space, see rh/detail/instantiate.hpp).
template <class Traits>
std::unique_ptr<EngineBase> make_engine_for(Dtype dtype, int device_id);

}  // namespace rh::detail
