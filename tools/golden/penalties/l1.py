"""Penalty l1: the renewable penalized smoothed Huber estimator (RPSHE), solved by LAMM proximal gradient with the
majorization test (docs/method.md §6). This module is all the oracle knows of the penalty: its λ rule (§3), the
historical subgradient term (§4), its solver and reported objective (§7), and its golden cases."""

import math

import numpy as np

from cases import F32, F64, case, decisive, float32_note, normal_noise, sparse_coef, stream, student_noise, varied_rows

NAME = "l1"
CORPUS_FILE = "golden/corpus_v2_l1.json"
LAMM_MAX_ATTEMPTS = 40           # majorization attempts per proximal iteration
LAMM_SLACK = 1e-12               # absolute slack in the majorization test
LAMM_MIN_PHI = 1e-8              # floor for the halved majorization constant


def level(config, cumulative_weight, n_features):
    """λ_b = lambda_scale·τ·sqrt(ln max(p, 2) / N_b) (§3)."""
    return config.lambda_scale * config.tau * math.sqrt(math.log(max(n_features, 2)) / cumulative_weight)


def historical_subgradient(state, config, cumulative_weight, mask):
    """§4 historical L1 term (N_{b−1}/N_b)·λ̃·(m ∘ sign(β̃)); zero on the first batch (n_samples_seen = 0)."""
    if state.n_samples_seen == 0:
        return np.zeros_like(mask)
    factor = state.weight_sum / cumulative_weight * state.previous_lambda
    return mask.dtype.type(factor) * (mask * np.sign(state.coefficients))


def soft_threshold(v, t):
    """S(v, t) = sign(v)·max(|v| − t, 0), with sign(0) = 0."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0)


def solve(obj, max_iter, lam, mask, decisions):
    """§6 proximal gradient with a doubling/halving majorization constant φ. Returns (β, iterations, converged)."""
    dt = obj.beta_ref.dtype.type
    beta = obj.beta_ref.copy()
    f = obj.value(beta)
    phi = 1.0                                    # reset on every batch
    for iteration in range(1, max_iter + 1):
        g = obj.gradient(beta)
        for _ in range(LAMM_MAX_ATTEMPTS):
            candidate = soft_threshold(beta - g / dt(phi), dt(lam / phi) * mask)
            delta = candidate - beta
            bound = f + g @ delta + dt(phi / 2) * (delta @ delta)
            f_candidate = obj.value(candidate)
            if decisions.accept(f_candidate, bound + dt(LAMM_SLACK), f, not delta.any()):
                break
            phi *= 2.0
        else:
            return beta, iteration, False
        beta, f = candidate, f_candidate
        phi = max(phi / 2.0, LAMM_MIN_PHI)
        if decisions.converged(delta, beta):
            return beta, iteration, True
    return beta, max_iter, False


def objective(obj, beta, lam, mask):
    """The reported objective (§7): F_b(β_b) + λ_b Σ_j m_j |β_j|."""
    return obj.value(beta) + mask.dtype.type(lam) * np.sum(mask * np.abs(beta))


# The golden cases of corpus_v2_l1.json.

L1 = {"penalty": "l1", "lambda_scale": 0.5, "max_iter": 500}
LAMM_F64 = "LAMM's 1e-12 majorization slack (far above float64 rounding)"

CASES = [
    case("l1_converging_f64",
         "p=8 with 3 nonzero coefficients, three batches: LAMM converges in every batch (tol 2e-6, each "
         "stopping step >= 1.43x inside and the previous one outside the threshold), 5 exact zeros."
         + decisive(LAMM_F64, "1.1e-13"),
         *F64, {**L1, "tol": 2e-6},
         stream(6101, [60, 40, 40], sparse_coef(8, 3), noise=normal_noise(0.3))),
    case("l1_max_iter_f64",
         "Like the reference L1 case: tol 1e-9 is below what the 1e-12 majorization slack lets LAMM reach, "
         "so both batches stop at max_iter 150 with steps >= 119x the threshold. The end point is not "
         "chaotic." + decisive(LAMM_F64, "4.5e-12"),
         *F64, {**L1, "max_iter": 150, "tol": 1e-9},
         stream(6102, [50, 50], sparse_coef(6, 3), noise=normal_noise(0.1))),
    case("l1_early_stop_f64",
         "max_iter 5: both batches stop mid-descent (steps ~500x the threshold)." + decisive(LAMM_F64, "5.7e-14"),
         *F64, {**L1, "max_iter": 5, "tol": 1e-6},
         stream(6103, [60, 40], sparse_coef(6, 3))),
    case("l1_all_zero_f64",
         "lambda_scale 25 zeroes every penalized coefficient in both batches; only the intercept moves "
         "(a Huber location fit)." + decisive(LAMM_F64, "1.4e-14"),
         *F64, {**L1, "lambda_scale": 25.0, "tol": 3e-5},
         stream(6104, [40, 30], sparse_coef(5, 3), intercept=-0.7)),
    case("l1_long_stream_f64",
         "24 batches of 8-30 rows, p=5 with 2 nonzero coefficients: the historical L1 subgradient term "
         "(previous lambda, N_{b-1}/N_b) acts 23 times. LAMM converges linearly, so consecutive steps differ "
         "by only 10-50% and the stopping margins are >= 1.11." + decisive(LAMM_F64, "2.3e-13"),
         *F64, {**L1, "tol": 1e-5},
         stream(6105, varied_rows(6105, 24, 8, 30), sparse_coef(5, 2))),
    case("l1_wide_p64_f64",
         "p=64 with 6 nonzero coefficients: an 80-row batch, then 16 rows (fewer rows than coefficients); "
         "58 exact zeros." + decisive(LAMM_F64, "9.9e-14"),
         *F64, {**L1, "tol": 1e-5},
         stream(6106, [80, 16], sparse_coef(64, 6), noise=normal_noise(0.3))),
    case("l1_wide_p24_f32",
         "float32, p=24 with 5 nonzero coefficients, batches of 60, 12 and 1 rows. Float32 cannot resolve "
         "LAMM's majorization test for steps below ~1e-3, so tol 1e-3 stops the descent before that regime."
         + float32_note("2.7e-5", "0.07"),
         *F32, {**L1, "dtype": "float32", "tol": 1e-3},
         stream(6117, [60, 12, 1], sparse_coef(24, 5), noise=normal_noise(0.2))),
    case("l1_converging_f32",
         "float32, p=6, two batches; tol 2e-3 converges before float32 stops resolving the majorization "
         "test." + float32_note("2.7e-5", "0.07"),
         *F32, {**L1, "dtype": "float32", "tol": 2e-3},
         stream(6107, [60, 40], sparse_coef(6, 3))),
    case("l1_max_iter_f32",
         "float32, max_iter 4: both batches stop while the steps are still ~400x the threshold."
         + float32_note("3e-5", "0.014"),
         *F32, {**L1, "dtype": "float32", "max_iter": 4, "tol": 1e-6},
         stream(6119, [60, 40], sparse_coef(6, 3))),
    case("l1_weights_f64",
         "Weights on a 1/16 grid in [1/16, 2.5] with 25% exact zeros; the second batch unweighted."
         + decisive(LAMM_F64, "5.7e-14"),
         *F64, {**L1, "tol": 5e-5},
         stream(6109, [40, 30, 30], sparse_coef(6, 3),
                weights={"kind": "random", "low": 0.0625, "high": 2.5, "zero_fraction": 0.25,
                         "unweighted_batches": [1]})),
    case("l1_no_intercept_f64",
         "fit_intercept false: every coefficient is penalized." + decisive(LAMM_F64, "4.3e-14"),
         *F64, {**L1, "fit_intercept": False, "tol": 2e-6},
         stream(6110, [50, 40], sparse_coef(5, 2), intercept=0.0)),
    case("l1_single_rows_after_large_f64",
         "A 300-row batch, then four single-row batches." + decisive(LAMM_F64, "4.5e-13"),
         *F64, {**L1, "tol": 3e-6},
         stream(6111, [300, 1, 1, 1, 1], sparse_coef(4, 2))),
    case("l1_student_t_outliers_f64",
         "Student-t(1.5) noise and 8% gross outliers (+-30)." + decisive(LAMM_F64, "5.7e-14"),
         *F64, {**L1, "tol": 3e-5},
         stream(6112, [60, 50, 40], sparse_coef(6, 3), noise=student_noise(1.5, 0.4),
                outliers={"fraction": 0.08, "magnitude": 30.0})),
    case("l1_tau_small_f64",
         "tau 0.2 with noise 0.8: lambda (proportional to tau) is small and most rows are on the linear part "
         "of the loss." + decisive(LAMM_F64, "1.3e-13"),
         *F64, {**L1, "tau": 0.2, "tol": 2e-6},
         stream(6113, [60, 60], sparse_coef(5, 2), noise=normal_noise(0.8))),
    case("l1_tau_large_f64",
         "tau 200 with lambda_scale 0.01: a quadratic loss (a streaming lasso)." + decisive(LAMM_F64, "5.7e-14"),
         *F64, {**L1, "tau": 200.0, "lambda_scale": 0.01, "tol": 3e-6},
         stream(6114, [50, 40], sparse_coef(5, 2))),
    case("l1_bandwidth_narrow_f64",
         "bandwidth_scale 0.03 (h ~ 2e-3): the information matrix collects an almost discontinuous "
         "curvature." + decisive(LAMM_F64, "5.7e-14"),
         *F64, {**L1, "bandwidth_scale": 0.03, "tol": 1e-6},
         stream(6115, [50, 40, 30], sparse_coef(5, 3))),
]

