"""The peers' worker: the same line protocol as perf/rh_perf_worker (``load FILE``, ``run ENGINE DTYPE PENALTY
LIFECYCLE OPERATION INPUT REPS``, ``group ENGINE DTYPE PENALTY loop MODELS REPS``, ``quit``; one JSON line per
answer), for engines that are not ours:

  numpy, native_cpu   the reference project's RenewableHuberRegressor (PyPI renewable-huber, backend="numpy";
                      renewable-huber-native-cpu, backend="native_cpu" with n_jobs = RH_PEER_THREADS)
  cupy                the reference's backend="cupy", device="cuda" (input host: NumPy arrays; device: CuPy arrays
                      copied once, untimed); every timed operation ends with a device synchronization
  sklearn_sgd         scikit-learn SGDRegressor(loss="huber"), one partial_fit per batch (one pass, no tolerance)
  sklearn_huber       scikit-learn HuberRegressor fitted on all rows (the batches concatenated, untimed)
  rh_python_SPACE     our own Python package (abi/python, renewable_huber_kokkos) on SPACE, over the library that
                      RH_LIBRARY names: what a Python user of ours gets, beside the worker's C++ calls (rh:SPACE)

The scikit-learn estimators solve different problems (a stochastic one-pass Huber fit; a full-data Huber with its
own scale estimate): they are timed for scale and judged by their coefficient error against the generating truth,
which the driver computes. Only the public estimator APIs are used.

Run as ``python -m rhperf.peer_worker`` with perf/ on PYTHONPATH, by an interpreter that has the packages (the
reference's venv, Debian's python3 for scikit-learn, the GPU machine's python3 for CuPy).
"""
from __future__ import annotations

import gc
import json
import os
import platform
import sys
import time

import numpy as np

from rhperf import data as rhdata

THREADS = int(os.environ.get("RH_PEER_THREADS", "2"))
# SGDRegressor's counterpart of each of our penalties; one without a counterpart is skipped for that peer.
SGD_PENALTY = {"none": None, "l1": "l1"}


def _optional(module: str):
    try:
        return __import__(module)
    except Exception:  # noqa: BLE001 - an absent peer is reported, not fatal
        return None


class Skip(Exception):
    """A combination the engine does not define (reported as skipped, with this reason)."""


class Peers:
    def __init__(self) -> None:
        self.rh = _optional("renewable_huber")
        self.cupy = _optional("cupy")
        self.sklearn = _optional("sklearn")
        self.rk = _optional("renewable_huber_kokkos")
        self.x = self.y = None
        self.batch = self.models = 0
        self.cache: dict = {}
        self.steady: dict = {}

    def info(self) -> dict:
        out = {"ready": True, "engine": "peer", "python": platform.python_version(), "numpy": np.__version__,
               "threads": THREADS, "engines": []}
        try:
            import threadpoolctl

            out["blas"] = [{k: t.get(k) for k in ("internal_api", "version", "architecture", "num_threads",
                                                   "threading_layer")} for t in threadpoolctl.threadpool_info()]
        except Exception as e:  # noqa: BLE001
            out["blas"] = f"threadpoolctl unavailable: {e}"
        if self.rh is not None:
            out["renewable_huber"] = self.rh.__version__
            out["engines"].append("numpy")
            native = _optional("_renewable_huber_native_cpu")
            if native is not None:
                out["native_cpu"] = native.version()
                out["engines"].append("native_cpu")
            if self.cupy is not None:
                try:
                    rt = self.cupy.cuda.runtime
                    props = rt.getDeviceProperties(0)
                    name = props["name"]
                    out["cupy"] = self.cupy.__version__
                    out["gpu"] = {"name": name.decode() if isinstance(name, bytes) else name,
                                  "compute_capability": f"{props['major']}.{props['minor']}",
                                  "driver_version": rt.driverGetVersion(), "runtime_version": rt.runtimeGetVersion()}
                    out["engines"].append("cupy")
                except Exception as e:  # noqa: BLE001 - CuPy without a GPU
                    out["cupy"] = f"{self.cupy.__version__} (no usable GPU: {e})"
        if self.sklearn is not None:
            out["sklearn"] = self.sklearn.__version__
            out["engines"] += ["sklearn_sgd", "sklearn_huber"]
        if self.rk is not None:
            try:
                out["renewable_huber_kokkos"] = f"{self.rk.__version__} on {self.rk.library_version()}"
                out["engines"] += [f"rh_python_{space}" for space in self.rk.compiled_spaces()]
            except Exception as e:  # noqa: BLE001 - no library to load: reported, not fatal
                out["renewable_huber_kokkos"] = f"unavailable: {e}"
        return out

    def load(self, path: str) -> dict:
        self.x, self.y, self.batch, self.models = rhdata.read(np, path)
        self.cache.clear()
        self.steady.clear()
        return {"loaded": True, "samples": int(self.x.shape[0]), "features": int(self.x.shape[1]),
                "batch": self.batch, "models": self.models}

    # Arrays in the run's dtype and place, made once per load (untimed): the engines get contiguous batches
    # already in their dtype, as our worker does.
    def arrays(self, dtype: str, device: bool):
        key = (dtype, device)
        if key not in self.cache:
            npdt = np.float32 if dtype == "f32" else np.float64
            x, y = np.ascontiguousarray(self.x, dtype=npdt), np.ascontiguousarray(self.y, dtype=npdt)
            if device:
                x, y = self.cupy.asarray(x), self.cupy.asarray(y)
            self.cache[key] = (x, y)
        return self.cache[key]

    def sync(self, engine: str) -> None:
        if engine == "cupy":
            self.cupy.cuda.runtime.deviceSynchronize()

    def reference(self, engine: str, dtype: str, penalty: str):
        if engine.startswith("rh_python_"):
            return self.rk.RenewableHuberRegressor(space=engine[len("rh_python_"):], penalty=penalty,
                                                   dtype="float32" if dtype == "f32" else "float64")
        kwargs = dict(penalty=penalty, backend=engine, dtype="float32" if dtype == "f32" else "float64")
        if engine == "native_cpu":
            kwargs["n_jobs"] = THREADS
        if engine == "cupy":
            kwargs["device"] = "cuda"
        return self.rh.RenewableHuberRegressor(**kwargs)

    def run(self, engine: str, dtype: str, penalty: str, lifecycle: str, operation: str, where: str,
            reps: int) -> dict:
        if self.x is None:
            raise RuntimeError("no data loaded (load FILE first)")
        device = where == "device"
        if device and engine != "cupy":
            raise Skip(f"{engine} has no device input")
        if lifecycle == "steady" and operation == "fit":
            raise Skip("the steady lifecycle is defined for partial_fit only")
        if engine.startswith("sklearn"):
            return self.run_sklearn(engine, dtype, penalty, lifecycle, operation, reps)
        ours = engine.startswith("rh_python_")
        if ours and lifecycle == "steady":
            raise Skip("our Python package is measured cold (its estimator has no reset)")
        if (ours and self.rk is None) or (not ours and (engine not in ("numpy", "native_cpu", "cupy") or self.rh is None)):
            raise RuntimeError(f"engine {engine} is not available here")
        x, y = self.arrays(dtype, device)
        b = self.batch
        batches = [(x[r:r + b], y[r:r + b]) for r in range(0, x.shape[0], b)]
        seconds = []
        model = None
        if lifecycle == "steady":
            key = (engine, dtype, penalty, where)
            if key not in self.steady:
                self.steady[key] = self.reference(engine, dtype, penalty)
                for xb, yb in batches:
                    self.steady[key].partial_fit(xb, yb)
                self.sync(engine)
            model = self.steady[key]
        for _ in range(reps):
            if lifecycle == "steady":
                model.reset()
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                if lifecycle == "cold":
                    model = self.reference(engine, dtype, penalty)
                iterations, converged = 0, True
                if operation == "fit":
                    model.fit(x, y)
                    iterations, converged = int(model.diagnostics_.iterations), bool(model.diagnostics_.converged)
                else:
                    for xb, yb in batches:
                        model.partial_fit(xb, yb)
                        iterations += int(model.diagnostics_.iterations)
                        converged = converged and bool(model.diagnostics_.converged)
                self.sync(engine)
                seconds.append(time.perf_counter() - t0)
            finally:
                gc.enable()
        return {"seconds": seconds, "iterations": iterations, "all_converged": converged,
                "coefficients": self.coefficients(model.coef_, model.intercept_)}

    def group(self, engine: str, dtype: str, penalty: str, mode: str, models: int, reps: int) -> dict:
        """The group profile's loop: one model per group model for the first `models` models, streamed through the
        file's group batches (new models, made untimed, for every stream; rh_perf_worker's `group ... loop`).
        Seconds per group batch of each stream."""
        if self.x is None or not self.models:
            raise RuntimeError("no group file loaded (the group profile writes them)")
        if mode != "loop":
            raise Skip(f"{engine} has no model group: measured as a loop over the models")
        if engine not in ("numpy", "native_cpu", "cupy") or self.rh is None:
            raise RuntimeError(f"engine {engine} is not available here")
        n, rows = self.models, self.batch // self.models
        batches = self.x.shape[0] // self.batch
        if not 1 <= models <= n:
            raise RuntimeError(f"MODELS must be 1 … {n}")
        x, y = self.arrays(dtype, False)
        seconds = []
        for _ in range(reps):
            fitted = [self.reference(engine, dtype, penalty) for _ in range(models)]
            iterations, converged, t = 0, True, 0.0
            gc.collect()
            gc.disable()
            try:
                for b in range(batches):
                    t0 = time.perf_counter()
                    for m, model in enumerate(fitted):
                        r0 = b * self.batch + m * rows
                        model.partial_fit(x[r0:r0 + rows], y[r0:r0 + rows])
                        iterations += int(model.diagnostics_.iterations) if m == 0 else 0
                        converged = converged and bool(model.diagnostics_.converged)
                    self.sync(engine)
                    t += time.perf_counter() - t0
            finally:
                gc.enable()
            seconds.append(t / batches)
        return {"seconds": seconds, "iterations": iterations, "all_converged": converged,
                "coefficients": self.coefficients(fitted[0].coef_, fitted[0].intercept_)}

    def run_sklearn(self, engine: str, dtype: str, penalty: str, lifecycle: str, operation: str, reps: int) -> dict:
        from sklearn.linear_model import HuberRegressor, SGDRegressor

        if dtype != "f64":
            raise Skip("scikit-learn's Huber estimators compute in float64")
        if lifecycle != "cold":
            raise Skip("scikit-learn estimators are measured cold (a new estimator per operation)")
        if engine == "sklearn_sgd" and operation != "partial_fit":
            raise Skip("SGDRegressor is measured with partial_fit over the batches")
        if engine == "sklearn_huber" and operation != "fit":
            raise Skip("HuberRegressor has no partial_fit: measured with fit on all rows")
        if engine == "sklearn_huber" and penalty != "none":
            raise Skip(f"HuberRegressor has no {penalty.upper()} penalty")
        if engine == "sklearn_sgd" and penalty not in SGD_PENALTY:
            raise Skip(f"SGDRegressor has no counterpart of penalty {penalty}")
        x, y = self.arrays(dtype, False)
        b = self.batch
        seconds = []
        for _ in range(reps):
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                if engine == "sklearn_sgd":
                    model = SGDRegressor(loss="huber", penalty=SGD_PENALTY[penalty], random_state=0)
                    for r in range(0, x.shape[0], b):
                        model.partial_fit(x[r:r + b], y[r:r + b])
                    iterations, converged = None, None  # one pass per batch: no iterations, no convergence test
                else:
                    model = HuberRegressor(alpha=0.0, max_iter=100)
                    model.fit(x, y)
                    iterations, converged = int(model.n_iter_), bool(model.n_iter_ < model.max_iter)
                seconds.append(time.perf_counter() - t0)
            finally:
                gc.enable()
        intercept = float(np.ravel(model.intercept_)[0])
        return {"seconds": seconds, "iterations": iterations, "all_converged": converged,
                "coefficients": self.coefficients(model.coef_, intercept)}

    def coefficients(self, coef, intercept) -> list[float]:
        if hasattr(coef, "get"):  # CuPy
            coef = coef.get()
        if hasattr(intercept, "get"):
            intercept = intercept.get()
        return [float(v) for v in np.ravel(np.asarray(coef))] + [float(intercept)]


def main() -> int:
    peers = Peers()
    print(json.dumps(peers.info()), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            if words[0] == "load" and len(words) == 2:
                out = peers.load(words[1])
            elif words[0] == "run" and len(words) == 8:
                out = peers.run(*words[1:7], int(words[7]))
            elif words[0] == "group" and len(words) == 7:
                out = peers.group(*words[1:5], int(words[5]), int(words[6]))
            else:
                raise RuntimeError(f"unknown command: {line.strip()}")
        except Skip as e:
            out = {"skipped": str(e)}
        except Exception as e:  # noqa: BLE001 - reported to the driver, the worker goes on
            out = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
