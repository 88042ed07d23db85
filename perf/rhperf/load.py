"""How busy the machine is, and how much of that is someone else (Linux /proc; elsewhere it reads 0).

The CPU records come from shared 2-core machines where other people's compilers run at the same time, and a
2-thread OpenMP team on 2 cores slows down by orders of magnitude when one core is taken (every barrier waits for
a time slice). The driver waits for a quiet machine before each group of cases, records the cores that other
processes used during every sample, and repeats a disturbed sample (docs/performance.md, "Machine load").
"""
from __future__ import annotations

import os
import time


def _machine_ticks() -> tuple[int, int]:
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def _process_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0


class LoadMeter:
    """Busy cores of the whole machine, and of everything except our own processes, between two snapshots."""

    def __init__(self) -> None:
        self.own_pids: list[int] = [os.getpid()]
        self.hz = os.sysconf("SC_CLK_TCK")
        self.ncpu = os.cpu_count() or 1

    def snapshot(self) -> tuple[int, int, int, float]:
        busy, total = _machine_ticks()
        own = sum(_process_ticks(pid) for pid in self.own_pids)
        return busy, total, own, time.monotonic()

    def cores(self, a, b) -> tuple[float, float]:
        """(busy cores of the machine, busy cores of other processes) between snapshots a and b."""
        if b[1] <= a[1]:
            return 0.0, 0.0
        busy = self.ncpu * (b[0] - a[0]) / (b[1] - a[1])
        own = (b[2] - a[2]) / self.hz / max(b[3] - a[3], 1e-9)
        return busy, max(busy - own, 0.0)

    def wait_quiet(self, threshold: float, timeout: float) -> float:
        """Waits until the whole machine uses fewer than `threshold` cores (0.25 s windows), at most `timeout`
        seconds; returns the seconds waited."""
        t0 = time.monotonic()
        while timeout > 0:
            a = self.snapshot()
            time.sleep(0.25)
            busy, _ = self.cores(a, self.snapshot())
            if a[1] == 0 or busy < threshold or time.monotonic() - t0 >= timeout:
                break
        return time.monotonic() - t0
