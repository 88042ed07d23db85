"""RenewableHuberRegressor: the scikit-learn estimator over the C ABI (docs/python.md)."""

from __future__ import annotations

import ctypes
import os
import stat
import warnings
from dataclasses import dataclass, make_dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.utils import check_array, check_consistent_length

from . import _arrays, _lib
from ._errors import InvalidArgumentError, UnavailableError


@dataclass(frozen=True)
class Diagnostics:
    """Of the last batch (rh_diagnostics). Non-convergence is reported here, never raised."""

    iterations: int
    converged: bool
    used_regularized_fallback: bool
    objective: float
    lambda_value: float
    bandwidth: float

    @classmethod
    def of(cls, d: _lib.Diagnostics) -> "Diagnostics":
        return cls(d.iterations, bool(d.converged), bool(d.used_regularized_fallback), d.objective, d.lambda_value,
                   d.bandwidth)


# Its fields are rh_state's, from the ctypes mirror (_lib.State): the arrays (coefficients; information J, q x q;
# score_variance K, q x q, zeros without inference), then the scalars.
State = make_dataclass("State", [(name, np.ndarray) for name in _lib.State.ARRAY_RANKS] + _lib.State.scalars(),
                       frozen=True, namespace={"__module__": __name__})
State.__doc__ = ("The renewable state (rh_state), float64 whatever the model dtype; the intercept is the last "
                 "coefficient.")


def read_state(lib: _lib.Library, get_state) -> State:
    """A State through get_state(pointer to rh_state) (rh_model_get_state or rh_group_get_state of one model): once
    for the lengths, once into arrays of them."""
    st = _lib.State()
    lib.check(get_state(ctypes.byref(st)))
    q = int(st.coefficients_length)
    arrays = {name: np.empty(q if rank == 1 else (q, q)) for name, rank in _lib.State.ARRAY_RANKS.items()}
    for name, values in arrays.items():
        setattr(st, name, values.ctypes.data_as(_lib._dptr))
        setattr(st, f"{name}_length", values.size)
    lib.check(get_state(ctypes.byref(st)))
    return State(**arrays, **{name: kind(getattr(st, name)) for name, kind in _lib.State.scalars()})


class Summary:
    """The inference table of :meth:`RenewableHuberRegressor.summary`, printed like statsmodels' summaries."""

    def __init__(self, title: str, header: list[str], names: list[str], columns: dict[str, np.ndarray]) -> None:
        self.title, self.header, self.names, self.columns = title, header, names, columns

    def as_text(self) -> str:
        width = max([14] + [len(n) + 2 for n in self.names])
        heads = ["coef", "std err", "z", "P>|z|", self.columns_ci[0], self.columns_ci[1]]
        line = "=" * (width + 11 * len(heads))
        out = [self.title.center(len(line)), line, *self.header, line,
               " " * width + "".join(f"{h:>11}" for h in heads), "-" * len(line)]
        cols = list(self.columns.values())
        for i, name in enumerate(self.names):
            row = [cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i]]
            out.append(f"{name:<{width}}" + "".join(
                f"{v:>11.3f}" if k == 3 else f"{v:>11.4g}" if k in (0, 1, 4, 5) else f"{v:>11.3f}"
                for k, v in enumerate(row)))
        out.append(line)
        return "\n".join(out)

    @property
    def columns_ci(self) -> tuple[str, str]:
        keys = list(self.columns)
        return keys[4], keys[5]

    def to_frame(self):
        """The table as a pandas DataFrame (pandas needed)."""
        import pandas as pd  # noqa: PLC0415

        return pd.DataFrame(self.columns, index=self.names)

    def __str__(self) -> str:
        return self.as_text()

    __repr__ = __str__




def _feature_names(X: Any) -> np.ndarray | None:
    """Column names of a DataFrame-like X when they are all strings (scikit-learn's rule), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = np.asarray(columns, dtype=object)
    if names.ndim != 1 or len(names) == 0:
        return None
    kinds = {isinstance(n, str) for n in names}
    if kinds == {True}:
        return names
    if kinds == {True, False}:
        raise TypeError("Feature names are only supported if all input features have string names, but your "
                        f"input has {sorted({type(n).__name__ for n in names})} as feature name / column name "
                        "types. Convert them all to str to use feature names.")
    return None


class RenewableHuberRegressor(RegressorMixin, BaseEstimator):
    """Robust linear regression updated one batch at a time (renewable Huber estimator RHE, or RPSHE with
    ``penalty="l1"``), computed by the renewable-huber library through its C ABI.

    Parameters
    ----------
    tau, penalty, lambda_scale, bandwidth_scale, fit_intercept, max_iter, tol, ridge
        The method's settings (docs/method.md §10), with the library's defaults.
    dtype : {"float64", "float32"}
        Of the model and of every array given to it (others are converted once; device arrays must match).
    n_jobs : int or None
        Host threads (OpenMP or Threads) of the library's runtime: None = Kokkos' default, -1 = all CPUs. Read
        when the runtime starts (the first model of the process); with ``space="auto"``, ``n_jobs=1`` picks the
        Serial space.
    space : "auto" or the name of a space (``compiled_spaces()`` lists this build's)
        Execution space. "auto": the compiled space with memory of its own when the first batch is a
        device array, else the host-parallel space (OpenMP or Threads) when compiled (Serial when not, or when
        ``n_jobs == 1``).
    inference : bool
        Keep the score variance K (penalty "none" only) for ``standard_errors_``, ``p_values_``,
        ``confidence_intervals`` and ``summary``.
    device_id : int
        The CUDA device (host spaces ignore it).

    Attributes
    ----------
    coef_, intercept_ : the coefficients (read from the model on each access)
    n_features_in_, feature_names_in_ : what the first batch had (names: from a DataFrame of string columns)
    n_iter_ : iterations of the last batch; diagnostics_ : its :class:`Diagnostics`
    n_samples_seen_, n_batches_ : rows and batches seen; space_ : the execution space in use
    state_ : the renewable :class:`State`
    """

    def __init__(self, *, tau: float = 1.345, penalty: str = "none", lambda_scale: float = 1.0,
                 bandwidth_scale: float = 1.0, fit_intercept: bool = True, max_iter: int = 100, tol: float = 1e-6,
                 ridge: float = 1e-8, dtype: str = "float64", n_jobs: int | None = None, space: str = "auto",
                 inference: bool = False, device_id: int = 0) -> None:
        self.tau = tau
        self.penalty = penalty
        self.lambda_scale = lambda_scale
        self.bandwidth_scale = bandwidth_scale
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.ridge = ridge
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.space = space
        self.inference = inference
        self.device_id = device_id

    # ---- configuration ---------------------------------------------------------------------------------------

    def _host_threads(self) -> int:
        n_jobs = self.n_jobs
        if n_jobs is None:
            return 0
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0 or n_jobs < -1:
            raise InvalidArgumentError(f"n_jobs must be None, -1 or a positive integer (got {n_jobs!r})")
        return os.cpu_count() or 1 if n_jobs == -1 else int(n_jobs)

    def _resolve_space(self, lib: _lib.Library, on_device: bool) -> str:
        spaces = ("auto", *lib.space_values)
        if self.space not in spaces:
            raise InvalidArgumentError(f"space must be one of {spaces} (got {self.space!r})")
        if self.space != "auto":
            return self.space
        if on_device:
            device = [s["name"] for s in lib.spaces() if s["own_memory"]]
            if not device:
                raise UnavailableError("device arrays need an execution space with memory of its own, and none is "
                                       "compiled into this build of the library")
            return device[0]
        compiled = {s["name"] for s in lib.spaces()}
        # A Kokkos build has at most one host-parallel backend.
        parallel = [name for name in ("openmp", "threads") if name in compiled]
        if parallel and self.n_jobs != 1:
            return parallel[0]
        return "serial" if "serial" in compiled else next(iter(sorted(compiled)))

    def _config(self, lib: _lib.Library, space: str) -> _lib.Config:
        for name, allowed in (("penalty", lib.penalty_values), ("dtype", _lib.DTYPE)):
            if getattr(self, name) not in allowed:
                raise InvalidArgumentError(f"{name} must be one of {tuple(allowed)} (got {getattr(self, name)!r})")
        for name in ("tau", "lambda_scale", "bandwidth_scale", "tol", "ridge"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Real):
                raise InvalidArgumentError(f"{name} must be a real number (got {value!r})")
        for name in ("max_iter", "device_id"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise InvalidArgumentError(f"{name} must be an integer (got {value!r})")
        c = _lib.Config()
        lib.check(lib.config_init(ctypes.byref(c)))
        c.tau, c.lambda_scale, c.bandwidth_scale = self.tau, self.lambda_scale, self.bandwidth_scale
        c.tol, c.ridge, c.max_iter = self.tol, self.ridge, int(self.max_iter)
        c.penalty, c.dtype = lib.penalty_values[self.penalty], _lib.DTYPE[self.dtype]
        c.fit_intercept, c.inference = int(bool(self.fit_intercept)), int(bool(self.inference))
        c.space, c.device_id, c.host_threads = lib.space_values[space], int(self.device_id), self._host_threads()
        return c

    def _new_handle(self, on_device: bool) -> tuple[_lib.Handle, str]:
        lib = _lib.library()
        space = self._resolve_space(lib, on_device)
        return _lib.Handle(lib, self._config(lib, space)), space

    # ---- input validation ------------------------------------------------------------------------------------

    def _check_names(self, X: Any, reset: bool) -> np.ndarray | None:
        """scikit-learn's feature-name rules and messages; returns the names of X."""
        names = _feature_names(X)
        if reset:
            return names
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is None and names is None:
            return None
        if fitted is None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without feature names")
            return names
        if names is None:
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was fitted with "
                          "feature names")
            return None
        if len(fitted) != len(names) or np.any(fitted != names):
            unseen = sorted(set(names) - set(fitted))
            missing = sorted(set(fitted) - set(names))
            message = "The feature names should match those that were passed during fit.\n"

            def listed(items: list[str]) -> str:
                return "".join(f"- {n}\n" for n in items[:5]) + ("- ...\n" if len(items) > 5 else "")

            if unseen:
                message += "Feature names unseen at fit time:\n" + listed(unseen)
            if missing:
                message += "Feature names seen at fit time, yet now missing:\n" + listed(missing)
            if not unseen and not missing:
                message += "Feature names must be in the same order as they were in fit.\n"
            raise ValueError(message)
        return names

    def _matrix(self, X: Any) -> _arrays.Matrix:
        if _arrays.is_device_array(X):
            return _arrays.device_matrix(X)
        if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in (np.float32, np.float64) and X.size):
            # Lists, frames, integers, objects: converted once (and checked for NaN/Inf, complex, sparse, shape);
            # an empty X gets scikit-learn's messages, which its estimator checks expect word for word.
            X = check_array(X, dtype=self.dtype, order="C")
        return _arrays.host_matrix(X, self.dtype)

    def _vector(self, v: Any, name: str, rows: int, device: bool) -> _arrays.Vector:
        if device:
            if not _arrays.is_device_array(v):
                raise ValueError(f"X is a device array but {name} is not: all arrays of a call must be in one memory")
            out = _arrays.device_vector(v, name)
        else:
            if _arrays.is_device_array(v):
                raise ValueError(f"{name} is a device array but X is not: all arrays of a call must be in one memory")
            if np.isscalar(v) and name == "sample_weight":
                v = np.full(rows, v, dtype=self.dtype)
            a = np.asarray(v)
            if a.dtype.kind == "c":
                raise ValueError("Complex data not supported")
            if a.ndim == 2 and a.shape[1] == 1 and name == "y":
                warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                              "of y to (n_samples, ), for example using ravel().", DataConversionWarning, stacklevel=3)
                a = a.ravel()
            if a.ndim != 1:
                raise ValueError(f"{name} should be a 1d array, got an array of shape {a.shape} instead.")
            if a.dtype.kind not in "fiub":
                a = check_array(a, dtype=self.dtype, ensure_2d=False)
            out = _arrays.host_vector(a, self.dtype)
        if out.length != rows and name == "y":
            raise ValueError(f"Found input variables with inconsistent numbers of samples: [{rows}, {out.length}]")
        if out.length != rows:
            raise ValueError(f"sample_weight.shape == ({out.length},), expected ({rows},)!")
        return out

    def _batch(self, X: Any, y: Any = None, sample_weight: Any = None, need_y: bool = True,
               check_features: bool = True) -> tuple[_lib.Batch, list]:
        if need_y and y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        m = self._matrix(X)
        expected = getattr(self, "n_features_in_", None) if check_features else None
        if expected is not None and m.cols != expected:
            # The library refuses it too; scikit-learn's checks want their own wording with the estimator's name.
            raise InvalidArgumentError(f"X has {m.cols} features, but {type(self).__name__} is expecting {expected} "
                                       "features as input.", 1)
        device = m.memory == _lib.MEMORY_DEVICE
        b = _lib.Batch()
        b.x, b.rows, b.cols, b.ld, b.layout = m.pointer, m.rows, m.cols, m.ld, m.layout
        b.dtype, b.memory = _lib.DTYPE[m.dtype], m.memory
        owners: list = [m.owner]
        if need_y:
            yv = self._vector(y, "y", m.rows, device)
            b.y, owners = yv.pointer, owners + [yv.owner]
            if sample_weight is not None:
                wv = self._vector(sample_weight, "sample_weight", m.rows, device)
                b.weights, owners = wv.pointer, owners + [wv.owner]
        return b, owners

    # ---- fitting ---------------------------------------------------------------------------------------------

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "RenewableHuberRegressor":
        """Forgets any stream and fits one batch. On failure the estimator is left as it was."""
        return self._update(X, y, sample_weight, fresh=True)

    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> "RenewableHuberRegressor":
        """One renewable update with the batch (frequency weights: finite, >= 0, not all zero)."""
        return self._update(X, y, sample_weight, fresh=getattr(self, "_handle", None) is None)

    def _update(self, X: Any, y: Any, sample_weight: Any, fresh: bool) -> "RenewableHuberRegressor":
        names = self._check_names(X, reset=fresh)
        batch, owners = self._batch(X, y, sample_weight, check_features=not fresh)
        handle, space = (self._new_handle(batch.memory == _lib.MEMORY_DEVICE) if fresh
                         else (self._handle, self.space_))
        diagnostics = _lib.Diagnostics()
        lib = handle.lib
        update = lib.model_fit if fresh else lib.model_partial_fit  # the same on a new model; fit says so in errors
        lib.check(update(handle.value, ctypes.byref(batch), ctypes.byref(diagnostics)))
        del owners  # the library kept no pointer (docs/abi.md, "Ownership")
        # Committed: only now does the Python side change.
        if fresh:
            old = getattr(self, "_handle", None)
            self._handle, self.space_ = handle, space
            self.n_features_in_ = int(batch.cols)
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            self.n_samples_seen_, self.n_batches_ = 0, 0
            if old is not None:
                old.close()
        self.diagnostics_ = Diagnostics.of(diagnostics)
        self.n_iter_ = diagnostics.iterations
        self.n_samples_seen_ += int(batch.rows)
        self.n_batches_ += 1
        return self

    # ---- using the model -------------------------------------------------------------------------------------

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "_handle", None) is not None

    def _fitted(self) -> _lib.Handle:
        handle = getattr(self, "_handle", None)
        if handle is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' or "
                                 "'partial_fit' with appropriate arguments before using this estimator.")
        return handle

    def predict(self, X: Any) -> Any:
        """Predictions in the model's dtype: a NumPy array, or for a CUDA array a device array of its kind."""
        handle = self._fitted()
        self._check_names(X, reset=False)
        batch, owners = self._batch(X, need_y=False)
        rows = int(batch.rows)
        if batch.memory == _lib.MEMORY_DEVICE and self.space_ == "cuda":
            out, pointer = _arrays.empty_like_device(owners[0] if not isinstance(owners[0], tuple) else owners[0][0],
                                                     rows, self.dtype)
        else:  # (device input on a host space: the library refuses it before writing anything)
            out = np.empty(rows, dtype=self.dtype)
            pointer = out.ctypes.data
        handle.lib.check(handle.lib.model_predict(handle.value, ctypes.byref(batch), pointer, rows))
        return out

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Coefficient of determination R² (weighted with sample_weight), computed by the library."""
        handle = self._fitted()
        self._check_names(X, reset=False)
        batch, owners = self._batch(X, y, sample_weight)
        r2 = ctypes.c_double()
        handle.lib.check(handle.lib.model_score(handle.value, ctypes.byref(batch), ctypes.byref(r2)))
        return r2.value

    @property
    def state_(self) -> State:
        handle = self._fitted()
        return read_state(handle.lib, lambda st: handle.lib.model_get_state(handle.value, st))

    @property
    def coef_(self) -> np.ndarray:
        state = self.state_
        return state.coefficients[:state.n_features].copy()

    @property
    def intercept_(self) -> float:
        state = self.state_
        return float(state.coefficients[-1]) if state.fit_intercept else 0.0

    def _q(self, handle: _lib.Handle) -> int:
        st = _lib.State()  # NULL buffers: the lengths only
        handle.lib.check(handle.lib.model_get_state(handle.value, ctypes.byref(st)))
        return int(st.coefficients_length)

    # ---- inference (docs/method.md §12) ----------------------------------------------------------------------

    def _inference(self, name: str, square: bool = False) -> np.ndarray:
        handle = self._fitted()  # inference off: the library's UnavailableError says how to turn it on
        q = self._q(handle)
        out = np.empty((q, q) if square else q)
        function = getattr(handle.lib, f"model_{name}")
        handle.lib.check(function(handle.value, out.ctypes.data_as(_lib._dptr), out.size))
        return out

    @property
    def covariance_(self) -> np.ndarray:
        """The sandwich covariance J⁻¹KJ⁻¹ of the coefficients, intercept last (q × q)."""
        return self._inference("covariance", square=True)

    @property
    def standard_errors_(self) -> np.ndarray:
        """One per coefficient, intercept last."""
        return self._inference("standard_errors")

    @property
    def z_values_(self) -> np.ndarray:
        return self._inference("z_statistics")

    @property
    def p_values_(self) -> np.ndarray:
        """Two-sided p-values of beta_j = 0 against the standard normal, intercept last."""
        return self._inference("p_values")

    def confidence_intervals(self, level: float = 0.95) -> np.ndarray:
        """(q, 2) array of lower and upper bounds, intercept last."""
        handle = self._fitted()
        se = self._inference("standard_errors")  # the same checks, and q
        lower, upper = np.empty_like(se), np.empty_like(se)
        handle.lib.check(handle.lib.model_confidence_intervals(
            handle.value, float(level), lower.ctypes.data_as(_lib._dptr), upper.ctypes.data_as(_lib._dptr), se.size))
        return np.column_stack([lower, upper])

    def summary(self, level: float = 0.95) -> Summary:
        """A statsmodels-like coefficient table (needs inference=True)."""
        ci = self.confidence_intervals(level)
        state = self.state_
        names = [str(n) for n in getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])]
        if self.fit_intercept:
            names.append("intercept")
        low, high = f"[{(1 - level) / 2:.3g}", f"{1 - (1 - level) / 2:.3g}]"
        columns = {"coef": state.coefficients, "std err": self.standard_errors_, "z": self.z_values_,
                   "P>|z|": self.p_values_, low: ci[:, 0], high: ci[:, 1]}
        header = [f"Penalty: {self.penalty:<12} tau: {self.tau:<10g} Space: {self.space_} ({self.dtype})",
                  f"Samples seen: {state.n_samples_seen:<7} Batches: {state.batch_count:<7} "
                  f"Covariance: sandwich J^-1 K J^-1 (renewable)"]
        return Summary("Renewable Huber Regression Results", header, names, columns)

    # ---- persistence -----------------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the library's checkpoint (docs/abi.md, "Checkpoint format"; the same bytes as the C ABI's)."""
        handle = self._fitted()
        handle.lib.check(handle.lib.model_save_checkpoint_file(handle.value, os.fsencode(path)))
        return Path(path)

    def to_bytes(self) -> bytes:
        """The checkpoint as bytes."""
        handle = self._fitted()
        lib, size = handle.lib, ctypes.c_int64()
        lib.check(lib.model_save_checkpoint(handle.value, None, 0, ctypes.byref(size)))
        buffer = ctypes.create_string_buffer(size.value)
        lib.check(lib.model_save_checkpoint(handle.value, buffer, size.value, ctypes.byref(size)))
        return buffer.raw[: size.value]

    @classmethod
    def load(cls, path: str | os.PathLike, **params: Any) -> "RenewableHuberRegressor":
        """A model from a checkpoint file. Its estimator settings and dtype come from the checkpoint; ``params``
        may choose the placement (space, n_jobs, device_id). Feature names and diagnostics are not stored."""
        head = b""
        try:  # the dtype from the header; anything but a readable regular file is left to the library to refuse
            if stat.S_ISREG(os.stat(path).st_mode):
                with open(path, "rb") as f:
                    head = f.read(80)
        except OSError:
            pass
        return cls._from_checkpoint(head, lambda lib, h: lib.model_load_checkpoint_file(h.value, os.fsencode(path)),
                                    params)

    @classmethod
    def from_bytes(cls, data: bytes, **params: Any) -> "RenewableHuberRegressor":
        data = bytes(data)
        return cls._from_checkpoint(data[:80], lambda lib, h: lib.model_load_checkpoint(h.value, data, len(data)),
                                    params)

    @classmethod
    def _from_checkpoint(cls, head: bytes, load, params: dict) -> "RenewableHuberRegressor":
        # The dtype (offset 76, u32) decides which model can take it; the library validates everything else.
        dtype = {1: "float32", 2: "float64"}.get(int.from_bytes(head[76:80], "little") if len(head) >= 80 else 0,
                                                 "float64")
        model = cls(**{"dtype": dtype, **params})
        model._adopt(load)
        return model

    def _adopt(self, load, space: str | None = None) -> None:
        requested = self.space
        self.space = space or requested  # a pickled model goes back to the space it was on
        try:
            handle, space = self._new_handle(on_device=False)
        finally:
            self.space = requested
        lib = handle.lib
        lib.check(load(lib, handle))
        c = _lib.Config()
        lib.check(lib.model_get_config(handle.value, ctypes.byref(c)))
        self.tau, self.lambda_scale, self.bandwidth_scale, self.tol, self.ridge = (
            c.tau, c.lambda_scale, c.bandwidth_scale, c.tol, c.ridge)
        self.max_iter, self.penalty = c.max_iter, lib.penalty_names[c.penalty]
        self.fit_intercept, self.inference = bool(c.fit_intercept), bool(c.inference)
        self._handle, self.space_ = handle, space
        st = _lib.State()
        lib.check(lib.model_get_state(handle.value, ctypes.byref(st)))
        if st.n_features == 0:  # an empty checkpoint: nothing fitted
            self._handle = None
            handle.close()
            return
        self.n_features_in_ = int(st.n_features)
        self.n_samples_seen_, self.n_batches_ = int(st.n_samples_seen), int(st.batch_count)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        handle = state.pop("_handle", None)
        if handle is not None:
            state["_checkpoint"] = self.to_bytes()
        return state

    def __setstate__(self, state: dict) -> None:
        checkpoint = state.pop("_checkpoint", None)
        self.__dict__.update(state)
        if checkpoint is not None:
            kept = {k: v for k, v in state.items() if k.endswith("_")}  # diagnostics, names: not in the checkpoint
            self._adopt(lambda lib, h: lib.model_load_checkpoint(h.value, checkpoint, len(checkpoint)),
                        space=state.get("space_"))
            self.__dict__.update(kept)

    # ---- scikit-learn tags -----------------------------------------------------------------------------------

    def _more_tags(self) -> dict:  # scikit-learn < 1.6
        return {"allow_nan": False, "X_types": ["2darray"], "multioutput": False}

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        tags.target_tags.single_output = True
        return tags
