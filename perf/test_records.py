#!/usr/bin/env python3
"""ctest perf_records (label cpu): the record and the gate work, without asserting any time.

1. `rhperf bench --profile smoke --out a.json` (what tools/rh bench runs after its build; here without waiting
   for a quiet machine) writes a record whose cases have the profile's samples and statistics;
2. `compare a.json a.json` passes. The rMAD check is switched off there: it judges this machine's noise, which a
   test must not assert; it is checked on its own below, on samples made for it;
3. the same record with every time doubled fails, every case of ours on the slowdown check;
4. each other check fails on a record changed for it (samples, convergence, iterations, rMAD), and records with
   a different fingerprint or different cases are refused (exit 2) with the field named;
5. compare-spaces answers from the record;
6. the group profile, its model counts scaled down to seconds (--group-scale), records every group and loop with
   its model counts, model 0's coefficients alike in both, a group the library refuses as skipped with its reason,
   one line per case, and its doc table;
7. doc's coefficient-error table reads the host-input cases, or the device-input ones where a record has no host
   input (from the committed H200 record, with and without its host-input cases).

Usage: test_records.py --worker BUILD/perf/rh_perf_worker --workdir DIR
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

PERF = Path(__file__).resolve().parent
failures: list[str] = []


def rhperf(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PERF))
    return subprocess.run([sys.executable, "-m", "rhperf", *args], capture_output=True, text=True, env=env)


def check(what: str, ok: bool, detail: str = "") -> None:
    print(("ok    " if ok else "FAIL  ") + what + ("" if ok else f"\n{detail}"))
    if not ok:
        failures.append(what)


def gate(workdir: Path, base: dict, cand: dict, *flags: str) -> subprocess.CompletedProcess:
    for name, r in (("base.json", base), ("cand.json", cand)):
        (workdir / name).write_text(json.dumps(r))
    return rhperf("compare", str(workdir / "base.json"), str(workdir / "cand.json"), *flags)


def steady(record: dict) -> dict:
    """The record with every case's samples made equal to its median (rMAD 0): the other checks alone."""
    r = copy.deepcopy(record)
    for c in r["cases"]:
        c["samples_s"] = [c["median_s"]] * len(c["samples_s"])
        c["min_s"] = c["max_s"] = c["median_s"]
        c["rel_mad"] = 0.0
    return r


def check_group(worker: str, work: Path) -> None:
    g = work / "group.json"
    scale = 0.002  # many-small: 20 models (all looped), few-large: 2
    r = rhperf("bench", "--profile", "group", "--worker", worker, "--group-scale", str(scale), "--samples", "2",
               "--min-sample-seconds", "0.001", "--quiet-wait", "0", "--retries", "0", "--out", str(g))
    check("bench --profile group writes a record", r.returncode == 0 and g.exists(), r.stdout + r.stderr)
    if not g.exists():
        return
    record = json.loads(g.read_text())
    spaces = {c["key"]["engine"] for c in record["cases"]}
    cells = {(c["key"]["shape"], c["key"]["dtype"], c["key"]["penalty"], c["key"]["engine"], c["key"]["operation"]): c
             for c in record["cases"]}
    skipped = {s["id"]: s["reason"] for s in record["skipped"]}
    expected = {"many-small": (20, 256, 8), "few-large": (2, 4096, 32)}
    missing, wrong, apart = [], [], []
    penalties = sorted({c["key"]["penalty"] for c in record["cases"]})  # every one the library knows
    for shape, (models, rows, features) in expected.items():
        for dtype in ("f64", "f32"):
            for penalty in penalties:
                for engine in spaces:
                    loop = cells.get((shape, dtype, penalty, engine, "looped_partial_fit"))
                    group = cells.get((shape, dtype, penalty, engine, "group_partial_fit"))
                    gid = f"group/{shape}/{dtype}/{penalty}/fresh/group_partial_fit/{engine}/host"
                    if loop is None or (group is None and "not available" not in skipped.get(gid, "")):
                        missing.append(gid)
                        continue
                    for c, timed in ((loop, models), (group, models)):
                        k = c and c["key"]
                        if c and ((k["models"], k["rows"], k["features"], k["batches"], k["models_timed"]) !=
                                  (models, rows, features, 3, timed) or len(c["samples_s"]) != 2
                                  or not c["all_converged"] or c["iterations"] < 1):
                            wrong.append(c["id"])
                    # Model 0 of the group and its single-model loop: the same fit within the golden floors, so
                    # the same error against the truth far below its size (another model's fit would be O(1) away).
                    if group and abs(group["coef_error"] - loop["coef_error"]) > 1e-3:
                        apart.append(f"{gid}: {group['coef_error']} vs {loop['coef_error']}")
    check("the group record has a group (or the library's reason it is not available) and a loop per shape, dtype, "
          "penalty and space", not missing and len(spaces) >= 1 and len(penalties) >= 2, f"missing: {missing}")
    check("each group case names its scaled model counts, samples, convergence and iterations", not wrong,
          f"wrong: {wrong}")
    check("model 0 fits alike in the group and the loop (coef_error)", not apart, "\n".join(apart))
    check("a group record holds one line per case",
          len(g.read_text().splitlines()) < 60 + len(record["cases"]) + len(record["skipped"]),
          f"{len(g.read_text().splitlines())} lines for {len(record['cases'])} cases")
    r = rhperf("doc", str(g))
    check("doc prints the group table with the loops' speed-up ratios",
          r.returncode == 0 and ("loop / openmp group" in r.stdout or "loop / serial group" in r.stdout),
          r.stdout + r.stderr)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--worker", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--record", help="check the gate on this record instead of measuring one (quick reruns)")
    args = p.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    a = work / "a.json"

    # No waiting for a quiet machine and no repeated samples: the test checks the mechanics, not the times, and
    # must end in bounded time on a busy machine too.
    if args.record:
        a.write_text(Path(args.record).read_text())
        r = subprocess.CompletedProcess([], 0, "", "")
    else:
        r = rhperf("bench", "--profile", "smoke", "--worker", args.worker, "--out", str(a), "--quiet-wait", "0",
                   "--retries", "0")
    check("bench --profile smoke writes a record", r.returncode == 0 and a.exists(), r.stdout + r.stderr)
    if not a.exists():
        return 1
    record = json.loads(a.read_text())
    ours = [c for c in record["cases"] if c["key"]["engine"].startswith("rh:")]
    spaces = {c["key"]["engine"] for c in ours}
    check("the record has every smoke case on every space (2 shapes × 2 dtypes × 2 penalties × 3 workloads)",
          len(ours) == 24 * len(spaces) and len(spaces) >= 1, f"{len(ours)} cases on {sorted(spaces)}")
    check("every case has 9 samples, a median within [min, max], iterations and convergence",
          all(len(c["samples_s"]) == 9 and c["min_s"] <= c["median_s"] <= c["max_s"] and c["iterations"] > 0
              and c["all_converged"] is True and len(c["load"]["other_cores"]) == 9 for c in ours),
          json.dumps(ours[0], indent=1))
    check("the fingerprint names the compiler, Kokkos and the CPU",
          all(record["fingerprint"][s][f] for s, f in (("build", "compiler"), ("build", "kokkos_version"),
                                                       ("machine", "cpu_model"))))
    check("the plan has one repetition count per case and its SHA-256",
          set(record["plan"]["reps"]) == {c["id"] for c in record["cases"]} and len(record["plan"]["sha256"]) == 64)
    print(r.stdout)

    r = rhperf("compare", str(a), str(a), "--max-rel-mad", "1e9")
    check("compare a.json a.json passes", r.returncode == 0 and " 0 failed" in r.stdout, r.stdout + r.stderr)

    doubled = copy.deepcopy(record)
    for c in doubled["cases"]:
        c["samples_s"] = [2 * s for s in c["samples_s"]]
        for f in ("median_s", "min_s", "max_s"):
            c[f] *= 2
    r = gate(work, record, doubled, "--max-rel-mad", "1e9")
    rows = [line for line in r.stdout.splitlines() if line.startswith("smoke/")]
    check("every time doubled fails, every case on the slowdown check",
          r.returncode == 1 and len(rows) == len(ours) and all("FAIL" in x and "slowdown 2.000 > 1.10" in x
                                                               for x in rows), r.stdout + r.stderr)
    print("\n".join(rows[:2]) + "\n…\n" + r.stdout.splitlines()[-1])

    base = steady(record)
    r = gate(work, base, base)
    check("a record with no spread passes the default gate", r.returncode == 0, r.stdout + r.stderr)
    first = base["cases"][0]["id"]

    def broken(change) -> dict:
        cand = copy.deepcopy(base)
        change(cand["cases"][0])
        return cand

    def spread(c):
        c["samples_s"] = [c["median_s"] * (1.5 if i % 2 else 1.0) for i in range(len(c["samples_s"]))]
        c["rel_mad"] = 0.5

    for what, change, reason in (
            ("8 samples", lambda c: c.update(samples_s=c["samples_s"][:8]), "samples 9/8 < 9"),
            ("a batch not converged", lambda c: c.update(all_converged=False), "not all batches converged"),
            ("two more iterations", lambda c: c.update(iterations=c["iterations"] + 2), "iterations"),
            ("rMAD 50 %", spread, "rMAD 0.0%/50.0% > 10%")):
        r = gate(work, base, broken(change))
        fails = [line for line in r.stdout.splitlines() if "FAIL" in line]
        check(f"{what} fails that case, on that check", r.returncode == 1 and len(fails) == 1
              and fails[0].startswith(first) and reason in fails[0], r.stdout + r.stderr)

    other = copy.deepcopy(base)
    other["fingerprint"]["machine"]["cpu_model"] = "another CPU"
    r = gate(work, base, other)
    check("another CPU is refused, naming the field", r.returncode == 2 and "machine.cpu_model" in r.stdout,
          r.stdout + r.stderr)
    other = copy.deepcopy(base)
    other["fingerprint"]["library"]["git_revision"] = "0123456789ab"
    r = gate(work, base, other)
    check("another library revision is compared (that is the point)", r.returncode == 0, r.stdout + r.stderr)
    fewer = copy.deepcopy(base)
    fewer["cases"].pop(0)
    r = gate(work, base, fewer)
    check("a missing case is refused, naming it", r.returncode == 2 and f"only in BASE: {first}" in r.stdout,
          r.stdout + r.stderr)
    data = broken(lambda c: c["key"].update(data_sha256="0" * 64))
    r = gate(work, base, data)
    check("other data is refused, naming the field", r.returncode == 2 and "data_sha256" in r.stdout,
          r.stdout + r.stderr)

    r = rhperf("compare-spaces", str(a))
    check("compare-spaces names a fastest space for every shape and dtype",
          r.returncode == 0 and sum(line.split()[-1] in {s[3:] for s in spaces}
                                    for line in r.stdout.splitlines()[3:]) == 2 * 2 * 2, r.stdout + r.stderr)
    print(r.stdout)

    check_group(args.worker, work)
    check_error_table(work)

    print(f"perf_records: {len(failures)} failed")
    return 1 if failures else 0


def check_error_table(work: Path) -> None:
    """doc's coefficient-error table comes from the host-input cases, and from the device-input ones in a record
    without host input (a GPU record beside a peer fed from device memory): the committed H200 record has both."""
    full = json.loads((PERF / "baselines" / "h200-standard.json").read_text())
    device_only = copy.deepcopy(full)
    device_only["cases"] = [c for c in full["cases"] if c["key"]["input"] != "host"]
    path = work / "device-only.json"
    path.write_text(json.dumps(device_only))
    expected = {f"{c['coef_error']:.1e}" for c in device_only["cases"]
                if c["key"]["lifecycle"] == "cold" and c.get("coef_error") is not None}
    for name, rec_path, source in (("host", PERF / "baselines" / "h200-standard.json", "host"),
                                   ("device-only", path, "device")):
        r = rhperf("doc", str(rec_path))
        table = r.stdout.split("generating coefficients", 1)[-1].split("Fastest space", 1)[0]
        rows = [line for line in table.splitlines() if line.startswith("| ") and ("f64" in line or "f32" in line)]
        check(f"doc's coefficient-error table of the {name} record says {source} input and has its 16 rows",
              r.returncode == 0 and f"(cold, {source} input)" in r.stdout and len(rows) == 16
              and (source == "host" or all(cell.strip() in expected for row in rows for cell in row.split("|")[5:7])),
              r.stdout[-3000:] + r.stderr)


if __name__ == "__main__":
    sys.exit(main())
