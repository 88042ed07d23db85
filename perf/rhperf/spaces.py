"""tools/rh compare-spaces RECORD.json: which of our spaces is fastest for each shape and dtype.

One row per shape × dtype × penalty (× lifecycle/operation when --all): each space's median time, its ratio to the
fastest space of the row, and the fastest. Only spaces (and inputs) measured in the same record are compared.
"""
from __future__ import annotations

from . import record as rec


def table(record: dict, markdown: bool = False, workloads: tuple | None = (("cold", "partial_fit"),)) -> str:
    rows: dict = {}
    columns: list = []
    for c in record["cases"]:
        k = c["key"]
        if not rec.is_ours(k["engine"]):
            continue
        if k["kind"] == "stream" and workloads and (k["lifecycle"], k["operation"]) not in workloads:
            continue
        if k["kind"] == "group" and k["operation"] != "group_partial_fit":  # the spaces' groups, not the loops
            continue
        col = k["engine"][3:] + ("" if k["input"] == "host" else f" ({k['input']} input)")
        if col not in columns:
            columns.append(col)
        shape = f"{k['shape']} {k['samples']:,}×{k['features']}" + (f" (b {k['batch']:,})" if k["kind"] == "stream" else "")
        row = (shape, k["dtype"], k["penalty"]) + ((k["lifecycle"], k["operation"]) if not workloads else ())
        rows.setdefault(row, {})[col] = c["median_s"]
    headers = ["shape", "dtype", "penalty"] + (["lifecycle", "operation"] if not workloads else []) + \
              [f"{col} ms (× fastest)" for col in columns] + ["fastest"]
    out = []
    for row, cells in rows.items():
        best = min(cells, key=cells.get)
        out.append(list(row) + [f"{1e3 * cells[col]:.3f} ({cells[col] / cells[best]:.2f}×)" if col in cells else "-"
                                for col in columns] + [best])
    title = ("workload: " + ", ".join(f"{a} {b}" for a, b in workloads) + "\n\n") if workloads else ""
    return title + rec.render(out, headers, markdown)
