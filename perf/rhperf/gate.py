"""The regression gate: tools/rh compare BASE.json CAND.json, and the paired gate of tools/rh ab.

Two records are compared only when their fingerprints agree (every section but `library`, which names the build
being judged) and they hold the same cases (same keys, data hash included); otherwise the gate refuses and says
which field differs (exit status 2). Each of our cases then passes or fails on the checks below; the peers' cases
are shown for context and never fail the gate. Exit status 1 when any case fails.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from . import record as rec

# The acceptance criteria, in one place (tools/rh compare --help lists the flags that override them).
THRESHOLDS = {
    "min_samples": 9,  # samples per case, in each record
    "max_iteration_difference": 1,  # |median iterations, candidate − base|
    "max_rel_mad": 0.10,  # relative MAD of each record's samples
    "max_slowdown_cpu": 1.10,  # median candidate / base on a CPU space or peer
    "max_slowdown_gpu": 1.15,  # … on a GPU space or peer
}
NOT_COMPARABLE = 2


class NotComparable(Exception):
    pass


@dataclass
class Verdict:
    case: str
    engine: str
    base_ms: float
    cand_ms: float
    ratio: float
    spread: str
    iterations: str
    gated: bool
    reasons: list

    @property
    def passed(self) -> bool:
        return not self.reasons


def check_comparable(base: dict, cand: dict, ignore: tuple[str, ...] = ()) -> None:
    diffs = rec.fingerprint_differences(base["fingerprint"], cand["fingerprint"], ignore)
    if diffs:
        raise NotComparable("the fingerprints differ:\n  " + "\n  ".join(diffs))
    b = {c["id"]: c for c in base["cases"]}
    c = {c["id"]: c for c in cand["cases"]}
    only_b, only_c = sorted(set(b) - set(c)), sorted(set(c) - set(b))
    if only_b or only_c:
        lines = [f"only in BASE: {i}" for i in only_b[:10]] + [f"only in CAND: {i}" for i in only_c[:10]]
        more = len(only_b) + len(only_c) - len(lines)
        raise NotComparable("the case keys differ:\n  " + "\n  ".join(lines) + (f"\n  … and {more} more" if more > 0 else ""))
    for i in b:
        for f in rec.KEY_FIELDS:
            if b[i]["key"].get(f) != c[i]["key"].get(f):
                raise NotComparable(f"case {i}: key field {f} differs: {b[i]['key'].get(f)!r} vs {c[i]['key'].get(f)!r}")


def judge(base: dict, cand: dict, th: dict, ratios: list[float] | None = None) -> Verdict:
    """One case. `ratios`: the per-round paired ratios candidate/base of an A/B run (their median is the
    slowdown); otherwise the ratio of the two medians."""
    engine = base["key"]["engine"]
    reasons = []
    n_b, n_c = len(base["samples_s"]), len(cand["samples_s"])
    if min(n_b, n_c) < th["min_samples"]:
        reasons.append(f"samples {n_b}/{n_c} < {th['min_samples']}")
    if base["key"]["kind"] != "gram":
        if base.get("all_converged") is False or cand.get("all_converged") is False:
            reasons.append("not all batches converged")
        ib, ic = base.get("iterations"), cand.get("iterations")
        if ib is not None and ic is not None and abs(ic - ib) > th["max_iteration_difference"]:
            reasons.append(f"iterations {ib} → {ic}")
    mads = [base.get("rel_mad"), cand.get("rel_mad")]
    if any(m is None or (isinstance(m, float) and math.isnan(m)) or m > th["max_rel_mad"] for m in mads):
        reasons.append("rMAD " + "/".join("-" if m is None else f"{100 * m:.1f}%" for m in mads) +
                       f" > {100 * th['max_rel_mad']:.0f}%")
    limit = th["max_slowdown_gpu"] if rec.is_gpu_engine(engine) else th["max_slowdown_cpu"]
    if ratios:
        ratio = statistics.median(ratios)
        spread = f"{min(ratios):.3f}–{max(ratios):.3f}"
    else:
        ratio = cand["median_s"] / base["median_s"] if base["median_s"] else float("nan")
        spread = f"{cand['min_s'] / base['median_s']:.3f}–{cand['max_s'] / base['median_s']:.3f}" if base["median_s"] else "-"
    if not ratio <= limit:
        reasons.append(f"slowdown {ratio:.3f} > {limit:.2f}")
    its = f"{base.get('iterations', '-')}/{cand.get('iterations', '-')}" if base["key"]["kind"] != "gram" else "-"
    return Verdict(base["id"], engine, base["median_s"], cand["median_s"], ratio, spread, its, rec.is_ours(engine),
                   reasons)


def compare(base: dict, cand: dict, th: dict, paired: dict | None = None) -> list[Verdict]:
    c = {x["id"]: x for x in cand["cases"]}
    return [judge(b, c[b["id"]], th, (paired or {}).get(b["id"])) for b in base["cases"]]


def table(verdicts: list[Verdict], paired: bool) -> str:
    headers = ["case", "base ms", "cand ms", "paired ratio" if paired else "ratio", "spread", "iterations",
               "verdict", "reason"]
    rows = []
    for v in verdicts:
        verdict = ("PASS" if v.passed else "FAIL") if v.gated else "info (peer)"
        rows.append([v.case, rec.fmt_ms(v.base_ms), rec.fmt_ms(v.cand_ms), f"{v.ratio:.3f}", v.spread, v.iterations,
                     verdict, "; ".join(v.reasons)])
    return rec.render(rows, headers)


def summary(verdicts: list[Verdict]) -> tuple[int, str]:
    gated = [v for v in verdicts if v.gated]
    failed = [v for v in gated if not v.passed]
    checks: dict = {}
    for v in failed:
        for r in v.reasons:
            name = r.split(" ")[0]
            checks[name] = checks.get(name, 0) + 1
    line = f"gate: {len(gated) - len(failed)} passed, {len(failed)} failed"
    if checks:
        line += " (failed checks: " + ", ".join(f"{k} ×{n}" for k, n in sorted(checks.items())) + ")"
    return (1 if failed else 0), line


def add_threshold_flags(p) -> None:
    for name, value in THRESHOLDS.items():
        p.add_argument("--" + name.replace("_", "-"), type=type(value), default=value,
                       help=f"gate threshold (default {value})")


def thresholds_from(args) -> dict:
    return {name: getattr(args, name) for name in THRESHOLDS}


def main(args) -> int:
    base, cand = rec.load(args.base), rec.load(args.cand)
    try:
        check_comparable(base, cand, tuple(args.ignore_field or ()))
    except NotComparable as e:
        print(f"tools/rh compare: not comparable: {e}")
        return NOT_COMPARABLE
    verdicts = compare(base, cand, thresholds_from(args))
    print(f"BASE {args.base}: {base['source_revision']} ({base['created_utc']})")
    print(f"CAND {args.cand}: {cand['source_revision']} ({cand['created_utc']})")
    print(table(verdicts, paired=False), end="")
    status, line = summary(verdicts)
    print(line)
    return status
