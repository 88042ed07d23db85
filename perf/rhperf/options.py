"""The run options shared by `bench` (__main__.py) and `ab` (ab.py): the flags, the settings and selection they
make, the spaces chosen, and the command line a record stores."""
from __future__ import annotations

import argparse
import os

from . import bench
from . import record as rec


def csv(s: str) -> tuple:
    return tuple(x for x in s.split(",") if x)


def add_run_flags(p: argparse.ArgumentParser, default_profile: str) -> None:
    p.add_argument("--profile", choices=sorted(bench.PROFILES), default=default_profile)
    p.add_argument("--spaces", type=csv, help="our spaces to measure (default: every compiled one with a device)")
    p.add_argument("--shapes", type=csv, help="shape names of the profile (default: all)")
    p.add_argument("--dtypes", type=csv, default=bench.DTYPES)
    p.add_argument("--penalties", type=csv, help="penalty names (default: every one the library knows)")
    p.add_argument("--workloads", type=csv, default=tuple(f"{a}:{b}" for a, b in bench.WORKLOADS),
                   help="lifecycle:operation pairs (default: cold:partial_fit,steady:partial_fit,cold:fit)")
    p.add_argument("--inputs", type=csv, default=bench.INPUTS,
                   help="host,device (device only on spaces and peers with their own memory)")
    p.add_argument("--cases", help="only the cases whose id matches this regular expression")
    p.add_argument("--inference", action="store_true",
                   help="also measure each of our spaces with Config::inference on (engine rh:SPACE+inference), "
                        "interleaved with it in the same rounds (penalty none)")
    p.add_argument("--samples", type=int, help="samples per case (default: the profile's)")
    p.add_argument("--min-sample-seconds", type=float, help="a sample averages enough operations to last this long")
    p.add_argument("--max-reps", type=int, help="most operations averaged in one sample")
    p.add_argument("--quiet-wait", type=float, help="most seconds to wait for a quiet machine before each group")
    p.add_argument("--quiet-threshold", type=float, default=0.3, help="busy cores below which the machine is quiet")
    p.add_argument("--retries", type=int, help="a disturbed sample is repeated at most this often (default: the "
                   "profile's)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--group-scale", type=float, default=1.0,
                   help="group profile: the model counts × this (e.g. 0.1 on a 2-core machine); recorded in the "
                        "cases' keys and the settings")
    p.add_argument("--worker", help=argparse.SUPPRESS)  # rh_perf_worker of the build (tools/rh passes it)


def settings_from(args, profile: bench.Profile) -> bench.Settings:
    def pick(value, default):
        return default if value is None else value
    return bench.Settings(samples=pick(args.samples, profile.samples),
                          min_sample_seconds=pick(args.min_sample_seconds, profile.min_sample_seconds),
                          max_reps=pick(args.max_reps, profile.max_reps), quiet_wait=pick(args.quiet_wait, profile.quiet_wait),
                          quiet_threshold=args.quiet_threshold, retries=pick(args.retries, profile.retries), seed=args.seed,
                          group_scale=args.group_scale)


def selection_from(args) -> bench.Selection:
    workloads = tuple(tuple(w.split(":")) for w in args.workloads)
    unknown = [w for w in workloads if w not in bench.WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workloads {unknown}; known: {bench.WORKLOADS}")
    return bench.Selection(shapes=list(args.shapes) if args.shapes else None, dtypes=args.dtypes,
                           penalties=args.penalties, workloads=workloads, inputs=args.inputs, cases=args.cases,
                           inference=args.inference)


def chosen_spaces(info: dict, wanted: tuple | None) -> list[str]:
    have = [s["name"] for s in info["spaces"] if s["device_count"] > 0]
    if wanted:
        missing = [s for s in wanted if s not in have]
        if missing:
            raise SystemExit(f"spaces {missing} are not available in this build (have: {have})")
        return [s for s in have if s in wanted]
    return have


def command_line(argv: list[str]) -> str:
    """How the record was made, without the internal paths tools/rh adds."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--worker", "--peer-python", "--sklearn-python"):
            skip = True
            continue
        out.append(_portable_path(a))
    return "tools/rh " + " ".join(out)


def _portable_path(arg: str) -> str:
    """A record is committed: a path inside the repository is written relative to it, any other absolute path as
    <outside>/NAME, so no machine's folders end up in the tree (tools/release/outside_paths.sh)."""
    if not os.path.isabs(arg):
        return arg
    rel = os.path.relpath(arg, rec.ROOT)
    return rel if not rel.startswith("..") else "<outside>/" + os.path.basename(arg)
