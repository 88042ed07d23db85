"""scikit-learn integration: the estimator checks, Pipeline, GridSearchCV, clone, pandas feature names."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import renewable_huber_kokkos as rk


def test_check_estimator(space):
    estimator = rk.RenewableHuberRegressor(space=space)
    if "generate_only" in inspect.signature(check_estimator).parameters:  # scikit-learn < 1.6
        checks = list(check_estimator(estimator, generate_only=True))
        for each, check in checks:
            check(each)
    else:  # raises at the first failed check; returns one record per check
        checks = check_estimator(estimator)
        assert not [c for c in checks if c["status"] not in ("passed", "skipped")], checks
    assert len(checks) > 30, len(checks)  # the checks did run: scikit-learn 1.2 has 47 for a regressor


def test_defaults_are_the_library_defaults():
    # docs/abi.md, "Configuration defaults", and the reference package's names.
    params = rk.RenewableHuberRegressor().get_params()
    assert params == {"tau": 1.345, "penalty": "none", "lambda_scale": 1.0, "bandwidth_scale": 1.0,
                      "fit_intercept": True, "max_iter": 100, "tol": 1e-6, "ridge": 1e-8, "dtype": "float64",
                      "n_jobs": None, "space": "auto", "inference": False, "device_id": 0}


def _data(rng, n=300, p=4):
    X = rng.normal(size=(n, p)) * [1.0, 10.0, 0.1, 3.0][:p]
    y = X @ np.array([1.5, -0.2, 8.0, 0.5][:p]) + 2.0 + 0.5 * rng.standard_t(3, size=n)
    return X, y


def test_pipeline(space, rng):
    X, y = _data(rng)
    pipe = make_pipeline(StandardScaler(), rk.RenewableHuberRegressor(space=space)).fit(X, y)
    assert pipe.score(X, y) > 0.8
    direct = rk.RenewableHuberRegressor(space=space).fit(StandardScaler().fit_transform(X), y)
    np.testing.assert_array_equal(pipe.predict(X), direct.predict(StandardScaler().fit(X).transform(X)))


def test_grid_search(space, rng):
    X, y = _data(rng)
    grid = GridSearchCV(rk.RenewableHuberRegressor(space=space),
                        {"tau": [0.5, 1.345, 3.0], "fit_intercept": [True, False]}, cv=3).fit(X, y)
    assert grid.best_params_["fit_intercept"] is True  # y has an intercept of 2
    assert grid.best_estimator_.space_ == space
    assert len(grid.cv_results_["mean_test_score"]) == 6


def test_clone_gives_an_unfitted_copy(space, rng):
    X, y = _data(rng)
    fitted = rk.RenewableHuberRegressor(space=space, tau=2.0, inference=True).fit(X, y)
    copy = clone(fitted)
    assert copy.get_params() == fitted.get_params()
    with pytest.raises(NotFittedError):
        copy.predict(X)
    np.testing.assert_array_equal(copy.fit(X, y).coef_, fitted.coef_)


def test_pandas_feature_names(space, rng):
    pd = pytest.importorskip("pandas")
    X, y = _data(rng)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = rk.RenewableHuberRegressor(space=space, inference=True).fit(frame, pd.Series(y))
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        np.testing.assert_array_equal(model.predict(frame), model.predict(X))
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        model.predict(frame[["d", "c", "b", "a"]])
    table = model.summary()
    assert [line.split()[0] for line in str(table).splitlines()[7:12]] == ["a", "b", "c", "d", "intercept"]
    assert list(table.to_frame().index) == ["a", "b", "c", "d", "intercept"]


def test_streaming_matches_the_state_after_each_batch(space, rng):
    X, y = _data(rng, n=400)
    model = rk.RenewableHuberRegressor(space=space)
    for i in range(4):
        model.partial_fit(X[i * 100:(i + 1) * 100], y[i * 100:(i + 1) * 100])
        assert model.n_samples_seen_ == (i + 1) * 100 and model.n_batches_ == i + 1
        assert model.state_.batch_count == i + 1
    assert model.n_iter_ == model.diagnostics_.iterations >= 1
    assert np.all(np.abs(model.coef_ - [1.5, -0.2, 8.0, 0.5]) < [0.15, 0.015, 1.0, 0.05])  # ~4 standard errors
    # fit forgets the stream
    model.fit(X[:100], y[:100])
    assert model.n_samples_seen_ == 100 and model.state_.batch_count == 1


def test_sklearn_tags_on_this_version():
    model = rk.RenewableHuberRegressor()
    if hasattr(sklearn.base.BaseEstimator, "__sklearn_tags__"):  # scikit-learn >= 1.6
        tags = model.__sklearn_tags__()
        assert tags.estimator_type == "regressor" and not tags.input_tags.allow_nan
    else:
        assert model._get_tags()["allow_nan"] is False and model._estimator_type == "regressor"
