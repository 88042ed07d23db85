"""One Python exception per C status (rh.h, docs/abi.md "Statuses and error messages").

A failing call changes nothing in the model, so each of these leaves the estimator as it was.
"""

from __future__ import annotations


class RenewableHuberError(Exception):
    """Base of every error the library reports. ``status`` is the C ``rh_status``, ``message`` its text."""

    status: int = -1
    status_name: str = "RH_UNKNOWN"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(RenewableHuberError, ValueError):
    """RH_INVALID_ARGUMENT: bad shape, NaN/Inf, wrong dtype or memory, bad configuration value, bad file."""

    status, status_name = 1, "RH_INVALID_ARGUMENT"


class InvalidStateError(RenewableHuberError, RuntimeError):
    """RH_INVALID_STATE: the model is not fitted, or a state to import is inconsistent."""

    status, status_name = 2, "RH_INVALID_STATE"


class UnavailableError(RenewableHuberError, RuntimeError):
    """RH_UNAVAILABLE: a space not compiled in, an absent device, or inference the model cannot give."""

    status, status_name = 3, "RH_UNAVAILABLE"


class AllocationFailedError(RenewableHuberError, MemoryError):
    """RH_ALLOCATION_FAILED: memory could not be obtained, or the memory limit would be exceeded."""

    status, status_name = 4, "RH_ALLOCATION_FAILED"


class NumericalError(RenewableHuberError, RuntimeError):
    """RH_NUMERICAL_ERROR: a non-finite state or objective (nothing committed), or a singular J for inference."""

    status, status_name = 5, "RH_NUMERICAL_ERROR"


class DeviceError(RenewableHuberError, RuntimeError):
    """RH_DEVICE_ERROR: an execution-space runtime call failed."""

    status, status_name = 6, "RH_DEVICE_ERROR"


class CorruptDataError(RenewableHuberError, ValueError):
    """RH_CORRUPT_DATA: a checkpoint failed its structure, consistency or checksum test, or is truncated."""

    status, status_name = 7, "RH_CORRUPT_DATA"


class VersionMismatchError(RenewableHuberError, ValueError):
    """RH_VERSION_MISMATCH: another ABI major, or a checkpoint format this library cannot read."""

    status, status_name = 8, "RH_VERSION_MISMATCH"


class InternalError(RenewableHuberError, RuntimeError):
    """RH_INTERNAL_ERROR: a bug in the library; please report it with the message."""

    status, status_name = 9, "RH_INTERNAL_ERROR"


class LibraryNotFoundError(RenewableHuberError, ImportError):
    """No compiled library could be found or loaded (RH_LIBRARY, the packaged copy, the system paths)."""


STATUS_ERRORS: dict[int, type[RenewableHuberError]] = {
    cls.status: cls
    for cls in (InvalidArgumentError, InvalidStateError, UnavailableError, AllocationFailedError, NumericalError,
                DeviceError, CorruptDataError, VersionMismatchError, InternalError)
}


def error_for(status: int, message: str) -> RenewableHuberError:
    cls = STATUS_ERRORS.get(status, InternalError)
    return cls(message, status)
