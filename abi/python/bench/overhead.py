"""docs/python.md's per-call overhead: the Python estimator against the C ABI on one small batch (64 x 4, float64,
Serial), the same data and call counts as overhead.c, medians of 7 rounds, run back to back:
    cc -O2 -Iabi/include -Ibuild/cpu/abi/generated abi/python/bench/overhead.c -Lbuild/cpu/abi -lrenewable_huber \\
       -Wl,-rpath,$PWD/build/cpu/abi -o /tmp/rh_overhead_c
    RH_LIBRARY=build/cpu/abi/librenewable_huber.so.1 PYTHONPATH=abi/python/src OMP_PROC_BIND=false \\
       /usr/bin/python3 abi/python/bench/overhead.py /tmp/rh_overhead_c"""

import subprocess
import sys
import time

import numpy as np

from renewable_huber_kokkos import RenewableHuberRegressor, _lib

ROWS, COLS, CALLS, ROUNDS = 64, 4, 2000, 7
state, x = 1, np.empty(ROWS * COLS)
for i in range(ROWS * COLS):  # overhead.c's generator
    state = (state * 1103515245 + 12345) % 2**32
    x[i] = (state >> 16) / 65536.0 - 0.5
X = x.reshape(ROWS, COLS)
y = X[:, 0] - 2.0 * X[:, 1] + 0.1 * X[:, 2]
model = RenewableHuberRegressor(space="serial")


def measure():
    fit, predict = [], []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            model.partial_fit(X, y)
        t1 = time.perf_counter()
        for _ in range(CALLS):
            model.predict(X)
        t2 = time.perf_counter()
        fit.append(1e6 * (t1 - t0) / CALLS)
        predict.append(1e6 * (t2 - t1) / CALLS)
    return float(np.median(fit)), float(np.median(predict))


py_fit, py_predict = measure()
lib = _lib.library()
real = lib.model_partial_fit, lib.model_predict
lib.model_partial_fit = lib.model_predict = lambda *args: 0  # the Python side alone: every call "succeeds" at once
alone_fit, alone_predict = measure()
lib.model_partial_fit, lib.model_predict = real
print(f"Python side alone (library calls stubbed): partial_fit {alone_fit:.2f} us  predict {alone_predict:.2f} us")
print(f"Python  partial_fit {py_fit:.2f} us  predict {py_predict:.2f} us")
if len(sys.argv) > 1:
    line = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout.strip()
    print(line)
    c_fit, c_predict = float(line.split()[2]), float(line.split()[5])
    print(f"ratio   partial_fit {py_fit / c_fit:.2f}x  predict {py_predict / c_predict:.2f}x  "
          f"(overhead {py_fit - c_fit:.1f} and {py_predict - c_predict:.1f} us per call)")
