"""Golden case definitions: configuration, generator settings and tolerances of every case.

Each tolerance comes from the robustness study (robustness.py: row-shuffled and blurred-decision
replays, float32 arithmetic for float32 cases), and each description states the measured spread.
The solver settings (tol, ridge, max_iter) are chosen so that no converged flag hinges on rounding.
"""

import numpy as np

import synthetic

CORPUS_FILES = {
    "none": "golden/corpus_v1_none.json",
    "l1": "golden/corpus_v2_l1.json",
}

ORACLE_INFO = {
    "implementation": "tools/golden/oracle.py (independent NumPy oracle of docs/method.md)",
    "arithmetic": "OpenBLAS kernels pinned to core Prescott, 1 thread (tools/golden/reproducible.py)",
    "role": "Expected values for differential replay of the C++ solver",
    "float32": "float32 cases: inputs rounded to float32, oracle arithmetic in float64",
}

DEFAULT_CONFIG = {
    "tau": 1.345, "penalty": "none", "lambda_scale": 1.0, "bandwidth_scale": 1.0,
    "fit_intercept": True, "max_iter": 100, "tol": 1e-10, "ridge": 1e-8,
    "backend": "numpy", "device": "cpu", "dtype": "float64", "n_jobs": None,
    "cuda_graphs": False, "cuda_fast_math": False,
}


def gaussian(scale=1.0, mean=0.0):
    return {"kind": "gaussian", "scale": scale, "mean": mean}


def normal_noise(scale):
    return {"kind": "normal", "scale": scale}


def student_noise(df, scale):
    return {"kind": "student_t", "df": df, "scale": scale}


def sparse_coef(p, nonzero):
    """Alternating-sign coefficients of decreasing size on the first `nonzero` features, zeros after."""
    return [round((-1) ** j * 1.5 / (1 + 0.5 * j), 6) if j < nonzero else 0.0 for j in range(p)]


def case(case_id, description, rtol, atol, config, generator):
    return {"id": case_id, "description": description, "rtol": rtol, "atol": atol,
            "config": {**DEFAULT_CONFIG, **config}, "generator": generator}


def stream(seed, batch_rows, coef, intercept=0.3, noise=None, design=None, outliers=None,
           weights=None, probe_rows=3):
    settings = {"seed": seed, "n_features": len(coef), "batch_rows": list(batch_rows),
                "coef": list(coef), "intercept": intercept,
                "design": design or gaussian(), "noise": noise or normal_noise(0.5),
                "probe_rows": probe_rows}
    if outliers is not None:
        settings["outliers"] = outliers
    if weights is not None:
        settings["weights"] = weights
    return settings


def varied_rows(seed, count, low, high):
    return np.random.default_rng(seed).integers(low, high + 1, count).tolist()


# Tolerance floors: float64 cases use the reference corpus's tightest pair, float32 cases its float32 pair.
F64 = (2e-9, 2e-10)
F32 = (3e-4, 3e-5)
REPLAYS = "64 row-shuffled + 64 blurred-decision replays"


def decisive(settings, maxdev):
    """Tolerance note of a float64 case in which no solver decision sits at its rounding edge."""
    return (f" Tolerance: float64 floor 2e-9/2e-10; with {settings} no line-search, majorization or stopping "
            f"decision sits at its rounding edge: {REPLAYS} differ by <= {maxdev}.")


def float32_note(maxdev, usage):
    return (f" Tolerance: float32 floor 3e-4/3e-5. Inputs are float32 and the expected values float64 "
            f"arithmetic on them; {REPLAYS} in float32 arithmetic differ by <= {maxdev}, {usage} of the "
            f"tolerance.")


# ---------------------------------------------------------------------------------------------
# penalty = "none"
# ---------------------------------------------------------------------------------------------

NONE_CASES = [
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

# ---------------------------------------------------------------------------------------------
# penalty = "l1"
# ---------------------------------------------------------------------------------------------

L1 = {"penalty": "l1", "lambda_scale": 0.5, "max_iter": 500}
LAMM_F64 = "LAMM's 1e-12 majorization slack (far above float64 rounding)"

L1_CASES = [
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

CASES = {"none": NONE_CASES, "l1": L1_CASES}


def corpus_case(definition):
    """The case as stored: reference schema keys plus the extra "generator" key."""
    dtype = np.float32 if definition["config"]["dtype"] == "float32" else np.float64
    batches, probe = synthetic.make_stream(definition["generator"], dtype)
    return {"id": definition["id"], "description": definition["description"],
            "rtol": definition["rtol"], "atol": definition["atol"],
            "config": dict(definition["config"]), "generator": definition["generator"],
            "batches": batches, "probe_X": probe}
