"""tools/rh ab BASE_REV CAND_REV: the same cases on two builds, interleaved round by round, one frozen plan.

1. Each revision is checked out as a git worktree inside the build folder (build/ab/<commit>/src) and built in its
   own build directory (build/ab/<commit>/build) with tools/rh build's options. The harness of the invoking tree
   (perf/*.cpp, *.hpp, CMakeLists.txt) is copied over each worktree's perf/ first: both libraries are measured by
   the same instrument. It builds against a revision whose library has what the harness includes (the host ISA
   name, the generated list of compiled spaces, backends/<space>/device_memory.hpp's describe()); an older one is
   measured with the harness of its own time, checked out by hand.
2. Every case is calibrated once, on the base build; the repetition plan (case → operations per sample) is then
   frozen, its SHA-256 recorded, and used by both builds.
3. The cases run group by group, the two builds alternating A B, B A, … for `rounds` rounds; disturbed samples
   are repeated (load.py), the other processes' load recorded per sample.
4. The gate (gate.py) judges the median of the per-round paired ratios candidate/base, with its other checks on
   each build's samples.
With --chain REV3 REV4 …, each step of REV1 → REV2 → REV3 → … is an A/B of its own (one lever each, against the
commit before it), every revision built first, side by side.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import bench, gate
from . import record as rec
from .options import chosen_spaces, command_line, selection_from, settings_from

HARNESS = ("*.cpp", "*.hpp", "*.in", "CMakeLists.txt")
_worktrees = threading.Lock()


def git(*args, cwd: Path = rec.ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def resolve(rev: str) -> str:
    try:
        return git("rev-parse", "--verify", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"tools/rh ab: {rev} is not a commit of this repository")


def build(sha: str, root: Path, log, extra: list[str] = ()) -> Path:
    """Worktree + build of one commit (with `extra` CMake options, in a build folder of its own); returns the path
    of its rh_perf_worker."""
    flavour = hashlib.sha256("\n".join(extra).encode()).hexdigest()[:8] if extra else ""
    src, bld = root / sha[:12] / "src", root / sha[:12] / ("build-" + flavour if flavour else "build")
    with _worktrees:  # git's worktree bookkeeping is the repository's: one revision at a time; the builds run together
        if not (src / ".git").exists():
            src.parent.mkdir(parents=True, exist_ok=True)
            git("worktree", "prune")
            git("worktree", "add", "--detach", "--force", str(src), sha)
        git("checkout", "--quiet", "--force", "--detach", sha, cwd=src)
        git("clean", "-fdq", "perf", cwd=src)
        (src / "perf").mkdir(exist_ok=True)
        for pattern in HARNESS:
            for f in (rec.ROOT / "perf").glob(pattern):
                shutil.copy2(f, src / "perf" / f.name)
    opts = [o for o in os.environ.get("RH_AB_CMAKE_OPTS", "").split("\n") if o]
    if not opts:
        raise SystemExit("tools/rh ab: RH_AB_CMAKE_OPTS is not set (run it through tools/rh ab)")
    log(f"building {sha[:12]} in {bld}")
    quiet = dict(stdout=subprocess.DEVNULL if not os.environ.get("RH_AB_VERBOSE") else None)
    subprocess.run(["cmake", "-S", str(src), "-B", str(bld), *opts, *extra, "-DRH_BUILD_TESTS=OFF",
                    "-DRH_BUILD_ABI=OFF"],
                   check=True, **quiet)
    subprocess.run(["cmake", "--build", str(bld), "--target", "rh_perf_worker"], check=True, **quiet)
    return bld / "perf" / "rh_perf_worker"


def main(args, argv) -> int:
    log = bench.stderr_log
    profile = bench.PROFILES[args.profile]
    if args.rounds is not None:
        args.samples = args.rounds
    settings = settings_from(args, profile)
    th = gate.thresholds_from(args)
    if settings.samples < th["min_samples"]:
        raise SystemExit(f"tools/rh ab: at least {th['min_samples']} rounds (--rounds)")
    if args.chain and args.cand_cmake:
        raise SystemExit("tools/rh ab: --cand-cmake compares two builds of one pair; it does not go with --chain")
    revs = [args.base_rev, args.cand_rev, *args.chain]
    shas = [resolve(r) for r in revs]
    for a, b in zip(shas, shas[1:]):
        if a == b and not args.cand_cmake:
            raise SystemExit("tools/rh ab: the same revision twice measures nothing (give --cand-cmake to compare builds)")
    root = Path(args.build_root or rec.ROOT / "build" / "ab")
    # Every build first, side by side (each revision once; the candidate's own with --cand-cmake).
    if args.cand_cmake:
        wanted = [(shas[0], ()), (shas[1], tuple(args.cand_cmake))]
    else:
        wanted = list(dict.fromkeys((sha, ()) for sha in shas))
    with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
        built = dict(zip(wanted, pool.map(lambda w: build(w[0], root, log, list(w[1])), wanted)))
    status = 0
    for i in range(len(shas) - 1):
        binaries = {"A:": built[(shas[i], ())], "B:": built[(shas[i + 1], tuple(args.cand_cmake))]}
        out_dir = args.out_dir and (Path(args.out_dir) / f"{shas[i][:12]}-{shas[i + 1][:12]}" if args.chain
                                    else Path(args.out_dir))
        status = max(status, measure(args, argv, profile, settings, th, (revs[i], shas[i]), (revs[i + 1], shas[i + 1]),
                                     binaries, out_dir))
    return status


def measure(args, argv, profile, settings, th, base_rev, cand_rev, binaries, out_dir) -> int:
    """One A/B: the two builds' workers, the plan calibrated on the base and frozen, the interleaved rounds, the gate."""
    import numpy as np

    from .engines import rh_worker, worker_env
    from .load import LoadMeter

    log = bench.stderr_log
    sel = selection_from(args)
    (base_name, base_sha), (cand_name, cand_sha) = base_rev, cand_rev
    env = worker_env()
    workers = {label: rh_worker(str(b), f"rh {label[0]}", env) for label, b in binaries.items()}
    try:
        spaces_a = chosen_spaces(workers["A:"].info, args.spaces)
        spaces = [s for s in spaces_a if s in chosen_spaces(workers["B:"].info, None)]
        engines = bench.Engines(workers, spaces, {})
        records = {}
        for label, w in workers.items():
            r = rec.new_record(profile.name, command_line(argv), rec.fingerprint(w.info, []),
                               bench.settings_dict(settings, profile))
            r["source_revision"] = (base_sha if label == "A:" else cand_sha)[:12]
            records[label] = r
        build_diffs = rec.fingerprint_differences(records["A:"]["fingerprint"], records["B:"]["fingerprint"])
        for d in build_diffs:
            log(f"note: the builds differ in {d}")
        meter = LoadMeter()
        meter.own_pids += [w.pid for w in workers.values()]
        plan: dict = {}
        with bench.workdir_for(None) as tmp:
            log("calibrating on the base build")
            bench.run_profile(profile, bench.Engines({"A:": workers["A:"]}, spaces, {}), sel, settings, plan,
                              {"A:": rec.new_record(profile.name, "", {}, {})}, meter, np, lambda m: None, Path(tmp),
                              calibrate_only=True)
            plan_hash = rec.plan_sha256(plan)
            log(f"plan frozen: {len(plan)} cases, SHA-256 {plan_hash}")
            bench.run_profile(profile, engines, sel, settings, plan, records, meter, np, log, Path(tmp))
        for r in records.values():
            r["plan"] = {"sha256": plan_hash, "reps": plan}
    finally:
        for w in workers.values():
            w.close()
    base, cand = records["A:"], records["B:"]
    c_by_id = {c["id"]: c for c in cand["cases"]}
    pairs = {c["id"]: [b / a for a, b in zip(c["samples_s"], c_by_id[c["id"]]["samples_s"])]
             for c in base["cases"] if c["id"] in c_by_id}
    try:
        gate.check_comparable(base, cand, ignore=tuple(sorted({d.split(":")[0] for d in build_diffs})))
    except gate.NotComparable as e:
        print(f"tools/rh ab: not comparable: {e}")
        return gate.NOT_COMPARABLE
    verdicts = gate.compare(base, cand, th, paired=pairs)
    print(f"A/B: BASE {base_name} = {base_sha[:12]}, CAND {cand_name} = {cand_sha[:12]}; "
          f"{settings.samples} interleaved rounds; plan SHA-256 {plan_hash}")
    print(gate.table(verdicts, paired=True), end="")
    status, line = gate.summary(verdicts)
    print(line)
    if out_dir:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        rec.save(base, out / "base.json")
        rec.save(cand, out / "cand.json")
        (out / "ab.json").write_text(rec.dumps(rec._finite({
            "schema": "renewable-huber-perf-ab", "schema_version": rec.SCHEMA_VERSION, "base": base_sha,
            "cand": cand_sha, "rounds": settings.samples, "plan_sha256": plan_hash, "build_differences": build_diffs,
            "thresholds": th, "paired_ratios": pairs,
            "verdicts": [{"case": v.case, "ratio": v.ratio, "passed": v.passed, "gated": v.gated,
                          "reasons": v.reasons} for v in verdicts]})) + "\n")
        print(f"wrote {out}/base.json, cand.json, ab.json", file=sys.stderr)
    return status
