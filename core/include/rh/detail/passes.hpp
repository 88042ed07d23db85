// The solver's named passes (docs/architecture.md, "The solver as passes"): each is a function over views,
// declared once here, defined once in passes_impl.hpp for every execution space, instantiated per compiled space
// and dtype (rh/detail/instantiate.hpp) and tested against the sequential reference of tests/reference/.
//
//   1. stage + validate   the caller's arrays → the design X (intercept column last), y, w, with the bad values
//                         counted in the same pass; then the batch weight W_b
//   2. gram_gradient      per-chunk partials of the weighted Gram Σ c_i x_i x_iᵀ and data gradient Σ s_i x_i
//   3. assemble           H = (G + J)/N_b + ridge·I and g (the penalty adds its gradient term)
//   4. factor_solve       H d = g on the space: Cholesky first when H is meant to be positive definite, else or on
//                         its failure LU with partial pivoting; min_norm_solve is the fallback of both
//   5. evaluate           F_b at a candidate (the penalty adds its sums) and the row weights s_i, c_i there
//      line_search        (Newton) F_b(β − t·d) for every step t of §5 from one pass (r = y − Xβ, u = X·d), the
//                         first accepted t chosen on the space; accept_step moves r, s_i, c_i to it
//   6. commit             J_new = J + G at the final β, and the count of non-finite values of β and J_new; with
//                         inference, score_gram and K_new = K + G_ψ² beside it (docs/method.md §12)
//
// Rows are cut into chunks fixed by n and q (chunks_for); every sum over rows is a sum over chunks in chunk order,
// so host spaces give bitwise identical results for any thread count.
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <functional>
#include <string>

#include "rh/detail/chunk_exchange.hpp"
#include "rh/detail/compat.hpp"
#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/instances.hpp"
#include "rh/detail/method.hpp"
#include "rh/detail/penalties.hpp"
#include "rh/error.hpp"
#include "rh/types.hpp"

namespace rh::detail {

// Edge of the host Gram path's blocks: it reads rows 16 wide past q, so design buffers are padded by this many values.
constexpr int host_gram_tile = 16;
// Tile pairs whose right tile has at most this many columns take the host Gram's narrow path
// (kernels/host_simd/gram_gradient_host.hpp).
constexpr int host_narrow_columns = 2;
constexpr long long host_gram_rows = 64;  // rows per block of the host Gram: two 16-wide f64 tiles of them fill 16 KiB

struct Chunks {
  long long rows = 1;   // rows per chunk; the last chunk may have fewer
  long long count = 1;
  // A batch spread over processes (rh/detail/chunk_exchange.hpp): this process holds the rows of chunks
  // [first, first + own) and computes only those; `exchange` brings the others' after each pass. Without an
  // exchange every chunk is this process's.
  long long first = 0;
  long long own = 0;
  ChunkExchange* exchange = nullptr;
  // The chunks this process computes, numbered from 0 over its own rows.
  Chunks mine() const { return exchange ? Chunks{rows, own} : *this; }
  // `values` (a view of chunks × per_chunk values) seen from this process's first chunk.
  template <class View>
  View window(const View& values, long long per_chunk) const {
    if (!exchange) return values;
    if constexpr (View::rank == 1) return View(values.data() + first * per_chunk, own * per_chunk);
    else return View(values.data() + first * per_chunk, own, values.extent(1));
  }
};

// One row chunk's share of F_b(β − t·d) for every step t, from r = y − x·β and u = x·d (r(β − t·d) = r + t·u), in
// double. A row whose segment r + t·u, t ∈ [0, 1], stays in the quadratic zone of ρ contributes
// ρ(r) + t·ru + ½t²·u²; one that stays beyond ±τ on one side contributes ρ(r) + t·τ·sign(r)·u; only a row whose
// segment crosses ±τ is priced step by step (`crossing`, relative to ρ(r)). So the loss at step t is
// base + t·linear + ½t²·square + crossing[k], and a chunk costs O(rows) whatever the number of steps. `base` sums
// the same per-row terms, in the same order, as EvaluateRows at β; `noise` sizes the rounding of such a direct
// evaluation (the reference's), to tell which decisions it could take otherwise.
struct LineSearchSums {
  double base = 0.0;    // Σ w ρ(r): the loss at β
  double linear = 0.0;  // Σ w r u (quadratic rows) + Σ w τ sign(r) u (linear rows)
  double square = 0.0;  // Σ w u² (quadratic rows)
  double noise = 0.0;   // Σ (w·|ψ(r)|·Σ_j |x_ij β_j|)²: the variance scale of the loss's rounding, over ε²
  double crossing[line_search_steps] = {};  // Σ w (ρ(r + t_k u) − ρ(r)) over the rows crossing ±τ
  // A row's terms of linear, square and noise, and whether it crosses ±τ, for one row (D = double) or for a vector
  // of rows (D a GNU vector of doubles: the row blocks of LineSearchRows, the same operations lane by lane). The
  // zone is chosen by selects, not branches (which rows are quadratic is data, not predictable); a row adds −0.0 to
  // the sums it takes no part in, which leaves any sum as it was (s + (−0.0) = s for every s, +0.0 included).
  template <class D>
  struct RowTerms {
    D linear, square, noise;
    decltype(D() < D()) crosses;  // bool, or a lane mask
    KOKKOS_INLINE_FUNCTION RowTerms(const D& w, const D& r, const D& u, const D& tau, const D& magnitude) {
      const D zero{}, none = -zero;
      const D end = r + u;  // the residual at t = 1
      const D a0 = r < zero ? -r : r, a1 = end < zero ? -end : end;
      const D score = w * (a0 < tau ? a0 : tau) * magnitude;
      noise = score * score;
      const auto quadratic = (a0 <= tau) & (a1 <= tau);
      const auto beyond = ((r > tau) & (end > tau)) | ((r < -tau) & (end < -tau));
      linear = quadratic ? w * r * u : (beyond ? w * tau * (r > zero ? u : -u) : none);
      square = quadratic ? w * u * u : none;
      crosses = (quadratic | beyond) == 0;
    }
  };
  // loss: the row's w·ρ(r) as EvaluateRows computes it; magnitude: Σ_j |x_ij β_j| + |y_i|.
  KOKKOS_INLINE_FUNCTION void add_row(double w, double r, double u, double tau, double loss, double magnitude) {
    const RowTerms<double> t(w, r, u, tau, magnitude);
    add_terms(loss, t.linear, t.square, t.noise);
    if (t.crosses) add_crossing(w, r, u, tau);
  }
  KOKKOS_INLINE_FUNCTION void add_terms(double loss, double linear_term, double square_term, double noise_term) {
    base += loss;
    linear += linear_term;
    square += square_term;
    noise += noise_term;
  }
  // A row whose segment crosses ±τ, step by step.
  KOKKOS_INLINE_FUNCTION void add_crossing(double w, double r, double u, double tau) {
    const double at_r = huber_loss(r, tau);
    double t = 1.0;
    for (int k = 0; k < line_search_steps; ++k, t *= 0.5) crossing[k] += w * (huber_loss(r + t * u, tau) - at_r);
  }
  // The sums as fields f = 0 … fields − 1 (base, linear, square, noise, then crossing[k]): a device team sums each
  // field over the chunks in its own thread, in chunk order, which is the order of operator+= field by field.
  static constexpr int fields = 4 + line_search_steps;
  KOKKOS_INLINE_FUNCTION double& field(int f) {
    return f == 0 ? base : f == 1 ? linear : f == 2 ? square : f == 3 ? noise : crossing[f - 4];
  }
  KOKKOS_INLINE_FUNCTION double field(int f) const { return const_cast<LineSearchSums&>(*this).field(f); }
  KOKKOS_INLINE_FUNCTION void operator+=(const LineSearchSums& o) {
    base += o.base;
    linear += o.linear;
    square += o.square;
    noise += o.noise;
    for (int k = 0; k < line_search_steps; ++k) crossing[k] += o.crossing[k];
  }
#if !RH_KOKKOS4
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile LineSearchSums& o) volatile {
    base += o.base;
    linear += o.linear;
    square += o.square;
    noise += o.noise;
    for (int k = 0; k < line_search_steps; ++k) crossing[k] += o.crossing[k];
  }
#endif
};

}  // namespace rh::detail

// A team reduction of LineSearchSums starts from zero (Kokkos' Sum reducer asks this of a custom type).
namespace Kokkos {
template <>
struct reduction_identity<rh::detail::LineSearchSums> {
  KOKKOS_FORCEINLINE_FUNCTION static rh::detail::LineSearchSums sum() { return rh::detail::LineSearchSums(); }
};
}  // namespace Kokkos

namespace rh::detail {

// What one line search reads back (the one host synchronization of a Newton iteration).
struct LineSearch {
  int step = -1;                   // k of the accepted t = 2⁻ᵏ; −1 when no step is accepted
  int undecided = -1;              // the first k whose F_b is within rounding of F_b(β): from there a direct
                                   // evaluation of each candidate decides, as the reference's does (−1: none)
  double objective_current = 0.0;  // F_b(β)
  double objective = 0.0;          // F_b at the accepted candidate
  double step2 = 0.0;              // ‖cand − β‖² of the accepted candidate
  double cand2 = 0.0;              // ‖cand‖²
  int solve_status = 0;            // status of the last dense solve (SolveStatus)
  int solve_method = 0;            // and its factorization (SolveMethod)
  double t() const { return step < 0 ? 0.0 : 1.0 / static_cast<double>(1LL << step); }
};

// Which rows the next Gram pass of a chunk reads (AcceptStep decides, per chunk, on the space).
constexpr int gram_all_rows = -1;  // recompute the chunk's partial Gram from every row's c_i
// A chunk's partial Gram is updated from its changed rows only while they are at most this fraction of its rows
// (docs/performance.md, "Delta Gram", measures the crossover) ...
constexpr double gram_delta_max_fraction = 0.5;
// ... and at most this many times in a row: then it is recomputed from every row, which bounds the rounding drift
// of repeated updates (tests/unit/test_pass_delta_gram.cpp measures it against a full recompute).
constexpr int gram_delta_max_age = 8;

// What validate counts (integers held in double: exact, whatever the order), and the batch weight W_b.
struct BatchCounts {
  double non_finite_x = 0.0;
  double non_finite_y = 0.0;
  double non_finite_w = 0.0;
  double negative_w = 0.0;
};
struct BatchCheck {
  BatchCounts counts;
  double weight_sum = 0.0;  // Σ w_i over chunks in order (n without weights); computed only for a valid batch
};
inline bool any_invalid(const BatchCounts& k) {
  return k.non_finite_x > 0 || k.non_finite_y > 0 || k.non_finite_w > 0 || k.negative_w > 0;
}
// Throws Errc::invalid_argument for the first problem a check found (docs/method.md §10): a bad value, or a batch
// weight that is zero or not finite (finite weights whose sum overflows double).
inline void require_valid(const BatchCheck& check) {
  const BatchCounts& k = check.counts;
  if (k.non_finite_x > 0) throw Error(Errc::invalid_argument, "X must not contain NaN or infinite values");
  if (k.non_finite_y > 0) throw Error(Errc::invalid_argument, "y must not contain NaN or infinite values");
  if (k.non_finite_w > 0) throw Error(Errc::invalid_argument, "sample weights must not contain NaN or infinite values");
  if (k.negative_w > 0) throw Error(Errc::invalid_argument, "sample weights must be non-negative");
  if (!std::isfinite(check.weight_sum))
    throw Error(Errc::invalid_argument, "the sample weights of the batch sum to more than the largest double; "
                                        "scale them down");
  if (!(check.weight_sum > 0)) throw Error(Errc::invalid_argument, "sample weights cannot be all zero");
}

// The sums of R²: Σw and Σw·y (pass 0), then, given the weighted mean ȳ, Σw(y−ȳ)² and Σw(y−ŷ)² (pass 1).
struct ScoreSums {
  double weight = 0.0;
  double weighted_y = 0.0;
  double total = 0.0;
  double residual = 0.0;
};

// dst[i] = src[i] (Passes::copy).
template <class T>
struct CopyValues {
  T* dst;
  const T* src;
  KOKKOS_INLINE_FUNCTION void operator()(long long i) const { dst[i] = src[i]; }
};

// The work views of a solve, by dtype, memory space and design layout alone: the host spaces (Serial, OpenMP) share
// them, so that an engine may run a batch's passes on another host space over the same views (docs/performance.md,
// "OpenMP on a loaded machine"). Their allocating members take the Passes whose instance allocates.
template <class S, class MemorySpace, class DesignLayout>
struct WorkViews {
  using memory_space = MemorySpace;
  using Vector = Kokkos::View<S*, memory_space>;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, memory_space>;  // q × q
  // n × q, in the layout the space reads fastest; it views a buffer from design_buffer().
  using Design = Kokkos::View<S**, DesignLayout, memory_space, Kokkos::MemoryUnmanaged>;
  using Partial = Kokkos::View<S**, Kokkos::LayoutRight, memory_space>;  // chunks × (q² + q)
  using Status = Kokkos::View<SolveReport, memory_space>;
  using DoubleVector = Kokkos::View<double*, memory_space>;
  using Index = Kokkos::View<long long*, memory_space>;
  using ChunkInts = Kokkos::View<int*, memory_space>;

  // The row-side views of a batch.
  struct Rows {
    Design x;         // staged design, intercept column last
    Vector y, w;      // response and weights (w is read only when the batch has weights)
    Vector s, c;      // score and curvature weights w_i ψ(r_i), w_i φ(r_i) at the current point
    Vector r, u;      // Newton line search: r = y − Xβ and u = X·d of the last line search (r moved by AcceptStep)
    Vector dc;        // Δc_i of the last accepted Newton step
    Index changed;    // the rows with Δc_i ≠ 0, listed per chunk from the chunk's first row
  };
  // Per chunk, which rows the next delta Gram pass reads (written by accept_step).
  struct GramRows {
    ChunkInts count;  // rows listed in Rows::changed, or gram_all_rows
    ChunkInts age;    // delta updates since the chunk's partial Gram was last computed from every row
    template <class On>
    void reset(const On& on, long long chunks) {  // sized for `chunks`, every age 0
      if (static_cast<long long>(count.extent(0)) < chunks) {
        ChunkInts grown_count(on.zeroed("rh::gram_rows_count"), chunks);
        ChunkInts grown_age(on.zeroed("rh::gram_rows_age"), chunks);
        count = grown_count;
        age = grown_age;
      }
      Kokkos::deep_copy(on.space(), age, 0);
    }
  };
  // Where a line search leaves its per-chunk sums, per-coefficient terms and result.
  struct LineSearchScratch {
    Kokkos::View<LineSearchSums*, memory_space> chunk_sums;
    DoubleVector terms;
    Kokkos::View<LineSearch, memory_space> result;
    typename Kokkos::View<LineSearch, memory_space>::HostMirror result_host;
    template <class On>
    void reserve(const On& on, long long chunks, long long q) {
      if (static_cast<long long>(chunk_sums.extent(0)) < chunks)
        chunk_sums = Kokkos::View<LineSearchSums*, memory_space>(on.zeroed("rh::line_search_sums"), chunks);
      if (static_cast<long long>(terms.extent(0)) < 3 * q)
        terms = DoubleVector(on.zeroed("rh::line_search_terms"), 3 * q);
      if (!result.data()) {
        Kokkos::View<LineSearch, memory_space> grown(on.zeroed("rh::line_search"));
        result_host = Kokkos::create_mirror_view(grown);
        result = grown;
      }
    }
  };
  // The coefficient-side views of a solve.
  struct Coefficients {
    Vector cur;     // β, the current iterate
    Vector cand;    // the candidate
    Vector tilde;   // β̃ of the previous batch (0 for the first)
    Vector dir;     // the Newton direction
    Vector grad;    // g at β
    Matrix info;    // J of the earlier batches (0 for the first)
    bool info_symmetric = false;  // J(j,k) == J(k,j) everywhere (every J committed here is; a restored one need
                                  // not be), so J's kernels may read its rows for its columns (j_entry)
  };
  // Per-chunk double sums (batch weight, loss) and their host copy.
  struct ChunkSums {
    DoubleVector values;
    typename DoubleVector::HostMirror host;
    template <class On>
    void reserve(const On& on, long long count) {
      if (static_cast<long long>(values.extent(0)) >= count) return;
      DoubleVector grown(on.zeroed("rh::chunk_values"), count);
      host = Kokkos::create_mirror_view(grown);
      values = grown;
    }
  };
  // Where host arrays bound for a space with its own memory land (unused on host spaces, which read them in
  // place): the caller's X as laid out, on the space; they get there through the process's pinned staging pool
  // (rh/detail/staging_pool.hpp).
  struct HostInput {
    Vector device;
  };
};

template <class Traits, class S>
class Passes {
 public:
  using traits = Traits;
  using execution_space = typename Traits::execution_space;
  using memory_space = typename execution_space::memory_space;
  using Views = WorkViews<S, memory_space, typename execution_space::array_layout>;
  using Vector = typename Views::Vector;
  using Matrix = typename Views::Matrix;
  using Design = typename Views::Design;
  using Partial = typename Views::Partial;
  using Status = typename Views::Status;
  using DoubleVector = typename Views::DoubleVector;
  using Index = typename Views::Index;
  using ChunkInts = typename Views::ChunkInts;
  using Rows = typename Views::Rows;
  using GramRows = typename Views::GramRows;
  using LineSearchScratch = typename Views::LineSearchScratch;
  using Coefficients = typename Views::Coefficients;
  using ChunkSums = typename Views::ChunkSums;
  using HostInput = typename Views::HostInput;

  Passes(execution_space space, int device_id) : space_(space), device_id_(device_id) {}
  const execution_space& space() const { return space_; }

  // Allocation properties of a view on this instance (so that no allocation touches another instance), zeroed or
  // left uninitialized.
  auto zeroed(const std::string& label) const { return Kokkos::view_alloc(space_, label); }
  auto uninitialized(const std::string& label) const {
    return Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, label);
  }
  // dst ← src (contiguous views of one size) on this instance. On a host, Kokkos copies views above 80 KiB with
  // the default host space's threads whatever instance it is given; this copy stays on the instance, so that a
  // batch on the calling thread alone never waits for the OpenMP threads (rh/detail/thread_choice.hpp).
  template <class View>
  void copy(const View& dst, const View& src) const {
    if constexpr (Traits::host) {
      Kokkos::parallel_for("rh::copy",
                           Kokkos::RangePolicy<execution_space>(space_, 0, static_cast<long long>(src.span())),
                           CopyValues<typename View::value_type>{dst.data(), src.data()});
    } else {
      Kokkos::deep_copy(space_, dst, src);
    }
  }
  // A host copy of a view of this space (the view itself when its memory is host memory), complete on return.
  template <class View>
  typename View::HostMirror to_host(const View& v) const {
    auto h = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(space_, h, v);
    space_.fence();
    return h;
  }

  // Rows per chunk and chunk count for n rows of q values (docs/performance.md explains the choice).
  Chunks chunks_for(long long n, long long q) const;
  // A buffer for n rows of q values, padded by host_gram_tile values.
  Vector design_buffer(long long n, long long q) const;
  static Design design_view(const Vector& buffer, long long n, long long q) { return Design(buffer.data(), n, q); }

  // 1. stage + validate. stage copies the batch and counts its bad values in one pass; its pointers are checked
  // (host or this space's device memory); input is the staging of host arrays for a space whose memory is not host
  // memory. x has q = p or p + 1 columns. validate adds the batch weight W_b when the counts found nothing.
  BatchCounts stage(const Batch& batch, const Rows& rows, HostInput& input) const;
  BatchCheck validate(const BatchCounts& counts, const Rows& rows, bool has_w, const Chunks& chunks,
                      ChunkSums& scratch) const;
  // 6'. The commit's squared-score Gram with inference (docs/method.md §12): k ← w_i ψ(r_i)² (ψ from the score
  // weights s_i = w_i ψ(r_i) at the final β), then the per-chunk partials of Σ k_i x_i x_iᵀ by gram_gradient's
  // kernel into `partial` (one pass over X; no gradient).
  void score_gram(const Rows& rows, const Chunks& chunks, bool has_w, const Vector& k, Partial& partial) const;

  // 2. Per-chunk partials of Σ c_i x_i x_iᵀ (upper triangle, when with_gram) and Σ s_i x_i (when with_gradient)
  // into `partial` (grown to chunks.count × (q² + q) when needed). With `changes` (the delta Gram), a chunk that
  // accept_step listed adds Σ Δc_i x_i x_iᵀ over its listed rows to its partial Gram instead (kernel
  // "rh::gram_delta"; "rh::gram_gradient" reads every row).
  void gram_gradient(const Rows& rows, const Chunks& chunks, bool with_gram, Partial& partial,
                     bool with_gradient = true, const GramRows* changes = nullptr) const;
  // `partial` with room for chunks.count × (q² + q) values.
  void reserve_partial(Partial& partial, const Chunks& chunks, long long q) const;

  // 4. sol = a⁻¹ rhs (factor receives the factors, a is kept; docs/method.md §8): by Cholesky when
  // positive_definite (ridge > 0), falling back on the space to LU with partial pivoting when a is not symmetric,
  // a pivot is not > 0 or the solution is not finite; else by LU alone. report ← SolveReport (status and method).
  void factor_solve(const Matrix& a, const Vector& rhs, const Matrix& factor, const Vector& sol, const Status& report,
                    bool positive_definite) const;
  // sol = the minimum-norm least-squares solution of a·sol = rhs (host SVD; the fallback of docs/method.md §8).
  void min_norm_solve(const Matrix& a, const Vector& rhs, const Vector& sol) const;

  // cand = S(cur − step·direction, threshold) on coefficients [0, penalized), cur − step·direction elsewhere.
  void candidate(const Coefficients& coef, const Vector& direction, S step, S threshold, long long penalized) const;

  // 5. The Newton line search (docs/method.md §5) from one pass over X: every step t = 2⁻ᵏ of d = coef.dir from
  // coef.cur is priced, the first with F_b(β − t·d) ≤ F_b(β) accepted on the space and written to coef.cand;
  // rows.r and rows.u are left for accept_step. One readback (with the status of the last factor_solve).
  // `alongside` (when given) runs after the row pass, before the sums are combined: more passes over this process's
  // chunks, whose partials cross processes in the line search's one exchange (a spread batch).
  LineSearch line_search(const Rows& rows, const Chunks& chunks, const BatchScalars& bs, const Coefficients& coef,
                         const Status& solve_status, LineSearchScratch& scratch,
                         const std::function<void()>& alongside = nullptr) const;
  // The accepted step on the row side: r += t·u, s and c there, Δc, the changed rows and each chunk's choice of
  // rows for the next delta Gram.
  void accept_step(const Rows& rows, const Chunks& chunks, const BatchScalars& bs, const LineSearch& step,
                   GramRows& changes) const;

  // Whether a(j,k) == a(k,j) for every entry (NaN is never equal): J's kernels then read its rows for its columns.
  bool exactly_symmetric(const Matrix& a) const;
  // 6. info_new = info + G (G summed from `partial`); returns how many values of beta and info_new are not finite.
  long long commit(const Partial& partial, const Chunks& chunks, const Matrix& info, const Vector& beta,
                   const Matrix& info_new) const;
  // 6'. With inference score_new = score + the squared-score Gram summed from score_gram's `partial`; without,
  // score_new = 0.
  // Returns how many values of score_new are not finite.
  long long commit_score_variance(const Partial& partial, const Chunks& chunks, bool inference, const Matrix& score,
                                  const Matrix& score_new) const;

  // out_i = x_iᵀβ, and the R² of y against it.
  void predict(const Design& x, const Vector& beta, const Vector& out) const;
  double r_squared(const Rows& rows, long long n, bool has_w, const Vector& prediction) const;

 private:
  execution_space space_;
  int device_id_;
};

// Where an evaluation leaves its per-chunk losses, per-coefficient terms and sums (shared by the host spaces, as
// WorkViews are).
template <class Views, class Penalty>
struct EvaluationScratch {
  using Terms = Kokkos::View<EvaluationSums<Penalty>*, typename Views::memory_space>;
  using SumsView = Kokkos::View<EvaluationSums<Penalty>, typename Views::memory_space>;
  using DoubleVector = typename Views::DoubleVector;
  typename Views::ChunkSums chunk_loss;
  Terms terms;
  DoubleVector delta;    // β_cand − β̃ in double, once per evaluation (FinishEvaluation's q² product reads it)
  DoubleVector j_delta;  // J·delta, as FinishEvaluation summed it
  bool j_delta_valid = false;  // j_delta is of this batch's J (a solve starts with it false)
  SumsView sums;
  typename SumsView::HostMirror sums_host;
  template <class On>
  void reserve(const On& on, long long chunks, long long q) {
    chunk_loss.reserve(on, chunks);
    if (static_cast<long long>(terms.extent(0)) != q) terms = Terms(on.zeroed("rh::coefficient_terms"), q);
    if (static_cast<long long>(delta.extent(0)) != q) delta = DoubleVector(on.zeroed("rh::coefficient_delta"), q);
    if (static_cast<long long>(j_delta.extent(0)) != q) {
      j_delta = DoubleVector(on.zeroed("rh::coefficient_j_delta"), q);
      j_delta_valid = false;
    }
    if (!sums.data()) {
      SumsView made(on.zeroed("rh::sums"));
      sums_host = Kokkos::create_mirror_view(made);
      sums = made;
    }
  }
};

// The passes whose arithmetic depends on the penalty.
template <class Traits, class S, class Penalty>
class PenaltyPasses {
 public:
  using Base = Passes<Traits, S>;
  using Vector = typename Base::Vector;
  using Matrix = typename Base::Matrix;
  using Partial = typename Base::Partial;
  using Status = typename Base::Status;
  using Rows = typename Base::Rows;
  using Coefficients = typename Base::Coefficients;
  using ChunkSums = typename Base::ChunkSums;
  using DoubleVector = typename Base::DoubleVector;
  using memory_space = typename Base::memory_space;
  using Scratch = EvaluationScratch<typename Base::Views, Penalty>;
  using Terms = typename Scratch::Terms;
  using SumsView = typename Scratch::SumsView;

  explicit PenaltyPasses(const Base& base) : base_(base) {}

  // 3. grad ← g at coef.cur; with_hessian: also hessian ← H (from the Gram partials of the same gram_gradient).
  // On host spaces, J(β − β̃) is taken from `last` when that evaluation's δ is β − β̃ to the bit (an accepted
  // candidate): the q² product is then summed once per iteration, not twice.
  void assemble(bool with_hessian, const Partial& partial, const Chunks& chunks, const Coefficients& coef,
                const BatchScalars& bs, const Matrix& hessian, const Scratch* last = nullptr) const;
  // 5. F_b's sums at coef.cand (with the status of the last factor_solve); rows.s, rows.c ← its row weights
  // (unless row_weights is false). With `gradient`, the same pass writes the per-chunk Σ s_i x_i at the candidate
  // into its gradient part (as gram_gradient would with with_gram false). `alongside`: as line_search's (its
  // passes may read the row weights just written).
  EvaluationSums<Penalty> evaluate(const Rows& rows, const Chunks& chunks, const BatchScalars& bs,
                                   const Coefficients& coef, const Status& solve_status, Scratch& scratch,
                                   Partial* gradient = nullptr, bool row_weights = true,
                                   const std::function<void()>& alongside = nullptr) const;
  // evaluate() without row weights, in its two halves, for direct evaluations whose row passes cross processes in
  // one exchange (a spread batch): the per-chunk losses at coef.cand into `chunk_loss` (shared at once, or at the
  // exchange's flush while it holds), then F_b's sums at coef.cand from them. The same bits as evaluate().
  void losses(const Rows& rows, const Chunks& chunks, const BatchScalars& bs, const Coefficients& coef,
              const DoubleVector& chunk_loss) const;
  EvaluationSums<Penalty> finish(const Chunks& chunks, const BatchScalars& bs, const Coefficients& coef,
                                 const Status& solve_status, Scratch& scratch, const DoubleVector& chunk_loss) const;

 private:
  void row_pass(const Rows& rows, const Chunks& chunks, const BatchScalars& bs, const Coefficients& coef,
                const DoubleVector& chunk_loss, Partial* gradient, bool row_weights) const;

  const Base& base_;  // the space the passes run on
};

}  // namespace rh::detail

RH_FOR_EACH_COMPILED_SPACE(RH_PASSES_INSTANCES, DECLARE)
