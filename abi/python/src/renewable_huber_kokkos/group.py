"""RegressorGroup: many independent renewable Huber models updated together (the C ABI's rh_group_*, ABI 1.4;
docs/python.md, "Model groups")."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

import numpy as np

from . import _arrays, _lib
from ._errors import InvalidArgumentError, RenewableHuberError, UnavailableError, error_for
from .estimator import Diagnostics, RenewableHuberRegressor, State, read_state


class RegressorGroup:
    """``n_models`` independent models of one space, dtype, configuration and feature count, each computing what a
    :class:`RenewableHuberRegressor` of the same settings computes, updated by one ragged batch per call: the rows of
    every model stacked in X (and y, sample_weight), model m owning rows ``offsets[m]`` to ``offsets[m + 1] - 1``.
    A model without rows in a batch is untouched.

    Parameters: ``n_models``, ``n_features`` (p; p + fit_intercept at most 64), then the estimator's settings
    (``tau``, ``penalty``, ``lambda_scale``, ``bandwidth_scale``, ``fit_intercept``, ``max_iter``, ``tol``,
    ``ridge``, ``dtype``, ``n_jobs``, ``space``, ``device_id``; ``space="auto"`` takes the host-parallel space, as
    the estimator does for host arrays). X, y and sample_weight are host arrays (NumPy, or anything NumPy converts)
    or, on a space with memory of its own (``space="cuda"``: the space is chosen when the group is made, and
    ``"auto"`` takes a host one), CUDA arrays (CuPy, PyTorch, ``__cuda_array_interface__`` or DLPack), read where
    they are by device pointer as the estimator reads them: all of one call's arrays in one memory, the offsets a
    host array (a device one is copied to the host), predictions a NumPy array. What a group cannot do yet
    (inference) raises UnavailableError when it is made.
    """

    def __init__(self, n_models: int, n_features: int, **settings: Any) -> None:
        if "inference" in settings:
            raise UnavailableError("inference is not available in a model group")
        self._settings = RenewableHuberRegressor(**settings)  # the estimator's checks and its configuration
        lib = _lib.library()
        if not lib.has_groups:
            raise UnavailableError(f"{lib.path} has no model groups (rh_group_*, C ABI 1.4); use a newer library")
        for name, value in (("n_models", n_models), ("n_features", n_features)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InvalidArgumentError(f"{name} must be an integer (got {value!r})")
        self.space_ = self._settings._resolve_space(lib, on_device=False)
        self._handle = _lib.GroupHandle(lib, self._settings._config(lib, self.space_), int(n_models), int(n_features))
        self.n_models, self.n_features_in_, self.dtype = int(n_models), int(n_features), self._settings.dtype

    def get_params(self) -> dict:
        """The estimator settings of every model."""
        return self._settings.get_params()

    # ---- the ragged batch --------------------------------------------------------------------------------------

    def _offsets(self, offsets: Any) -> np.ndarray:
        if _arrays.is_device_array(offsets):  # the library reads offsets in host memory: a copy of n_models + 1
            if hasattr(offsets, "get"):  # CuPy
                offsets = offsets.get()
            elif hasattr(offsets, "cpu"):  # PyTorch
                offsets = offsets.cpu().numpy()
            else:
                raise InvalidArgumentError("offsets must be a host array (CuPy and PyTorch device offsets are copied)")
        o = np.asarray(offsets)
        if o.ndim != 1 or o.dtype.kind not in "iu":
            raise InvalidArgumentError(f"offsets must be a 1-D integer array of n_models + 1 = {self.n_models + 1} "
                                       f"values (got {o.dtype} of shape {o.shape})")
        return np.ascontiguousarray(o, dtype=np.int64)  # lengths and values: the library checks them

    def _batch(self, X: Any, y: Any = None, sample_weight: Any = None) -> tuple[_lib.Batch, list]:
        shape = getattr(X, "shape", None)
        if (isinstance(X, np.ndarray) or _arrays.is_device_array(X)) and shape is not None and len(shape) == 2 \
                and shape[0] == 0:  # no rows: every model untouched
            b = _lib.Batch()
            b.rows, b.cols, b.dtype, b.memory = 0, int(shape[1]), _lib.DTYPE[self.dtype], _lib.MEMORY_HOST
            b.layout = _lib.LAYOUT_ROW_MAJOR
            return b, []
        # The estimator's conversions and checks, host or device arrays alike (device ones by pointer, never
        # converted); the feature count is the library's to check (its message names the group).
        return self._settings._batch(X, y, sample_weight, need_y=y is not None, check_features=False)

    # ---- updates and predictions -------------------------------------------------------------------------------

    def partial_fit(self, X: Any, y: Any, offsets: Any, sample_weight: Any = None) -> int:
        """One renewable update of every model with rows; returns how many committed. A bad batch as a whole raises
        and changes nothing; a model whose own rows are bad or whose update fails keeps its state, and
        :meth:`error` says why, while the others commit."""
        if y is None:
            raise ValueError("RegressorGroup.partial_fit requires y")
        o = self._offsets(offsets)
        batch, owners = self._batch(X, y, sample_weight)
        committed = ctypes.c_int64()
        lib = self._handle.lib
        lib.check(lib.group_partial_fit(self._handle.value, ctypes.byref(batch),
                                        o.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), o.size,
                                        ctypes.byref(committed)))
        del owners  # the library kept no pointer
        return committed.value

    def predict(self, X: Any, offsets: Any) -> np.ndarray:
        """Each row's prediction by the model owning it (every model with rows must have been fitted), as a NumPy
        array whatever X's memory (the library writes group predictions to host memory)."""
        o = self._offsets(offsets)
        batch, owners = self._batch(X)
        out = np.empty(int(batch.rows), dtype=self.dtype)
        lib = self._handle.lib
        lib.check(lib.group_predict(self._handle.value, ctypes.byref(batch),
                                    o.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), o.size, out.ctypes.data,
                                    out.size))
        return out

    # ---- one model ---------------------------------------------------------------------------------------------

    def state(self, m: int) -> State:
        """Model m's renewable state (coefficients empty before its first committed batch)."""
        h = self._handle
        return read_state(h.lib, lambda st: h.lib.group_get_state(h.value, int(m), st))

    def fitted(self, m: int) -> bool:
        return self.state(m).n_features > 0

    def diagnostics(self, m: int) -> Diagnostics:
        """Of model m's last committed batch (InvalidStateError before one)."""
        d = _lib.Diagnostics()
        self._handle.lib.check(self._handle.lib.group_diagnostics(self._handle.value, int(m), ctypes.byref(d)))
        return Diagnostics.of(d)

    def error(self, m: int) -> RenewableHuberError | None:
        """Why model m's last update did not commit, as the exception a single model would have raised (not
        raised here); None when it committed or never had rows."""
        status, message = ctypes.c_int32(), ctypes.create_string_buffer(1024)
        self._handle.lib.check(self._handle.lib.group_model_status(self._handle.value, int(m), ctypes.byref(status),
                                                                   message, len(message)))
        return None if status.value == _lib.SUCCESS else error_for(status.value, message.value.decode(errors="replace"))

    def coef(self, m: int) -> np.ndarray:
        state = self.state(m)
        return state.coefficients[:state.n_features].copy()

    def intercept(self, m: int) -> float:
        state = self.state(m)
        return float(state.coefficients[-1]) if state.fit_intercept and state.n_features else 0.0

    def reset(self, m: int) -> None:
        """Forgets model m's stream: the empty state, no diagnostics, no error."""
        self._handle.lib.check(self._handle.lib.group_reset(self._handle.value, int(m)))

    # ---- checkpoints (the library's group checkpoint, docs/abi.md) --------------------------------------------

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the whole group (settings, shape, every model's state) as the library's group checkpoint."""
        self._handle.lib.check(self._handle.lib.group_save_checkpoint_file(self._handle.value, os.fsencode(path)))
        return Path(path)

    def to_bytes(self) -> bytes:
        lib, size = self._handle.lib, ctypes.c_int64()
        lib.check(lib.group_save_checkpoint(self._handle.value, None, 0, ctypes.byref(size)))
        buffer = ctypes.create_string_buffer(size.value)
        lib.check(lib.group_save_checkpoint(self._handle.value, buffer, size.value, ctypes.byref(size)))
        return buffer.raw[: size.value]

    def load(self, path: str | os.PathLike) -> "RegressorGroup":
        """Replaces this group by a checkpoint's (its settings, n_models, n_features and states; the space stays, the
        dtype must be the checkpoint's). On failure the group is left as it was."""
        return self._adopt(lambda h: h.lib.group_load_checkpoint_file(h.value, os.fsencode(path)))

    def load_bytes(self, data: bytes) -> "RegressorGroup":
        data = bytes(data)
        return self._adopt(lambda h: h.lib.group_load_checkpoint(h.value, data, len(data)))

    def _adopt(self, load) -> "RegressorGroup":
        h = self._handle
        h.lib.check(load(h))
        c, n, p = _lib.Config(), ctypes.c_int64(), ctypes.c_int64()
        for call, out in ((h.lib.group_get_config, c), (h.lib.group_n_models, n), (h.lib.group_n_features, p)):
            h.lib.check(call(h.value, ctypes.byref(out)))
        self._settings.set_params(tau=c.tau, lambda_scale=c.lambda_scale, bandwidth_scale=c.bandwidth_scale,
                                  tol=c.tol, ridge=c.ridge, max_iter=c.max_iter, fit_intercept=bool(c.fit_intercept),
                                  penalty=h.lib.penalty_names[c.penalty])
        self.n_models, self.n_features_in_ = n.value, p.value
        return self

    def close(self) -> None:
        """Frees the group now (otherwise with the object, or at exit)."""
        self._handle.close()
