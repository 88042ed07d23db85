// The solver's named passes (docs/architecture.md, "The solver as passes"): each is a function over views,
// declared once here, defined once in passes_impl.hpp for every execution space, instantiated per compiled space
// and dtype (rh/detail/instantiate.hpp) and tested against the sequential reference of tests/reference/.
//
//   1. stage + validate   the caller's arrays → the design X (intercept column last), y, w; bad values counted
//   2. gram_gradient      per-chunk partials of the weighted Gram Σ c_i x_i x_iᵀ and data gradient Σ s_i x_i
//   3. assemble           H = (G + J)/N_b + ridge·I and g (the penalty adds its gradient term)
//   4. factor_solve       H d = g by LU with partial pivoting on the space; min_norm_solve is its fallback
//   5. evaluate           F_b at a candidate (the penalty adds its sums) and the row weights s_i, c_i there
//   6. commit             J_new = J + G at the final β, and the count of non-finite values of β and J_new; with
//                         inference, score_grams replaces gram_gradient before it and K_new = K + G_ψ² (§12)
//
// Rows are cut into chunks fixed by n and q (chunks_for); every sum over rows is a sum over chunks in chunk order,
// so host spaces give bitwise identical results for any thread count.
#pragma once
#include <Kokkos_Core.hpp>

#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/instances.hpp"
#include "rh/detail/penalties.hpp"
#include "rh/error.hpp"
#include "rh/types.hpp"

namespace rh::detail {

// Edge of the host Gram path's blocks: it reads rows 16 wide past q, so design buffers are padded by this many values.
constexpr int host_gram_tile = 16;

struct Chunks {
  long long rows = 1;   // rows per chunk; the last chunk may have fewer
  long long count = 1;
};

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
// Throws Errc::invalid_argument for the first problem a check found (docs/method.md §10).
inline void require_valid(const BatchCheck& check) {
  const BatchCounts& k = check.counts;
  if (k.non_finite_x > 0) throw Error(Errc::invalid_argument, "X must not contain NaN or infinite values");
  if (k.non_finite_y > 0) throw Error(Errc::invalid_argument, "y must not contain NaN or infinite values");
  if (k.non_finite_w > 0) throw Error(Errc::invalid_argument, "sample weights must not contain NaN or infinite values");
  if (k.negative_w > 0) throw Error(Errc::invalid_argument, "sample weights must be non-negative");
  if (!(check.weight_sum > 0)) throw Error(Errc::invalid_argument, "sample weights cannot be all zero");
}

// The sums of R²: Σw and Σw·y (pass 0), then, given the weighted mean ȳ, Σw(y−ȳ)² and Σw(y−ŷ)² (pass 1).
struct ScoreSums {
  double weight = 0.0;
  double weighted_y = 0.0;
  double total = 0.0;
  double residual = 0.0;
};

template <class Traits, class S>
class Passes {
 public:
  using execution_space = typename Traits::execution_space;
  using memory_space = typename execution_space::memory_space;
  using Vector = Kokkos::View<S*, memory_space>;
  using Matrix = Kokkos::View<S**, Kokkos::LayoutRight, memory_space>;  // q × q
  // n × q, in the layout the space reads fastest; it views a buffer from design_buffer().
  using Design = Kokkos::View<S**, typename execution_space::array_layout, memory_space, Kokkos::MemoryUnmanaged>;
  using Partial = Kokkos::View<S**, Kokkos::LayoutRight, memory_space>;  // chunks × (q² + q)
  using Status = Kokkos::View<int, memory_space>;
  using DoubleVector = Kokkos::View<double*, memory_space>;

  // The row-side views of a batch.
  struct Rows {
    Design x;         // staged design, intercept column last
    Vector y, w;      // response and weights (w is read only when the batch has weights)
    Vector s, c;      // score and curvature weights w_i ψ(r_i), w_i φ(r_i) of the last evaluation
  };
  // The coefficient-side views of a solve.
  struct Coefficients {
    Vector cur;     // β, the current iterate
    Vector cand;    // the candidate
    Vector tilde;   // β̃ of the previous batch (0 for the first)
    Vector dir;     // the Newton direction
    Vector grad;    // g at β
    Matrix info;    // J of the earlier batches (0 for the first)
  };
  // Per-chunk double sums (batch weight, loss) and their host copy.
  struct ChunkSums {
    DoubleVector values;
    typename DoubleVector::HostMirror host;
    void reserve(long long count);
  };

  Passes(execution_space space, int device_id) : space_(space), device_id_(device_id) {}
  const execution_space& space() const { return space_; }

  // Rows per chunk and chunk count for n rows of q values (docs/performance.md explains the choice).
  Chunks chunks_for(long long n, long long q) const;
  // A buffer for n rows of q values, padded by host_gram_tile values.
  static Vector design_buffer(long long n, long long q);
  static Design design_view(const Vector& buffer, long long n, long long q) { return Design(buffer.data(), n, q); }

  // 1. stage + validate. The batch's pointers are checked (host or this space's device memory); raw_x is scratch
  // for host arrays bound for a space whose memory is not host memory. x has q = p or p + 1 columns.
  void stage(const Batch& batch, const Rows& rows, Vector& raw_x) const;
  BatchCheck validate(const Rows& rows, bool has_y, bool has_w, const Chunks& chunks, ChunkSums& scratch) const;

  // 2. Per-chunk partials of Σ c_i x_i x_iᵀ (upper triangle, when with_gram) and Σ s_i x_i into `partial`
  // (grown to chunks.count × (q² + q) when needed).
  void gram_gradient(const Rows& rows, const Chunks& chunks, bool with_gram, Partial& partial) const;
  // 2'. The commit's pass with inference (docs/method.md §12): per-chunk partials of Σ c_i x_i x_iᵀ (as
  // gram_gradient's) and of Σ w_i ψ(r_i)² x_i x_iᵀ (at offset q² + q; ψ from s_i = w_i ψ(r_i)) in one pass over X.
  // No gradient.
  void score_grams(const Rows& rows, const Chunks& chunks, bool has_w, Partial& partial) const;

  // 4. sol = a⁻¹ rhs by LU with partial pivoting (lu receives the factors, a is kept); status ← SolveStatus.
  void factor_solve(const Matrix& a, const Vector& rhs, const Matrix& lu, const Vector& sol, const Status& status) const;
  // sol = the minimum-norm least-squares solution of a·sol = rhs (host SVD; the fallback of docs/method.md §8).
  void min_norm_solve(const Matrix& a, const Vector& rhs, const Vector& sol) const;

  // cand = S(cur − step·direction, threshold) on coefficients [0, penalized), cur − step·direction elsewhere.
  void candidate(const Coefficients& coef, const Vector& direction, S step, S threshold, long long penalized) const;

  // 6. info_new = info + G (G summed from `partial`); returns how many values of beta and info_new are not finite.
  long long commit(const Partial& partial, const Chunks& chunks, const Matrix& info, const Vector& beta,
                   const Matrix& info_new) const;
  // 6'. With inference score_new = score + the squared-score Gram of score_grams' `partial`; without, score_new = 0.
  // Returns how many values of score_new are not finite.
  long long commit_score_variance(const Partial& partial, const Chunks& chunks, bool inference, const Matrix& score,
                                  const Matrix& score_new) const;

  // out_i = x_iᵀβ, and the R² of y against it.
  void predict(const Design& x, const Vector& beta, const Vector& out) const;
  double r_squared(const Rows& rows, long long n, bool has_w, const Vector& prediction) const;

 private:
  // Launches GramGradient over the chunks: φ-Gram tile pairs (with_gram), gradient tiles (with_gradient), and the
  // squared-score Gram (with_score); `partial` grows to hold what is asked.
  void gram_pass(const Rows& rows, const Chunks& chunks, bool with_gram, bool with_gradient, bool with_score,
                 bool has_w, Partial& partial) const;

  execution_space space_;
  int device_id_;
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
  using memory_space = typename Base::memory_space;
  using Terms = Kokkos::View<EvaluationSums<Penalty>*, memory_space>;
  using SumsView = Kokkos::View<EvaluationSums<Penalty>, memory_space>;

  // Where an evaluation leaves its per-chunk losses, per-coefficient terms and sums.
  struct Scratch {
    ChunkSums chunk_loss;
    Terms terms;
    SumsView sums;
    typename SumsView::HostMirror sums_host;
    void reserve(long long chunks, long long q);
  };

  explicit PenaltyPasses(const Base& base) : base_(base) {}

  // 3. grad ← g at coef.cur; with_hessian: also hessian ← H (from the Gram partials of the same gram_gradient).
  void assemble(bool with_hessian, const Partial& partial, const Chunks& chunks, const Coefficients& coef,
                const BatchScalars& bs, const Matrix& hessian) const;
  // 5. F_b's sums at coef.cand (with the status of the last factor_solve); rows.s, rows.c ← its row weights.
  EvaluationSums<Penalty> evaluate(const Rows& rows, const Chunks& chunks, const BatchScalars& bs,
                                   const Coefficients& coef, const Status& solve_status, Scratch& scratch) const;

 private:
  const Base& base_;  // the space the passes run on
};

}  // namespace rh::detail

RH_FOR_EACH_COMPILED_SPACE(RH_PASSES_INSTANCES, DECLARE)
