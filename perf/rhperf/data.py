"""The one data generator of the performance harness, and the file every engine reads.

Streams follow the reference project's shape-sweep recipe (docs/performance.md, "Data"): X ~ N(0, 1),
coef ~ N(0, 1), y = X·coef + N(0, 0.2²), and when samples ≥ 100 the rows 0, k, 2k, … (k = max(100, samples // 100))
get an extra N(0, 8²), all from ``numpy.random.default_rng(seed)``. The Gram pass uses the same recipe without the
outliers (they do not matter to one pass).

File (little-endian): magic ``RHSTRM01``, int64 samples, features, batch, 4 reserved int64, X as float64
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


def write(np, path: Path, x, y, batch: int) -> str:
    """Writes the file; returns its SHA-256 (hex)."""
    header = np.zeros(HEADER_INTS, dtype="<i8")
    header[0], header[1], header[2] = x.shape[0], x.shape[1], batch
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for part in (MAGIC, header.tobytes(), x.astype("<f8", copy=False).tobytes(),
                     y.astype("<f8", copy=False).tobytes()):
            digest.update(part)
            f.write(part)
    return digest.hexdigest()


def read(np, path: Path):
    """(x, y, batch) as float64 arrays, from a file written by write()."""
    with open(path, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{path} is not an RHSTRM01 file")
        header = np.frombuffer(f.read(8 * HEADER_INTS), dtype="<i8")
        samples, features, batch = (int(v) for v in header[:3])
        x = np.fromfile(f, dtype="<f8", count=samples * features).reshape(samples, features)
        y = np.fromfile(f, dtype="<f8", count=samples)
    if y.size != samples:
        raise ValueError(f"{path}: truncated")
    return x, y, batch
