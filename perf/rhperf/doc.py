"""tools/rh doc RECORD.json [--update FILE --section NAME]: the Markdown of a record for docs/performance.md.

The text between `<!-- record:NAME:begin … -->` and `<!-- record:NAME:end -->` is replaced by: a stamp (the
command, the source revision, the date and the fingerprint), the time table (every engine of the run, median ms
and rMAD, with the ratios of our spaces to each peer and to Serial), the space comparison and, for the peers,
the coefficient errors.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import record as rec
from . import spaces as space_table
from .bench import REFERENCE_PEERS
from .plot import engine_label


def stamp(record: dict, path: str) -> str:
    worst = max((max(c["load"]["other_cores"], default=0.0) for c in record["cases"]), default=0.0)
    discarded = sum(c["load"]["discarded"] for c in record["cases"])
    s = record["settings"]
    link = path if path.startswith("/") else "../" + path
    return (f"Record [`{path}`]({link}) — `{record['command']}` at `{record['source_revision']}`, "
            f"{record['created_utc']}; {len(record['cases'])} cases, {s['samples']} samples each (a sample is the "
            f"mean of ≥ {s['min_sample_seconds']} s of operations), plan SHA-256 `{record['plan']['sha256'][:16]}…`; "
            f"other processes used at most {worst:.2f} cores during a kept sample, {discarded} disturbed samples "
            f"were repeated.\nFingerprint: {rec.fingerprint_line(record)}.\n")


def ms_cell(c: dict | None) -> str:
    return "-" if c is None else f"{1e3 * c['median_s']:.2f} ({100 * c['rel_mad']:.0f}%)"


def ratio_cell(a: dict | None, b: dict | None, spec: str) -> str:
    return "-" if a is None or b is None else format(a["median_s"] / b["median_s"], spec)


def time_table(record: dict) -> str:
    cases = [c for c in record["cases"] if c["key"]["kind"] == "stream"]
    engines = list(dict.fromkeys(engine_label(c["key"]) for c in cases))
    ours = [e for e in engines if any(engine_label(c["key"]) == e and rec.is_ours(c["key"]["engine"]) for c in cases)]
    peers = [e for e in engines if e not in ours]
    rows: dict = {}
    for c in cases:
        k = c["key"]
        row = (f"{k['shape']} {k['samples']:,}×{k['features']}", k["batch"], k["dtype"], k["penalty"],
               f"{k['lifecycle']} {k['operation']}")
        rows.setdefault(row, {})[engine_label(k)] = c
    # Ratios: each parallel space over Serial, and our fastest-intended spaces (all but Serial when there are
    # others) over the reference's engines with the same input (the peers that solve the same problem).
    main = [o for o in ours if o != "serial"] or ours
    same_problem = [p for p in peers if p.split(" ")[0] in REFERENCE_PEERS]
    ratio_cols = [(o, "serial") for o in main if "serial" in ours and o != "serial"] + \
                 [(o, p) for o in main for p in same_problem if ("(device in)" in o) == ("(device in)" in p)]
    headers = ["shape", "batch", "dtype", "penalty", "workload"] + [f"{e} ms (rMAD)" for e in engines] + \
              [f"{o}/{p}" for o, p in ratio_cols] + ["iterations (ours)"]
    out = []
    for row, cells in rows.items():
        its = sorted({cells[e]["iterations"] for e in ours if e in cells and cells[e].get("iterations") is not None})
        out.append([row[0], f"{row[1]:,}", *row[2:]] + [ms_cell(cells.get(e)) for e in engines] +
                   [ratio_cell(cells.get(o), cells.get(p), ".2f") for o, p in ratio_cols] +
                   ["/".join(map(str, its)) or "-"])
    return rec.render(out, headers, markdown=True)


def error_table(record: dict) -> tuple:
    """Coefficient error against the generating truth, per engine (cold operations): the host-input cases, or the
    device-input ones in a record without host input. Returns (input, table)."""
    cold = [c for c in record["cases"] if c["key"]["kind"] == "stream" and c["key"]["lifecycle"] == "cold"
            and c.get("coef_error") is not None]
    source = "host" if any(c["key"]["input"] == "host" for c in cold) else "device"
    cases = [c for c in cold if c["key"]["input"] == source]
    engines = list(dict.fromkeys(engine_label(c["key"]) for c in cases))
    rows: dict = {}
    for c in cases:
        k = c["key"]
        rows.setdefault((f"{k['shape']} {k['samples']:,}×{k['features']}", k["dtype"], k["penalty"], k["operation"]),
                        {})[engine_label(k)] = c["coef_error"]
    headers = ["shape", "dtype", "penalty", "operation"] + engines
    out = [list(r) + [f"{cells[e]:.1e}" if e in cells else "-" for e in engines] for r, cells in rows.items()]
    return source, rec.render(out, headers, markdown=True)


def gram_table(record: dict) -> str:
    """The Gram pass per p, dtype and space, with its share of the measured ceilings."""
    ceil = record.get("ceilings", {})
    bw, fl = ceil.get("memory_read_bytes_per_s", {}), ceil.get("flop_per_s", {})
    headers = ["p (q)", "dtype", "space", "ms per pass (rMAD)", "GB/s", "% of read bandwidth", "GF/s",
               "% of matrix-product rate"]
    out = []
    for c in record["cases"]:
        if c["key"]["kind"] != "gram":
            continue
        k, g = c["key"], c["gram"]
        space = k["engine"][3:]
        peak = fl.get(f"{'cuda' if space == 'cuda' else 'host'} {k['dtype']}")
        out.append([f"{k['features']} ({g['q']})", k["dtype"], space,
                    f"{1e3 * c['median_s']:.3f} ({100 * c['rel_mad']:.0f}%)", f"{g['gbytes_per_s']:.1f}",
                    f"{100 * g['gbytes_per_s'] * 1e9 / bw[space]:.0f}%" if space in bw else "-",
                    f"{g['gflop_per_s']:.1f}", f"{100 * g['gflop_per_s'] * 1e9 / peak:.0f}%" if peak else "-"])
    note = ("Ceilings: read bandwidth " + ", ".join(f"{s} {v / 1e9:.1f} GB/s" for s, v in bw.items()) + "; matrix "
            "product " + ", ".join(f"{s} {v / 1e9:.1f} GF/s" for s, v in fl.items()) + f" ({ceil.get('flop_method', '')}).\n\n")
    return note + rec.render(out, headers, markdown=True)


def group_table(record: dict) -> str:
    """A group record: ms per group batch of every group and loop, and the speed-up of each space's group over the
    loop on its space, over the OpenMP group and over each peer's loop."""
    from .plot import group_ratios, group_series, group_shape_label

    cases = [c for c in record["cases"] if c["key"]["kind"] == "group"]
    series = list(dict.fromkeys(group_series(c["key"]) for c in cases))
    ratio_cols = group_ratios(series)
    rows: dict = {}
    for c in cases:
        k = c["key"]
        rows.setdefault((group_shape_label(k), k["dtype"], k["penalty"]), {})[group_series(k)] = c
    headers = ["shape", "dtype", "penalty"] + [f"{e} ms (rMAD)" for e in series] + \
              [f"{b} / {g}" for b, g in ratio_cols] + ["iterations (model 0)"]
    out = []
    for row, cells in rows.items():
        its = sorted({c["iterations"] for c in cells.values() if c.get("iterations") is not None})
        out.append(list(row) + [ms_cell(cells.get(e)) for e in series] +
                   [ratio_cell(cells.get(b), cells.get(g), ".3g") for b, g in ratio_cols] +
                   ["/".join(map(str, its)) or "-"])
    timed = sorted({(c["key"]["shape"], c["key"]["models_timed"]) for c in cases
                    if c["key"]["operation"] == "looped_partial_fit"})
    note = ("Milliseconds per group batch (one update of every model). Loops time the first models_timed models (" +
            ", ".join(f"{s}: {m}" for s, m in timed) + ") and count models / models_timed times that.\n\n")
    missing = "".join(f"- `{s['id']}`: not available ({s['reason']})\n" for s in record["skipped"])
    return note + rec.render(out, headers, markdown=True) + ("\n" + missing if missing else "")


def render(record: dict, path: str) -> str:
    if record["settings"].get("kind") == "gram":
        return stamp(record, path) + "\n" + gram_table(record)
    if record["settings"].get("kind") == "group":
        return stamp(record, path) + "\n" + group_table(record)
    parts = [stamp(record, path), "\n", time_table(record)]
    if any(not rec.is_ours(c["key"]["engine"]) for c in record["cases"]):
        source, table = error_table(record)
        parts += [f"\nCoefficient error ‖β − β*‖₂ / ‖β*‖₂ against the generating coefficients (cold, {source} input):\n\n",
                  table]
    parts += ["\nFastest space (`tools/rh compare-spaces`, cold partial_fit):\n\n",
              space_table.table(record, markdown=True).split("\n\n", 1)[1]]
    return "".join(parts)


def update(doc_path: Path, section: str, text: str) -> None:
    doc = doc_path.read_text()
    pattern = re.compile(rf"(<!-- record:{re.escape(section)}:begin[^>]*-->\n).*?(<!-- record:{re.escape(section)}:end -->)",
                         re.S)
    if not pattern.search(doc):
        raise SystemExit(f"{doc_path} has no section record:{section} (<!-- record:{section}:begin … end -->)")
    doc_path.write_text(pattern.sub(lambda m: m.group(1) + text + m.group(2), doc))


def main(args) -> int:
    record = rec.load(args.record)
    rel = Path(args.record).resolve()
    path = str(rel.relative_to(rec.ROOT)) if rel.is_relative_to(rec.ROOT) else str(rel)
    text = render(record, path)
    if args.update:
        update(Path(args.update), args.section, text)
        print(f"updated {args.update} (record:{args.section})")
    else:
        print(text, end="")
    return 0
