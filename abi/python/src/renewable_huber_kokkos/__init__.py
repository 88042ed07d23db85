"""renewable-huber-kokkos: the renewable Huber estimator (RHE) and its L1 variant (RPSHE) of the renewable-huber
library, through its C ABI, as a scikit-learn estimator. docs/python.md is the guide."""

from ._errors import (AllocationFailedError, CorruptDataError, DeviceError, InternalError, InvalidArgumentError,
                      InvalidStateError, LibraryNotFoundError, NumericalError, RenewableHuberError, UnavailableError,
                      VersionMismatchError)
from ._lib import load_library
from .estimator import Diagnostics, RenewableHuberRegressor, State, Summary
from .group import RegressorGroup

try:  # the distribution's version (the project's); a source checkout on PYTHONPATH has none
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("renewable-huber-kokkos")
except PackageNotFoundError:
    __version__ = "0+source"


def compiled_spaces() -> list[str]:
    """Names of the execution spaces the loaded library was built with, in RH_SPACE_* order."""
    return [s["name"] for s in load_library().spaces()]


def library_version() -> str:
    return load_library().version


def set_memory_limit(nbytes: int) -> None:
    """The most memory one model may hold, process-wide (rh_set_memory_limit); 0 restores the default, the host's
    physical memory. A call that would need more raises AllocationFailedError and changes nothing."""
    import ctypes

    lib = load_library()
    lib.check(lib.set_memory_limit(ctypes.c_uint64(int(nbytes))))


def memory_limit() -> int:
    import ctypes

    lib, value = load_library(), ctypes.c_uint64()
    lib.check(lib.get_memory_limit(ctypes.byref(value)))
    return value.value


__all__ = ["RenewableHuberRegressor", "RegressorGroup", "Diagnostics", "State", "Summary", "load_library", "compiled_spaces",
           "library_version", "set_memory_limit", "memory_limit", "RenewableHuberError", "InvalidArgumentError", "InvalidStateError", "UnavailableError",
           "AllocationFailedError", "NumericalError", "DeviceError", "CorruptDataError", "VersionMismatchError",
           "InternalError", "LibraryNotFoundError"]
