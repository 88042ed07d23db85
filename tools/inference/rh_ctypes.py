"""A minimal ctypes binding of the C ABI (abi/include/rh/rh.h: the structs of ABI 1.1, rh_space_name of 1.2) for the inference studies.

Only what the studies need: a model on one space, partial_fit on float64 host arrays, the coefficients and the
inference calls. Every failed call raises RuntimeError with the library's message.
"""

import ctypes
import glob
import os

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RH_DTYPE_F64 = 2
RH_PENALTY_NONE = 1
RH_LAYOUT_ROW_MAJOR = 1
RH_MEMORY_HOST = 1
ABI_VERSION = (1 << 16) | 1


class Config(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32),
                ("tau", ctypes.c_double), ("lambda_scale", ctypes.c_double), ("bandwidth_scale", ctypes.c_double),
                ("tol", ctypes.c_double), ("ridge", ctypes.c_double),
                ("penalty", ctypes.c_int32), ("fit_intercept", ctypes.c_int32), ("max_iter", ctypes.c_int32),
                ("dtype", ctypes.c_int32), ("space", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("host_threads", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("inference", ctypes.c_int32), ("reserved1", ctypes.c_int32)]


class Batch(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32),
                ("x", ctypes.c_void_p), ("y", ctypes.c_void_p), ("weights", ctypes.c_void_p),
                ("rows", ctypes.c_int64), ("cols", ctypes.c_int64), ("ld", ctypes.c_int64),
                ("layout", ctypes.c_int32), ("dtype", ctypes.c_int32), ("memory", ctypes.c_int32),
                ("reserved0", ctypes.c_int32)]


class State(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32),
                ("coefficients", ctypes.c_void_p), ("information", ctypes.c_void_p),
                ("coefficients_length", ctypes.c_int64), ("information_length", ctypes.c_int64),
                ("n_features", ctypes.c_int64), ("n_samples_seen", ctypes.c_int64), ("batch_count", ctypes.c_int64),
                ("previous_lambda", ctypes.c_double), ("weight_sum", ctypes.c_double),
                ("fit_intercept", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("score_variance", ctypes.c_void_p), ("score_variance_length", ctypes.c_int64),
                ("score_variance_batches", ctypes.c_int64)]


assert ctypes.sizeof(Config) == 88 and ctypes.sizeof(Batch) == 72 and ctypes.sizeof(State) == 112


def find_library(build_dir=None):
    """librenewable_huber.so of a build tree (default build/cpu, or $RH_LIBRARY)."""
    if os.environ.get("RH_LIBRARY"):
        return os.environ["RH_LIBRARY"]
    root = build_dir or os.path.join(REPO_ROOT, "build", "cpu")
    found = sorted(glob.glob(os.path.join(root, "**", "librenewable_huber.so"), recursive=True))
    if not found:
        raise SystemExit(f"no librenewable_huber.so under {root}: build first (tools/rh build)")
    return found[0]


class Library:
    def __init__(self, path=None):
        self.lib = ctypes.CDLL(path or find_library())
        lib = self.lib
        lib.rh_last_error.restype = ctypes.c_char_p
        lib.rh_model_create.argtypes = [ctypes.c_uint32, ctypes.POINTER(Config), ctypes.POINTER(ctypes.c_void_p)]
        lib.rh_config_init.argtypes = [ctypes.POINTER(Config)]
        lib.rh_model_destroy.argtypes = [ctypes.c_void_p]
        lib.rh_model_partial_fit.argtypes = [ctypes.c_void_p, ctypes.POINTER(Batch), ctypes.c_void_p]
        for name in ("rh_model_covariance", "rh_model_standard_errors", "rh_model_z_statistics",
                     "rh_model_p_values"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        lib.rh_model_confidence_intervals.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p,
                                                      ctypes.c_void_p, ctypes.c_int64]
        lib.rh_init.argtypes = [ctypes.c_uint32, ctypes.c_int32, ctypes.c_int32]
        lib.rh_model_get_state.argtypes = [ctypes.c_void_p, ctypes.POINTER(State)]
        lib.rh_space_name.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p)]

    def space_value(self, space):
        """RH_SPACE_* of the space called `space`, from the library's names (rh_space_name, ABI 1.2)."""
        name, value = ctypes.c_char_p(), 1
        while self.lib.rh_space_name(value, ctypes.byref(name)) == 0:
            if name.value.decode() == space:
                return value
            value += 1
        raise RuntimeError(f"the library knows no execution space called {space!r}")

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: status {status}: {self.lib.rh_last_error().decode()}")


class Model:
    """One model on `space`, float64, penalty none, with inference on unless told otherwise."""

    def __init__(self, library, space="serial", tau=1.345, inference=True, fit_intercept=True, **config):
        self.library, lib = library, library.lib
        c = Config()
        c.abi_version, c.struct_size = ABI_VERSION, ctypes.sizeof(Config)
        library.check(lib.rh_config_init(ctypes.byref(c)), "rh_config_init")
        c.space, c.dtype, c.penalty = library.space_value(space), RH_DTYPE_F64, RH_PENALTY_NONE
        c.tau, c.inference, c.fit_intercept = tau, 1 if inference else 0, 1 if fit_intercept else 0
        for name, value in config.items():
            setattr(c, name, value)
        self.handle = ctypes.c_void_p()
        library.check(lib.rh_model_create(ABI_VERSION, ctypes.byref(c), ctypes.byref(self.handle)), "create")
        self.q = None

    def __del__(self):
        if getattr(self, "handle", None):
            self.library.lib.rh_model_destroy(self.handle)

    def partial_fit(self, X, y, w=None):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        b = Batch()
        b.abi_version, b.struct_size = ABI_VERSION, ctypes.sizeof(Batch)
        b.x, b.y = X.ctypes.data, y.ctypes.data
        if w is not None:
            w = np.ascontiguousarray(w, dtype=np.float64)
            b.weights = w.ctypes.data
        b.rows, b.cols = X.shape
        b.layout, b.dtype, b.memory = RH_LAYOUT_ROW_MAJOR, RH_DTYPE_F64, RH_MEMORY_HOST
        self.library.check(self.library.lib.rh_model_partial_fit(self.handle, ctypes.byref(b), None), "partial_fit")
        self.q = X.shape[1] + 1

    def _array(self, function, length):
        out = np.empty(length)
        self.library.check(getattr(self.library.lib, function)(self.handle, out.ctypes.data, length), function)
        return out

    def covariance(self):
        return self._array("rh_model_covariance", self.q * self.q).reshape(self.q, self.q)

    def standard_errors(self):
        return self._array("rh_model_standard_errors", self.q)

    def z_statistics(self):
        return self._array("rh_model_z_statistics", self.q)

    def p_values(self):
        return self._array("rh_model_p_values", self.q)

    def confidence_intervals(self, level=0.95):
        lower, upper = np.empty(self.q), np.empty(self.q)
        self.library.check(self.library.lib.rh_model_confidence_intervals(
            self.handle, level, lower.ctypes.data, upper.ctypes.data, self.q), "confidence_intervals")
        return lower, upper

    def state(self):
        """β, J and K as arrays (q, q×q, q×q)."""
        q = self.q
        beta, J, K = np.empty(q), np.empty((q, q)), np.empty((q, q))
        st = State()
        st.abi_version, st.struct_size = ABI_VERSION, ctypes.sizeof(State)
        st.coefficients, st.information, st.score_variance = beta.ctypes.data, J.ctypes.data, K.ctypes.data
        st.coefficients_length, st.information_length, st.score_variance_length = q, q * q, q * q
        self.library.check(self.library.lib.rh_model_get_state(self.handle, ctypes.byref(st)), "get_state")
        return beta, J, K

    def coefficients(self):
        return self.state()[0]
