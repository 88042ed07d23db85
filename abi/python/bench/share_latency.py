"""Python's share of partial_fit on the standard profile's latency shape (4096 x 16, float64, a warm model): the time
inside the C ABI call against the whole estimator call, the same 40 calls, median of 7 rounds, Serial and OpenMP:
    RH_LIBRARY=build/cpu/abi/librenewable_huber.so.1 PYTHONPATH=abi/python/src OMP_PROC_BIND=false \\
       /usr/bin/python3 abi/python/bench/share_latency.py"""
import os, time, statistics, numpy as np
import renewable_huber_kokkos as rk
from renewable_huber_kokkos import _lib
lib = _lib.library(); inner = []
orig = lib.model_partial_fit
def timed(*a):
    t = time.perf_counter(); r = orig(*a); inner.append(time.perf_counter() - t); return r
lib.model_partial_fit = timed
rng = np.random.default_rng(0); X = rng.normal(size=(4096, 16)); y = X @ rng.normal(size=16) + rng.standard_t(3, 4096)
for space in ("serial", "openmp"):
    m = rk.RenewableHuberRegressor(space=space); m.partial_fit(X, y)
    rounds = []
    for r in range(7):
        inner.clear(); t = time.perf_counter()
        for _ in range(40): m.partial_fit(X, y)
        whole = (time.perf_counter() - t) / 40; c = sum(inner) / 40
        rounds.append((whole, c))
    w = statistics.median(x[0] for x in rounds); c = statistics.median(x[1] for x in rounds)
    print(f"{space}: whole {w*1e3:.3f} ms, inside the C call {c*1e3:.3f} ms, Python's share {(w-c)*1e6:.1f} us = {(w/c-1)*100:.2f} %")
