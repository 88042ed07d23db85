"""How caller arrays reach the library: host NumPy arrays by pointer, CUDA arrays (CuPy, PyTorch, anything with
``__cuda_array_interface__`` or a CUDA DLPack capsule) by device pointer, without copies where the layout allows.

A host array goes as it is when it has the model's dtype, is aligned, and its rows (or columns) are contiguous:
C order, F order (column-major) and row or column slices of a larger array (a leading dimension) are all passed
by pointer, and the library's results do not depend on the layout (docs/abi.md, "Passing data"). Anything else
(another dtype, a list, a pandas frame of mixed dtypes, negative or element strides) is converted once to a
C-ordered array of the model's dtype. Device arrays are never converted: they must already have the model's dtype
and a layout the library reads.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _lib

_HOST_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}
_TYPESTR = {"<f4": "float32", "<f8": "float64"}
_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


@dataclass
class Matrix:
    """X as the library reads it: a pointer, its shape, layout and leading dimension."""

    pointer: int
    rows: int
    cols: int
    ld: int
    layout: int
    dtype: str
    memory: int
    owner: Any  # keeps the memory (and a DLPack capsule) alive during the call


@dataclass
class Vector:
    pointer: int
    length: int
    dtype: str
    memory: int
    owner: Any


# ---- device arrays -----------------------------------------------------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def is_device_array(obj: Any) -> bool:
    """A CUDA array: ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) or a DLPack device of kind CUDA."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or isinstance(obj, np.ndarray):
        return False
    try:
        return int(device()[0]) in _DLPACK_CUDA
    except Exception:
        return False


def _synchronize_producer(obj: Any) -> None:
    """Work the producer queued on a stream of its own must be finished before the library reads the array (the
    library runs on the device's default stream). CuPy and PyTorch are asked directly; others are assumed ready."""
    module = type(obj).__module__.split(".")[0]
    if module == "torch":
        import torch  # noqa: PLC0415 -- only for PyTorch callers
        torch.cuda.current_stream(obj.device).synchronize()
    elif module == "cupy":
        import cupy  # noqa: PLC0415
        cupy.cuda.get_current_stream().synchronize()


def _device_view(obj: Any, name: str) -> tuple[int, tuple[int, ...], tuple[int, ...] | None, str, Any]:
    """(pointer, shape, strides in elements or None for C order, dtype name, owner) of a CUDA array."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        dtype = _TYPESTR.get(cai["typestr"])
        if dtype is None:
            raise TypeError(f"{name}: a CUDA array of type {cai['typestr']}; float32 or float64 is needed "
                            "(device arrays are not converted)")
        itemsize = 4 if dtype == "float32" else 8
        strides = cai.get("strides")
        if strides is not None:
            if any(s % itemsize for s in strides):
                raise ValueError(f"{name}: device array strides {strides} are not whole elements")
            strides = tuple(s // itemsize for s in strides)
        if cai.get("stream") not in (None, 1, 2):  # 1, 2: the legacy and per-thread default streams
            _synchronize_producer(obj)
        return int(cai["data"][0] or 0), tuple(int(s) for s in cai["shape"]), strides, dtype, obj
    capsule = obj.__dlpack__()
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))  # DLManagedTensor starts with it
    if tensor.device.device_type not in _DLPACK_CUDA:
        raise ValueError(f"{name}: DLPack device type {tensor.device.device_type} is not CUDA")
    code_bits = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
    dtype = {(2, 32, 1): "float32", (2, 64, 1): "float64"}.get(code_bits)
    if dtype is None:
        raise TypeError(f"{name}: a DLPack tensor of type code {code_bits}; float32 or float64 is needed")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides else None
    return int(tensor.data or 0) + int(tensor.byte_offset), shape, strides, dtype, (obj, capsule)


# ---- host arrays -------------------------------------------------------------------------------------------------


def _strided_layout(shape: tuple[int, int], strides: tuple[int, ...] | None) -> tuple[int, int] | None:
    """(layout, ld) the library reads a 2-D array of element strides in, or None when it cannot."""
    rows, cols = shape
    if strides is None:
        return _lib.LAYOUT_ROW_MAJOR, 0
    s0, s1 = strides
    if (s1 == 1 or cols == 1) and (s0 >= cols or rows == 1):
        return _lib.LAYOUT_ROW_MAJOR, (s0 if rows > 1 and s0 != cols else 0)
    if (s0 == 1 or rows == 1) and (s1 >= rows or cols == 1):
        return _lib.LAYOUT_COL_MAJOR, (s1 if cols > 1 and s1 != rows else 0)
    return None


def host_matrix(X: np.ndarray, dtype: str) -> Matrix:
    """X (already a 2-D float NumPy array, see estimator validation) by pointer, or copied once when it must be."""
    if _HOST_DTYPES.get(X.dtype) != dtype or not X.flags.aligned:
        X = np.ascontiguousarray(X, dtype=dtype)
    itemsize = X.itemsize
    layout = None
    if all(s >= 0 and s % itemsize == 0 for s in X.strides):
        layout = _strided_layout(X.shape, tuple(s // itemsize for s in X.strides))
    if layout is None:
        X = np.ascontiguousarray(X)
        layout = (_lib.LAYOUT_ROW_MAJOR, 0)
    return Matrix(X.ctypes.data, X.shape[0], X.shape[1], layout[1], layout[0], dtype, _lib.MEMORY_HOST, X)


def host_vector(v: np.ndarray, dtype: str) -> Vector:
    if _HOST_DTYPES.get(v.dtype) != dtype or not v.flags.aligned or not v.flags.c_contiguous:
        v = np.ascontiguousarray(v, dtype=dtype)
    return Vector(v.ctypes.data, v.shape[0], dtype, _lib.MEMORY_HOST, v)


def device_matrix(X: Any, name: str = "X") -> Matrix:
    pointer, shape, strides, dtype, owner = _device_view(X, name)
    if len(shape) != 2:
        raise ValueError(f"Expected 2D array, got a {len(shape)}-D device array for {name} instead")
    layout = _strided_layout(shape, strides) if strides is not None else (_lib.LAYOUT_ROW_MAJOR, 0)
    if layout is None:
        raise ValueError(f"{name}: device array strides {strides} (in elements) have no row- or column-major "
                         "layout; make it contiguous first (device arrays are not copied)")
    return Matrix(pointer, shape[0], shape[1], layout[1], layout[0], dtype, _lib.MEMORY_DEVICE, owner)


def device_vector(v: Any, name: str) -> Vector:
    pointer, shape, strides, dtype, owner = _device_view(v, name)
    if len(shape) == 2 and shape[1] == 1:
        shape, strides = (shape[0],), (strides[0],) if strides is not None else None
    if len(shape) != 1:
        raise ValueError(f"{name} must be 1-D, got a device array of shape {shape}")
    if strides is not None and shape[0] > 1 and strides[0] != 1:
        raise ValueError(f"{name}: a strided device vector (stride {strides[0]}); make it contiguous first")
    return Vector(pointer, shape[0], dtype, _lib.MEMORY_DEVICE, owner)


def empty_like_device(X: Any, length: int, dtype: str) -> tuple[Any, int]:
    """A device vector of the same kind as X (CuPy, PyTorch, or an array-API namespace) and its pointer."""
    module = type(X).__module__.split(".")[0]
    if module == "torch":
        import torch  # noqa: PLC0415
        out = torch.empty(length, dtype=getattr(torch, dtype), device=X.device)
        return out, int(out.data_ptr())
    if module == "cupy":
        import cupy  # noqa: PLC0415
        with cupy.cuda.Device(X.device.id):
            out = cupy.empty(length, dtype=dtype)
        return out, int(out.data.ptr)
    namespace = getattr(X, "__array_namespace__", None)
    if namespace is None:
        raise TypeError(f"cannot allocate a device result like a {type(X).__name__}: CuPy, PyTorch or an "
                        "array-API array is needed")
    xp = namespace()
    out = xp.empty((length,), dtype=getattr(xp, dtype), device=X.device)
    return out, _device_view(out, "out")[0]
