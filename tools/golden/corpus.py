"""Golden corpus schema helpers: replay a case through the oracle, compare, serialize.

The schema is the reference project's "renewable-huber-native-golden" v1 (golden/README.md): a case holds
`config`, `batches[] = {X, y, sample_weight|null}`, `probe_X`, and
`expected = {states[], predictions}`; golden/README.md documents every field.
"""

import json

import numpy as np

import oracle

SCHEMA = "renewable-huber-native-golden"
SCHEMA_VERSION = 1

# Numeric per-state fields compared with the case tolerances (iteration counts are never compared). Penalty none
# cases also hold score_variance (compared the same way) and covariance (within each state's covariance_atol).
STATE_ARRAYS = ("coefficients", "information")
STATE_SCALARS = ("previous_lambda", "weight_sum")
STATE_INTEGERS = ("n_samples_seen", "batch_count")
DIAGNOSTIC_SCALARS = ("objective", "lambda_value", "bandwidth")


def arithmetic_dtype(case):
    return np.float32 if case["config"]["dtype"] == "float32" else np.float64


def replay(case, dtype=np.float64, row_orders=None, traces=None, perturbation=None):
    """Runs the oracle over a case's batches and returns its `expected` object.

    row_orders: optional per-batch permutations of the rows (mathematically neutral, used to perturb
    summation order). traces: optional list that receives one oracle.Trace per batch.
    perturbation: optional oracle.Perturbation (robustness study).
    """
    config = oracle.Config.from_params(case["config"])
    inference = config.penalty == "none"     # §12: inference exists for penalty none only
    state, states = None, []
    for index, batch in enumerate(case["batches"]):
        X, y = np.asarray(batch["X"], float), np.asarray(batch["y"], float)
        w = None if batch["sample_weight"] is None else np.asarray(batch["sample_weight"], float)
        if row_orders is not None:
            order = row_orders[index]
            X, y, w = X[order], y[order], None if w is None else w[order]
        trace = oracle.Trace() if traces is not None else None
        state, diagnostics = oracle.update(state, config, X, y, w, dtype, trace, perturbation)
        if traces is not None:
            traces.append(trace)
        record = state_record(state, diagnostics)
        if inference:
            record.update(inference_record(state, case["rtol"], case["atol"], case["config"]["dtype"] == "float32"))
        states.append(record)
    predictions = oracle.predict(state, np.asarray(case["probe_X"], float), config.fit_intercept, dtype)
    return {"states": states, "predictions": to_floats(predictions)}


def state_record(state, diagnostics):
    return {
        "coefficients": to_floats(state.coefficients),
        "information": to_floats(state.information),
        "n_samples_seen": int(state.n_samples_seen),
        "batch_count": int(state.batch_count),
        "previous_lambda": float(state.previous_lambda),
        "weight_sum": float(state.weight_sum),
        "diagnostics": {
            "iterations": int(diagnostics.iterations),
            "converged": bool(diagnostics.converged),
            "objective": float(diagnostics.objective),
            "lambda_value": float(diagnostics.lambda_value),
            "bandwidth": float(diagnostics.bandwidth),
        },
    }


def inference_record(state, rtol, atol, float32):
    """§12 expected values: K with its absolute tolerance, the covariance J⁻¹ K J⁻¹ (null when J is singular) and
    the absolute bound within which a replay's covariance must agree (null when the tolerances do not determine it).

    K is compared with the case's rtol and `score_variance_atol`: the case's atol in float64; in float32
    max(atol, rtol·max|K|), because K, unlike J, moves smoothly with β (dK = Σ 2wψ x xᵀ (xᵀdβ)), and float32's
    rounding of β moves its entries near zero by about rtol·max|K| (measured: 0.34 of atol 3e-5 in wide_p24_f32).
    The covariance bound follows from the tolerances J and K must meet element by element: an elementwise error
    atol + rtol·|x| is at most ε = √q·rtol + q·atol/‖x‖₂ relative in the 2-norm; with t = κ(J)·ε_J < 1/2 and
    u = t/(1 − t), ‖δJ⁻¹‖ ≤ ‖J⁻¹‖·u, so ‖δ(J⁻¹KJ⁻¹)‖₂ ≤ ‖J⁻¹‖²‖K‖·[u(1 + ε_K)(1 + u) + ε_K(1 + u) + u], which bounds
    every element. golden/README.md ("Inference") explains it."""
    J = np.asarray(state.information, np.float64)
    K = np.asarray(state.score_variance, np.float64)
    atol_K = max(atol, rtol * float(np.max(np.abs(K)))) if float32 else atol
    cov = oracle.sandwich_covariance(J, K)
    record = {"score_variance": to_floats(K), "score_variance_atol": atol_K, "covariance": None,
              "covariance_atol": None}
    if cov is None:
        return record
    record["covariance"] = to_floats(cov)
    q = J.shape[0]
    eigenvalues = np.linalg.eigvalsh(J)
    norm_J, inverse_norm = float(eigenvalues[-1]), 1.0 / float(eigenvalues[0])
    norm_K = float(np.linalg.norm(K, 2))
    if norm_K == 0.0:                          # every residual 0: Ĉov = 0, and so is any replay's K
        record["covariance_atol"] = 0.0
        return record
    eps_J = np.sqrt(q) * rtol + q * atol / norm_J
    eps_K = np.sqrt(q) * rtol + q * atol_K / norm_K
    t = norm_J * inverse_norm * eps_J
    if t < 0.5:
        u = t / (1 - t)
        record["covariance_atol"] = float(inverse_norm ** 2 * norm_K
                                          * (u * (1 + eps_K) * (1 + u) + eps_K * (1 + u) + u))
    return record


def to_floats(array):
    """Nested lists of Python floats (float64 values of whatever dtype the array has)."""
    return np.asarray(array, dtype=np.float64).tolist()


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def tolerance_usage(expected, actual, rtol, atol):
    """Largest |actual − expected| / (atol + rtol·|expected|) over every compared number, and where.

    A value <= 1 is a pass under the allclose rule the replayers use (K with its own score_variance_atol).
    Integer counters and converged flags must match exactly (reported as usage inf otherwise).
    """
    worst = (0.0, "")

    def consider(name, e, a, atol_of_key=None):
        nonlocal worst
        key_atol = atol if atol_of_key is None else atol_of_key
        e, a = np.asarray(e, float), np.asarray(a, float)
        if e.shape != a.shape:
            worst = max(worst, (np.inf, f"{name}: shape {a.shape} != {e.shape}"))
            return
        if e.size == 0:
            return
        usage = np.abs(a - e) / (key_atol + rtol * np.abs(e))
        i = int(np.argmax(usage))
        worst = max(worst, (float(usage.flat[i]), f"{name}[{i}]: {a.flat[i]!r} vs {e.flat[i]!r}"))

    if len(expected["states"]) != len(actual["states"]):
        return np.inf, "number of states differs"
    for b, (es, as_) in enumerate(zip(expected["states"], actual["states"])):
        for key in STATE_INTEGERS:
            if es[key] != as_[key]:
                worst = max(worst, (np.inf, f"batch {b} {key}: {as_[key]} vs {es[key]}"))
        if es["diagnostics"]["converged"] != as_["diagnostics"]["converged"]:
            worst = max(worst, (np.inf, f"batch {b} converged: {as_['diagnostics']['converged']}"))
        for key in STATE_ARRAYS + STATE_SCALARS:
            consider(f"batch {b} {key}", es[key], as_[key])
        if "score_variance" in es:   # with its own atol (inference_record)
            consider(f"batch {b} score_variance", es["score_variance"], as_["score_variance"],
                     es["score_variance_atol"])
        for key in DIAGNOSTIC_SCALARS:
            consider(f"batch {b} {key}", es["diagnostics"][key], as_["diagnostics"][key])
    consider("predictions", expected["predictions"], actual["predictions"])
    return worst


# ---------------------------------------------------------------------------------------------
# Serialization
# ---------------------------------------------------------------------------------------------

def dumps(document):
    """Deterministic text: indent 2, sorted keys, shortest round-trip floats, no NaN, final newline."""
    return json.dumps(document, indent=2, sort_keys=True, allow_nan=False) + "\n"


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


# A regenerated number may differ from the committed one by this much (the generators' --check).
DRIFT_RTOL, DRIFT_ATOL = 5e-12, 5e-13


def differences(expected, actual, path="$"):
    """Structural differences and numeric drift (beyond DRIFT_RTOL / DRIFT_ATOL) between a committed JSON value and
    a regenerated one, as readable strings: what `--check` of every corpus generator reports."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return [f"{path}: keys {sorted(actual)} != {sorted(expected)}"]
        return [d for key in expected for d in differences(expected[key], actual[key], f"{path}.{key}")]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: length {len(actual)} != {len(expected)}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in differences(e, a, f"{path}[{i}]")]
    numeric = (int, float)
    if (isinstance(expected, numeric) and isinstance(actual, numeric)
            and not isinstance(expected, bool) and not isinstance(actual, bool)
            and type(expected) is type(actual)):
        if abs(actual - expected) > DRIFT_ATOL + DRIFT_RTOL * abs(expected):
            return [mismatch(path, expected, actual)]
        return []
    if type(expected) is not type(actual) or expected != actual:
        return [mismatch(path, expected, actual)]
    return []


def mismatch(path, committed, regenerated):
    return f"{path}: regenerated {clipped(regenerated)}, committed {clipped(committed)}"


def clipped(value, width=120):
    text = repr(value)
    return text if len(text) <= width else text[:width] + "..."
