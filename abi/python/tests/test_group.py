"""RegressorGroup (rh_group_*): each model equals a single-model RenewableHuberRegressor fit of the same rows on the
same space, over ragged batches with models left out; one model's bad rows mark only it; a bad batch as a whole
changes nothing; device arrays are refused by host spaces and, on the CUDA space with CuPy or PyTorch and a GPU,
give the bits of the same batch from host arrays (RH_PY_REQUIRE_DEVICE=1 makes a missing GPU a failure)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import renewable_huber_kokkos as rk
from renewable_huber_kokkos import RegressorGroup

# The floors tests/unit/test_group.cpp compares a group with single models by (docs/support-matrix.md, "Golden replay
# per space"; tools/golden_floors.h): a group's Newton line search evaluates each step directly where the single
# model prices them from one pass, so float64 takes the floor of a space that sums in another order, float32 the
# float32 cases' tolerance.
TOLERANCE = {"float64": (1e-8, 2e-9), "float32": (3e-4, 3e-5)}  # rtol, atol
MODELS, P = 5, 3

pytestmark = pytest.mark.skipif(not rk.load_library().has_groups, reason="the library has no rh_group_* (ABI < 1.4)")


def model_data(rng, rows: int = 300):
    """Per model its own coefficients, and a gross outlier every 7th row (the Huber loss matters)."""
    out = []
    for m in range(MODELS):
        X = rng.standard_normal((rows, P))
        y = X @ rng.standard_normal(P) + 0.5 + rng.normal(0, 0.3, rows)
        y[::7] += np.where(np.arange(0, rows, 7) % 2, 25.0, -25.0)
        out.append((X, y))
    return out


def ragged(batch: int) -> list[int]:
    """Rows of each model in group batch `batch`: 0 for some models (left out), 20 to 98 for the others."""
    return [0 if (m + batch) % 4 == 3 else 20 + 13 * ((5 * m + 3 * batch) % 7) for m in range(MODELS)]


def stacked(data, start, counts, dtype):
    X = np.concatenate([data[m][0][start[m]:start[m] + c] for m, c in enumerate(counts)]).astype(dtype)
    y = np.concatenate([data[m][1][start[m]:start[m] + c] for m, c in enumerate(counts)]).astype(dtype)
    return X, y, np.concatenate([[0], np.cumsum(counts)])


def make_group(space, dtype, penalty="none"):
    try:
        return RegressorGroup(MODELS, P, space=space, dtype=dtype, penalty=penalty, tau=1.0)
    except rk.UnavailableError as e:  # what groups cannot do yet (docs/api.md, "Model groups"), said by the library
        pytest.skip(f"{dtype} {penalty}: {e}")


def close(a, b, dtype) -> bool:
    rtol, atol = TOLERANCE[dtype]
    return np.allclose(a, b, rtol=rtol, atol=atol)


def float32_close(g, e, w) -> tuple[bool, bool]:
    """A float32 group model g against its float32 single-model fit e and the float64 fit w of the same rows: (close,
    same path). Within the float32 floors of e, or (a space where the group sums in another order than the single
    model: a device) no further from w than the larger of twice e's distance and the floors (docs/api.md, "Model
    groups", float32)."""
    rtol, atol = TOLERANCE["float32"]
    same = bool(np.allclose(g, e, rtol=rtol, atol=atol))
    to_w, e_to_w = np.abs(g - w).max(), np.abs(e - w).max()
    return same or to_w <= max(2 * e_to_w, atol + rtol * np.abs(w).max()), same


def same_state(a: rk.State, b: rk.State) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("coefficients", "information")) and \
        (a.n_samples_seen, a.batch_count, a.weight_sum) == (b.n_samples_seen, b.batch_count, b.weight_sum)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("weighted", [False, True])
def test_models_equal_single_fits_over_ragged_batches(space, penalty, dtype, weighted, rng):
    data = model_data(rng)
    group = make_group(space, dtype, penalty)
    single = [rk.RenewableHuberRegressor(space=space, dtype=dtype, penalty=penalty, tau=1.0) for _ in range(MODELS)]
    wide = [rk.RenewableHuberRegressor(space=space, dtype="float64", penalty=penalty, tau=1.0) for _ in range(MODELS)]
    start = [0] * MODELS
    for b in range(3):
        counts = ragged(b)
        X, y, offsets = stacked(data, start, counts, dtype)
        w = (1 + np.arange(len(y)) % 3).astype(dtype) if weighted else None
        before = [group.state(m) for m in range(MODELS)]
        assert group.partial_fit(X, y, offsets, sample_weight=w) == sum(c > 0 for c in counts)
        for m in range(MODELS):
            assert group.error(m) is None
            if counts[m] == 0:  # no rows: untouched, to the bit
                assert same_state(group.state(m), before[m])
                continue
            r0, r1 = offsets[m], offsets[m + 1]
            single[m].partial_fit(X[r0:r1], y[r0:r1], sample_weight=None if w is None else w[r0:r1])
            a, e = group.state(m), single[m].state_
            assert (a.n_samples_seen, a.batch_count) == (e.n_samples_seen, e.batch_count)
            scale = np.abs(e.information).max()  # J relative to its scale: entries near 0 sum to rounding
            same_path = True
            if dtype == "float64":
                assert close(a.coefficients, e.coefficients, dtype), (b, m, a.coefficients - e.coefficients)
                assert close(a.information / scale, e.information / scale, dtype), (b, m)
            else:  # the float64 fit of the same float32 values
                wide[m].partial_fit(X[r0:r1].astype(np.float64), y[r0:r1].astype(np.float64),
                                    sample_weight=None if w is None else w[r0:r1].astype(np.float64))
                ww = wide[m].state_
                ok, same_path = float32_close(a.coefficients, e.coefficients, ww.coefficients)
                assert ok, (b, m, a.coefficients - e.coefficients, a.coefficients - ww.coefficients)
                ok, _ = float32_close(a.information / scale, e.information / scale, ww.information / scale)
                assert ok, (b, m)
            d, s = group.diagnostics(m), single[m].diagnostics_
            if same_path:  # else the last step's acceptance was rounding's choice, and so may be its convergence
                assert d.converged == s.converged
            if dtype == "float64":
                assert d.iterations == s.iterations
            assert np.array_equal(group.coef(m), a.coefficients[:P]) and group.intercept(m) == a.coefficients[-1]
        start = [s + c for s, c in zip(start, counts)]
    # predict: each row by its own model, as that model's single fit predicts it; an empty batch changes nothing.
    X, _, offsets = stacked(data, [0] * MODELS, [5] * MODELS, dtype)
    out = group.predict(X, offsets)
    assert out.dtype == np.dtype(dtype)
    for m in range(MODELS):
        rows = X[5 * m:5 * m + 5]
        # float32: by the model's own coefficients (the single model may have taken other rounding steps)
        want = single[m].predict(rows) if dtype == "float64" else \
            rows.astype(np.float64) @ group.coef(m).astype(np.float64) + float(group.intercept(m))
        assert close(out[5 * m:5 * m + 5], want, dtype)
    before = [group.state(m) for m in range(MODELS)]
    assert group.partial_fit(np.empty((0, P), dtype=dtype), np.empty(0, dtype=dtype), [0] * (MODELS + 1)) == 0
    assert all(same_state(group.state(m), before[m]) for m in range(MODELS))


def test_a_model_never_given_rows_stays_empty(space):
    group = make_group(space, "float64")
    X = np.ones((4, P)) + np.arange(12).reshape(4, P)
    assert group.partial_fit(X, np.arange(4.0), [0, 0, 4, 4, 4, 4]) == 1
    assert group.fitted(1) and not group.fitted(0)
    assert group.state(0).coefficients.size == 0
    with pytest.raises(rk.InvalidStateError):
        group.diagnostics(0)
    with pytest.raises(rk.InvalidStateError):  # predicting rows of a model never fitted
        group.predict(X[:1], [0, 1, 1, 1, 1, 1])


def fitted_group(space, rng, rows: int = 40):
    """A float64 group after one batch of `rows` rows per model: (data, group, X, y, offsets, states)."""
    data = model_data(rng)
    group = make_group(space, "float64")
    X, y, offsets = stacked(data, [0] * MODELS, [rows] * MODELS, "float64")
    group.partial_fit(X, y, offsets)
    return data, group, X, y, offsets, [group.state(m) for m in range(MODELS)]


def test_one_models_bad_rows_mark_only_it(space, rng):
    data, group, _, _, offsets, before = fitted_group(space, rng)
    X2, y2, _ = stacked(data, [40] * MODELS, [40] * MODELS, "float64")
    X2[offsets[2] + 7, 1] = np.nan
    assert group.partial_fit(X2, y2, offsets) == MODELS - 1
    error = group.error(2)
    assert isinstance(error, rk.InvalidArgumentError) and "model 2" in str(error) and "NaN" in str(error)
    assert same_state(group.state(2), before[2])
    for m in (0, 1, 3, 4):
        assert group.error(m) is None and group.state(m).batch_count == 2
    X2[offsets[2] + 7, 1] = 0.5  # the next batch with rows for model 2 clears its error
    assert group.partial_fit(X2, y2, offsets) == MODELS and group.error(2) is None


def test_a_bad_batch_as_a_whole_changes_nothing(space, rng):
    _, group, X, y, offsets, before = fitted_group(space, rng, rows=30)
    bad = offsets.copy()
    bad[2], bad[3] = bad[3], bad[2]  # decreasing
    for call, error in ((lambda: group.partial_fit(X, y, bad), rk.InvalidArgumentError),
                        (lambda: group.partial_fit(X, y, offsets[:-1]), rk.InvalidArgumentError),
                        (lambda: group.partial_fit(X[:, :2], y, offsets), rk.InvalidArgumentError),
                        (lambda: group.partial_fit(X, y[:-1], offsets), ValueError),
                        (lambda: group.partial_fit(X, y, offsets.astype(float)), rk.InvalidArgumentError)):
        with pytest.raises(error):
            call()
    assert all(same_state(group.state(m), before[m]) for m in range(MODELS))
    with pytest.raises(rk.InvalidArgumentError):
        group.state(MODELS)


class _FakeDeviceArray:
    """Publishes a NumPy array's memory as if it were CUDA memory (as CuPy and PyTorch do): for the refusals."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str, "strides": None,
                                         "data": (a.ctypes.data, False), "version": 3, "stream": None}


def test_host_spaces_refuse_device_arrays(space, rng):
    if space == "cuda":
        pytest.skip("the CUDA space reads device memory (test_group_device_arrays_on_cuda)")
    data = model_data(rng)
    group = make_group(space, "float64")
    X, y, offsets = stacked(data, [0] * MODELS, [20] * MODELS, "float64")
    group.partial_fit(X, y, offsets)
    before = [group.state(m) for m in range(MODELS)]
    with pytest.raises(rk.InvalidArgumentError, match="passed as device memory, but this execution space"):
        group.partial_fit(_FakeDeviceArray(X), _FakeDeviceArray(y), offsets)
    with pytest.raises(ValueError, match="one memory"):  # all of a call's arrays in one memory
        group.partial_fit(_FakeDeviceArray(X), y, offsets)
    with pytest.raises(rk.InvalidArgumentError, match="device memory"):
        group.predict(_FakeDeviceArray(X), offsets)
    assert all(same_state(group.state(m), before[m]) for m in range(MODELS))


def _device_framework(name: str):
    """The module of `name` (cupy, torch) when it sees a GPU and the library has the CUDA space; else skip (or fail
    with RH_PY_REQUIRE_DEVICE=1, as the device runs do)."""
    found = None
    try:
        if name == "cupy":
            import cupy

            found = cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
        else:
            import torch

            found = torch if torch.cuda.is_available() else None
    except Exception:
        found = None
    if found is None or "cuda" not in rk.compiled_spaces():
        if os.environ.get("RH_PY_REQUIRE_DEVICE") == "1":
            pytest.fail(f"RH_PY_REQUIRE_DEVICE=1 but no CUDA space or no {name} with a GPU")
        pytest.skip(f"needs the CUDA space and {name} with a GPU")
    return found


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_group_device_arrays_on_cuda(framework, dtype, penalty, rng):
    xp = _device_framework(framework)
    to_device = (lambda a: xp.asarray(a)) if framework == "cupy" else (lambda a: xp.as_tensor(a, device="cuda"))
    data = model_data(rng)
    host = make_group("cuda", dtype, penalty)
    device = make_group("cuda", dtype, penalty)
    start = [0] * MODELS
    for b in range(3):
        counts = ragged(b)
        X, y, offsets = stacked(data, start, counts, dtype)
        w = (1 + np.arange(len(y)) % 3).astype(dtype)
        if b == 2:  # column-major on the device, read in place
            X = np.asfortranarray(X)
        # Device offsets are copied to the host (the library reads offsets there).
        device_offsets = to_device(offsets) if b == 1 else offsets
        assert host.partial_fit(X, y, offsets, sample_weight=w) == \
            device.partial_fit(to_device(X), to_device(y), device_offsets, sample_weight=to_device(w))
        for m in range(MODELS):  # docs/abi.md: device input gives the bits of host input
            assert device.error(m) is None
            assert same_state(device.state(m), host.state(m))
        start = [s + c for s, c in zip(start, counts)]
    X, _, offsets = stacked(data, [0] * MODELS, [7] * MODELS, dtype)
    prediction = device.predict(to_device(X), offsets)
    assert isinstance(prediction, np.ndarray)  # group predictions are written to host memory
    np.testing.assert_array_equal(prediction, host.predict(X, offsets))
    with pytest.raises(ValueError, match="one memory"):
        device.partial_fit(to_device(X), np.zeros(len(X), dtype=dtype), offsets)


def test_reset_and_checkpoints(space, rng, tmp_path):
    data = model_data(rng)
    # The library's last penalty (today's l1 carries a lambda from batch to batch in its state).
    group = make_group(space, "float64", list(rk.load_library().penalty_values)[-1])
    X, y, offsets = stacked(data, [0] * MODELS, [40] * MODELS, "float64")
    group.partial_fit(X, y, offsets)
    group.reset(3)
    assert not group.fitted(3) and group.error(3) is None
    with pytest.raises(rk.InvalidStateError):
        group.diagnostics(3)
    states = [group.state(m) for m in range(MODELS)]
    blob = group.to_bytes()
    assert group.save(tmp_path / "g.rhck").read_bytes() == blob
    X2, y2, _ = stacked(data, [40] * MODELS, [40] * MODELS, "float64")
    assert group.partial_fit(X2, y2, offsets) == MODELS
    after = [group.state(m) for m in range(MODELS)]
    for restore in (lambda g: g.load(tmp_path / "g.rhck"), lambda g: g.load_bytes(blob)):
        other = RegressorGroup(2, P + 1, space=space, tau=2.0)  # another shape and settings: replaced by the load
        restore(other)
        assert (other.n_models, other.n_features_in_) == (MODELS, P)
        assert other.get_params()["tau"] == 1.0 and other.get_params()["penalty"] == group.get_params()["penalty"]
        assert all(same_state(other.state(m), states[m]) for m in range(MODELS))
        assert other.to_bytes() == blob
        assert other.partial_fit(X2, y2, offsets) == MODELS  # the stream goes on as the saved group's did
        assert all(same_state(other.state(m), after[m]) for m in range(MODELS))
    broken = bytearray(blob)
    broken[len(broken) // 2] ^= 0xFF
    before = group.to_bytes()
    with pytest.raises(rk.CorruptDataError):
        group.load_bytes(bytes(broken))
    assert group.to_bytes() == before
