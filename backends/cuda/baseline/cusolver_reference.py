"""cuSOLVER's dense solves on the GPU machine, for comparison with backends/cuda/baseline/cuda_baseline.

The GPU machine's PyTorch links CUDA 13's cuSOLVER; it stands in for linking cuSOLVER into our binaries (a
statically linked CUDA 11.8 cuSOLVER + cuBLAS adds ~180 MB). Same systems as cuda_baseline (A = GᵀG/m + 1e-3·I,
m = 4q, b random; not the same random numbers), float64. 'eager' = one call sequence plus a device synchronize,
timed on the host (what a call from our engine would cost, launch overhead included); 'graph' = the same calls
replayed from a CUDA graph, timed with CUDA events (device time alone). Prints one line per measurement.
Usage: python3 cusolver_reference.py
"""
import time

import torch


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        t.append(time.perf_counter() - a)
    t.sort()
    return t[len(t) // 2], t[0], t[-1]


def graphed(fn, reps):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        g.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / reps


def main():
    torch.backends.cuda.preferred_linalg_library("cusolver")
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}, "
          f"linalg library {torch.backends.cuda.preferred_linalg_library()}")
    gen = torch.Generator(device="cuda").manual_seed(42)
    for q in (91, 257):
        m = 4 * q
        g = torch.randn(m, q, dtype=torch.float64, device="cuda", generator=gen)
        a = g.T @ g / m + 1e-3 * torch.eye(q, dtype=torch.float64, device="cuda")
        b = torch.randn(q, 1, dtype=torch.float64, device="cuda", generator=gen)
        out = {}

        def chol():
            l, _ = torch.linalg.cholesky_ex(a)
            out["x"] = torch.cholesky_solve(b, l)

        def lu():
            f, piv, _ = torch.linalg.lu_factor_ex(a)
            out["x"] = torch.linalg.lu_solve(f, piv, b)

        for name, fn in (("cuSOLVER potrf+potrs", chol), ("cuSOLVER getrf+getrs", lu)):
            med, lo, hi = timed(fn, 30)
            res = ((a @ out["x"] - b).abs().max() / b.abs().max()).item()
            print(f"{name + ' eager':<34} q={q:<4} median {med * 1e3:8.3f} ms  min {lo * 1e3:8.3f}  max {hi * 1e3:8.3f}"
                  f"  residual {res:.1e}")
            print(f"{name + ' graph replay':<34} q={q:<4} mean   {graphed(fn, 100) * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
