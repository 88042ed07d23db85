"""Device arrays. On any build: how CUDA arrays are recognised and read (a stand-in that publishes
__cuda_array_interface__ over host memory), and that a host space refuses them with the library's message. With a
CUDA build, a GPU and CuPy or PyTorch: fitting from device arrays gives the state of host input bit for bit, and
predict returns a device array of the input's kind (RH_PY_REQUIRE_DEVICE=1 makes their absence a failure)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import renewable_huber_kokkos as rk
from renewable_huber_kokkos import _arrays, _lib


class FakeCudaArray:
    """Publishes a NumPy array's memory as if it were device memory: only for the refusal and parsing tests."""

    def __init__(self, a: np.ndarray, typestr: str | None = None) -> None:
        self.a = a
        strides = None if a.flags.c_contiguous else a.strides
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": typestr or a.dtype.str, "strides": strides,
                                         "data": (a.ctypes.data, False), "version": 3, "stream": None}


def test_device_arrays_are_recognised():
    X = np.ones((4, 3))
    assert _arrays.is_device_array(FakeCudaArray(X))
    assert not _arrays.is_device_array(X)  # NumPy's own __dlpack_device__ is the CPU


def test_device_layouts_are_read_without_copies():
    base = np.arange(24.0).reshape(4, 6)
    m = _arrays.device_matrix(FakeCudaArray(base))
    assert (m.layout, m.ld, m.rows, m.cols, m.memory) == (_lib.LAYOUT_ROW_MAJOR, 0, 4, 6, _lib.MEMORY_DEVICE)
    m = _arrays.device_matrix(FakeCudaArray(base[:, 1:4]))  # a column slice: leading dimension 6
    assert (m.layout, m.ld, m.pointer) == (_lib.LAYOUT_ROW_MAJOR, 6, base.ctypes.data + 8)
    m = _arrays.device_matrix(FakeCudaArray(np.asfortranarray(base)))
    assert (m.layout, m.ld) == (_lib.LAYOUT_COL_MAJOR, 0)
    with pytest.raises(ValueError, match="layout"):
        _arrays.device_matrix(FakeCudaArray(base[::2, ::2]))
    with pytest.raises(TypeError, match="float32 or float64"):
        _arrays.device_matrix(FakeCudaArray(base.astype(np.float16)))


def test_dlpack_capsules_are_parsed():
    # NumPy's capsule is a CPU one: read through the same DLTensor layout, and refused as not CUDA.
    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("NumPy < 1.22 has no DLPack")
    with pytest.raises(ValueError, match="DLPack device type 1 is not CUDA"):
        _arrays._device_view(np.ones((2, 2)), "X")


def test_mixed_memories_are_refused(space):
    X = np.ones((10, 2))
    with pytest.raises(ValueError, match="one memory"):
        rk.RenewableHuberRegressor(space=space).fit(FakeCudaArray(X), np.ones(10))
    with pytest.raises(ValueError, match="one memory"):
        rk.RenewableHuberRegressor(space=space).fit(X, FakeCudaArray(np.ones(10)))


def test_host_spaces_refuse_device_memory(space):
    if space == "cuda":
        pytest.skip("the CUDA space takes device memory")
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    model = rk.RenewableHuberRegressor(space=space)
    with pytest.raises(rk.InvalidArgumentError, match="passed as device memory, but this execution space"):
        model.fit(FakeCudaArray(X), FakeCudaArray(y))
    assert not model.__sklearn_is_fitted__()
    model.fit(X, y)
    with pytest.raises(rk.InvalidArgumentError, match="device memory"):
        model.predict(FakeCudaArray(X))


def test_auto_space_follows_the_first_batch():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    parallel = [name for name in ("openmp", "threads") if name in rk.compiled_spaces()]
    assert rk.RenewableHuberRegressor().fit(X, y).space_ == (parallel[0] if parallel else "serial")
    assert rk.RenewableHuberRegressor(n_jobs=1).fit(X, y).space_ == "serial"
    if "cuda" not in rk.compiled_spaces():
        with pytest.raises(rk.UnavailableError):  # device input asks for CUDA, which this build lacks
            rk.RenewableHuberRegressor().fit(FakeCudaArray(X), FakeCudaArray(y))


# ---- on a GPU ------------------------------------------------------------------------------------------------------

def _frameworks():
    found = []
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append("cupy")
    except Exception:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            found.append("torch")
    except Exception:
        pass
    return found


def _to_device(framework, a):
    if framework == "cupy":
        import cupy

        return cupy.asarray(a)
    import torch

    return torch.as_tensor(a, device="cuda")


def _to_host(framework, a):
    return a.get() if framework == "cupy" else a.cpu().numpy()


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_device_arrays_on_cuda(framework, dtype):
    if "cuda" not in rk.compiled_spaces() or framework not in _frameworks():
        if os.environ.get("RH_PY_REQUIRE_DEVICE") == "1":
            pytest.fail(f"RH_PY_REQUIRE_DEVICE=1 but no CUDA space or no {framework} with a GPU")
        pytest.skip(f"needs the CUDA space and {framework} with a GPU")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 5)).astype(dtype)
    y = (X @ np.arange(1.0, 6.0) + rng.standard_t(2, size=2000)).astype(dtype)
    w = rng.uniform(0.5, 1.5, size=2000).astype(dtype)
    host = rk.RenewableHuberRegressor(space="cuda", dtype=dtype, inference=dtype == "float64")
    device = rk.RenewableHuberRegressor(dtype=dtype, inference=dtype == "float64")  # auto: CUDA for device input
    for i in range(4):
        rows = slice(i * 500, (i + 1) * 500)
        host.partial_fit(X[rows], y[rows], sample_weight=w[rows])
        device.partial_fit(_to_device(framework, X[rows]), _to_device(framework, y[rows]),
                           sample_weight=_to_device(framework, w[rows]))
    assert device.space_ == "cuda"
    a, b = host.state_, device.state_
    np.testing.assert_array_equal(a.coefficients, b.coefficients)  # docs/abi.md: device input is bitwise host input
    np.testing.assert_array_equal(a.information, b.information)
    Xd = _to_device(framework, X)
    prediction = device.predict(Xd)
    assert type(prediction) is type(Xd) and str(prediction.dtype).endswith(dtype)
    if framework == "torch":
        assert prediction.device == Xd.device
    np.testing.assert_array_equal(_to_host(framework, prediction), host.predict(X))
    np.testing.assert_array_equal(_to_host(framework, device.predict(_to_device(framework, np.asfortranarray(X)))),
                                  host.predict(X))  # column-major on the device, no copy
    assert device.score(Xd, _to_device(framework, y)) == host.score(X, y)
