"""The C ABI (abi/include/rh/rh.h) through ctypes: struct layouts, prototypes, loading, status to exception.

ctypes.CDLL releases the GIL for the length of every foreign call, so other Python threads run while the library
computes (docs/python.md, "Threads"). Nothing here binds the C++ API: rh.h is the one boundary.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import threading
import weakref
from pathlib import Path

from ._errors import LibraryNotFoundError, VersionMismatchError, error_for

ABI_MAJOR, ABI_MINOR = 1, 2  # the rh.h this module is written against
ABI_VERSION = (ABI_MAJOR << 16) | ABI_MINOR

SUCCESS = 0
DTYPE = {"float32": 1, "float64": 2}
LAYOUT_ROW_MAJOR, LAYOUT_COL_MAJOR = 1, 2
MEMORY_HOST, MEMORY_DEVICE = 1, 2

_i32, _u32, _i64, _f64 = ctypes.c_int32, ctypes.c_uint32, ctypes.c_int64, ctypes.c_double
_dptr = ctypes.POINTER(ctypes.c_double)


class _Versioned(ctypes.Structure):
    """RH_STRUCT_INIT: zeroed, with the ABI version and the struct's size in its header."""

    def __init__(self) -> None:
        super().__init__()
        self.abi_version = ABI_VERSION
        self.struct_size = ctypes.sizeof(self)


class Config(_Versioned):
    _fields_ = [("abi_version", _u32), ("struct_size", _u32), ("tau", _f64), ("lambda_scale", _f64),
                ("bandwidth_scale", _f64), ("tol", _f64), ("ridge", _f64), ("penalty", _i32),
                ("fit_intercept", _i32), ("max_iter", _i32), ("dtype", _i32), ("space", _i32),
                ("device_id", _i32), ("host_threads", _i32), ("reserved0", _i32), ("inference", _i32),
                ("reserved1", _i32)]


class Batch(_Versioned):
    _fields_ = [("abi_version", _u32), ("struct_size", _u32), ("x", ctypes.c_void_p), ("y", ctypes.c_void_p),
                ("weights", ctypes.c_void_p), ("rows", _i64), ("cols", _i64), ("ld", _i64), ("layout", _i32),
                ("dtype", _i32), ("memory", _i32), ("reserved0", _i32)]


class Diagnostics(_Versioned):
    _fields_ = [("abi_version", _u32), ("struct_size", _u32), ("iterations", _i32), ("converged", _i32),
                ("used_regularized_fallback", _i32), ("reserved0", _i32), ("objective", _f64),
                ("lambda_value", _f64), ("bandwidth", _f64)]


class State(_Versioned):
    _fields_ = [("abi_version", _u32), ("struct_size", _u32), ("coefficients", _dptr), ("information", _dptr),
                ("coefficients_length", _i64), ("information_length", _i64), ("n_features", _i64),
                ("n_samples_seen", _i64), ("batch_count", _i64), ("previous_lambda", _f64), ("weight_sum", _f64),
                ("fit_intercept", _i32), ("reserved0", _i32), ("score_variance", _dptr),
                ("score_variance_length", _i64), ("score_variance_batches", _i64)]

    # The renewable state as estimator.State holds it: each array with its rank (q or q x q values, q =
    # coefficients_length), then the scalars in rh_state's order, each with the Python type it reads as (an int32 of
    # rh_state is a flag).
    ARRAY_RANKS = {"coefficients": 1, "information": 2, "score_variance": 2}

    @classmethod
    def scalars(cls) -> list[tuple[str, type]]:
        kinds = {_i64: int, _f64: float, _i32: bool}
        return [(name, kinds[ctype]) for name, ctype in cls._fields_
                if ctype in kinds and not name.startswith("reserved") and not name.endswith("_length")]


class SpaceInfo(_Versioned):
    _fields_ = [("abi_version", _u32), ("struct_size", _u32), ("space", _i32), ("device_count", _i32),
                ("concurrency", _i32), ("reserved0", _i32), ("name", ctypes.c_char * 16),
                ("own_memory", _i32), ("reserved1", _i32)]  # ABI 1.2


# The sizes and offsets of docs/abi.md "Struct layouts" (64-bit platforms): a drift here would be silent memory
# corruption, so it is checked at import.
for _struct, _size in ((Config, 88), (Batch, 72), (Diagnostics, 48), (State, 112), (SpaceInfo, 48)):
    if ctypes.sizeof(_struct) != _size:
        raise ImportError(f"{_struct.__name__} is {ctypes.sizeof(_struct)} bytes, rh.h says {_size}")

_model_p = ctypes.c_void_p
_PROTOTYPES = {
    "rh_abi_version": (_u32, []),
    "rh_library_version": (ctypes.c_char_p, []),
    "rh_status_string": (ctypes.c_char_p, [_i32]),
    "rh_last_error": (ctypes.c_char_p, []),
    "rh_init": (_i32, [_u32, _i32, _i32]),
    "rh_set_memory_limit": (_i32, [ctypes.c_uint64]),
    "rh_get_memory_limit": (_i32, [ctypes.POINTER(ctypes.c_uint64)]),
    "rh_space_count": (_i32, [ctypes.POINTER(_i32)]),
    "rh_space_get": (_i32, [_i32, ctypes.POINTER(SpaceInfo)]),
    "rh_space_name": (_i32, [_i32, ctypes.POINTER(ctypes.c_char_p)]),
    "rh_penalty_name": (_i32, [_i32, ctypes.POINTER(ctypes.c_char_p)]),
    "rh_config_init": (_i32, [ctypes.POINTER(Config)]),
    "rh_model_create": (_i32, [_u32, ctypes.POINTER(Config), ctypes.POINTER(_model_p)]),
    "rh_model_destroy": (_i32, [_model_p]),
    "rh_model_last_error": (ctypes.c_char_p, [_model_p]),
    "rh_model_get_config": (_i32, [_model_p, ctypes.POINTER(Config)]),
    "rh_model_partial_fit": (_i32, [_model_p, ctypes.POINTER(Batch), ctypes.POINTER(Diagnostics)]),
    "rh_model_fit": (_i32, [_model_p, ctypes.POINTER(Batch), ctypes.POINTER(Diagnostics)]),
    "rh_model_predict": (_i32, [_model_p, ctypes.POINTER(Batch), ctypes.c_void_p, _i64]),
    "rh_model_score": (_i32, [_model_p, ctypes.POINTER(Batch), ctypes.POINTER(_f64)]),
    "rh_model_diagnostics": (_i32, [_model_p, ctypes.POINTER(Diagnostics)]),
    "rh_model_reset": (_i32, [_model_p]),
    "rh_model_covariance": (_i32, [_model_p, _dptr, _i64]),
    "rh_model_standard_errors": (_i32, [_model_p, _dptr, _i64]),
    "rh_model_z_statistics": (_i32, [_model_p, _dptr, _i64]),
    "rh_model_p_values": (_i32, [_model_p, _dptr, _i64]),
    "rh_model_confidence_intervals": (_i32, [_model_p, _f64, _dptr, _dptr, _i64]),
    "rh_model_get_state": (_i32, [_model_p, ctypes.POINTER(State)]),
    "rh_model_set_state": (_i32, [_model_p, ctypes.POINTER(State)]),
    "rh_model_save_checkpoint": (_i32, [_model_p, ctypes.c_void_p, _i64, ctypes.POINTER(_i64)]),
    "rh_model_save_checkpoint_file": (_i32, [_model_p, ctypes.c_char_p]),
    "rh_model_load_checkpoint": (_i32, [_model_p, ctypes.c_void_p, _i64]),
    "rh_model_load_checkpoint_file": (_i32, [_model_p, ctypes.c_char_p]),
}

# Model groups (ABI 1.4): bound when the library has them; RegressorGroup needs them, the estimator does not.
_GROUP_PROTOTYPES = {
    "rh_group_create": (_i32, [_u32, ctypes.POINTER(Config), _i64, _i64, ctypes.POINTER(_model_p)]),
    "rh_group_destroy": (_i32, [_model_p]),
    "rh_group_get_config": (_i32, [_model_p, ctypes.POINTER(Config)]),
    "rh_group_partial_fit": (_i32, [_model_p, ctypes.POINTER(Batch), ctypes.POINTER(_i64), _i64, ctypes.POINTER(_i64)]),
    "rh_group_predict": (_i32, [_model_p, ctypes.POINTER(Batch), ctypes.POINTER(_i64), _i64, ctypes.c_void_p, _i64]),
    "rh_group_get_state": (_i32, [_model_p, _i64, ctypes.POINTER(State)]),
    "rh_group_diagnostics": (_i32, [_model_p, _i64, ctypes.POINTER(Diagnostics)]),
    "rh_group_model_status": (_i32, [_model_p, _i64, ctypes.POINTER(_i32), ctypes.c_char_p, _i64]),
    "rh_group_n_models": (_i32, [_model_p, ctypes.POINTER(_i64)]),
    "rh_group_n_features": (_i32, [_model_p, ctypes.POINTER(_i64)]),
    "rh_group_reset": (_i32, [_model_p, _i64]),
    "rh_group_save_checkpoint": (_i32, [_model_p, ctypes.c_void_p, _i64, ctypes.POINTER(_i64)]),
    "rh_group_save_checkpoint_file": (_i32, [_model_p, ctypes.c_char_p]),
    "rh_group_load_checkpoint": (_i32, [_model_p, ctypes.c_void_p, _i64]),
    "rh_group_load_checkpoint_file": (_i32, [_model_p, ctypes.c_char_p]),
}

SONAME = f"librenewable_huber.so.{ABI_MAJOR}"


class Library:
    """One loaded librenewable_huber: its functions with prototypes, the compiled spaces, the version."""

    def __init__(self, path: str, loader: type = ctypes.CDLL) -> None:
        self.path = path
        try:
            self.dll = loader(path)
        except OSError as error:
            raise LibraryNotFoundError(f"cannot load {path}: {error}") from error
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                function = getattr(self.dll, name)
            except AttributeError as error:
                raise VersionMismatchError(f"{path} has no {name}: it implements an ABI older than "
                                           f"{ABI_MAJOR}.{ABI_MINOR}") from error
            function.restype, function.argtypes = restype, argtypes
            setattr(self, name[3:], function)  # rh_model_fit -> self.model_fit
        self.has_groups = all(hasattr(self.dll, name) for name in _GROUP_PROTOTYPES)
        for name, (restype, argtypes) in (_GROUP_PROTOTYPES.items() if self.has_groups else ()):
            function = getattr(self.dll, name)
            function.restype, function.argtypes = restype, argtypes
            setattr(self, name[3:], function)
        version = self.abi_version()
        if version >> 16 != ABI_MAJOR or (version & 0xFFFF) < ABI_MINOR:
            raise VersionMismatchError(f"{path} implements ABI {version >> 16}.{version & 0xFFFF}; this package "
                                       f"needs {ABI_MAJOR}.{ABI_MINOR} or a later {ABI_MAJOR}.x")
        self.version = self.library_version().decode()
        # {name: RH_SPACE_* / RH_PENALTY_* value} of every space and penalty the library knows, compiled or not
        self.space_values, self.penalty_values = self._known(self.space_name), self._known(self.penalty_name)
        self.penalty_names = {v: k for k, v in self.penalty_values.items()}

    @staticmethod
    def _known(name_of) -> dict[str, int]:
        """The library's names of the values 1, 2, ... up to the first it does not know (rh_space_name and
        rh_penalty_name): nothing here repeats the lists of rh.h."""
        out, name = {}, ctypes.c_char_p()
        while name_of(len(out) + 1, ctypes.byref(name)) == SUCCESS:
            out[name.value.decode()] = len(out) + 1
        return out

    def check(self, status: int) -> None:
        """Raises the exception of a failed call, with this thread's message (rh_last_error)."""
        if status != SUCCESS:
            raise error_for(status, self.last_error().decode(errors="replace"))

    def spaces(self) -> list[dict]:
        count = _i32()
        self.check(self.space_count(ctypes.byref(count)))
        out = []
        for i in range(count.value):
            info = SpaceInfo()
            self.check(self.space_get(i, ctypes.byref(info)))
            out.append({"name": info.name.decode(), "space": info.space, "device_count": info.device_count,
                        "concurrency": info.concurrency, "own_memory": bool(info.own_memory)})
        return out


_lock = threading.Lock()
_library: Library | None = None


def _candidates() -> list[str]:
    """Where a library may be, in order: RH_LIBRARY, the copy installed inside this package, the system."""
    env = os.environ.get("RH_LIBRARY")
    if env:
        return [env]  # named explicitly: nothing else is tried
    here = Path(__file__).resolve().parent
    found = [str(p) for p in (here / SONAME, here / "librenewable_huber.so") if p.exists()]
    system = ctypes.util.find_library("renewable_huber")
    if system:
        found.append(system)
    return found


def load_library(path: str | os.PathLike | None = None) -> Library:
    """Loads the compiled library once per process (CPU or CUDA build) and returns it.

    ``path`` (or else the environment variable RH_LIBRARY) names the file; without either, the copy installed with
    the package is used, then one the system loader finds. A process has one library: asking for another file after
    the first load raises RuntimeError (each carries its own Kokkos runtime, started once per process).
    """
    global _library
    with _lock:
        if _library is not None:
            if path is not None and os.path.realpath(path) != os.path.realpath(_library.path):
                raise RuntimeError(f"{_library.path} is already loaded; one library per process "
                                   f"(cannot switch to {path})")
            return _library
        paths = [os.fspath(path)] if path is not None else _candidates()
        if not paths:
            raise LibraryNotFoundError(
                "no renewable-huber library found: set RH_LIBRARY to librenewable_huber.so.1 (a CPU or CUDA "
                "build), or install the package with `pip install .` so that it carries one")
        errors = []
        for candidate in paths:
            try:
                _library = Library(candidate)
                return _library
            except LibraryNotFoundError as error:
                errors.append(str(error))
        raise LibraryNotFoundError("; ".join(errors))


def library() -> Library:
    return _library if _library is not None else load_library()


# Models still alive at interpreter exit are destroyed before the library's own exit handler finalizes Kokkos
# (docs/abi.md, "Lifecycle": models alive then are not torn down).
_live_handles: "weakref.WeakSet" = weakref.WeakSet()


class Handle:
    """Owns one rh_model*; destroyed with the Python object or at exit, whichever comes first."""

    __slots__ = ("lib", "value", "__weakref__")

    def __init__(self, lib: Library, config: Config) -> None:
        self._create(lib, lambda out: lib.model_create(ABI_VERSION, ctypes.byref(config), out))

    def _create(self, lib: Library, create) -> None:
        self.lib = lib
        self.value = None
        value = _model_p()
        lib.check(create(ctypes.byref(value)))
        self.value = value
        _live_handles.add(self)

    def _destroy(self, value) -> None:
        self.lib.model_destroy(value)

    def close(self) -> None:
        value, self.value = self.value, None
        if value is not None:
            self._destroy(value)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: ctypes may already be gone
            pass


class GroupHandle(Handle):
    """Owns one rh_group* (ABI 1.4), with the same lifetime rules as a model's Handle."""

    __slots__ = ()

    def __init__(self, lib: Library, config: Config, n_models: int, n_features: int) -> None:
        self._create(lib, lambda out: lib.group_create(ABI_VERSION, ctypes.byref(config), n_models, n_features, out))

    def _destroy(self, value) -> None:
        self.lib.group_destroy(value)


@atexit.register
def _destroy_live_models() -> None:
    for handle in list(_live_handles):
        handle.close()
    # Windows: the DLL does not finalize its runtime at exit (docs/windows.md), so it is ended here, while its
    # threads still run. A library older than ABI 1.3 has no rh_finalize.
    if os.name == "nt" and _library is not None and hasattr(_library.dll, "rh_finalize"):
        _library.dll.rh_finalize()
