"""docs/python.md's streaming example: a contaminated stream fed batch by batch, the coefficients drawn after each
batch with their 95 % confidence intervals (docs/img/python-streaming.png). Run:
    RH_LIBRARY=build/cpu/abi/librenewable_huber.so.1 PYTHONPATH=abi/python/src \
        /usr/bin/python3 abi/python/examples/streaming_plot.py docs/img/python-streaming.png"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from renewable_huber_kokkos import RenewableHuberRegressor  # noqa: E402

rng = np.random.default_rng(7)
beta = np.array([2.0, -1.0, 0.5, 0.0])
model = RenewableHuberRegressor(inference=True)
history, intervals = [], []
for batch in range(40):
    X = rng.normal(size=(250, 4))
    y = X @ beta + 1.0 + rng.standard_t(df=2, size=250)   # heavy tails
    y[rng.random(250) < 0.05] += 25.0                      # and 5 % gross outliers
    model.partial_fit(X, y)
    history.append(model.coef_)
    intervals.append(model.confidence_intervals(0.95)[:4])
print(model.summary())

history, intervals = np.array(history), np.array(intervals)
batches = np.arange(1, len(history) + 1)
fig, ax = plt.subplots(figsize=(7, 4))
for j in range(4):
    line, = ax.plot(batches, history[:, j], label=f"coef_[{j}] (true {beta[j]:g})")
    ax.fill_between(batches, intervals[:, j, 0], intervals[:, j, 1], color=line.get_color(), alpha=0.2)
    ax.axhline(beta[j], color=line.get_color(), lw=0.8, ls=":")
ax.set_xlabel("batches seen (250 rows each; t(2) noise, 5 % outliers)")
ax.set_ylabel("coefficient")
ax.set_title("RenewableHuberRegressor.partial_fit: coefficients and 95 % intervals")
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
fig.savefig(sys.argv[1] if len(sys.argv) > 1 else "python-streaming.png", dpi=110)
