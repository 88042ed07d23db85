"""The performance record: schema, fingerprint, statistics, reading and writing (docs/performance.md, "Records").

A record is one JSON file: what was measured (cases, each with its samples and statistics), on what (the
fingerprint), with which settings and repetition plan. Records are compared by tools/rh compare (gate.py), drawn
by tools/rh plot and summarized by tools/rh compare-spaces.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import platform
import statistics
import subprocess
from pathlib import Path

SCHEMA = "renewable-huber-perf-record"
SCHEMA_VERSION = 1

# The fields of a case that must be equal for two cases to be compared (the case key).
KEY_FIELDS = ("profile", "kind", "shape", "samples", "features", "batch", "data_sha256", "dtype", "penalty",
              "lifecycle", "operation", "engine", "input", "models", "rows", "batches", "models_timed")
# Fingerprint sections that say which build was measured rather than on what: recorded, never compared.
IDENTITY_SECTIONS = ("library",)

ROOT = Path(__file__).resolve().parents[2]


def case_id(key: dict) -> str:
    """A readable unique name of a case: profile/shape/dtype/penalty/lifecycle/operation/engine/input."""
    return "/".join(str(key[k]) for k in ("profile", "shape", "dtype", "penalty", "lifecycle", "operation",
                                          "engine", "input"))


def is_gpu_engine(engine: str) -> bool:
    return engine in ("rh:cuda", "cupy")


def is_ours(engine: str) -> bool:
    return engine.startswith("rh:")


# ---------------------------------------------------------------------------------------------------------------
# Statistics


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def rel_mad(xs) -> float:
    """median(|x − median|) / median."""
    if not xs:
        return float("nan")
    m = statistics.median(xs)
    return statistics.median(abs(x - m) for x in xs) / m if m > 0 else float("nan")


def summarize(samples: list[float]) -> dict:
    return {"median_s": median(samples), "min_s": min(samples) if samples else float("nan"),
            "max_s": max(samples) if samples else float("nan"), "rel_mad": rel_mad(samples)}


def coef_error(coefficients: list[float], truth: list[float]) -> float:
    """‖β − β*‖₂ / ‖β*‖₂ over the coefficients and the intercept (intercept last; its truth is 0)."""
    if not coefficients or len(coefficients) != len(truth):
        return float("nan")
    num = math.sqrt(sum((a - b) ** 2 for a, b in zip(coefficients, truth)))
    den = math.sqrt(sum(b * b for b in truth)) or 1.0
    return num / den


def plan_sha256(plan: dict) -> str:
    """SHA-256 of a repetition plan ({case id: repetitions per sample}), canonical JSON."""
    return hashlib.sha256(json.dumps(plan, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# Fingerprint


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def source_revision(root: Path) -> str:
    """Short commit of `root`, with "+uncommitted changes" when tracked files differ from it."""
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("+uncommitted changes" if dirty else "")
    except Exception:  # noqa: BLE001 - a record without git still runs
        return "unknown"


def fingerprint(worker_info: dict, peer_infos: list[dict]) -> dict:
    """What the measurements depend on. Every section but `library` must match for two records to be compared."""
    spaces = {s["name"]: s["concurrency"] for s in worker_info.get("spaces", []) if s["device_count"] > 0}
    fp = {
        "library": {"version": worker_info.get("library_version"), "git_revision": worker_info.get("git_revision"),
                    "host_isa": worker_info.get("host_isa")},
        "machine": {"cpu_model": cpu_model(), "nproc": os.cpu_count(), "system": platform.system(),
                    "machine": platform.machine()},
        "build": {k: worker_info.get(k) for k in ("compiler", "compiler_flags", "library_compile_options",
                                                   "build_type", "kokkos_version")} | {"spaces": spaces},
        "threads": {"OMP_NUM_THREADS": worker_info.get("omp_num_threads"),
                    "OMP_PROC_BIND": worker_info.get("omp_proc_bind"),
                    "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None},
        "gpu": worker_info.get("gpu"),
    }
    peers = {}
    for info in peer_infos:
        for k in ("python", "numpy", "blas", "renewable_huber", "native_cpu", "sklearn", "cupy", "threads"):
            if k in info:
                peers[f"{info.get('interpreter', 'peer')}.{k}"] = info[k]
        if info.get("gpu"):
            peers[f"{info.get('interpreter', 'peer')}.gpu"] = info["gpu"]
    if peers:
        fp["peers"] = peers
    return fp


def flatten(d, prefix: str = "") -> dict:
    """{"a": {"b": 1}} → {"a.b": 1} (lists and scalars are leaves)."""
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = d
    return out


def _unordered(v):
    """A list compared as a multiset: threadpoolctl lists the same BLAS libraries in load order, which varies."""
    return sorted(json.dumps(x, sort_keys=True) for x in v) if isinstance(v, list) else v


def fingerprint_differences(a: dict, b: dict, ignore: tuple[str, ...] = ()) -> list[str]:
    """The compared fingerprint fields that differ, as 'field: A vs B'."""
    fa, fb = flatten(a), flatten(b)
    out = []
    for k in sorted(set(fa) | set(fb)):
        if k.split(".")[0] in IDENTITY_SECTIONS or any(k == i or k.startswith(i + ".") for i in ignore):
            continue
        if _unordered(fa.get(k)) != _unordered(fb.get(k)):
            out.append(f"{k}: {fa.get(k, '(absent)')!r} vs {fb.get(k, '(absent)')!r}")
    return out


# ---------------------------------------------------------------------------------------------------------------
# Files


def new_record(profile: str, command: str, fp: dict, settings: dict) -> dict:
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "profile": profile,
            "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "source_revision": source_revision(ROOT), "command": command, "fingerprint": fp, "settings": settings,
            "plan": {}, "cases": [], "skipped": [], "errors": []}


def _finite(o):
    """JSON has no NaN: NaN and infinities become null."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_finite(v) for v in o]
    return o


def dumps(o, indent: int = 0, flat_depth: int | None = None) -> str:
    """JSON indented by one space per level, as json.dumps(indent=1), except that a list of numbers, strings or
    nulls stays on one line (a case's samples, the load of each sample), and so does everything from nesting level
    `flat_depth` on (a compact record: one line per case): the committed records stay short."""
    pad = " " * (indent + 1)
    if flat_depth is not None and indent >= flat_depth:
        return json.dumps(o)
    if isinstance(o, dict) and o:
        return "{\n" + ",\n".join(f"{pad}{json.dumps(k)}: {dumps(v, indent + 1, flat_depth)}" for k, v in o.items()) + \
            "\n" + " " * indent + "}"
    if isinstance(o, list) and any(isinstance(v, (dict, list)) for v in o):
        return "[\n" + ",\n".join(pad + dumps(v, indent + 1, flat_depth) for v in o) + "\n" + " " * indent + "]"
    return json.dumps(o)


# Profiles whose records are written compact, from the second level on (one line per case and per fingerprint
# section): perf/baselines/ stays under its line budget.
COMPACT_PROFILES = ("group",)


def save(record: dict, path: str | Path) -> None:
    flat = 2 if record.get("profile") in COMPACT_PROFILES else None
    Path(path).write_text(dumps(_finite(record), flat_depth=flat) + "\n")


def load(path: str | Path) -> dict:
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"{path}: not a readable record ({e})")
    if record.get("schema") != SCHEMA:
        raise SystemExit(f"{path}: not a {SCHEMA} file")
    if record.get("schema_version") != SCHEMA_VERSION:
        raise SystemExit(f"{path}: schema version {record.get('schema_version')}, this tool reads {SCHEMA_VERSION}")
    return record


def fingerprint_line(record: dict) -> str:
    """One line for documents: where and what was measured."""
    fp = record["fingerprint"]
    b, m, t = fp["build"], fp["machine"], fp["threads"]
    gpu = fp.get("gpu")
    spaces = ", ".join(f"{k}({v})" for k, v in b["spaces"].items())
    line = (f"{m['cpu_model']}, nproc {m['nproc']}; {b['compiler']} {b['build_type']} {b['compiler_flags']} "
            f"{b['library_compile_options']}".rstrip() + f"; Kokkos {b['kokkos_version']}: {spaces}; "
            f"OMP_NUM_THREADS={t['OMP_NUM_THREADS']} OMP_PROC_BIND={t['OMP_PROC_BIND']}")
    if fp["library"].get("host_isa"):
        line += f"; host kernels {fp['library']['host_isa']}"
    if gpu:
        line += (f"; GPU {gpu['name']} (CC {gpu['compute_capability']}, driver {gpu['driver_version']}, runtime "
                 f"{gpu['runtime_version']})")
    lib = fp["library"]
    return line + f"; library {lib['version']} at {lib['git_revision']}"


# ---------------------------------------------------------------------------------------------------------------
# Tables


def render(rows: list[list[str]], headers: list[str], markdown: bool = False) -> str:
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out) + "\n"
    table = [headers] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table) + "\n"


def fmt_ms(seconds) -> str:
    return "-" if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)) else f"{1e3 * seconds:.3f}"


def case_table(record: dict, markdown: bool = False) -> str:
    """Every case of a record: median ms, spread, iterations, convergence, coefficient error, load."""
    headers = ["case", "median ms", "min ms", "rMAD", "samples×reps", "iterations", "converged", "coef err",
               "other cores max", "discarded"]
    rows = []
    for c in record["cases"]:
        if c["key"]["kind"] == "gram":
            extra = c.get("gram", {})
            its = f"{extra.get('gbytes_per_s', float('nan')):.1f} GB/s, {extra.get('gflop_per_s', float('nan')):.1f} GF/s"
        else:
            its = "-" if c.get("iterations") is None else str(c["iterations"])
        conv = {True: "yes", False: "NO", None: "-"}[c.get("all_converged")]
        err = c.get("coef_error")
        rows.append([c["id"], fmt_ms(c["median_s"]), fmt_ms(c["min_s"]),
                     "-" if c["rel_mad"] is None else f"{100 * c['rel_mad']:.1f}%",
                     f"{len(c['samples_s'])}×{c['reps']}", its, conv, "-" if err is None else f"{err:.1e}",
                     f"{max(c['load']['other_cores'], default=0.0):.2f}", str(c["load"]["discarded"])])
    return render(rows, headers, markdown)
