"""The GIL is released during library calls (ctypes.CDLL does so for every foreign call): two threads stream into
two models while the main thread asks the library, through rh_model_last_error (which never waits for a call in
flight), whether each thread's current call has completed. Each thread alternates a good batch (the model's message
becomes "") and a batch whose loss overflows (the message becomes the error), so until a call completes the model
still shows the previous call's message. A call counts as in flight when its thread has entered it (a sequence
number set just before the call) and the library has not completed it. Both in flight, in two samples a quarter of
a call (at most 10 ms) apart with no call started in between, is what a binding that holds the GIL cannot show:
while the main thread runs, such
a binding's threads are never inside the library, and one about to enter gets the GIL while the main thread sleeps
and then runs its whole call. The same probe on a PyDLL binding of the same library (which keeps the GIL) checks
that. No timing is asserted.
"""

from __future__ import annotations

import ctypes
import threading
import time

import numpy as np

import renewable_huber_kokkos as rk
from renewable_huber_kokkos import _lib


def _overlaps(space: str, partial_fit) -> tuple[int, int]:
    """(pairs of samples with both calls in flight, pairs taken) for two threads calling `partial_fit`, a foreign
    function with rh_model_partial_fit's prototype."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150_000, 32))
    y = X @ rng.normal(size=32) + rng.standard_t(2, size=150_000)
    lib = _lib.library()
    models = [rk.RenewableHuberRegressor(space=space).fit(X[:100], y[:100]) for _ in range(2)]
    handles = [m._handle.value for m in models]
    seq = [0, 0]
    errors: list[BaseException] = []
    real = lib.model_partial_fit

    overflow = np.full(len(y), 1e308)  # the batch loss overflows: NumericalError, after the same validation

    # Each thread streams until the main thread has its samples: on a fast space (CUDA) six calls ended within the
    # first few samples, too few to see both in flight.
    enough = threading.Event()

    def stream(i: int) -> None:
        try:
            for k in range(1, 2001):
                if k % 2 and enough.is_set():
                    break
                seq[i] = k
                if k % 2:
                    models[i].partial_fit(X, y)
                else:
                    try:
                        models[i].partial_fit(X, overflow)
                    except rk.NumericalError:
                        pass
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    def completed(i: int, k: int) -> bool:  # odd calls succeed (""), even ones fail (a message)
        return (lib.model_last_error(handles[i]) == b"") == bool(k % 2)

    # Samples a quarter of a call apart (at most 10 ms): on CUDA a whole call of this batch takes a few
    # milliseconds, so samples 10 ms apart never saw one call in flight twice (0 of 30 pairs on an H100).
    start = time.perf_counter()
    models[0].partial_fit(X, y)
    interval = min(0.01, max(2e-4, (time.perf_counter() - start) / 4))
    for m in models:  # the call before the first one failed, as before every odd call
        try:
            m.partial_fit(X[:100], overflow[:100])
        except rk.NumericalError:
            pass

    lib.model_partial_fit = partial_fit
    try:
        threads = [threading.Thread(target=stream, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        both = pairs = 0
        previous, looked = None, False
        wait = threading.Event()
        while any(t.is_alive() for t in threads):
            before = tuple(seq)
            done = (completed(0, before[0]), completed(1, before[1]))
            sample = before if tuple(seq) == before and 0 not in before and not any(done) else None
            if looked:
                pairs += 1
                both += sample is not None and sample == previous
            previous, looked = sample, True
            if pairs >= 30:
                enough.set()
            wait.wait(interval)
        for t in threads:
            t.join()
    finally:
        lib.model_partial_fit = real
    assert not errors, errors
    return both, pairs


def test_two_threads_are_in_library_calls_at_once(space):
    both, pairs = _overlaps(space, _lib.library().model_partial_fit)
    assert both >= 2, f"both calls in flight in {both} of {pairs} sample pairs"


def test_the_probe_tells_a_binding_that_holds_the_gil(space):
    lib = _lib.library()
    held = ctypes.PyDLL(lib.path).rh_model_partial_fit  # the same loaded library, called with the GIL held
    held.restype, held.argtypes = lib.model_partial_fit.restype, lib.model_partial_fit.argtypes
    both, pairs = _overlaps(space, held)
    assert pairs >= 1 and both == 0, f"both calls in flight in {both} of {pairs} sample pairs with the GIL held"
