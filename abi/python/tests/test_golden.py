"""Every golden corpus (golden/*.json, golden/reference/*.json) replayed through the Python API on every space under
test, with the comparison of tools/golden_replay.cpp: each value within atol + rtol·|want| of the case (and, for
CUDA float64, the floors of tools/golden_floors.h), counters exactly, K and the covariance where the case has them."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import renewable_huber_kokkos as rk
from conftest import GOLDEN_WORST, REPO

CORPORA = sorted(REPO.glob("golden/*.json")) + sorted(REPO.glob("golden/reference/*.json"))


def _floors() -> tuple[float, float]:
    text = (REPO / "tools" / "golden_floors.h").read_text()
    rtol = float(re.search(r"RH_GOLDEN_CUDA_F64_FLOOR_RTOL (\S+)", text).group(1))
    atol = float(re.search(r"RH_GOLDEN_CUDA_F64_FLOOR_ATOL (\S+)", text).group(1))
    return rtol, atol


def _cases():
    for path in CORPORA:
        doc = json.loads(path.read_text())
        assert doc["schema"] == "renewable-huber-native-golden" and doc["schema_version"] in (1, 2), path
        for case in doc["cases"]:
            yield pytest.param(path.stem, case, id=f"{path.stem}:{case['id']}")


def test_corpora_are_found():
    assert len(CORPORA) == 5, CORPORA  # two of ours, two of the reference project's, one of its NumPy engine


class Comparer:
    def __init__(self, rtol: float, atol: float) -> None:
        self.rtol, self.atol = rtol, atol
        self.worst, self.where, self.failures = 0.0, "", []

    def values(self, got, want, field: str, atol: float | None = None) -> None:
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        assert got.shape == want.shape, f"{field}: shape {got.shape}, want {want.shape}"
        budget = (self.atol if atol is None else atol) + self.rtol * np.abs(want)
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = np.where(got == want, 0.0, np.abs(got - want) / budget)
        scaled = np.where(np.isfinite(got), scaled, np.inf)
        if scaled.size and scaled.max() > self.worst:
            self.worst, self.where = float(scaled.max()), f"{field}{list(np.unravel_index(scaled.argmax(), scaled.shape))}"
        if scaled.size and not scaled.max() <= 1.0:
            self.failures.append(f"{field}: worst {scaled.max():.3g} of the tolerance")

    def exact(self, got, want, field: str) -> None:
        if got != want:
            self.failures.append(f"{field}: got {got}, want {want}")


@pytest.mark.parametrize("corpus,case", list(_cases()))
def test_golden_case(space, corpus, case):
    config, expected = case["config"], case["expected"]
    states = expected["states"]
    inference = bool(states) and "score_variance" in states[0]
    rtol, atol = case["rtol"], case["atol"]
    if space == "cuda" and config["dtype"] == "float64":
        floor_rtol, floor_atol = _floors()
        rtol, atol = max(rtol, floor_rtol), max(atol, floor_atol)
    model = rk.RenewableHuberRegressor(
        tau=config["tau"], penalty=config["penalty"], lambda_scale=config["lambda_scale"],
        bandwidth_scale=config["bandwidth_scale"], fit_intercept=config["fit_intercept"],
        max_iter=config["max_iter"], tol=config["tol"], ridge=config["ridge"], dtype=config["dtype"], space=space,
        inference=inference)
    dtype = np.dtype(config["dtype"])
    cmp = Comparer(rtol, atol)
    assert len(case["batches"]) == len(states)
    for b, (batch, want) in enumerate(zip(case["batches"], states), start=1):
        weights = batch["sample_weight"]
        model.partial_fit(np.asarray(batch["X"], dtype=np.float64).astype(dtype),
                          np.asarray(batch["y"], dtype=np.float64).astype(dtype),
                          None if weights is None else np.asarray(weights, dtype=np.float64).astype(dtype))
        st = model.state_
        at = f"batch {b} "
        cmp.exact(len(st.coefficients), len(want["coefficients"]), at + "q")
        cmp.values(st.coefficients, want["coefficients"], at + "coef")
        cmp.values(st.information, want["information"], at + "information")
        if inference:
            cmp.values(st.score_variance, want["score_variance"], at + "score_variance",
                       atol=max(atol, want["score_variance_atol"]))
            cmp.exact(st.score_variance_batches, st.batch_count, at + "score_variance_batches")
            if want["covariance"] is None:
                with pytest.raises(rk.NumericalError):
                    model.covariance_
            elif want["covariance_atol"] is not None:
                within = Comparer(0.0, want["covariance_atol"])
                within.values(model.covariance_, want["covariance"], at + "covariance")
                cmp.failures += within.failures
        cmp.exact(st.n_samples_seen, want["n_samples_seen"], at + "n_samples_seen")
        cmp.exact(st.batch_count, want["batch_count"], at + "batch_count")
        cmp.values(st.previous_lambda, want["previous_lambda"], at + "previous_lambda")
        cmp.values(st.weight_sum, want["weight_sum"], at + "weight_sum")
        d = model.diagnostics_
        cmp.exact(d.converged, want["diagnostics"]["converged"], at + "converged")
        cmp.values(d.objective, want["diagnostics"]["objective"], at + "objective")
        cmp.values(d.lambda_value, want["diagnostics"]["lambda_value"], at + "lambda_value")
        cmp.values(d.bandwidth, want["diagnostics"]["bandwidth"], at + "bandwidth")
    predictions = model.predict(np.asarray(case["probe_X"], dtype=np.float64).astype(dtype))
    assert predictions.dtype == dtype
    cmp.values(predictions, expected["predictions"], "predictions")
    key = (space, corpus)
    if cmp.worst >= GOLDEN_WORST.get(key, (-1.0, ""))[0]:
        GOLDEN_WORST[key] = (cmp.worst, f"{case['id']}: {cmp.where}")
    assert not cmp.failures, cmp.failures
