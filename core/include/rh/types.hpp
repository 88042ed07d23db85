// Value types of the public C++ API: spaces, dtypes, batches, diagnostics and the exportable state.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rh/config.hpp"
#include "rh/known_spaces.hpp"

namespace rh {

// Every space the library knows, compiled or not, from the one list of cmake/RhSpaces.cmake (rh/known_spaces.hpp):
// 0, 1, ... in its order; a new space appends.
#define RH_SPACE_ENUMERATOR(name, NAME, own_memory) name,
enum class Space : int { RH_FOR_EACH_KNOWN_SPACE(RH_SPACE_ENUMERATOR) };
#undef RH_SPACE_ENUMERATOR
enum class Dtype : int { f32 = 0, f64 = 1 };
enum class Layout : int { row_major = 0, col_major = 1 };
// Where the caller's arrays live. Device memory is accepted only by a space with its own memory (CUDA), and is
// checked, never guessed.
enum class Memory : int { host = 0, device = 1 };

// Every space has a name, compiled or not (its RH_KNOWN_SPACES entry); other values are "unknown".
const char* space_name(Space s) noexcept;
bool space_known(Space s) noexcept;
// Whether a space computes in memory of its own (a device: CUDA), where device pointers are accepted and host arrays
// are copied; false for the host spaces and for values that name no space.
constexpr bool space_has_own_memory(Space s) noexcept {
#define RH_SPACE_OWN_MEMORY(name, NAME, own_memory) \
  if (s == Space::name) return own_memory;
  RH_FOR_EACH_KNOWN_SPACE(RH_SPACE_OWN_MEMORY)
#undef RH_SPACE_OWN_MEMORY
  return false;
}
// The space called `name`; throws rh::Error(Errc::invalid_argument) for any other name.
Space space_from_name(const std::string& name);
const char* dtype_name(Dtype d) noexcept;

// A dense matrix owned by the caller: element (i, j) is at data[i*ld + j] (row-major) or data[j*ld + i].
struct MatrixRef {
  const void* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  // 0 means tight (cols for row-major, rows for column-major)
  Layout layout = Layout::row_major;
};

// One batch: X (rows × p), y (rows), optional frequency weights (rows). All arrays share dtype and memory.
struct Batch {
  MatrixRef x;
  const void* y = nullptr;
  const void* weights = nullptr;  // nullptr: every weight is 1
  Dtype dtype = Dtype::f64;
  Memory memory = Memory::host;
};

struct Diagnostics {
  int iterations = 0;
  bool converged = false;
  double objective = 0.0;  // the penalty's objective at the batch's result (docs/method.md, F_b)
  double lambda_value = 0.0;
  double bandwidth = 0.0;
  bool used_regularized_fallback = false;  // the minimum-norm (SVD) solve replaced LU at least once
  // The batch ran on the calling thread alone, not on the space's threads (OpenMP, where they were measured slower:
  // a machine whose cores are busy; docs/performance.md, "OpenMP on a loaded machine"). The same bits either way.
  bool calling_thread_only = false;
};

// The renewable state as one field list (docs/architecture.md, "The state as one field list"). These two X-macros
// define rh::State and drive the engine's committed copy, the checkpoint codec, rh_state in the C ABI and the
// tests' comparison. Append a new field at the end of its list, with `since` = the checkpoint format version that
// first stores it; a reader of an older checkpoint gives it its default (a scalar's `init`, an array's zeros).
//
// X(type, name, init, since): a scalar (std::int64_t, double or bool). Checkpoints store them in this order.
#define RH_STATE_SCALARS(X)                                                                             \
  X(std::int64_t, n_features, 0, 1)     /* p, without the intercept; 0 = nothing fitted yet */        \
  X(std::int64_t, n_samples_seen, 0, 1) /* rows seen */                                               \
  X(std::int64_t, batch_count, 0, 1)    /* batches seen */                                            \
  X(double, previous_lambda, 0.0, 1)    /* λ of the last batch (0 without the L1 penalty) */          \
  X(double, weight_sum, 0.0, 1)         /* N_b, the cumulative sample weight */                       \
  X(bool, fit_intercept, true, 1)       /* the last coefficient is the intercept */                  \
  X(std::int64_t, score_variance_batches, 0, 2) /* batches in K; inference needs all */
// X(name, rank, since): an array of q values (rank 1) or a q×q row-major matrix (rank 2), q = the length of the
// first array = n_features + fit_intercept (0 when nothing is fitted). Values in double whatever the model dtype
// (float values round-trip exactly).
#define RH_STATE_ARRAYS(X)                                                              \
  X(coefficients, 1, 1) /* β, intercept last */                                        \
  X(information, 2, 1)  /* J, the information matrix of every batch so far */          \
  X(score_variance, 2, 2) /* K = Σ w ψ_τ(r)² x xᵀ (§12); 0 without inference */

// The scalar fields of the state.
struct StateScalars {
#define RH_STATE_SCALAR_MEMBER(type, name, init, since) type name = init;
  RH_STATE_SCALARS(RH_STATE_SCALAR_MEMBER)
#undef RH_STATE_SCALAR_MEMBER
};

// The whole renewable state.
struct State : StateScalars {
#define RH_STATE_ARRAY_MEMBER(name, rank, since) std::vector<double> name;
  RH_STATE_ARRAYS(RH_STATE_ARRAY_MEMBER)
#undef RH_STATE_ARRAY_MEMBER
};

}  // namespace rh
