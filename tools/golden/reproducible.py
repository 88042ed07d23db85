"""Makes the oracle's floating-point results the same on every x86-64 CPU. Import it before NumPy.

NumPy sends matrix products and LAPACK calls to OpenBLAS. Debian's OpenBLAS is a DYNAMIC_ARCH build: it picks
its kernels for the CPU it runs on (SkylakeX, Haswell, Zen, ...), and different kernels add in different orders.
The corpora generated on an Intel AVX-512 machine regenerated on an AMD AVX2 one with drift up to ~1e-10 in three
cases (golden/README.md, "Reproducible on any x86-64 CPU"). So the oracle always uses one kernel set, Prescott's:
SSE3 code, which every CPU that can run NumPy executes (SSE3 is NumPy's own baseline), and one thread, so that no
product is split across threads. OpenBLAS reads these variables once, when NumPy loads it.

What else the oracle's numbers depend on was measured, not assumed (golden/README.md): NumPy's CPU-dispatched
loops (exact element-wise operations and fixed-order pairwise sums) change no bit; glibc's FMA variants of
log/exp/pow, which numpy.random's Student-t draws use, move a few draws by one ulp, far inside the drift limit.
"""

import ctypes
import os
import sys

BLAS_CORE = "Prescott"

if "numpy" in sys.modules:
    raise ImportError("tools/golden/reproducible.py must be imported before NumPy (OpenBLAS reads its settings "
                      "when it is loaded)")
os.environ["OPENBLAS_CORETYPE"] = BLAS_CORE
os.environ["OPENBLAS_NUM_THREADS"] = "1"


def blas_description():
    """The BLAS that NumPy loaded, e.g. 'OpenBLAS 0.3.21 ... core Prescott', or why it is not known."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.split()[-1]}
    except OSError:
        return "unknown (no /proc/self/maps)"
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            library = ctypes.CDLL(path)   # already loaded by NumPy: the same handle
            library.openblas_get_config.restype = ctypes.c_char_p
            library.openblas_get_corename.restype = ctypes.c_char_p
            return (f"{library.openblas_get_config().decode()}, core {library.openblas_get_corename().decode()}, "
                    f"{os.environ['OPENBLAS_NUM_THREADS']} thread")
        except (OSError, AttributeError):
            continue
    return "not OpenBLAS: results may differ from the committed corpora"


def pinned():
    """True when NumPy runs on OpenBLAS with the pinned core (the corpora were generated that way)."""
    return f"core {BLAS_CORE}," in blas_description()
