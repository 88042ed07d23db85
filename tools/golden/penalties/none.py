"""Penalty none: the renewable Huber estimator (RHE), solved by damped Newton with monotone backtracking
(docs/method.md §5). λ_b = 0 and the penalty adds nothing to the objective or the gradient. This module is all the
oracle knows of the penalty: its λ rule, historical term, solver and reported objective, and its golden cases."""

import numpy as np

from cases import (F32, F64, REPLAYS, case, decisive, float32_note, gaussian, normal_noise, sparse_coef, stream,
                   student_noise, varied_rows)

NAME = "none"
CORPUS_FILE = "golden/corpus_v1_none.json"
MIN_LINE_SEARCH_STEP = 1e-8      # backtracking tries t = 1, 1/2, ... while t >= this (27 trials)


def level(config, cumulative_weight, n_features):
    """λ_b (§3): none."""
    return 0.0


def historical_subgradient(state, config, cumulative_weight, mask):
    """The historical term of ∇F_b (§4): none."""
    return np.zeros_like(mask)


def dense_solve(H, g):
    """§8 NumPy engine: LU solve; on an exactly singular pivot, the minimum-norm least squares."""
    try:
        return np.linalg.solve(H, g)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, g, rcond=None)[0]


def solve(obj, max_iter, lam, mask, decisions):
    """§5 damped Newton with monotone backtracking. Returns (β, iterations, converged)."""
    beta = obj.beta_ref.copy()
    f = obj.value(beta)
    for iteration in range(1, max_iter + 1):
        direction = dense_solve(obj.hessian(beta), obj.gradient(beta))
        t = 1.0
        while t >= MIN_LINE_SEARCH_STEP:
            candidate = beta - beta.dtype.type(t) * direction
            f_candidate = obj.value(candidate)
            # Plain non-increase, no Armijo constant.
            if decisions.accept(f_candidate, f, f, np.array_equal(candidate, beta)):
                break
            t *= 0.5
        else:
            return beta, iteration, False
        delta = candidate - beta
        beta, f = candidate, f_candidate
        if decisions.converged(delta, beta):
            return beta, iteration, True
    return beta, max_iter, False


def objective(obj, beta, lam, mask):
    """The reported objective (§7): F_b(β_b)."""
    return obj.value(beta)


# The golden cases of corpus_v1_none.json.

CASES = [
    case("long_stream_f64",
         "24 unweighted batches of 6-40 rows, p=3, Gaussian noise: a long stream with a shrinking bandwidth. "
         "Each batch stops on a step whose objective decrease is far above rounding (with ridge 1e-8 the "
         "last Newton steps would shrink only to ~1e-8 of the previous one, and accepting them is a rounding "
         "coin flip worth ~1e-8)." + decisive("ridge 0 and tol 1e-4", "2.3e-13"),
         *F64, {"ridge": 0.0, "tol": 1e-4},
         stream(5101, varied_rows(5101, 24, 6, 40), [1.2, -0.7, 0.35])),
    case("long_stream_weighted_f32",
         "22 float32 batches of 8-30 rows with fractional weights (1/16 grid in [0.25, 2], 10% exact zeros), "
         "p=4, 5% gross outliers (+-15). Features have mean 1 so that no information entry sits near zero."
         + float32_note("2e-4 on information entries of ~1e3 (relative 5e-7)", "7e-3"),
         *F32, {"dtype": "float32", "tol": 1e-6},
         stream(5102, varied_rows(5102, 22, 8, 30), [0.9, -1.1, 0.5, 0.2], design=gaussian(mean=1.0),
                noise=normal_noise(0.1), outliers={"fraction": 0.05, "magnitude": 15.0},
                weights={"kind": "random", "low": 0.25, "high": 2.0, "zero_fraction": 0.1})),
    case("wide_p64_f64",
         "p=64 (65 coefficients, 12 nonzero): a 96-row batch, then 16 rows and 1 row (fewer rows than "
         "coefficients). tau 2.5 keeps most rows quadratic at beta=0, so the first Hessian is well "
         "conditioned without a ridge." + decisive("ridge 0", "1.3e-13"),
         *F64, {"tau": 2.5, "ridge": 0.0},
         stream(5103, [96, 16, 1], sparse_coef(64, 12), noise=normal_noise(0.3))),
    case("wide_p24_f32",
         "float32, p=24 (8 nonzero), batches of 60, 12 and 1 rows (fewer rows than coefficients after the "
         "first), features of mean 0.5, 5% outliers (+-10), tau 2.5." + float32_note("3.2e-5", "0.05"),
         *F32, {"dtype": "float32", "tau": 2.5, "tol": 1e-6},
         stream(5117, [60, 12, 1], sparse_coef(24, 8), design=gaussian(mean=0.5), noise=normal_noise(0.1),
                outliers={"fraction": 0.05, "magnitude": 10.0})),
    case("single_rows_after_large_f64",
         "A 400-row batch followed by six single-row batches, p=4, 10% gross outliers (+-25)."
         + decisive("ridge 0 and tol 1e-4", "5.7e-13"),
         *F64, {"ridge": 0.0, "tol": 1e-4},
         stream(5104, [400, 1, 1, 1, 1, 1, 1], [0.8, -0.6, 0.4, 1.1],
                outliers={"fraction": 0.1, "magnitude": 25.0})),
    case("zero_fractional_weights_f64",
         "Four batches with weights on a 1/16 grid in [1/16, 3] and 30% exact zeros; the third batch has "
         "sample_weight null (W_b = n_b), the others W_b = sum(w). tau 1."
         + decisive("ridge 0", "5.7e-14"),
         *F64, {"tau": 1.0, "ridge": 0.0},
         stream(5105, [30, 25, 40, 12], [1.0, 0.5, -0.5, 0.0, 0.25],
                weights={"kind": "random", "low": 0.0625, "high": 3.0, "zero_fraction": 0.3,
                         "unweighted_batches": [2]})),
    case("no_intercept_f64",
         "fit_intercept false (4 coefficients, all from features), tau 0.9."
         + decisive("ridge 0 and tol 3e-5", "5.7e-14"),
         *F64, {"fit_intercept": False, "tau": 0.9, "ridge": 0.0, "tol": 3e-5},
         stream(5106, [50, 35, 20], [1.3, -0.4, 0.7, -1.0], intercept=0.0)),
    case("no_intercept_outliers_f32",
         "float32 without an intercept, features of mean 0.5, 8% gross outliers (+-12)."
         + float32_note("2.4e-5", "3e-3"),
         *F32, {"fit_intercept": False, "dtype": "float32", "tol": 1e-6},
         stream(5107, [60, 40], [0.6, -1.2, 0.9], intercept=0.0, design=gaussian(mean=0.5),
                noise=normal_noise(0.1), outliers={"fraction": 0.08, "magnitude": 12.0})),
    case("tau_small_f64",
         "tau 0.15 with unit noise: nearly every row on the linear part of the loss (close to LAD), "
         "slow Newton (4-9 iterations)." + decisive("ridge 0 and tol 3e-4", "3.1e-13"),
         *F64, {"tau": 0.15, "ridge": 0.0, "tol": 3e-4},
         stream(5108, [80, 60, 40], [0.7, -0.9, 0.3], noise=normal_noise(1.0))),
    case("tau_large_ols_f64",
         "tau 1000: the loss is quadratic and the stream is recursive least squares."
         + decisive("ridge 0", "2.8e-14"),
         *F64, {"tau": 1000.0, "ridge": 0.0},
         stream(5109, [40, 30, 30], [1.5, 0.25, -0.75])),
    case("bandwidth_narrow_f64",
         "bandwidth_scale 0.02 (h ~ 2e-3) with Student-t(3) noise, at the default ridge 1e-8 and tol 1e-10 "
         "like the reference corpus. Tolerance 5e-8/5e-9: ridge 1e-8 makes the Newton endgame shrink each "
         "step only to ~1e-8 of the previous one, and accepting that last step is a rounding coin flip; "
         f"{REPLAYS} differ by up to 7e-10 (usage 0.02), beyond the float64 floor.",
         5e-8, 5e-9, {"bandwidth_scale": 0.02},
         stream(5110, [70, 50, 30], [1.0, -1.0, 0.5], noise=student_noise(3, 0.6))),
    case("bandwidth_capped_f64",
         "bandwidth_scale 40: the bandwidth formula exceeds tau 0.8 and is capped at h = tau in every batch "
         "(widest ramps, slowest Newton)." + decisive("ridge 0 and tol 5e-5", "4.3e-14"),
         *F64, {"bandwidth_scale": 40.0, "tau": 0.8, "ridge": 0.0, "tol": 5e-5},
         stream(5111, [50, 40, 30], [0.4, 0.8, -0.6])),
    case("rank_deficient_minnorm_f64",
         "Columns [t, 2t, 1] plus the intercept, t on a 1/8 grid in +- pairs, tau 100, ridge 0: every Gram "
         "entry is exact in any summation order and the Hessian is exactly singular with LU multipliers "
         "0, 1/2, 1, 2, so each Newton solve meets an exactly zero pivot and takes the minimum-norm "
         "fallback; the stream ends on the pooled minimum-norm least-squares solution."
         + decisive("these exact sums", "8.9e-16"),
         *F64, {"tau": 100.0, "ridge": 0.0, "tol": 1e-11},
         stream(5112, [32, 16], [1.75, 0.0, 0.0], intercept=0.4, noise=normal_noise(0.05),
                design={"kind": "rank_deficient_dyadic"})),
    case("near_collinear_f64",
         "Feature 2 = feature 1 + 1e-3 N(0,1) (Hessian condition number ~1e7), ridge 0, tol 1e-6. "
         "Tolerance 2e-7/2e-8: the conditioning amplifies rounding in the Newton direction along the "
         f"collinear pair; {REPLAYS} differ by up to 4.1e-8 on those coefficients (usage 0.04). With the "
         "default ridge 1e-8 this design's converged flags flip under the same perturbations.",
         2e-7, 2e-8, {"ridge": 0.0, "tol": 1e-6},
         stream(5113, [60, 40, 40], [1.0, 0.5, -0.8, 0.3],
                design={"kind": "near_collinear", "scale": 1.0, "pairs": [[0, 1]], "jitter": 1e-3})),
    case("student_t_gross_outliers_f64",
         "Student-t(1.5) noise plus 8% gross outliers (+-40), four batches, p=5."
         + decisive("ridge 0 and tol 3e-4", "5.7e-14"),
         *F64, {"ridge": 0.0, "tol": 3e-4},
         stream(5114, [60, 45, 45, 30], [1.1, -0.8, 0.6, 0.0, -0.3], noise=student_noise(1.5, 0.5),
                outliers={"fraction": 0.08, "magnitude": 40.0})),
    case("student_t_outliers_f32",
         "float32, Student-t(2) noise and 6% gross outliers (+-30)." + float32_note("2.5e-5", "6e-3"),
         *F32, {"dtype": "float32", "tol": 1e-6},
         stream(5115, [80, 40], [0.5, -0.5, 1.0], noise=student_noise(2, 0.3),
                outliers={"fraction": 0.06, "magnitude": 30.0})),
    case("newton_max_iter_stop_f64",
         "max_iter 1: every batch stops after one Newton step with converged false, and the state is "
         "still committed. With the default ridge 1e-8 that step depends on where the ridge is added "
         "(after the 1/N_b division; adding it before moves the information matrix by ~100x the "
         "tolerance)." + decisive("a single full step", "5.7e-14"),
         *F64, {"max_iter": 1},
         stream(5116, [50, 30, 30], [0.9, -0.3, 0.6], noise=student_noise(2, 0.5))),
]

