/*
 * renewable-huber C ABI: streaming robust Huber regression behind a stable, plain-C interface.
 *
 * Compiles as C99 and as C++. Every type in a signature or struct has a fixed width (pointers aside). The full
 * contract -- lifecycle, ownership, threading, statuses, versioning, checkpoint format -- is docs/abi.md.
 *
 *   rh_config cfg;
 *   RH_STRUCT_INIT(&cfg);
 *   rh_config_init(&cfg);                      (library defaults: float64, serial, tau 1.345, ...)
 *   rh_model* model = NULL;
 *   if (rh_model_create(RH_ABI_VERSION, &cfg, &model) != RH_SUCCESS) puts(rh_last_error());
 *   rh_batch b;
 *   RH_STRUCT_INIT(&b);
 *   b.x = x; b.y = y; b.rows = n; b.cols = p; b.layout = RH_LAYOUT_ROW_MAJOR;
 *   b.dtype = RH_DTYPE_F64; b.memory = RH_MEMORY_HOST;
 *   rh_model_partial_fit(model, &b, NULL);     (any number of batches)
 *   rh_model_destroy(model);
 *
 * Rules shared by every function:
 *  - Every function returns an rh_status (or a plain value where noted) and never throws or aborts.
 *  - A failing call changes nothing: not the model, not the caller's output arguments.
 *  - After any call, rh_last_error() describes its failure on this thread ("" after a success); calls on a model
 *    also leave the same text in rh_model_last_error(model).
 *  - Enum fields are int32_t; 0 is never a valid enum value, so a zeroed field is rejected, not guessed.
 *  - Any thread may call, on any model: calls on one model run one at a time (a lock per model), and destroying a
 *    model waits for the call in flight on it. The library serializes all calls on its own runtime thread.
 *    Not usable in a child process after fork().
 */
#ifndef RH_RH_H
#define RH_RH_H

#include <stdint.h>
#include <string.h>

/* ---- Versions ------------------------------------------------------------------------------------------------ */

/* ABI version: the major changes only with an incompatible change (and the SONAME with it); the minor grows when
 * functions, enum values or trailing struct fields are added. */
#define RH_ABI_VERSION_MAJOR 1
#define RH_ABI_VERSION_MINOR 4
#define RH_MAKE_ABI_VERSION(major, minor) ((uint32_t)(((uint32_t)(major) << 16) | (uint32_t)(minor)))
#define RH_ABI_VERSION RH_MAKE_ABI_VERSION(RH_ABI_VERSION_MAJOR, RH_ABI_VERSION_MINOR)
#define RH_ABI_VERSION_MAJOR_OF(version) ((uint32_t)(version) >> 16)
#define RH_ABI_VERSION_MINOR_OF(version) (((uint32_t)(version)) & 0xFFFFu)

/* Version of the library release these headers come from: RH_VERSION_MAJOR, _MINOR, _PATCH and RH_VERSION_STRING,
 * generated from the project version (the C++ API's rh/version.hpp has the same values). */
#include "rh/rh_version.h"

/* ---- Export and language glue -------------------------------------------------------------------------------- */

#if defined(_WIN32)
#if defined(RH_C_BUILDING)
#define RH_API __declspec(dllexport)
#else
#define RH_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define RH_API __attribute__((visibility("default")))
#else
#define RH_API
#endif

#ifdef __cplusplus
#define RH_NOEXCEPT noexcept
extern "C" {
#else
#define RH_NOEXCEPT
#endif

/* ---- Status codes -------------------------------------------------------------------------------------------- */

typedef int32_t rh_status;
enum {
  RH_SUCCESS = 0,
  RH_INVALID_ARGUMENT = 1,   /* null pointer, bad size or shape, NaN/Inf data, unknown enum, bad config value,
                                dead or never-created handle, wrong column count, negative weight, dtype mismatch */
  RH_INVALID_STATE = 2,      /* the model must be fitted first, or a state to import is inconsistent */
  RH_UNAVAILABLE = 3,        /* execution space not compiled into this build, or the device is not present */
  RH_ALLOCATION_FAILED = 4,  /* memory could not be obtained */
  RH_NUMERICAL_ERROR = 5,    /* the solver produced a non-finite state; nothing was committed */
  RH_DEVICE_ERROR = 6,       /* an execution-space runtime call failed */
  RH_CORRUPT_DATA = 7,       /* a checkpoint failed its structure, consistency or checksum test, or is truncated */
  RH_VERSION_MISMATCH = 8,   /* other ABI major, struct smaller than this ABI's, unknown struct fields set, or a
                                checkpoint format version this library cannot read */
  RH_INTERNAL_ERROR = 9      /* a bug in the library: please report it with rh_last_error() */
};

/* ---- Enumerations (values of int32_t fields) ----------------------------------------------------------------- */

enum { RH_DTYPE_F32 = 1, RH_DTYPE_F64 = 2 };
enum { RH_SPACE_SERIAL = 1, RH_SPACE_OPENMP = 2, RH_SPACE_CUDA = 3, RH_SPACE_THREADS = 4 };
enum { RH_PENALTY_NONE = 1, RH_PENALTY_L1 = 2 };
/* Row-major: element (i, j) of X is x[i*ld + j]; column-major: x[j*ld + i]. */
enum { RH_LAYOUT_ROW_MAJOR = 1, RH_LAYOUT_COL_MAJOR = 2 };
/* Where the caller's arrays live. Device pointers are accepted only by the CUDA space, which verifies them. */
enum { RH_MEMORY_HOST = 1, RH_MEMORY_DEVICE = 2 };

/* ---- Versioned structs ----------------------------------------------------------------------------------------
 * Each struct starts with the ABI version the caller compiled against and sizeof the struct as the caller knows it.
 * The library rejects (RH_VERSION_MISMATCH) another ABI major or a size below this ABI's sizeof. A larger size (a
 * newer caller) is accepted when every byte beyond the fields this library knows is zero in structs the library
 * reads; in structs it only writes, those bytes are left untouched. RH_STRUCT_INIT zeroes a struct and fills the
 * header, so it is the one way to start any of them. */
#define RH_STRUCT_INIT(ptr)                                                                           \
  (memset((ptr), 0, sizeof(*(ptr))), (ptr)->abi_version = RH_ABI_VERSION,                              \
   (ptr)->struct_size = (uint32_t)sizeof(*(ptr)))

/* Estimator and placement settings of a model. Fill with rh_config_init, then change what you need. */
typedef struct rh_config {
  uint32_t abi_version;
  uint32_t struct_size;
  double tau;              /* Huber threshold, finite and > 0 */
  double lambda_scale;     /* L1 level scale, finite and >= 0 */
  double bandwidth_scale;  /* smoothing bandwidth scale, finite and > 0 */
  double tol;              /* convergence tolerance, finite and > 0 */
  double ridge;            /* added to the scaled Newton Hessian, finite and >= 0 */
  int32_t penalty;         /* RH_PENALTY_* */
  int32_t fit_intercept;   /* 0 or 1; the intercept is the last coefficient */
  int32_t max_iter;        /* >= 1 */
  int32_t dtype;           /* RH_DTYPE_*: of the model, and of every array passed to it */
  int32_t space;           /* RH_SPACE_* */
  int32_t device_id;       /* >= 0; the CUDA device (host spaces ignore it). Also used at runtime start-up. */
  int32_t host_threads;    /* >= 0; host threads (OpenMP or Threads), 0 = Kokkos' default (OMP_NUM_THREADS or
                            * KOKKOS_NUM_THREADS). Used only at runtime start-up. */
  int32_t reserved0;       /* must be 0 */
  /* ABI 1.1 (a caller of ABI 1.0 passes the 80 bytes above: inference off) */
  int32_t inference;       /* 0 (default) or 1: keep the score variance K for rh_model_covariance and the other
                              inference calls; penalty none only */
  int32_t reserved1;       /* must be 0 */
} rh_config;

/* A batch of caller-owned arrays, only read during the call. X is rows x cols; y and weights have `rows` values.
 * All arrays have `dtype` (which must be the model's) and live in `memory`. */
typedef struct rh_batch {
  uint32_t abi_version;
  uint32_t struct_size;
  const void* x;
  const void* y;        /* fit, partial_fit, score: required; predict: ignored */
  const void* weights;  /* NULL: every weight is 1; else finite, >= 0, not all zero. predict: ignored */
  int64_t rows;         /* >= 1 */
  int64_t cols;         /* >= 1; after the first batch it must equal the model's feature count */
  int64_t ld;           /* leading dimension in elements; 0 = tight (cols if row-major, rows if column-major) */
  int32_t layout;       /* RH_LAYOUT_* */
  int32_t dtype;        /* RH_DTYPE_* */
  int32_t memory;       /* RH_MEMORY_* */
  int32_t reserved0;    /* must be 0 */
} rh_batch;

/* Diagnostics of the last batch. Non-convergence is reported here, never as an error. */
typedef struct rh_diagnostics {
  uint32_t abi_version;
  uint32_t struct_size;
  int32_t iterations;
  int32_t converged;                  /* 0 or 1 */
  int32_t used_regularized_fallback;  /* 1: a minimum-norm solve replaced LU at least once */
  int32_t reserved0;                  /* written as 0 */
  double objective;
  double lambda_value;
  double bandwidth;
} rh_diagnostics;

/* The renewable state, in float64 whatever the model dtype (float32 values convert exactly). q = n_features +
 * fit_intercept coefficients (0 when nothing is fitted); information is the q x q matrix J, row-major, and
 * score_variance the q x q matrix K (ABI 1.1).
 * rh_model_get_state: set the pointers to NULL to learn the lengths, or to buffers whose capacities (in
 *   elements) are in the *_length fields; on success the lengths are set to q, q*q and q*q. score_variance is
 *   optional: left NULL, K is not written (code written for ABI 1.0 keeps working when recompiled).
 * rh_model_set_state: the *_length fields are the number of values given and must be q, q*q and q*q, except that
 *   score_variance may be NULL with length 0: the state then has no K (zeros; score_variance_batches must be 0).
 *   A given K must have a non-negative diagonal and be symmetric within rounding (docs/abi.md, "Inference"). */
typedef struct rh_state {
  uint32_t abi_version;
  uint32_t struct_size;
  double* coefficients;
  double* information;
  int64_t coefficients_length;
  int64_t information_length;
  int64_t n_features;      /* p, without the intercept; 0 = nothing fitted */
  int64_t n_samples_seen;  /* rows seen */
  int64_t batch_count;
  double previous_lambda;  /* lambda of the last batch (0 without the L1 penalty) */
  double weight_sum;       /* cumulative sample weight */
  int32_t fit_intercept;   /* 0 or 1 */
  int32_t reserved0;       /* must be 0 */
  /* ABI 1.1 (a caller of ABI 1.0 passes the 88 bytes above: K is then neither read nor written, and a state set
   * without it has K = 0 and score_variance_batches = 0, so inference is unavailable until a reset) */
  double* score_variance;          /* K, q x q row-major (0 without inference) */
  int64_t score_variance_length;   /* q*q */
  int64_t score_variance_batches;  /* batches K holds; inference needs all of batch_count */
} rh_state;

/* One compiled execution space. */
typedef struct rh_space_info {
  uint32_t abi_version;
  uint32_t struct_size;
  int32_t space;         /* RH_SPACE_* */
  int32_t device_count;  /* 1 for host spaces; for CUDA the visible devices (0 = compiled but none present) */
  int32_t concurrency;   /* host threads, or resident device threads */
  int32_t reserved0;     /* written as 0 */
  char name[16];         /* rh_space_name(space); NUL-terminated */
  /* ABI 1.2 (a caller of ABI 1.0 or 1.1 passes the 40 bytes above: neither field is written) */
  int32_t own_memory;    /* 1: the space computes in memory of its own (a device: CUDA), accepts RH_MEMORY_DEVICE
                            arrays and copies host arrays; 0: a host space */
  int32_t reserved1;     /* written as 0 */
} rh_space_info;

/* Opaque model handle. Its value is a token, never reused in the life of the process; the library checks every
 * handle against its registry of live models, so a destroyed or invented handle is an error, never a crash. */
typedef struct rh_model rh_model;

/* Opaque handle of a model group (ABI 1.4), with the same rules as rh_model's; a model handle is never a group handle
 * and the other way round. */
typedef struct rh_group rh_group;

/* ---- Library ------------------------------------------------------------------------------------------------- */

RH_API uint32_t rh_abi_version(void) RH_NOEXCEPT;      /* RH_ABI_VERSION the library was built with */
RH_API const char* rh_library_version(void) RH_NOEXCEPT; /* "MAJOR.MINOR.PATCH"; static storage */
RH_API const char* rh_status_string(rh_status status) RH_NOEXCEPT; /* static; "unknown status" for other values */
/* Message of this thread's most recent failed call, "" when its most recent call succeeded. Valid until this
 * thread's next call into the library. */
RH_API const char* rh_last_error(void) RH_NOEXCEPT;

/* Starts the runtime with `host_threads` host threads (0 = Kokkos' default) on CUDA device `device_id` (-1 =
 * the default device). Optional: the first model creation or space query starts it with that model's settings or
 * the defaults. Once started, the runtime keeps its settings; later calls succeed without changing anything. */
RH_API rh_status rh_init(uint32_t abi_version, int32_t host_threads, int32_t device_id) RH_NOEXCEPT;
/* Ends the runtime (ABI 1.3): finalizes Kokkos if the library started it. Every model and group must be destroyed first
 * (RH_INVALID_STATE otherwise, and nothing changes); no other call may run meanwhile. Afterwards every call that
 * needs the runtime returns RH_INVALID_STATE; a second rh_finalize succeeds and does nothing. On Linux an exit
 * handler does the same at exit. On Windows the DLL does not finalize at exit (its exit handlers run after Windows
 * has ended the runtime's threads): call rh_finalize before the process ends, or let the system reclaim it. */
RH_API rh_status rh_finalize(void) RH_NOEXCEPT;

/* The most memory one model may hold, in bytes (ABI 1.1). Checked before a model allocates: a call that needs more
 * fails with RH_ALLOCATION_FAILED and changes nothing. Process-wide; 0 restores the default, the host's physical
 * memory. Does not start the runtime. */
RH_API rh_status rh_set_memory_limit(uint64_t bytes) RH_NOEXCEPT;
RH_API rh_status rh_get_memory_limit(uint64_t* bytes) RH_NOEXCEPT;

/* The compiled execution spaces, in RH_SPACE_* order. Starts the runtime if needed. */
RH_API rh_status rh_space_count(int32_t* count) RH_NOEXCEPT;
RH_API rh_status rh_space_get(int32_t index, rh_space_info* info) RH_NOEXCEPT;

/* The name of an execution space (RH_SPACE_*) or a penalty (RH_PENALTY_*) the library knows, compiled or not:
 * `*name` is set to a static NUL-terminated string; RH_INVALID_ARGUMENT for a value it does not know. The known
 * values are 1, 2, ... up to the first that fails, so a caller can list them (ABI 1.2). Does not start the runtime. */
RH_API rh_status rh_space_name(int32_t space, const char** name) RH_NOEXCEPT;
RH_API rh_status rh_penalty_name(int32_t penalty, const char** name) RH_NOEXCEPT;

/* Fills every field after the header with the library defaults (float64, the first compiled space, device 0,
 * default threads, and the estimator defaults of docs/abi.md). */
RH_API rh_status rh_config_init(rh_config* config) RH_NOEXCEPT;

/* ---- Model lifecycle ----------------------------------------------------------------------------------------- */

/* abi_version: pass RH_ABI_VERSION (the version gate). On success *model is a new handle owned by the caller. */
RH_API rh_status rh_model_create(uint32_t abi_version, const rh_config* config, rh_model** model) RH_NOEXCEPT;
/* NULL is accepted and does nothing. A dead or unknown handle gives RH_INVALID_ARGUMENT. Waits for a call in flight
 * on the model (from another thread); calls waiting for it, and later ones, get RH_INVALID_ARGUMENT. */
RH_API rh_status rh_model_destroy(rh_model* model) RH_NOEXCEPT;
/* Message of the most recent completed call on this model (from any thread), "" after a success: a copy in a buffer
 * of the calling thread, valid until this thread calls rh_model_last_error again (also after the model is destroyed).
 * Never NULL: a dead or unknown handle gives a static message saying so. */
RH_API const char* rh_model_last_error(const rh_model* model) RH_NOEXCEPT;
/* The model's configuration (after rh_model_load_checkpoint*, the checkpoint's estimator settings). */
RH_API rh_status rh_model_get_config(const rh_model* model, rh_config* config) RH_NOEXCEPT;

/* ---- Fitting and inference ----------------------------------------------------------------------------------- */

/* One renewable update with the batch. diagnostics may be NULL. */
RH_API rh_status rh_model_partial_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) RH_NOEXCEPT;
/* Forgets the stream, then fits this one batch. */
RH_API rh_status rh_model_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) RH_NOEXCEPT;
/* out[i] = prediction for row i of batch->x; out has batch->dtype, lives in batch->memory and holds out_length
 * >= batch->rows values. batch->y and batch->weights are ignored. */
RH_API rh_status rh_model_predict(rh_model* model, const rh_batch* batch, void* out, int64_t out_length) RH_NOEXCEPT;
/* Coefficient of determination R^2 on the batch (weighted when it has weights). */
RH_API rh_status rh_model_score(rh_model* model, const rh_batch* batch, double* r2) RH_NOEXCEPT;
/* Diagnostics of the last batch. RH_INVALID_STATE before any batch and after a state import or checkpoint load. */
RH_API rh_status rh_model_diagnostics(const rh_model* model, rh_diagnostics* diagnostics) RH_NOEXCEPT;
/* Forgets the stream; the configuration stays. */
RH_API rh_status rh_model_reset(rh_model* model) RH_NOEXCEPT;

/* ---- Inference (ABI 1.1; docs/method.md §12) -----------------------------------------------------------------
 * From the renewable summaries alone: the sandwich covariance J^-1 K J^-1 of the coefficients and what follows from
 * it, intercept last. Each needs a fitted model created with config.inference = 1 and penalty none whose K holds
 * every batch; otherwise RH_UNAVAILABLE, and the message says which is missing (after a state without K or a
 * checkpoint of format 1: reset and fit the stream again, K cannot be rebuilt). RH_INVALID_STATE before any batch;
 * RH_NUMERICAL_ERROR when J is singular (a coefficient the data do not identify) or a coefficient's variance is not
 * positive and finite (an imported K singular or indefinite in its direction). The outputs hold `length` values:
 * at least q (q*q for the covariance), q = the state's coefficients_length. */
RH_API rh_status rh_model_covariance(const rh_model* model, double* out, int64_t length) RH_NOEXCEPT;
RH_API rh_status rh_model_standard_errors(const rh_model* model, double* out, int64_t length) RH_NOEXCEPT;
/* beta_j / se_j */
RH_API rh_status rh_model_z_statistics(const rh_model* model, double* out, int64_t length) RH_NOEXCEPT;
/* Two-sided p-values of beta_j = 0 against the standard normal. */
RH_API rh_status rh_model_p_values(const rh_model* model, double* out, int64_t length) RH_NOEXCEPT;
/* beta_j -/+ z * se_j with z the (1 + level)/2 quantile of the standard normal; 0 < level < 1 (e.g. 0.95). */
RH_API rh_status rh_model_confidence_intervals(const rh_model* model, double level, double* lower, double* upper,
                                               int64_t length) RH_NOEXCEPT;

/* ---- State and checkpoints ----------------------------------------------------------------------------------- */

RH_API rh_status rh_model_get_state(const rh_model* model, rh_state* state) RH_NOEXCEPT;
RH_API rh_status rh_model_set_state(rh_model* model, const rh_state* state) RH_NOEXCEPT;

/* Serializes the configuration and state (format: docs/abi.md). buffer NULL: *size = bytes needed. Otherwise
 * capacity must be at least that; on success *size = bytes written. */
RH_API rh_status rh_model_save_checkpoint(const rh_model* model, void* buffer, int64_t capacity,
                                          int64_t* size) RH_NOEXCEPT;
/* Writes the file through a temporary sibling and a rename, so the target is never left half-written. */
RH_API rh_status rh_model_save_checkpoint_file(const rh_model* model, const char* path) RH_NOEXCEPT;
/* Replaces the configuration and state with the checkpoint's. The checkpoint's dtype must be the model's; the
 * space, device and threads stay. Diagnostics are not stored, so rh_model_diagnostics fails until the next batch. */
RH_API rh_status rh_model_load_checkpoint(rh_model* model, const void* data, int64_t size) RH_NOEXCEPT;
RH_API rh_status rh_model_load_checkpoint_file(rh_model* model, const char* path) RH_NOEXCEPT;

/* ---- Model groups (ABI 1.4; docs/abi.md, "Model groups") -------------------------------------------------------
 * n_models independent models of one space, dtype, configuration and feature count p, updated together by one ragged
 * batch per call: the rows of every model stacked in one rh_batch, model m owning rows offsets[m] to offsets[m+1]-1
 * of x, y and weights. offsets has offsets_length = n_models + 1 values: offsets[0] = 0, non-decreasing,
 * offsets[n_models] = batch->rows (batch->rows may be 0). batch->cols must be p; x, y and weights in batch->memory
 * (RH_MEMORY_DEVICE: the group's device's memory), offsets always in host memory. A model with no
 * rows in a batch is untouched. Each group call follows the rules of the model calls (a failing call changes
 * nothing; rh_last_error and rh_group_last_error say why). Per-model failures are not call failures: see
 * rh_group_partial_fit. Models are numbered 0 to n_models-1; another number gives RH_INVALID_ARGUMENT. */

/* config: as for rh_model_create (space, dtype, device and threads included); inference must be 0. n_models >= 1,
 * n_features >= 1, n_features + fit_intercept <= 64. RH_UNAVAILABLE for what groups cannot do (docs/api.md, "Model
 * groups": inference), RH_ALLOCATION_FAILED beyond the memory limit. */
RH_API rh_status rh_group_create(uint32_t abi_version, const rh_config* config, int64_t n_models, int64_t n_features,
                                 rh_group** group) RH_NOEXCEPT;
/* NULL is accepted and does nothing; otherwise as rh_model_destroy. */
RH_API rh_status rh_group_destroy(rh_group* group) RH_NOEXCEPT;
/* As rh_model_last_error, for the group's most recent completed call. */
RH_API const char* rh_group_last_error(const rh_group* group) RH_NOEXCEPT;
RH_API rh_status rh_group_get_config(const rh_group* group, rh_config* config) RH_NOEXCEPT;
RH_API rh_status rh_group_n_models(const rh_group* group, int64_t* n_models) RH_NOEXCEPT;
RH_API rh_status rh_group_n_features(const rh_group* group, int64_t* n_features) RH_NOEXCEPT;

/* One renewable update of every model with rows in the batch. A bad batch as a whole (header, shape, dtype, offsets,
 * pointers) fails the call and changes nothing. Otherwise the call succeeds, and each model with rows either commits
 * or, when its own rows are bad (NaN/Inf, negative or all-zero weights) or its update fails (non-finite result,
 * singular Newton system), keeps its state and diagnostics and records why: rh_group_model_status. committed (may be
 * NULL) receives how many models committed. */
RH_API rh_status rh_group_partial_fit(rh_group* group, const rh_batch* batch, const int64_t* offsets,
                                      int64_t offsets_length, int64_t* committed) RH_NOEXCEPT;
/* out[i] = prediction for row i of batch->x by the model owning it; out has batch->dtype (host memory, whatever
 * batch->memory says of x) and holds
 * out_length >= batch->rows values. Every model with rows must have been fitted (RH_INVALID_STATE otherwise). */
RH_API rh_status rh_group_predict(rh_group* group, const rh_batch* batch, const int64_t* offsets,
                                  int64_t offsets_length, void* out, int64_t out_length) RH_NOEXCEPT;

/* Of model `model`: */
/* Its state, as rh_model_get_state (score_variance, when asked for, is zeros: groups keep no K). */
RH_API rh_status rh_group_get_state(const rh_group* group, int64_t model, rh_state* state) RH_NOEXCEPT;
/* Diagnostics of its last committed batch; RH_INVALID_STATE before one (and after a checkpoint load). */
RH_API rh_status rh_group_diagnostics(const rh_group* group, int64_t model, rh_diagnostics* diagnostics) RH_NOEXCEPT;
/* The outcome of its last update attempt: *model_status is RH_SUCCESS when that attempt committed (or the model never
 * had rows), else the status of the failure (RH_INVALID_ARGUMENT for bad rows, RH_NUMERICAL_ERROR for a failed
 * solve). message may be NULL; otherwise it receives the reason ("" on success), NUL-terminated and cut to fit capacity
 * bytes (capacity >= 1). Cleared by the next batch with rows for the model. */
RH_API rh_status rh_group_model_status(const rh_group* group, int64_t model, rh_status* model_status, char* message,
                                       int64_t capacity) RH_NOEXCEPT;
/* Replaces its state, as rh_model_set_state (n_features 0 or the group's; a group keeps no K: score_variance must be
 * NULL or zeros, score_variance_batches 0); its diagnostics and status are cleared. */
RH_API rh_status rh_group_set_state(rh_group* group, int64_t model, const rh_state* state) RH_NOEXCEPT;
/* Forgets its stream: the empty state, no diagnostics, no status. */
RH_API rh_status rh_group_reset(rh_group* group, int64_t model) RH_NOEXCEPT;

/* Group checkpoints: the configuration, dtype, shape and every model's state in one versioned buffer or file (format:
 * docs/abi.md, "Group checkpoint format"), with the rules of the model checkpoint calls (sizes, temporary file and
 * rename, links refused, RH_CORRUPT_DATA / RH_VERSION_MISMATCH for a bad checkpoint). A load replaces the group's
 * configuration, n_models, n_features and states; the space, device and threads stay; the dtype must be the
 * checkpoint's. Diagnostics and per-model statuses are cleared. */
RH_API rh_status rh_group_save_checkpoint(const rh_group* group, void* buffer, int64_t capacity,
                                          int64_t* size) RH_NOEXCEPT;
RH_API rh_status rh_group_save_checkpoint_file(const rh_group* group, const char* path) RH_NOEXCEPT;
RH_API rh_status rh_group_load_checkpoint(rh_group* group, const void* data, int64_t size) RH_NOEXCEPT;
RH_API rh_status rh_group_load_checkpoint_file(rh_group* group, const char* path) RH_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RH_RH_H */
