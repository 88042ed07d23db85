"""What every golden case is built from: the default configuration, the generator settings, the tolerance floors and
notes. The cases themselves are each penalty's (CASES of tools/golden/penalties/<name>.py).

Each tolerance comes from the robustness study (robustness.py: row-shuffled and blurred-decision
replays, float32 arithmetic for float32 cases), and each description states the measured spread.
The solver settings (tol, ridge, max_iter) are chosen so that no converged flag hinges on rounding.
"""

import numpy as np

import synthetic

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




def corpus_case(definition):
    """The case as stored: reference schema keys plus the extra "generator" key."""
    dtype = np.float32 if definition["config"]["dtype"] == "float32" else np.float64
    batches, probe = synthetic.make_stream(definition["generator"], dtype)
    return {"id": definition["id"], "description": definition["description"],
            "rtol": definition["rtol"], "atol": definition["atol"],
            "config": dict(definition["config"]), "generator": definition["generator"],
            "batches": batches, "probe_X": probe}
