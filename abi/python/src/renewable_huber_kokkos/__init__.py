"""renewable-huber-kokkos: the renewable Huber estimator (RHE) and its L1 variant (RPSHE) of the renewable-huber
library, through its C ABI, as a scikit-learn estimator. docs/python.md is the guide."""

from ._errors import (AllocationFailedError, CorruptDataError, DeviceError, InternalError, InvalidArgumentError,
                      InvalidStateError, LibraryNotFoundError, NumericalError, RenewableHuberError, UnavailableError,
                      VersionMismatchError)
from ._lib import load_library
from .estimator import Diagnostics, RenewableHuberRegressor, State, Summary

__version__ = "0.2.0"


def compiled_spaces() -> list[str]:
    """Names of the execution spaces the loaded library was built with ("serial", "openmp", "cuda")."""
    return [s["name"] for s in load_library().spaces()]


def library_version() -> str:
    return load_library().version


__all__ = ["RenewableHuberRegressor", "Diagnostics", "State", "Summary", "load_library", "compiled_spaces",
           "library_version", "RenewableHuberError", "InvalidArgumentError", "InvalidStateError", "UnavailableError",
           "AllocationFailedError", "NumericalError", "DeviceError", "CorruptDataError", "VersionMismatchError",
           "InternalError", "LibraryNotFoundError"]
