"""Persistence: save/load and pickle through the library's checkpoint format, and the same bytes as the C ABI's
(a checkpoint written by a C program loads in Python and is written back byte for byte, and the other way round)."""

from __future__ import annotations

import os
import pickle
import subprocess

import numpy as np
import pytest

import renewable_huber_kokkos as rk


def _helper() -> str:
    path = os.environ.get("RH_PY_C_HELPER")
    if not path:
        pytest.fail("RH_PY_C_HELPER must name the c_checkpoint program (ctest sets it)")
    return path


def _stream(rng, n=300, p=4):
    X = rng.normal(size=(n, p))
    return X, X @ np.linspace(-1, 1, p) + 0.7 + rng.standard_t(3, size=n)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_save_load_continue(space, rng, tmp_path, dtype, penalty):
    X, y = _stream(rng)
    X, y = X.astype(dtype), y.astype(dtype)
    inference = penalty == "none"
    straight = rk.RenewableHuberRegressor(space=space, dtype=dtype, penalty=penalty, tau=1.1, inference=inference)
    stopped = rk.RenewableHuberRegressor(**straight.get_params())
    for i in range(3):
        straight.partial_fit(X[i * 100:(i + 1) * 100], y[i * 100:(i + 1) * 100])
    for i in range(2):
        stopped.partial_fit(X[i * 100:(i + 1) * 100], y[i * 100:(i + 1) * 100])
    path = stopped.save(tmp_path / "model.rhckpt")
    resumed = rk.RenewableHuberRegressor.load(path, space=space)
    assert resumed.get_params() == straight.get_params()  # settings and dtype come from the checkpoint
    assert resumed.n_features_in_ == 4 and resumed.n_samples_seen_ == 200 and resumed.n_batches_ == 2
    assert resumed.to_bytes() == path.read_bytes() == stopped.to_bytes()
    resumed.partial_fit(X[200:], y[200:])
    assert resumed.to_bytes() == straight.to_bytes()  # continuing gives exactly the uninterrupted stream
    np.testing.assert_array_equal(resumed.predict(X), straight.predict(X))
    if inference:
        np.testing.assert_array_equal(resumed.standard_errors_, straight.standard_errors_)


def test_pickle_round_trip(space, rng):
    X, y = _stream(rng)
    model = rk.RenewableHuberRegressor(space=space, inference=True).fit(X, y)
    copy = pickle.loads(pickle.dumps(model))
    assert copy.to_bytes() == model.to_bytes()
    assert copy.diagnostics_ == model.diagnostics_ and copy.n_iter_ == model.n_iter_  # kept beside the checkpoint
    assert copy.space_ == model.space_
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    np.testing.assert_array_equal(copy.p_values_, model.p_values_)
    # an unfitted model pickles as its parameters
    fresh = pickle.loads(pickle.dumps(rk.RenewableHuberRegressor(tau=2.0)))
    assert fresh.tau == 2.0 and not fresh.__sklearn_is_fitted__()


def test_c_checkpoint_loads_in_python_and_back(space, tmp_path):
    subprocess.run([_helper(), "write", str(tmp_path), space], check=True)
    written_by_c = (tmp_path / "c.rhckpt").read_bytes()
    X = np.fromfile(tmp_path / "x.f64").reshape(120, 3)
    y = np.fromfile(tmp_path / "y.f64")
    c_predictions = np.fromfile(tmp_path / "c_pred.f64")

    loaded = rk.RenewableHuberRegressor.load(tmp_path / "c.rhckpt", space=space)
    assert loaded.inference and loaded.n_samples_seen_ == 120
    np.testing.assert_array_equal(loaded.predict(X), c_predictions)
    assert loaded.save(tmp_path / "python.rhckpt").read_bytes() == written_by_c  # the same bytes back

    # The same stream fitted in Python writes the bytes C wrote.
    model = rk.RenewableHuberRegressor(space=space, inference=True)
    for b in range(3):
        model.partial_fit(X[b * 40:(b + 1) * 40], y[b * 40:(b + 1) * 40])
    assert model.to_bytes() == written_by_c

    # And C reads what Python wrote, writing it back unchanged.
    model.save(tmp_path / "from_python.rhckpt")
    subprocess.run([_helper(), "resave", str(tmp_path / "from_python.rhckpt"), str(tmp_path / "c_again.rhckpt"),
                    space], check=True)
    assert (tmp_path / "c_again.rhckpt").read_bytes() == written_by_c


def test_committed_checkpoints_of_every_format_load(space):
    # tests/checkpoints: format 1 (ABI 1.0) and format 2 files, float32 and float64.
    from conftest import REPO

    files = sorted((REPO / "tests" / "checkpoints").glob("*.rhck"))
    assert len(files) == 3
    for path in files:
        model = rk.RenewableHuberRegressor.load(path, space=space)
        assert model.dtype == ("float32" if "f32" in path.name else "float64")
        if model.__sklearn_is_fitted__():
            assert model.predict(np.zeros((2, model.n_features_in_))).shape == (2,)
