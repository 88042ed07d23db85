"""tools/rh plot RECORD.json [BASE.json] [--out-dir DIR]: PNGs of a record (matplotlib, Debian's).

  STEM-times.png     median time per shape for every space and peer (bars; whiskers: min–max of the samples),
                     cold partial_fit and cold fit, per dtype and penalty
  STEM-speedup.png   speed-up of each of our spaces over Serial and over each peer (cold partial_fit)
  STEM-gram.png      the Gram pass: GB/s and GF/s against p, with the measured ceilings (gram records)
  STEM-times.png     (group records) time per group batch of each space's group, each loop over single models and
                     each peer's loop (top), and the speed-up of each space's group over them (bottom)
  STEM-vs-BASE.png   per-case ratio RECORD / BASE with its spread (min and max sample over the base median),
                     and the gate's thresholds
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import gate
from . import record as rec

WORKLOADS = (("cold", "partial_fit"), ("cold", "fit"))
DTYPES = ("f64", "f32")  # the panels' order: float64 first


def panels_of(cases: list) -> list:
    """(dtype, penalty) of every panel the record's cases fill: float64 first, the penalties in the record's order."""
    penalties = list(dict.fromkeys(c["key"]["penalty"] for c in cases))
    present = {(c["key"]["dtype"], c["key"]["penalty"]) for c in cases}
    return [(dt, pen) for dt in DTYPES for pen in penalties if (dt, pen) in present]


def engine_label(key: dict) -> str:
    e = key["engine"][3:] if rec.is_ours(key["engine"]) else key["engine"]
    return e + (" (device in)" if key["input"] == "device" else "")


def stream_cases(record: dict) -> list[dict]:
    return [c for c in record["cases"] if c["key"]["kind"] == "stream" and c["median_s"]]


def shapes_of(cases: list[dict]) -> list[str]:
    return list(dict.fromkeys(c["key"]["shape"] for c in cases))


def title(record: dict, what: str) -> str:
    return f"{what}\n{record['profile']} record at {record['source_revision']} ({record['created_utc'][:10]})"


def time_bars(ax, placed: list, i: int, n: int, width: float, color, label: str) -> None:
    """Series i of n: a bar per (x position, case) at its median in ms, whiskers to its min and max sample."""
    if not placed:
        return
    xs = [j + (i - (n - 1) / 2) * width for j, _ in placed]
    ms = [1e3 * c["median_s"] for _, c in placed]
    spread = [[1e3 * (c["median_s"] - c["min_s"]) for _, c in placed], [1e3 * (c["max_s"] - c["median_s"]) for _, c in placed]]
    ax.bar(xs, ms, width, yerr=spread, capsize=2, color=color, label=label)


def times(plt, record: dict, path: Path) -> None:
    cases = stream_cases(record)
    shapes = shapes_of(cases)
    engines = list(dict.fromkeys(engine_label(c["key"]) for c in cases))
    panels = panels_of(cases)
    workloads = [w for w in WORKLOADS if any((c["key"]["lifecycle"], c["key"]["operation"]) == w for c in cases)]
    fig, axes = plt.subplots(len(workloads), len(panels), figsize=(4.2 * len(panels) + 1, 3.8 * len(workloads) + 1),
                             squeeze=False)
    width = 0.8 / max(len(engines), 1)
    colors = plt.get_cmap("tab10")
    for r, (lc, op) in enumerate(workloads):
        for col, (dt, pen) in enumerate(panels):
            ax = axes[r][col]
            for i, e in enumerate(engines):
                placed = [(j, c) for j, s in enumerate(shapes) for c in cases
                          if (c["key"]["shape"], c["key"]["dtype"], c["key"]["penalty"], c["key"]["lifecycle"],
                              c["key"]["operation"]) == (s, dt, pen, lc, op) and engine_label(c["key"]) == e]
                time_bars(ax, placed, i, len(engines), width, colors(i % 10), e)
            ax.set_yscale("log")
            ax.set_xticks(range(len(shapes)))
            ax.set_xticklabels(shapes, rotation=20, fontsize=8)
            ax.set_title(f"{lc} {op}, {dt}, penalty {pen}", fontsize=9)
            ax.grid(axis="y", which="both", alpha=0.3)
            if col == 0:
                ax.set_ylabel("ms per operation (log)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for row in axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8), fontsize=9)
    fig.suptitle(title(record, "Median time per operation (whiskers: min–max sample)"), fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def speedup(plt, record: dict, path: Path) -> bool:
    cases = [c for c in stream_cases(record) if (c["key"]["lifecycle"], c["key"]["operation"]) == WORKLOADS[0]]
    by = {(c["key"]["shape"], c["key"]["dtype"], c["key"]["penalty"], engine_label(c["key"])): c["median_s"]
          for c in cases}
    ours = list(dict.fromkeys(engine_label(c["key"]) for c in cases if rec.is_ours(c["key"]["engine"])))
    baselines = [b for b in dict.fromkeys(engine_label(c["key"]) for c in cases)
                 if b == "serial" or not rec.is_ours(next(c["key"]["engine"] for c in cases if engine_label(c["key"]) == b))]
    baselines = [b for b in baselines if any(k[3] == b for k in by)]
    if not baselines or not ours:
        return False
    shapes = shapes_of(cases)
    combos = [(dt, pen) for dt, pen in panels_of(cases) if any(k[1:3] == (dt, pen) for k in by)]
    fig, axes = plt.subplots(1, len(baselines), figsize=(5.5 * len(baselines), 4.2), squeeze=False)
    colors = plt.get_cmap("tab20")
    series = [(o, dt, pen) for o in ours for dt, pen in combos]
    width = 0.8 / max(len(series), 1)
    for a, base in enumerate(baselines):
        ax = axes[0][a]
        for i, (o, dt, pen) in enumerate(series):
            xs, ys = [], []
            for j, s in enumerate(shapes):
                t, b = by.get((s, dt, pen, o)), by.get((s, dt, pen, base))
                if t and b and o != base:
                    xs.append(j + (i - (len(series) - 1) / 2) * width)
                    ys.append(b / t)
            if xs:  # bars grow from 1: up when ours is faster, down when slower
                ax.bar(xs, [y - 1 for y in ys], width, bottom=1, color=colors(i % 20), label=f"{o} {dt} {pen}")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        ax.set_ylim(min(lo, 0.5), max(hi, 2.0))
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels(shapes, rotation=20, fontsize=8)
        ax.set_title(f"speed-up over {base} (> 1: ours faster)", fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle(title(record, "Cold partial_fit: time of the baseline / time of our space"), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def gram(plt, record: dict, path: Path) -> bool:
    cases = [c for c in record["cases"] if c["key"]["kind"] == "gram" and c["median_s"]]
    if not cases:
        return False
    ceil = record.get("ceilings", {})
    fig, (bw, fl) = plt.subplots(1, 2, figsize=(12, 4.6))
    colors = plt.get_cmap("tab10")
    series = list(dict.fromkeys((c["key"]["engine"][3:], c["key"]["dtype"]) for c in cases))
    spaces = list(dict.fromkeys(s for s, _ in series))
    for i, (space, dt) in enumerate(series):
        pts = sorted((c["key"]["features"], c["gram"]) for c in cases if (c["key"]["engine"][3:], c["key"]["dtype"]) == (space, dt))
        ps = [p for p, _ in pts]
        style = dict(color=colors(spaces.index(space) % 10), ls="-" if dt == "f64" else "--", marker="o")
        bw.plot(ps, [g["gbytes_per_s"] for _, g in pts], label=f"{space} {dt}", **style)
        fl.plot(ps, [g["gflop_per_s"] for _, g in pts], label=f"{space} {dt}", **style)
    for space, v in ceil.get("memory_read_bytes_per_s", {}).items():
        if space in spaces:
            bw.axhline(v / 1e9, color=colors(spaces.index(space) % 10), lw=1, ls=":")
            bw.annotate(f"{space} read bandwidth {v / 1e9:.0f} GB/s", (8, v / 1e9), fontsize=7, va="bottom")
    for name, v in ceil.get("flop_per_s", {}).items():
        fl.axhline(v / 1e9, color="gray", lw=1, ls=":")
        fl.annotate(f"{name} matrix product {v / 1e9:.0f} GF/s", (8, v / 1e9), fontsize=7, va="bottom")
    n = cases[0]["key"]["samples"]
    for ax, what in ((bw, "GB/s of X read (n·q·sizeof)"), (fl, "GF/s (n·q(q+1) + 2n·q flops)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(f"p (features; q = p + 1), n = {n:,} rows")
        ax.set_ylabel(what)
        ax.grid(which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title(record, "Fused Gram + gradient pass against the measured ceilings (dotted)"), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def group_series(key: dict) -> str:
    """A group record's series: the engine (with its input when that is device memory), and `group` or `loop`."""
    return f"{engine_label(key)} {'group' if key['operation'] == 'group_partial_fit' else 'loop'}"


def group_ratios(series: list[str]) -> list[tuple[str, str]]:
    """(baseline, group) pairs a group record is judged by: each space's group against the loop on its space, the
    OpenMP group and each peer's loop (issue 34's (a), (b) and (c))."""
    groups = [g for g in series if g.endswith(" group")]
    ours = {g.split()[0] for g in groups}
    return [(b, g) for g in groups for b in series if b != g and (
        b == g.replace(" (device in)", "").replace(" group", " loop") or b == "openmp group" or
        (b.endswith(" loop") and b.split()[0] not in ours))]


def group_shape_label(key: dict) -> str:
    return f"{key['shape']}: {key['models']:,} models × {key['rows']:,} rows × p {key['features']}"


def group(plt, record: dict, path: Path) -> bool:
    cases = [c for c in record["cases"] if c["key"]["kind"] == "group" and c["median_s"]]
    if not cases:
        return False
    shapes = list(dict.fromkeys(group_shape_label(c["key"]) for c in cases))
    combos = [f"{dt} {pen}" for dt, pen in panels_of(cases)]
    series = list(dict.fromkeys(group_series(c["key"]) for c in cases))
    by = {(group_shape_label(c["key"]), f"{c['key']['dtype']} {c['key']['penalty']}", group_series(c["key"])): c
          for c in cases}
    ratios = [(g, b) for b, g in group_ratios(series)]
    fig, axes = plt.subplots(2, len(shapes), figsize=(6.5 * len(shapes), 8.5), squeeze=False)
    colors = plt.get_cmap("tab10")
    for col, shape in enumerate(shapes):
        ax = axes[0][col]
        width = 0.8 / max(len(series), 1)
        for i, name in enumerate(series):
            placed = [(j, by[(shape, combo, name)]) for j, combo in enumerate(combos) if (shape, combo, name) in by]
            time_bars(ax, placed, i, len(series), width, colors(i % 10), name)
        ax.set_yscale("log")
        for j, combo in enumerate(combos):  # a group the library refused: say so where its bar would be
            if not any(by.get((shape, combo, g)) for g in series if g.endswith(" group")) and any(
                    f"/{shape.split(':')[0]}/{combo.replace(' ', '/')}/fresh/group_partial_fit/" in s["id"]
                    for s in record["skipped"]):
                ax.annotate("group not available", (j, 0.02), xycoords=("data", "axes fraction"), ha="center",
                            fontsize=7, rotation=90, va="bottom")
        ax.set_xticks(range(len(combos)))
        ax.set_xticklabels(combos, fontsize=8)
        ax.set_title(shape, fontsize=9)
        ax.set_ylabel("ms per group batch (log)")
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7)
        ax = axes[1][col]
        width = 0.8 / max(len(ratios), 1)
        for i, (g, b) in enumerate(ratios):
            xs, ys = [], []
            for j, combo in enumerate(combos):
                cg, cb = by.get((shape, combo, g)), by.get((shape, combo, b))
                if cg and cb:
                    xs.append(j + (i - (len(ratios) - 1) / 2) * width)
                    ys.append(cb["median_s"] / cg["median_s"])
            if xs:
                ax.bar(xs, [y - 1 for y in ys], width, bottom=1, color=plt.get_cmap("tab20")(i % 20), label=f"{b} / {g}")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        ax.set_ylim(min(lo, 0.5), max(hi, 2.0))
        ax.set_xticks(range(len(combos)))
        ax.set_xticklabels(combos, fontsize=8)
        ax.set_title("speed-up of the group (> 1: the group is faster)", fontsize=9)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title(record, "Model groups: median time per group batch (whiskers: min–max); loops over "
                               "models_timed models, counted for all"), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def versus(plt, record: dict, base: dict, path: Path) -> None:
    gate.check_comparable(base, record)
    b = {c["id"]: c for c in base["cases"]}
    cases = [c for c in record["cases"] if c["id"] in b and b[c["id"]]["median_s"]]
    fig, ax = plt.subplots(figsize=(10, 0.22 * len(cases) + 1.6))
    for i, c in enumerate(cases):
        m = b[c["id"]]["median_s"]
        r, lo, hi = c["median_s"] / m, c["min_s"] / m, c["max_s"] / m
        color = "tab:blue" if rec.is_ours(c["key"]["engine"]) else "tab:gray"
        ax.errorbar([r], [i], xerr=[[r - lo], [hi - r]], fmt="o", ms=3, color=color, capsize=2)
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([c["id"] for c in cases], fontsize=6)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", lw=0.8)
    for name, color in (("max_slowdown_cpu", "tab:orange"), ("max_slowdown_gpu", "tab:red")):
        ax.axvline(gate.THRESHOLDS[name], color=color, ls="--", lw=0.8, label=f"{name} {gate.THRESHOLDS[name]}")
    ax.set_xscale("log")
    ax.set_xlabel("median RECORD / median BASE (bars: min and max sample over the base median; gray: peers)")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"{record['source_revision']} vs {base['source_revision']} ({record['profile']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    record = rec.load(args.record)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(args.record).stem
    written = []
    if stream_cases(record):
        times(plt, record, out / f"{stem}-times.png")
        written.append(f"{stem}-times.png")
        if speedup(plt, record, out / f"{stem}-speedup.png"):
            written.append(f"{stem}-speedup.png")
    if gram(plt, record, out / f"{stem}-gram.png"):
        written.append(f"{stem}-gram.png")
    if group(plt, record, out / f"{stem}-times.png"):
        written.append(f"{stem}-times.png")
    if args.base:
        try:
            versus(plt, record, rec.load(args.base), out / f"{stem}-vs-{Path(args.base).stem}.png")
            written.append(f"{stem}-vs-{Path(args.base).stem}.png")
        except gate.NotComparable as e:
            print(f"tools/rh plot: not comparable with {args.base}: {e}", file=sys.stderr)
            return gate.NOT_COMPARABLE
    for w in written:
        print(out / w)
    return 0 if written else 1


