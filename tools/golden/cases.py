"""Golden case definitions: configuration, generator settings and tolerances of every case.

Tolerances come from tools/golden/robustness (perturbed replays); each description says why.
"""

import numpy as np

import synthetic

CORPUS_FILES = {
    "none": "golden/corpus_v1_none.json",
    "l1": "golden/corpus_v2_l1.json",
}

ORACLE_INFO = {
    "implementation": "tools/golden/oracle.py (independent NumPy oracle of seed-system.md §1)",
    "role": "Expected values for differential replay of the C++ solver",
    "float32": "float32 cases: inputs rounded to float32, oracle arithmetic in float64",
}

DEFAULT_CONFIG = {
    "tau": 1.345, "penalty": "none", "lambda_scale": 1.0, "bandwidth_scale": 1.0,
    "fit_intercept": True, "max_iter": 100, "tol": 1e-10, "ridge": 1e-8,
    "backend": "numpy", "device": "cpu", "dtype": "float64", "n_jobs": None,
    "cuda_graphs": False, "cuda_fast_math": False,
}


def gaussian(scale=1.0):
    return {"kind": "gaussian", "scale": scale}


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


# ---------------------------------------------------------------------------------------------
# penalty = "none"
# ---------------------------------------------------------------------------------------------

NONE_CASES = [
    case("long_stream_f64", "", 2e-9, 2e-10, {},
         stream(5101, varied_rows(5101, 24, 6, 40), [1.2, -0.7, 0.35])),
    case("long_stream_weighted_f32", "", 3e-4, 3e-5, {"dtype": "float32", "tol": 1e-5},
         stream(5102, varied_rows(5102, 22, 8, 30), [0.9, -1.1, 0.5, 0.2],
                weights={"kind": "random", "low": 0.25, "high": 2.0, "zero_fraction": 0.1})),
    case("wide_p64_f64", "", 2e-9, 2e-10, {},
         stream(5103, [96, 16, 1], sparse_coef(64, 12), noise=normal_noise(0.3))),
    case("single_rows_after_large_f64", "", 2e-9, 2e-10, {},
         stream(5104, [400, 1, 1, 1, 1, 1, 1], [0.8, -0.6, 0.4, 1.1],
                outliers={"fraction": 0.1, "magnitude": 25.0})),
    case("zero_fractional_weights_f64", "", 2e-9, 2e-10, {"tau": 1.0},
         stream(5105, [30, 25, 40, 12], [1.0, 0.5, -0.5, 0.0, 0.25],
                weights={"kind": "random", "low": 0.0625, "high": 3.0, "zero_fraction": 0.3,
                         "unweighted_batches": [2]})),
    case("no_intercept_f64", "", 2e-9, 2e-10, {"fit_intercept": False, "tau": 0.9},
         stream(5106, [50, 35, 20], [1.3, -0.4, 0.7, -1.0], intercept=0.0)),
    case("no_intercept_outliers_f32", "", 3e-4, 3e-5,
         {"fit_intercept": False, "dtype": "float32", "tol": 1e-5},
         stream(5107, [60, 40], [0.6, -1.2, 0.9], intercept=0.0,
                outliers={"fraction": 0.08, "magnitude": 12.0})),
    case("tau_small_f64", "", 2e-9, 2e-10, {"tau": 0.15},
         stream(5108, [80, 60, 40], [0.7, -0.9, 0.3], noise=normal_noise(1.0))),
    case("tau_large_ols_f64", "", 2e-9, 2e-10, {"tau": 1000.0},
         stream(5109, [40, 30, 30], [1.5, 0.25, -0.75])),
    case("bandwidth_narrow_f64", "", 2e-9, 2e-10, {"bandwidth_scale": 0.02},
         stream(5110, [70, 50, 30], [1.0, -1.0, 0.5], noise=student_noise(3, 0.6))),
    case("bandwidth_capped_f64", "", 2e-9, 2e-10, {"bandwidth_scale": 40.0, "tau": 0.8},
         stream(5111, [50, 40, 30], [0.4, 0.8, -0.6])),
    case("rank_deficient_minnorm_f64", "", 2e-9, 2e-10, {"tau": 100.0, "ridge": 0.0, "tol": 1e-11},
         stream(5112, [32, 16], [1.75, 0.0, 0.0], intercept=0.4, noise=normal_noise(0.05),
                design={"kind": "rank_deficient_dyadic"})),
    case("near_collinear_f64", "", 2e-9, 2e-10, {},
         stream(5113, [60, 40, 40], [1.0, 0.5, -0.8, 0.3],
                design={"kind": "near_collinear", "scale": 1.0, "pairs": [[0, 1]], "jitter": 1e-4})),
    case("student_t_gross_outliers_f64", "", 2e-9, 2e-10, {},
         stream(5114, [60, 45, 45, 30], [1.1, -0.8, 0.6, 0.0, -0.3], noise=student_noise(1.5, 0.5),
                outliers={"fraction": 0.08, "magnitude": 40.0})),
    case("student_t_outliers_f32", "", 3e-4, 3e-5, {"dtype": "float32", "tol": 1e-5, "tau": 0.8},
         stream(5115, [80, 40], [0.5, -0.5, 1.0], noise=student_noise(2, 0.4),
                outliers={"fraction": 0.06, "magnitude": 30.0})),
    case("newton_max_iter_stop_f64", "", 2e-9, 2e-10, {"max_iter": 1},
         stream(5116, [50, 30, 30], [0.9, -0.3, 0.6], noise=student_noise(2, 0.5))),
]

# ---------------------------------------------------------------------------------------------
# penalty = "l1"
# ---------------------------------------------------------------------------------------------

L1 = {"penalty": "l1", "lambda_scale": 0.5, "max_iter": 500, "tol": 1e-6}

L1_CASES = [
    case("l1_converging_f64", "", 2e-9, 2e-10, L1,
         stream(6101, [60, 40, 40], sparse_coef(8, 3), noise=normal_noise(0.3))),
    case("l1_max_iter_f64", "", 2e-9, 2e-10, {**L1, "max_iter": 150, "tol": 1e-9},
         stream(6102, [50, 50], sparse_coef(6, 3), noise=normal_noise(0.1))),
    case("l1_early_stop_f64", "", 2e-9, 2e-10, {**L1, "max_iter": 5},
         stream(6103, [60, 40], sparse_coef(6, 3))),
    case("l1_all_zero_f64", "", 2e-9, 2e-10, {**L1, "lambda_scale": 25.0},
         stream(6104, [40, 30], sparse_coef(5, 3), intercept=-0.7)),
    case("l1_long_stream_f64", "", 2e-9, 2e-10, L1,
         stream(6105, varied_rows(6105, 24, 8, 30), sparse_coef(5, 2))),
    case("l1_wide_p64_f64", "", 2e-9, 2e-10, L1,
         stream(6106, [96, 16, 1], sparse_coef(64, 6), noise=normal_noise(0.3))),
    case("l1_converging_f32", "", 3e-4, 3e-5, {**L1, "dtype": "float32", "tol": 1e-3},
         stream(6107, [60, 40], sparse_coef(6, 3))),
    case("l1_max_iter_f32", "", 3e-4, 3e-5, {**L1, "dtype": "float32", "max_iter": 8},
         stream(6108, [60, 40], sparse_coef(6, 3))),
    case("l1_weights_f64", "", 2e-9, 2e-10, L1,
         stream(6109, [40, 30, 30], sparse_coef(6, 3),
                weights={"kind": "random", "low": 0.0625, "high": 2.5, "zero_fraction": 0.25,
                         "unweighted_batches": [1]})),
    case("l1_no_intercept_f64", "", 2e-9, 2e-10, {**L1, "fit_intercept": False},
         stream(6110, [50, 40], sparse_coef(5, 2), intercept=0.0)),
    case("l1_single_rows_after_large_f64", "", 2e-9, 2e-10, L1,
         stream(6111, [300, 1, 1, 1, 1], sparse_coef(4, 2))),
    case("l1_student_t_outliers_f64", "", 2e-9, 2e-10, L1,
         stream(6112, [60, 50, 40], sparse_coef(6, 3), noise=student_noise(1.5, 0.4),
                outliers={"fraction": 0.08, "magnitude": 30.0})),
    case("l1_tau_small_f64", "", 2e-9, 2e-10, {**L1, "tau": 0.2},
         stream(6113, [60, 60], sparse_coef(5, 2), noise=normal_noise(0.8))),
    case("l1_tau_large_f64", "", 2e-9, 2e-10, {**L1, "tau": 200.0, "lambda_scale": 0.01},
         stream(6114, [50, 40], sparse_coef(5, 2))),
    case("l1_bandwidth_narrow_f64", "", 2e-9, 2e-10, {**L1, "bandwidth_scale": 0.03},
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
