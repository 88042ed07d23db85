"""Profiles, cases and the measurement loop shared by tools/rh bench (one build, peers beside it) and tools/rh ab
(two builds). docs/performance.md ("Records", "How a case is measured") is the user's description of this file.
"""
from __future__ import annotations

import math
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import data as rhdata
from . import record as rec
from .engines import Worker, WorkerError
from .load import LoadMeter

# ---------------------------------------------------------------------------------------------------------------
# Profiles


@dataclass(frozen=True)
class Profile:
    name: str
    kind: str  # "stream" (fit / partial_fit operations), "gram" (the fused Gram pass alone) or "group"
    # stream: (name, samples, features, batch); gram: (name, rows, features); group: (name, models, rows per model
    # per group batch, features, group batches, models timed by the loops)
    shapes: tuple
    samples: int  # samples per case
    min_sample_seconds: float  # a sample is the mean of enough repetitions to last this long
    max_reps: int
    quiet_wait: float  # seconds to wait for a quiet machine before each group of cases
    retries: int  # a disturbed sample is repeated at most this often


GRAM_ROWS = 2 ** 20
PROFILES = {
    # Seconds on 2 cores: what CI runs. Nine samples, so that a smoke record passes the gate's sample count.
    "smoke": Profile("smoke", "stream", (("latency-smoke", 2048, 8, 1024), ("reference-smoke", 8192, 32, 4096)),
                     samples=9, min_sample_seconds=0.01, max_reps=64, quiet_wait=1.0, retries=1),
    # The reference project's shape sweep.
    "standard": Profile("standard", "stream", (("latency", 4096, 16, 4096), ("reference", 100_000, 90, 32_768),
                                               ("wide", 16_384, 256, 4096), ("streaming", 1_000_000, 32, 65_536)),
                        samples=9, min_sample_seconds=0.25, max_reps=64, quiet_wait=20.0, retries=3),
    "gram": Profile("gram", "gram", tuple((f"gram-p{p}", GRAM_ROWS, p) for p in (8, 16, 32, 64, 128, 256, 512)),
                    samples=9, min_sample_seconds=0.25, max_reps=64, quiet_wait=20.0, retries=3),
    # Model groups (issue 34): many small models, fewer larger ones; a stream of 3 group batches per operation.
    "group": Profile("group", "group", (("many-small", 10_000, 256, 8, 3, 100), ("few-large", 1_000, 4_096, 32, 3, 20)),
                     samples=5, min_sample_seconds=0.1, max_reps=16, quiet_wait=20.0, retries=2),
}
# The group profile's operations: one RegressorGroup.partial_fit per group batch, or one single-model partial_fit
# per model per group batch (our rh::Regressor on a space, the reference's estimator for a peer).
GROUP_OPERATIONS = ("group_partial_fit", "looped_partial_fit")
DTYPES = ("f64", "f32")
# (lifecycle, operation): steady is defined for partial_fit only (the reference's rule).
WORKLOADS = (("cold", "partial_fit"), ("steady", "partial_fit"), ("cold", "fit"))
INPUTS = ("host", "device")
CPU_PEERS = ("numpy", "native_cpu", "sklearn_sgd", "sklearn_huber")
GPU_PEERS = ("cupy",)
REFERENCE_PEERS = ("numpy", "native_cpu", "cupy")  # the reference package: run by --peer-python
GROUP_NOTE = ("a sample is the time per group batch (one update of every model) of streams of the file's group "
              "batches into new models, made untimed before each stream; looped_partial_fit times the first "
              "models_timed models and counts models / models_timed times that, the models being independent")
PEER_NOTE = ("sklearn_sgd (SGDRegressor(loss='huber'), one partial_fit per batch, no convergence test) and "
             "sklearn_huber (HuberRegressor(alpha=0) on all rows, its own scale estimate) solve different problems "
             "from ours: compare their time together with coef_error (relative L2 error against the generating "
             "coefficients, intercept 0)")


@dataclass
class Settings:
    samples: int
    min_sample_seconds: float
    max_reps: int
    quiet_wait: float
    quiet_threshold: float = 0.3  # whole-machine busy cores below which the machine counts as quiet
    disturbed_cores: float = 0.5  # a sample during which other processes used this much is repeated ...
    disturbed_min_seconds: float = 0.02  # ... if it lasted long enough for /proc/stat to resolve it
    retries: int = 3  # ... at most this many times
    seed: int = 42
    group_scale: float = 1.0  # the group profile's model counts × this (a smaller machine), recorded


# ---------------------------------------------------------------------------------------------------------------
# Measurement


@dataclass
class Slot:
    """One case on one engine, as measured in a group: `ask(reps)` runs `reps` timed operations."""
    case: str  # case id (the plan's key)
    key: dict
    worker: Worker
    request: str  # the protocol line without its REPS
    label: str = ""  # the build (A/B), empty for a single build
    reps: int = 0
    samples: list = field(default_factory=list)
    other_cores: list = field(default_factory=list)
    iterations: list = field(default_factory=list)
    converged: list = field(default_factory=list)
    coefficients: list = field(default_factory=list)
    passes_per_call: int = 0
    scale: float = 1.0  # a sample's time × this: a loop over some of a group's models, counted for all of them
    discarded: int = 0
    waited: float = 0.0
    outcome: str = ""  # "", "skipped: …" or "error: …"

    def ask(self, reps: int) -> dict:
        r = self.worker.ask(f"{self.request} {reps}")
        if "skipped" in r:
            raise _Skip(r["skipped"])
        if "error" in r:
            raise WorkerError(r["error"])
        return r


class _Skip(Exception):
    pass


def calibrate(slot: Slot, settings: Settings) -> int:
    """One untimed warm-up, then one timed operation: repetitions so that a sample lasts min_sample_seconds."""
    slot.ask(1)
    t = statistics.fmean(slot.ask(1)["seconds"])
    return min(settings.max_reps, max(1, math.ceil(settings.min_sample_seconds / max(t, 1e-9))))


def measure_group(slots: list[Slot], plan: dict, settings: Settings, meter: LoadMeter, log,
                  calibrate_only: bool = False) -> None:
    """Interleaved rounds over the slots of one group (A B C, then C B A, …). A slot whose case is not in `plan`
    is calibrated and added to it; slots of the same case (A/B) share its repetitions. `calibrate_only` stops
    after that (tools/rh ab freezes the plan before it measures)."""
    live = []
    for s in slots:
        try:
            if s.case not in plan:
                plan[s.case] = calibrate(s, settings)
            elif not calibrate_only:
                s.ask(1)  # warm-up only
            s.reps = plan[s.case]
            live.append(s)
        except _Skip as e:
            s.outcome = f"skipped: {e}"
        except WorkerError as e:
            s.outcome = f"error: {e}"
            log(f"    {s.label}{s.case}: {e}")
    if calibrate_only:
        return
    waited = meter.wait_quiet(settings.quiet_threshold, settings.quiet_wait)
    for s in live:
        s.waited = waited
    for rnd in range(settings.samples):
        for s in (live if rnd % 2 == 0 else list(reversed(live))):
            if s.outcome:
                continue
            try:
                measure_sample(s, settings, meter)
            except (WorkerError, _Skip) as e:
                s.outcome = f"error: {e}"
                log(f"    {s.label}{s.case}: {e}")


def measure_sample(s: Slot, settings: Settings, meter: LoadMeter) -> None:
    for attempt in range(settings.retries + 1):
        a = meter.snapshot()
        t0 = time.monotonic()
        r = s.ask(s.reps)
        wall = time.monotonic() - t0
        _, other = meter.cores(a, meter.snapshot())
        disturbed = other >= settings.disturbed_cores and wall >= settings.disturbed_min_seconds
        if not disturbed or attempt == settings.retries:
            break
        s.discarded += 1
        s.waited += meter.wait_quiet(settings.quiet_threshold, max(settings.quiet_wait, 1.0))
    s.samples.append(statistics.fmean(r["seconds"]) * s.scale)
    s.other_cores.append(round(other, 3))
    if "iterations" in r:
        s.iterations.append(r["iterations"])
        s.converged.append(r["all_converged"])
        s.coefficients = r["coefficients"]
    s.passes_per_call = r.get("passes_per_call", 0)


def case_entry(s: Slot, truth: list[float] | None) -> dict:
    """The record's entry of a measured slot."""
    c = {"id": s.case, "key": s.key, "reps": s.reps, "samples_s": s.samples} | rec.summarize(s.samples)
    if s.key["kind"] == "gram":
        rows, q = s.key["samples"], s.key["features"] + 1  # the design has the intercept column
        size = 4 if s.key["dtype"] == "f32" else 8
        t = c["median_s"]
        c["gram"] = {"rows": rows, "q": q, "passes_per_call": s.passes_per_call,
                     "bytes": rows * q * size, "flops": rows * q * (q + 1) + 2 * rows * q,
                     "gbytes_per_s": rows * q * size / t / 1e9, "gflop_per_s": (rows * q * (q + 1) + 2 * rows * q) / t / 1e9}
        c["iterations"] = None
        c["all_converged"] = None
        c["iterations_varied"] = False
    else:
        c["iterations"] = int(statistics.median(s.iterations)) if s.iterations and s.iterations[0] is not None else None
        c["iterations_varied"] = len(set(s.iterations)) > 1
        c["all_converged"] = None if not s.converged or s.converged[0] is None else all(s.converged)
        c["coef_error"] = rec.coef_error(s.coefficients, truth) if truth else float("nan")
    c["load"] = {"other_cores": s.other_cores, "discarded": s.discarded, "waited_s": round(s.waited, 2)}
    return c


def file_outcome(record: dict, s: Slot, truth) -> None:
    if s.outcome.startswith("skipped"):
        record["skipped"].append({"id": s.case, "reason": s.outcome[len("skipped: "):]})
    elif s.outcome.startswith("error"):
        record["errors"].append({"id": s.case, "error": s.outcome[len("error: "):]})
    else:
        record["cases"].append(case_entry(s, truth))


# ---------------------------------------------------------------------------------------------------------------
# Cases


def stream_key(profile: str, shape: tuple, data_sha: str, dtype: str, penalty: str, lifecycle: str,
               operation: str, engine: str, where: str) -> dict:
    name, samples, features, batch = shape
    return {"profile": profile, "kind": "stream", "shape": name, "samples": samples, "features": features,
            "batch": samples if operation == "fit" else batch, "data_sha256": data_sha, "dtype": dtype,
            "penalty": penalty, "lifecycle": lifecycle, "operation": operation, "engine": engine, "input": where}


def group_key(shape: tuple, data_sha: str, dtype: str, penalty: str, operation: str, engine: str,
              models_timed: int, where: str = "host") -> dict:
    name, models, rows, features, batches = shape[:5]
    return {"profile": "group", "kind": "group", "shape": name, "samples": models * rows * batches,
            "features": features, "batch": models * rows, "models": models, "rows": rows, "batches": batches,
            "models_timed": models_timed, "data_sha256": data_sha, "dtype": dtype, "penalty": penalty,
            "lifecycle": "fresh", "operation": operation, "engine": engine, "input": where}


def write_shape_data(np, kind: str, shape: tuple, seed: int, path: Path) -> tuple[str, object]:
    """Writes one shape's data file of a profile of this kind (a group shape already scaled by group_shape);
    returns its SHA-256 and the generating truth of what every engine returns (a group's: model 0's)."""
    if kind == "gram":
        name, rows, features = shape
        x, y, coef = rhdata.stream_data(np, rows, features, seed, outliers=False)
        return rhdata.write(np, path, x, y, rows), coef
    if kind == "group":
        name, models, rows, features, batches, _ = shape
        x, y, coefs = rhdata.group_data(np, models, rows, features, batches, seed)
        return rhdata.write(np, path, x, y, models * rows, models), coefs[0]
    name, samples, features, batch = shape
    x, y, coef = rhdata.stream_data(np, samples, features, seed)
    return rhdata.write(np, path, x, y, batch), coef


def group_shape(shape: tuple, scale: float) -> tuple:
    """A group shape with its model count × scale (at least 1; the loops' count at most that)."""
    name, models, rows, features, batches, loop = shape
    models = max(1, round(models * scale))
    return (name, models, rows, features, batches, min(loop, models))


def group_slots(shape, sha, engines: Engines, sel, dtype, penalty) -> list[Slot]:
    """Our group on each space (host input, and on a GPU device input too: the arrays already in its memory, as
    the standard profile's input device), our single model looped over `loop` models on each space, and each peer
    looped the same way; a loop's time per group batch counts all the group's models (× models / loop)."""
    models, loop = shape[1], shape[5]
    slots = []
    for label, worker in engines.ours.items():
        for space in engines.spaces:
            runs = [("group_partial_fit", "group", models, "host"), ("looped_partial_fit", "loop", loop, "host")]
            if rec.is_gpu_engine(f"rh:{space}"):
                runs.insert(1, ("group_partial_fit", "group", models, "device"))
            for operation, mode, timed, where in runs:
                key = group_key(shape, sha, dtype, penalty, operation, f"rh:{space}", timed, where)
                slots.append(Slot(rec.case_id(key), key, worker,
                                  f"group {space} {dtype} {penalty} {mode} {where} {timed}", label,
                                  scale=models / timed))
    for engine, worker in engines.peers.items():
        key = group_key(shape, sha, dtype, penalty, "looped_partial_fit", engine, loop)
        slots.append(Slot(rec.case_id(key), key, worker, f"group {engine} {dtype} {penalty} loop {loop}",
                          scale=models / loop))
    return [s for s in slots if not sel.cases or re.search(sel.cases, s.case)]


def gram_key(shape: tuple, data_sha: str, dtype: str, engine: str) -> dict:
    name, rows, features = shape
    return {"profile": "gram", "kind": "gram", "shape": name, "samples": rows, "features": features, "batch": rows,
            "data_sha256": data_sha, "dtype": dtype, "penalty": "none", "lifecycle": "steady",
            "operation": "gram_pass", "engine": engine, "input": "host"}


@dataclass
class Engines:
    """What a run measures: our builds (label → worker, spaces) and the peers (engine → worker)."""
    ours: dict  # label ("" or "A:"/"B:") → Worker
    spaces: list  # space names measured (with a device)
    peers: dict  # peer engine name → Worker

    def workers(self) -> list[Worker]:
        return list(self.ours.values()) + list(dict.fromkeys(self.peers.values()))

    def device_spaces(self) -> set:
        """Our spaces with their own memory (measured with device input too), as the workers' libraries say."""
        return {s["name"] for w in self.ours.values() for s in w.info["spaces"] if s.get("own_memory")}

    def penalties(self) -> tuple:
        """Every penalty our workers' libraries know (each worker's ready message), in the library's order."""
        known = [w.info.get("penalties") for w in self.ours.values()]
        if not known or None in known:
            raise SystemExit("a worker does not name its penalties (a harness older than rh_perf_worker's "
                             "\"penalties\"): pass --penalties")
        return tuple(p for p in known[0] if all(p in k for k in known[1:]))


@dataclass
class Selection:
    shapes: list | None = None
    dtypes: tuple = DTYPES
    penalties: tuple | None = None  # None: every penalty the library knows (Engines.penalties)
    workloads: tuple = WORKLOADS
    inputs: tuple = INPUTS
    cases: str | None = None  # regular expression on case ids
    inference: bool = False  # also each of our spaces with Config::inference, as engine rh:SPACE+inference


def stream_slots(profile: Profile, shape, sha, engines: Engines, sel: Selection, dtype, penalty, lifecycle,
                 operation) -> list[Slot]:
    slots = []
    # With --inference each space is measured twice in the same rounds: as is and with Config::inference on (penalty
    # none only: the library refuses inference with the others).
    variants = [""] + (["+inference"] if sel.inference and penalty == "none" else [])
    for label, worker in engines.ours.items():
        for space in [s + v for s in engines.spaces for v in variants]:
            for where in sel.inputs:
                if where == "device" and space.split("+")[0] not in engines.device_spaces():
                    continue
                key = stream_key(profile.name, shape, sha, dtype, penalty, lifecycle, operation, f"rh:{space}", where)
                slots.append(Slot(rec.case_id(key), key, worker,
                                  f"run {space} {dtype} {penalty} {lifecycle} {operation} {where}", label))
    for engine, worker in engines.peers.items():
        for where in (sel.inputs if engine in GPU_PEERS else ("host",)):
            key = stream_key(profile.name, shape, sha, dtype, penalty, lifecycle, operation, engine, where)
            slots.append(Slot(rec.case_id(key), key, worker,
                              f"run {engine} {dtype} {penalty} {lifecycle} {operation} {where}"))
    return [s for s in slots if not sel.cases or re.search(sel.cases, s.case)]


def memory_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 62


def run_profile(profile: Profile, engines: Engines, sel: Selection, settings: Settings, plan: dict,
                records: dict, meter: LoadMeter, np, log, workdir: Path, calibrate_only: bool = False) -> None:
    """Measures every selected case of the profile; files each slot into records[label]. With calibrate_only,
    only fills `plan`."""
    shapes = [s for s in profile.shapes if not sel.shapes or s[0] in sel.shapes]
    for index, shape in enumerate(profile.shapes):
        if shape not in shapes:
            continue
        seed = settings.seed + index
        path = workdir / f"{shape[0]}.bin"
        if profile.kind == "gram":
            name, rows, features = shape
            need = rows * features * 20  # f64 + f32 copies in the worker, the library's f64 design
            if need > 0.8 * memory_available():
                for label in records:
                    records[label]["skipped"].append({"id": f"gram/{name}/*", "reason": f"needs about "
                                                      f"{need / 2**30:.1f} GiB, more than 80 % of the memory available"})
                log(f"{name}: skipped (memory)")
                continue
        if profile.kind == "group":
            shape = group_shape(shape, settings.group_scale)
        name = shape[0]
        sha, coef = write_shape_data(np, profile.kind, shape, seed, path)
        truth = [float(v) for v in coef] + [0.0]
        for w in engines.workers():
            w.load(path)
        groups = []
        if profile.kind == "gram":
            for dtype in sel.dtypes:
                slots = []
                for label, worker in engines.ours.items():
                    for space in engines.spaces:
                        key = gram_key(shape, sha, dtype, f"rh:{space}")
                        slots.append(Slot(rec.case_id(key), key, worker, f"gram {space} {dtype}", label))
                groups.append((f"{name} {dtype}", [s for s in slots if not sel.cases or re.search(sel.cases, s.case)]))
        elif profile.kind == "group":
            for dtype in sel.dtypes:
                for penalty in sel.penalties or engines.penalties():
                    groups.append((f"{name} {dtype} {penalty}", group_slots(shape, sha, engines, sel, dtype, penalty)))
        else:
            for dtype in sel.dtypes:
                for penalty in sel.penalties or engines.penalties():
                    for lifecycle, operation in sel.workloads:
                        groups.append((f"{name} {dtype} {penalty} {lifecycle} {operation}",
                                       stream_slots(profile, shape, sha, engines, sel, dtype, penalty, lifecycle,
                                                    operation)))
        for title, slots in groups:
            if not slots:
                continue
            t0 = time.monotonic()
            measure_group(slots, plan, settings, meter, log, calibrate_only)
            if calibrate_only:
                continue
            for s in slots:
                file_outcome(records[s.label], s, truth)
            for s in slots:
                log(progress_line(s))
            log(f"  ({title}: {time.monotonic() - t0:.1f} s)")
        path.unlink()


def progress_line(s: Slot) -> str:
    if s.outcome:
        return f"{s.label}{s.case}: {s.outcome}"
    return (f"{s.label}{s.case}: {1e3 * statistics.median(s.samples):.3f} ms (rMAD {100 * rec.rel_mad(s.samples):.1f}%, "
            f"{len(s.samples)}×{s.reps}), other cores ≤ {max(s.other_cores, default=0):.2f}"
            + (f", {s.discarded} discarded" if s.discarded else ""))


def settings_dict(settings: Settings, profile: Profile) -> dict:
    return {"samples": settings.samples, "min_sample_seconds": settings.min_sample_seconds,
            "max_reps": settings.max_reps, "quiet_threshold_cores": settings.quiet_threshold,
            "quiet_wait_s": settings.quiet_wait, "disturbed_other_cores": settings.disturbed_cores,
            "disturbed_min_sample_s": settings.disturbed_min_seconds, "retries": settings.retries,
            "seed": settings.seed, "timer": "steady clock around each operation (workers)",
            "sample": "mean of `reps` operations", "kind": profile.kind,
            "not_measured": "steady × fit (steady is defined for partial_fit only)" if profile.kind == "stream"
            else "", "peer_note": PEER_NOTE} | ({"group_scale": settings.group_scale, "group_note": GROUP_NOTE}
                                               if profile.kind == "group" else {})


def stderr_log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def workdir_for(out: str | None) -> tempfile.TemporaryDirectory:
    """Data files live beside the build (large; removed after each shape)."""
    base = os.environ.get("RH_PERF_DATA_DIR") or None
    return tempfile.TemporaryDirectory(prefix="rh-perf-", dir=base)
