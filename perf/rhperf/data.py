"""The one data generator of the performance harness, and the file every engine reads.

Streams follow the reference project's shape-sweep recipe (docs/performance.md, "Data"): X ~ N(0, 1),
coef ~ N(0, 1), y = X·coef + N(0, 0.2²), and when samples ≥ 100 the rows 0, k, 2k, … (k = max(100, samples // 100))
get an extra N(0, 8²), all from ``numpy.random.default_rng(seed)``. The Gram pass uses the same recipe without the
outliers (they do not matter to one pass).

Model groups (the group profile): n_models independent models, each with its own coef ~ N(0, 1) and a stream of
`batches` batches of `rows` rows drawn by the same recipe (the outlier rows counted along each model's own stream).
The file holds the group batches one after the other, each the rows of every model stacked (model m's rows of
group batch b start at row (b·n_models + m)·rows), as `RegressorGroup::partial_fit` takes them.

File (little-endian): magic ``RHSTRM01``, int64 samples, features, batch, models (0: one model's stream; else the
number of models of a group file, whose `batch` is the rows of one group batch), 3 reserved int64, X as float64
row-major, y as float64. Every engine of a run loads the same file, so they see the same bytes; its SHA-256 is
the record's data hash. f32 runs round the float64 values once (``astype(float32)``, also in rh_perf_worker).

Imports only NumPy and the standard library: the peer worker runs it in the reference package's venv.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

MAGIC = b"RHSTRM01"
HEADER_INTS = 7


def stream_data(np, samples: int, features: int, seed: int, outliers: bool = True):
    """(x, y, coef) in float64; coef is the generating truth (the intercept is 0)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, features))
    coef = rng.standard_normal(features)
    y = x @ coef + rng.normal(0.0, 0.2, samples)
    if outliers and samples >= 100:
        k = max(100, samples // 100)
        idx = np.arange(0, samples, k)
        y[idx] += rng.normal(0.0, 8.0, idx.size)
    return np.ascontiguousarray(x), np.ascontiguousarray(y), coef


def group_data(np, models: int, rows: int, features: int, batches: int, seed: int):
    """(x, y, coef) of a group file in float64: x (batches·models·rows × features) in the file's order, coef
    (models × features), each model's generating truth (intercept 0)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batches, models, rows, features))
    coef = rng.standard_normal((models, features))
    y = np.matmul(x, coef[None, :, :, None])[..., 0] + rng.normal(0.0, 0.2, (batches, models, rows))
    stream = batches * rows  # each model's stream: its rows of batch 0, then of batch 1, …
    if stream >= 100:
        k = max(100, stream // 100)
        at = np.arange(0, stream, k)
        b, r = at // rows, at % rows
        y[b, :, r] += rng.normal(0.0, 8.0, (at.size, models))
    return x.reshape(-1, features), y.reshape(-1), coef


def write(np, path: Path, x, y, batch: int, models: int = 0) -> str:
    """Writes the file; returns its SHA-256 (hex)."""
    header = np.zeros(HEADER_INTS, dtype="<i8")
    header[0], header[1], header[2], header[3] = x.shape[0], x.shape[1], batch, models
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for part in (MAGIC, header.tobytes(), x.astype("<f8", copy=False).tobytes(),
                     y.astype("<f8", copy=False).tobytes()):
            digest.update(part)
            f.write(part)
    return digest.hexdigest()


def read(np, path: Path):
    """(x, y, batch, models) (x and y as float64 arrays) from a file written by write()."""
    with open(path, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{path} is not an RHSTRM01 file")
        header = np.frombuffer(f.read(8 * HEADER_INTS), dtype="<i8")
        samples, features, batch, models = (int(v) for v in header[:4])
        x = np.fromfile(f, dtype="<f8", count=samples * features).reshape(samples, features)
        y = np.fromfile(f, dtype="<f8", count=samples)
    if y.size != samples:
        raise ValueError(f"{path}: truncated")
    return x, y, batch, models
