"""Clients of the workers that time the engines: perf/rh_perf_worker (ours) and rhperf.peer_worker (the peers).
Both speak one line protocol (see their headers): one JSON line per request."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


class WorkerError(RuntimeError):
    pass


class Worker:
    """A persistent worker process; `info` is its first line (what it is, which engines it has)."""

    def __init__(self, argv: list[str], label: str, env: dict | None = None) -> None:
        self.label = label
        self.argv = argv
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                         env=env)
        except OSError as e:
            raise WorkerError(f"{label}: cannot start {argv[0]}: {e}") from e
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"{label}: {' '.join(argv)} exited before it was ready (status {self.proc.wait()})")
        self.info = json.loads(line)
        self.info["interpreter"] = label

    @property
    def pid(self) -> int:
        return self.proc.pid

    def ask(self, line: str) -> dict:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            out = self.proc.stdout.readline()
        except OSError as e:
            raise WorkerError(f"{self.label}: {e}") from e
        if not out:
            raise WorkerError(f"{self.label}: the worker exited (status {self.proc.wait()}) on: {line}")
        return json.loads(out)

    def load(self, path: Path) -> None:
        r = self.ask(f"load {path}")
        if "error" in r:
            raise WorkerError(f"{self.label}: {r['error']}")

    def close(self) -> None:
        if self.proc.poll() is not None:
            return
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - our own child; make sure it ends
            self.proc.kill()
            self.proc.wait()


def worker_env(threads: str | None = None) -> dict:
    """The environment every engine runs in: the same thread count for all (default 2, the machines here),
    OMP_PROC_BIND=false (Kokkos warns otherwise), and no forced OpenBLAS core type (NumPy must pick its kernel)."""
    env = dict(os.environ)
    n = threads or env.get("OMP_NUM_THREADS") or "2"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS", "RH_PEER_THREADS"):
        env[var] = n
    env.setdefault("OMP_PROC_BIND", "false")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(var, None)
    return env


def rh_worker(binary: str, label: str, env: dict) -> Worker:
    return Worker([binary, "--serve"], label, env)


def peer_worker(python: str, label: str, env: dict) -> Worker:
    env = dict(env)
    perf = Path(__file__).resolve().parents[1]
    package = perf.parent / "abi" / "python" / "src"  # our Python package, for the rh_python_SPACE engines
    env["PYTHONPATH"] = os.pathsep.join([str(perf), str(package)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return Worker([python, "-m", "rhperf.peer_worker"], label, env)
