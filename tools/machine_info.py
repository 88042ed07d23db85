"""What the benchmark reports stamp on their results: the commit and the CPU. Shared by perf/report.py and
tools/peer/compare.py (standard library only: the peer comparison runs it in its own virtual environment)."""
from __future__ import annotations

import platform
import subprocess
from pathlib import Path


def git_revision(root: Path) -> str:
    """Short commit of `root`, with "+uncommitted changes" when tracked files differ from it."""
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("+uncommitted changes" if dirty else "")
    except Exception:  # noqa: BLE001 - a report without git still runs
        return "unknown"


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (a VM may give only a family name)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
