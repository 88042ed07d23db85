// The public C++ API: a renewable Huber regressor on a chosen execution space and dtype.
//
//   rh::Regressor model(rh::Space::openmp, rh::Dtype::f64, config);
//   model.partial_fit(rh::host_batch(x, y, n, p));   // any number of batches
//   model.predict(rh::host_matrix(x_new, m, p), out);
//
// Every method validates its input first and is transactional: when it throws rh::Error, the model is
// exactly as it was before the call.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "rh/config.hpp"
#include "rh/error.hpp"
#include "rh/types.hpp"

namespace rh {

namespace detail {
class EngineBase;
struct RegressorAccess;  // the MPI model's way to its engine (rh/mpi.hpp)
}  // namespace detail

struct SpaceInfo {
  Space space;
  std::string name;   // space_name(space)
  int concurrency;    // threads (host spaces) or resident threads (devices)
  int device_count;   // devices this space can use (1 for host spaces, 0 = compiled but no device present)
  // Models of this space on different threads run at the same time, each on an execution-space instance of its
  // own, and may be used from any thread (one call on a model at a time). False: the build's Kokkos (3.4) or the
  // space (CUDA) shares one instance, and the C++ API must be used from the thread that initialized Kokkos (the C
  // ABI serializes such calls itself). docs/api.md, "Threads".
  bool concurrent_models;
  // The space computes in memory of its own (a device: CUDA): it accepts Memory::device arrays and copies host
  // arrays. False for the host spaces. From the generated space list (rh::space_has_own_memory).
  bool own_memory;
};

// The execution spaces this build was compiled with, in rh::Space order (initializes Kokkos).
std::vector<SpaceInfo> compiled_spaces();
// Neither of these initializes Kokkos: usable to check for a GPU before anything can abort on its absence.
bool space_compiled(Space space);
int device_count(Space space);  // 1 for a compiled host space, CUDA's count for cuda, 0 when not compiled
// Version strings of the library and of the Kokkos it was built against.
const char* library_version() noexcept;
std::string kokkos_version();

// Runtime options applied when the library first initializes Kokkos (ignored once it is initialized).
struct RuntimeOptions {
  int num_threads = 0;   // host threads (OpenMP, Threads); 0 = Kokkos' default (OMP_NUM_THREADS, KOKKOS_NUM_THREADS)
  int device_id = -1;    // CUDA device; -1 = Kokkos' default (0)
  // An exit handler finalizes Kokkos at exit. Not from a Windows DLL: its exit handlers run at process detach, after
  // Windows has ended the host threads that Kokkos::finalize waits for. The C ABI passes false: it finalizes at exit
  // on its runtime thread, where it initialized Kokkos (Kokkos 3.4's Threads refuses any other thread), and not at
  // all from a Windows DLL (rh_finalize).
  bool finalize_at_exit = true;
};
// Throws Errc::invalid_argument for a thread count above max_host_threads(), even when Kokkos is already running.
void initialize_runtime(const RuntimeOptions& options = {});
// Finalizes Kokkos now, if this library initialized it (once; later calls do nothing). Every Regressor must be
// destroyed first, and the library cannot be used afterwards (Errc::invalid_state). The exit handler does the same
// at exit, where there is one (RuntimeOptions::finalize_at_exit).
void finalize_runtime();
// The largest RuntimeOptions::num_threads (rh_init's host_threads) accepted: 8 × the logical CPUs, at least 64.
int max_host_threads();

// The most memory one model may hold, in bytes. Checked before a model allocates (a call that needs more fails with
// Errc::allocation_failed and changes nothing). Process-wide, for the models of every thread; bytes = 0 restores the
// default, the physical memory of the host. docs/api.md, "Limits".
void set_memory_limit(std::uint64_t bytes);
std::uint64_t memory_limit();

template <class S>
constexpr Dtype dtype_of() {
  static_assert(std::is_same_v<S, float> || std::is_same_v<S, double>, "only float and double are supported");
  return std::is_same_v<S, float> ? Dtype::f32 : Dtype::f64;
}

// Convenience builders for tight row-major host arrays.
template <class S>
MatrixRef host_matrix(const S* x, std::int64_t rows, std::int64_t cols) {
  return MatrixRef{x, rows, cols, cols, Layout::row_major};
}
template <class S>
Batch host_batch(const S* x, const S* y, std::int64_t rows, std::int64_t cols, const S* weights = nullptr) {
  Batch b;
  b.x = host_matrix(x, rows, cols);
  b.y = y;
  b.weights = weights;
  b.dtype = dtype_of<S>();
  return b;
}

// Confidence intervals of the coefficients at one level: β_j ∓ Φ⁻¹((1 + level)/2)·se_j (docs/method.md §12).
struct ConfidenceIntervals {
  double level = 0.95;
  std::vector<double> lower, upper;
};

// A moved-from Regressor may only be destroyed or assigned to; any other use throws Errc::invalid_state.
class Regressor {
 public:
  Regressor(Space space, Dtype dtype, const Config& config = Config(), int device_id = 0);
  ~Regressor();
  Regressor(Regressor&&) noexcept;
  Regressor& operator=(Regressor&&) noexcept;
  Regressor(const Regressor&) = delete;
  Regressor& operator=(const Regressor&) = delete;

  Space space() const noexcept { return space_; }
  Dtype dtype() const noexcept { return dtype_; }
  int device_id() const noexcept { return device_id_; }
  const Config& config() const noexcept { return config_; }
  // Validates, then replaces the configuration and resets the fitted state (like scikit-learn's set_params).
  void set_config(const Config& config);

  const Diagnostics& partial_fit(const Batch& batch);  // one renewable update
  const Diagnostics& fit(const Batch& batch);          // reset + one batch, still transactional
  void predict(const MatrixRef& x, void* out, Dtype out_dtype, Memory memory = Memory::host);
  template <class S>
  std::vector<S> predict(const S* x, std::int64_t rows, std::int64_t cols) {
    const MatrixRef m = host_matrix(x, rows, cols);
    check_predict(m, dtype_of<S>(), Memory::host);  // a bad shape is an rh::Error before anything is allocated
    std::vector<S> out;
    try {
      out.resize(static_cast<size_t>(rows));
    } catch (const std::exception&) {  // bad_alloc or length_error
      output_allocation_failed(rows);
    }
    predict(m, out.data(), dtype_of<S>());
    return out;
  }
  double score(const Batch& batch);  // R², weighted when the batch has weights

  bool fitted() const noexcept { return engine_ && n_features_ > 0; }
  // Diagnostics of the last batch; throws invalid_state before any batch (and after set_state).
  const Diagnostics& diagnostics() const;
  State state() const;  // copies the committed state out of the execution space
  // Validates and installs a state (e.g. from a checkpoint). The diagnostics are cleared.
  void set_state(const State& state);
  void reset();

  std::int64_t n_features() const noexcept { return engine_ ? n_features_ : 0; }  // p of the committed state; 0 = none
  std::vector<double> coefficients() const { return state().coefficients; }

  // Inference (docs/method.md §12), intercept last like the coefficients. Needs Config::inference, penalty none
  // and a K that holds every batch; otherwise Errc::unavailable says which is missing (a state or checkpoint
  // without K, e.g. of checkpoint format 1: reset and refit, K cannot be rebuilt). Errc::invalid_state before any
  // batch; Errc::numerical_error when J is singular (a coefficient the data do not identify) or a variance is not
  // positive and finite (an imported K singular or indefinite in that coefficient's direction): never a se of 0 or NaN.
  std::vector<double> covariance() const;       // q×q row-major: J⁻¹ K J⁻¹
  std::vector<double> standard_errors() const;  // the square roots of its diagonal
  std::vector<double> z_statistics() const;     // β_j / se_j
  std::vector<double> p_values() const;         // two-sided, of H0: β_j = 0 (normal reference)
  ConfidenceIntervals confidence_intervals(double level = 0.95) const;  // 0 < level < 1

 private:
  friend struct detail::RegressorAccess;
  // The engine; throws Errc::invalid_state when this Regressor was moved from (it has none then).
  detail::EngineBase& engine(const char* what) const;
  void check_batch_shape(const Batch& batch, bool first_batch, const char* what) const;
  void check_fitted(const char* what) const;
  void check_predict(const MatrixRef& x, Dtype out_dtype, Memory memory) const;
  // The committed state, after checking that it supports inference (see covariance()).
  State inference_state(const char* what) const;
  // β and the standard errors, from one state read.
  void estimates(const char* what, std::vector<double>& beta, std::vector<double>& se) const;
  [[noreturn]] static void output_allocation_failed(std::int64_t rows);

  Space space_;
  Dtype dtype_;
  int device_id_;
  Config config_;
  std::unique_ptr<detail::EngineBase> engine_;
  std::int64_t n_features_ = 0;  // p of the committed state (0: nothing fitted or imported)
  bool fit_intercept_ = true;     // of the committed state
  std::optional<Diagnostics> diagnostics_;
};

// Checks a state's internal consistency (shapes, finiteness, counters, K symmetric within rounding with a
// non-negative diagonal: docs/method.md §12); throws Errc::invalid_state. An array added after checkpoint format 1
// (score_variance) may be left empty: absent, it means zeros, held by no batch.
void validate_state(const State& state);
// A copy of a valid state with every absent array filled with the zeros it means (what set_state installs and
// encode_checkpoint writes).
State complete_state(const State& state);
// The same, and for a float32 model that every value is a float (so that it is held exactly).
void validate_state(const State& state, Dtype dtype);

}  // namespace rh
