"""RegressorGroup (rh_group_*): each model equals a single-model RenewableHuberRegressor fit of the same rows on the
same space, over ragged batches with models left out; one model's bad rows mark only it; a bad batch as a whole
changes nothing; device arrays are refused."""

from __future__ import annotations

import numpy as np
import pytest

import renewable_huber_kokkos as rk
from renewable_huber_kokkos import RegressorGroup

# The golden floors tests/unit/test_group.cpp compares a group with single models by (golden/README.md, "Tolerance
# floors"; tools/golden_floors.h): the group sums each model's rows in another order than the single model's chunks,
# so float64 takes the floor of a space that sums in another order, float32 its own.
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


def same_state(a: rk.State, b: rk.State) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("coefficients", "information")) and \
        (a.n_samples_seen, a.batch_count, a.weight_sum) == (b.n_samples_seen, b.batch_count, b.weight_sum)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("weighted", [False, True])
def test_models_equal_single_fits_over_ragged_batches(space, penalty, dtype, weighted, rng):
    data = model_data(rng)
    group = make_group(space, dtype, penalty)
    single = [rk.RenewableHuberRegressor(space=space, dtype=dtype, penalty=penalty, tau=1.0) for _ in range(MODELS)]
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
            assert close(a.coefficients, e.coefficients, dtype), (b, m, a.coefficients - e.coefficients)
            scale = np.abs(e.information).max()  # J relative to its scale: entries near 0 sum to rounding
            assert close(a.information / scale, e.information / scale, dtype), (b, m)
            d, s = group.diagnostics(m), single[m].diagnostics_
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
        assert close(out[5 * m:5 * m + 5], single[m].predict(X[5 * m:5 * m + 5]), dtype)
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
    """Announces CUDA memory (as CuPy and PyTorch do): refused before any pointer reaches the library."""

    __cuda_array_interface__ = {"shape": (2, P), "typestr": "<f8", "data": (0, False), "version": 3}


def test_device_arrays_are_refused(space):
    group = make_group(space, "float64")
    with pytest.raises(rk.InvalidArgumentError, match="host memory only"):
        group.partial_fit(_FakeDeviceArray(), np.zeros(2), [0, 2, 2, 2, 2, 2])
    with pytest.raises(rk.InvalidArgumentError, match="host memory only"):
        group.predict(_FakeDeviceArray(), [0, 2, 2, 2, 2, 2])


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
