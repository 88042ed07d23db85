"""Seeded synthetic data streams for the golden cases.

A case's data is fully determined by its generator settings (recorded in the corpus as the case's
"generator" object) and NumPy's PCG64 `default_rng(seed)`. All draws come from that one generator in
a fixed order: per batch X, noise, outlier flags and signs, weights; then the probe rows.
The corpus stores the data itself as well, so replayers never need this module.
"""

import numpy as np


def make_stream(settings, dtype):
    """Returns (batches, probe_X) in corpus form; float32 cases get float32-rounded values."""
    rng = np.random.default_rng(settings["seed"])
    p = settings["n_features"]
    coef = np.asarray(settings["coef"], float)
    assert coef.shape == (p,)
    batches = []
    for index, n in enumerate(settings["batch_rows"]):
        X = draw_design(rng, settings["design"], n, p)
        y = X @ coef + settings["intercept"] + draw_noise(rng, settings["noise"], n)
        y += draw_outliers(rng, settings.get("outliers"), n)
        w = draw_weights(rng, settings.get("weights"), n, index)
        batches.append({"X": rounded(X, dtype), "y": rounded(y, dtype),
                        "sample_weight": None if w is None else rounded(w, dtype)})
    probe = draw_design(rng, settings["design"], settings["probe_rows"], p)
    return batches, rounded(probe, dtype)


def rounded(array, dtype):
    """Nested lists of Python floats holding values exactly representable in `dtype`."""
    return np.asarray(array, dtype=dtype).astype(np.float64).tolist()


def draw_design(rng, design, n, p):
    kind = design["kind"]
    if kind == "gaussian":
        # A nonzero mean makes every Gram entry large, so no information entry sits near zero
        # (float32 cases: their absolute rounding error scales with the largest entry).
        return design["mean"] + design["scale"] * rng.standard_normal((n, p))
    if kind == "near_collinear":
        # Column b of each pair is column a plus a tiny independent jitter.
        X = design["scale"] * rng.standard_normal((n, p))
        for a, b in design["pairs"]:
            X[:, b] = X[:, a] + design["jitter"] * rng.standard_normal(n)
        return X
    if kind == "rank_deficient_dyadic":
        # Columns [t, 2t, 1]: t on a 1/8 grid in ± pairs (batches have an even row count), so Σt = 0
        # and every Gram entry is exact in any summation order. With the intercept the Hessian is
        # exactly [[a,2a],[2a,4a]] ⊕ [[1,1],[1,1]]: LU multipliers are 0, 1/2, 1 or 2 (exact), so any
        # LU variant meets an exactly zero pivot and takes the minimum-norm fallback (§8).
        assert p == 3
        half = rng.integers(1, 17, (n + 1) // 2) / 8.0
        t = rng.permutation(np.concatenate([half, -half]))[:n]
        return np.column_stack([t, 2.0 * t, np.ones(n)])
    raise ValueError(f"unknown design kind {kind!r}")


def draw_noise(rng, noise, n):
    kind = noise["kind"]
    if kind == "normal":
        return noise["scale"] * rng.standard_normal(n)
    if kind == "student_t":
        return noise["scale"] * rng.standard_t(noise["df"], n)
    raise ValueError(f"unknown noise kind {kind!r}")


def draw_outliers(rng, outliers, n):
    """Gross response outliers: each row independently with probability `fraction`, ± `magnitude`."""
    if outliers is None:
        return np.zeros(n)
    hit = rng.random(n) < outliers["fraction"]
    sign = rng.choice([-1.0, 1.0], n)
    return np.where(hit, sign * outliers["magnitude"], 0.0)


def draw_weights(rng, weights, n, batch_index):
    """None (unit weights, W_b = n_b) or a vector; every weighted batch has a positive total."""
    if weights is None or batch_index in weights.get("unweighted_batches", []):
        return None
    if weights["kind"] != "random":
        raise ValueError(f"unknown weights kind {weights['kind']!r}")
    # Fractional weights on a 1/16 grid in [low, high], with a share of exact zeros.
    steps = rng.integers(round(16 * weights["low"]), round(16 * weights["high"]) + 1, n)
    w = np.where(rng.random(n) < weights["zero_fraction"], 0.0, steps / 16.0)
    if not np.any(w > 0):
        w[0] = 1.0
    return w
