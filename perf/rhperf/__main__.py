"""python3 -m rhperf COMMAND …: the performance tools behind tools/rh bench | compare | ab | plot | compare-spaces.

Run them through tools/rh, which builds the worker, prepares the peers' interpreters and passes their paths.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import bench, gate
from . import record as rec
from .options import (add_run_flags, chosen_spaces, command_line, csv, selection_from,
                      settings_from)

PROG = "tools/rh"


def cmd_bench(args, argv) -> int:
    import numpy as np

    from .engines import WorkerError, peer_worker, rh_worker, worker_env
    from .load import LoadMeter

    profile = bench.PROFILES[args.profile]
    settings = settings_from(args, profile)
    sel = selection_from(args)
    env = worker_env()
    # The rh_python_SPACE peers load the library of the worker's own build (build/X/perf → build/X/abi).
    library = Path(args.worker).resolve().parents[1] / "abi" / "librenewable_huber.so.1"
    if "RH_LIBRARY" not in env and library.exists():
        env["RH_LIBRARY"] = str(library)
    peers = {"none": (), "cpu": bench.CPU_PEERS, "gpu": bench.GPU_PEERS}.get(args.peers, csv(args.peers))
    if profile.kind == "gram" and peers:
        raise SystemExit("the gram profile measures our pass alone: no peers")
    worker = rh_worker(args.worker, "rh", env)
    workers = [worker]
    peer_workers: dict = {}
    try:
        by_python: dict = {}
        for engine in peers:
            python = args.peer_python if engine in bench.REFERENCE_PEERS else args.sklearn_python
            if not python:
                raise SystemExit(f"peer {engine} needs --peer-python (tools/rh bench makes the reference's venv)")
            by_python.setdefault(python, []).append(engine)
        unavailable = {}
        for python, engines in by_python.items():
            label = "reference" if engines[0] in bench.REFERENCE_PEERS else "sklearn"
            try:
                w = peer_worker(python, label, env)
            except WorkerError as e:
                for engine in engines:
                    unavailable[engine] = str(e)
                continue
            workers.append(w)
            for engine in engines:
                if engine in w.info["engines"]:
                    peer_workers[engine] = w
                else:
                    unavailable[engine] = f"not available in {python} ({w.info})"
        spaces = chosen_spaces(worker.info, args.spaces)
        engines = bench.Engines({"": worker}, spaces, peer_workers)
        fp = rec.fingerprint(worker.info, [w.info for w in workers[1:]])
        record = rec.new_record(profile.name, command_line(argv), fp, bench.settings_dict(settings, profile))
        record["unavailable"] = unavailable
        for engine, why in unavailable.items():
            print(f"peer {engine} unavailable: {why}", file=sys.stderr)
        if profile.kind == "gram":
            record["ceilings"] = ceilings(np, worker, spaces)
        meter = LoadMeter()
        meter.own_pids += [w.pid for w in workers]
        plan: dict = {}
        with bench.workdir_for(args.out) as tmp:
            bench.run_profile(profile, engines, sel, settings, plan, {"": record}, meter, np, bench.stderr_log,
                              Path(tmp))
        record["plan"] = {"sha256": rec.plan_sha256(plan), "reps": plan}
    finally:
        for w in workers:
            w.close()
    print(rec.case_table(rec._finite(record)), end="")
    if record["skipped"]:
        print(f"{len(record['skipped'])} skipped (reasons in the record)")
    if record["errors"]:
        print("errors:\n" + "\n".join(f"  {e['id']}: {e['error']}" for e in record["errors"]))
    if args.out:
        rec.save(record, args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    return 1 if record["errors"] else 0


def ceilings(np, worker, spaces: list[str]) -> dict:
    """What the Gram pass is drawn against: the read bandwidth of each space (rh_perf_worker's streaming sum)
    and a dense matrix product's flop rate (NumPy's BLAS on the host, CuPy's cuBLAS on a GPU)."""
    import time

    out: dict = {"memory_read_bytes_per_s": {}, "flop_per_s": {}}
    for space in spaces:
        r = worker.ask(f"bandwidth {space} 1024")
        if "error" not in r:
            out["memory_read_bytes_per_s"][space] = r["bytes_per_s"]
    def best(mul, a, sync=lambda: None) -> float:
        times = []
        for _ in range(4):
            t0 = time.perf_counter()
            mul(a)
            sync()
            times.append(time.perf_counter() - t0)
        return min(times[1:])
    n = 2048
    for dt in ("f64", "f32"):
        a = np.ones((n, n), dtype=np.float64 if dt == "f64" else np.float32)
        out["flop_per_s"][f"host {dt}"] = 2 * n ** 3 / best(lambda m: m @ m, a)
    out["flop_method"] = f"best of 3 products of {n}×{n} matrices: NumPy {np.__version__} on the host"
    if "cuda" in spaces:
        try:
            import cupy

            n = 8192
            for dt in ("f64", "f32"):
                a = cupy.ones((n, n), dtype=cupy.float64 if dt == "f64" else cupy.float32)
                out["flop_per_s"][f"cuda {dt}"] = 2 * n ** 3 / best(lambda m: m @ m, a,
                                                                    cupy.cuda.runtime.deviceSynchronize)
            out["flop_method"] += f"; CuPy {cupy.__version__} (cuBLAS) {n}×{n} on the GPU"
        except Exception as e:  # noqa: BLE001 - no CuPy: the GPU's flop ceiling stays unmeasured
            out["flop_method"] += f"; GPU flop ceiling not measured ({e})"
    return out


def cmd_merge(args) -> int:
    """One record from parts of one run (same machine, build and profile; e.g. one part per dtype)."""
    parts = [rec.load(p) for p in args.records]
    out = parts[0]
    for path, r in zip(args.records[1:], parts[1:]):
        diffs = rec.fingerprint_differences(out["fingerprint"], r["fingerprint"], ())
        if diffs or r["fingerprint"]["library"] != out["fingerprint"]["library"] or r["profile"] != out["profile"]:
            raise SystemExit(f"tools/rh merge: {path} is not a part of the same run: " + "; ".join(diffs or ["library or profile"]))
        ids = {c["id"] for c in out["cases"]} & {c["id"] for c in r["cases"]}
        if ids:
            raise SystemExit(f"tools/rh merge: {path} repeats cases, e.g. {sorted(ids)[0]}")
        for f in ("cases", "skipped", "errors"):
            out[f] += r[f]
        out["unavailable"] = out.get("unavailable", {}) | r.get("unavailable", {})
        out["plan"]["reps"] |= r["plan"]["reps"]
        out["command"] += " + " + r["command"]
    out["plan"]["sha256"] = rec.plan_sha256(out["plan"]["reps"])
    rec.save(out, args.out)
    print(f"wrote {args.out}: {len(out['cases'])} cases", file=sys.stderr)
    return 0


def cmd_write_data(args) -> int:
    """The data files of a profile, for rh_perf_worker FILE --kernel-profile (the same bytes a record measures)."""
    import numpy as np

    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    profile = bench.PROFILES[args.profile]
    for index, shape in enumerate(profile.shapes):  # a record's seeds: the profile's seed + the shape's index
        if args.shapes and shape[0] not in args.shapes:
            continue
        if profile.kind == "group":
            shape = bench.group_shape(shape, args.group_scale)
        path = out / f"{shape[0]}.bin"
        sha, _ = bench.write_shape_data(np, profile.kind, shape, args.seed + index, path)
        print(f"{path}: {profile.kind} shape {shape[1:]}, seed {args.seed + index}, SHA-256 {sha}")
    return 0


def cmd_compare_spaces(args) -> int:
    from . import spaces

    workloads = None if args.all else (("cold", "partial_fit"),)
    print(spaces.table(rec.load(args.record), markdown=args.markdown, workloads=workloads), end="")
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="measure a profile, write one record")
    add_run_flags(b, "smoke")
    b.add_argument("--peers", default="none",
                   help="none, cpu (numpy,native_cpu,sklearn_sgd,sklearn_huber), gpu (cupy), or a comma list")
    b.add_argument("--out", help="write the record to this file")
    b.add_argument("--peer-python", help=argparse.SUPPRESS)
    b.add_argument("--sklearn-python", default="/usr/bin/python3", help=argparse.SUPPRESS)

    c = sub.add_parser("compare", help="the regression gate between two records")
    c.add_argument("base")
    c.add_argument("cand")
    c.add_argument("--ignore-field", action="append", metavar="FIELD",
                   help="a fingerprint field (or section) not to compare, e.g. build.compiler_flags (repeatable)")
    gate.add_threshold_flags(c)

    a = sub.add_parser("ab", help="A/B between two revisions, interleaved, one frozen repetition plan")
    a.add_argument("base_rev")
    a.add_argument("cand_rev")
    add_run_flags(a, "smoke")
    a.add_argument("--out-dir", help="write BASE.json, CAND.json and ab.json here (with --chain: in a folder per step, "
                                     "BASESHA-CANDSHA)")
    a.add_argument("--chain", nargs="+", default=[], metavar="REV",
                   help="more revisions: each step BASE_REV -> CAND_REV -> REV -> ... is an A/B of its own (a lever "
                        "against the commit before it); every revision is built first, side by side")
    a.add_argument("--rounds", type=int, help="interleaved rounds (= samples per case; at least 9)")
    a.add_argument("--cand-cmake", action="append", default=[], metavar="OPT",
                   help="a CMake option for the candidate build only (repeatable), e.g. --cand-cmake=-DRH_NATIVE_ARCH=ON: the "
                        "tuned build against the portable one, same revision")
    a.add_argument("--build-root", help=argparse.SUPPRESS)  # where the worktrees and builds go (tools/rh passes it)
    gate.add_threshold_flags(a)

    pl = sub.add_parser("plot", help="draw a record (and its comparison with a base) as PNGs")
    pl.add_argument("record")
    pl.add_argument("base", nargs="?")
    pl.add_argument("--out-dir", default=".", help="where the PNGs go")

    s = sub.add_parser("compare-spaces", help="the fastest space per shape and dtype, with ratios")
    s.add_argument("record")
    s.add_argument("--markdown", action="store_true")
    s.add_argument("--all", action="store_true", help="every lifecycle and operation (default: cold partial_fit)")

    d = sub.add_parser("doc", help="the Markdown of a record (for docs/performance.md)")
    d.add_argument("record")
    d.add_argument("--update", metavar="FILE", help="replace the section <!-- record:NAME:begin/end --> of FILE")
    d.add_argument("--section", default="cpu-standard")

    m = sub.add_parser("merge", help="one record from parts of one run (e.g. one per dtype)")
    m.add_argument("records", nargs="+")
    m.add_argument("--out", required=True)

    w = sub.add_parser("write-data", help="write a profile's data files (for rh_perf_worker --kernel-profile)")
    w.add_argument("--profile", choices=sorted(bench.PROFILES), default="standard")
    w.add_argument("--shapes", type=csv)
    w.add_argument("--seed", type=int, default=42)
    w.add_argument("--group-scale", type=float, default=1.0, help="the group profile's model counts × this")
    w.add_argument("dir")

    args = p.parse_args(argv)
    if args.command == "doc":
        from . import doc

        return doc.main(args)
    if args.command == "merge":
        return cmd_merge(args)
    if args.command == "write-data":
        return cmd_write_data(args)
    if args.command == "bench":
        if not args.worker:
            args.worker = str(Path(os.environ.get("RH_BUILD_DIR", rec.ROOT / "build" / "cpu")) / "perf" / "rh_perf_worker")
        return cmd_bench(args, argv)
    if args.command == "compare":
        return gate.main(args)
    if args.command == "ab":
        from . import ab

        return ab.main(args, argv)
    if args.command == "plot":
        from . import plot

        return plot.main(args)
    return cmd_compare_spaces(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
