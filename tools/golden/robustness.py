"""Robustness study: how far can another correct implementation land from a case's expected values?

A C++ replay differs from the oracle in summation order (threads, GPU reductions), in its dense solver
and, for float32 cases, in arithmetic precision. Each case is replayed under perturbations that
emulate those differences:

* row shuffles within every batch (mathematically neutral; changes every reduction order, so the
  dense solver also sees a Hessian that differs at rounding level);
* the same with blurred decisions: each line-search / majorization comparison gets random noise of
  DECISION_NOISE·|f| and each convergence threshold a random factor 1 ± THRESHOLD_NOISE, so tests that
  sit at the edge of their rounding flip at random;
* float32 cases run all of this in genuine float32 arithmetic (the expected values are float64).

A case is robust when every perturbed replay keeps the converged flags and counters identical and
uses at most 1/SAFETY of the case tolerance (|Δ| ≤ (atol + rtol·|e|)/SAFETY for every number), and when
the expected run's stopping decisions clear their thresholds by MIN_MARGIN.
"""

from dataclasses import dataclass

import numpy as np

import corpus
import oracle

SAFETY = 10.0
SHUFFLES = 16           # replays of each kind; the case descriptions quote a 64 + 64 study
BLURRED = 16
# (relative decision noise, relative threshold noise) per arithmetic dtype. The decision noise is
# about 50 ulps of f, several times the rounding spread of a reduction over a few hundred rows.
DECISION_NOISE = {np.float64: (1e-14, 1e-3), np.float32: (3e-6, 3e-2)}
# A stopping decision must clear the threshold by ten times the blur of the blurred replays.
MIN_MARGIN = {dtype: 1.0 + 10 * noise[1] for dtype, noise in DECISION_NOISE.items()}


@dataclass
class Report:
    usage: float            # worst usage of the case tolerance over all perturbed replays
    where: str              # the number that used it
    run: str                # the replay that produced it
    margins: list           # per batch: convergence margin (see convergence_margin)
    min_margin: float       # what the margins must reach

    @property
    def robust(self):
        return self.usage <= 1.0 / SAFETY and all(m >= self.min_margin for m in self.margins)


def study(case, shuffles=SHUFFLES, blurred=BLURRED):
    """Replays `case` (with its `expected`) under every perturbation and returns a Report."""
    dtype = corpus.arithmetic_dtype(case)
    worst = (0.0, "", "")
    for k in range(shuffles + blurred):
        rng = np.random.default_rng(7919 + k)
        orders = [rng.permutation(len(batch["y"])) for batch in case["batches"]]
        perturbation = None
        if k >= shuffles:
            perturbation = oracle.Perturbation(rng, *DECISION_NOISE[dtype])
        name = f"{'blurred' if perturbation else 'shuffled'}#{k} {np.dtype(dtype).name}"
        got = corpus.replay(case, dtype, orders, perturbation=perturbation)
        usage, where = corpus.tolerance_usage(case["expected"], got, case["rtol"], case["atol"])
        worst = max(worst, (usage, where, name))
    traces = []
    corpus.replay(case, np.float64, traces=traces)
    margins = [convergence_margin(trace, state["diagnostics"]["converged"])
               for trace, state in zip(traces, case["expected"]["states"])]
    return Report(worst[0], worst[1], worst[2], margins, MIN_MARGIN[dtype])


def convergence_margin(trace, converged):
    """How clearly the stopping rule decided, as a factor (MIN_MARGIN[dtype] is required).

    Converged batch: min(previous step / threshold, threshold / final step) – the last step is well
    inside and the one before well outside (the latter is 'inf' after a single iteration).
    Batch stopped at max_iter: min over all steps of step / threshold (never close to converging).
    A batch whose line search gave up has no final step test; its margin is reported as 0.
    """
    ratios = [step / threshold if threshold > 0 else np.inf for step, threshold in trace.steps]
    if not ratios:
        return 0.0
    if converged:
        before = ratios[-2] if len(ratios) > 1 else np.inf
        return min(before, 1.0 / ratios[-1] if ratios[-1] > 0 else np.inf)
    return min(ratios)
