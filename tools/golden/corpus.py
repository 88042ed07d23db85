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

# Numeric per-state fields compared with the case tolerances (iteration counts are never compared).
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
        states.append(state_record(state, diagnostics))
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


def to_floats(array):
    """Nested lists of Python floats (float64 values of whatever dtype the array has)."""
    return np.asarray(array, dtype=np.float64).tolist()


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def tolerance_usage(expected, actual, rtol, atol):
    """Largest |actual − expected| / (atol + rtol·|expected|) over every compared number, and where.

    A value <= 1 is a pass under the allclose rule the replayers use. Integer counters and converged
    flags must match exactly (reported as usage inf otherwise).
    """
    worst = (0.0, "")

    def consider(name, e, a):
        nonlocal worst
        e, a = np.asarray(e, float), np.asarray(a, float)
        if e.shape != a.shape:
            worst = max(worst, (np.inf, f"{name}: shape {a.shape} != {e.shape}"))
            return
        if e.size == 0:
            return
        usage = np.abs(a - e) / (atol + rtol * np.abs(e))
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
