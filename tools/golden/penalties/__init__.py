"""The oracle's penalties, one module each (<name>.py): everything the oracle and the golden corpora know of a
penalty lives in its module, so a new penalty is one new module here (docs/architecture.md, "Add a penalty").

Each module has NAME (the library's penalty name), CORPUS_FILE (its golden corpus), level(config, cumulative_weight,
n_features) (λ_b, §3), historical_subgradient(state, config, cumulative_weight, mask) (§4), solve(obj, max_iter, lam,
mask, decisions) → (β, iterations, converged) (its solver), objective(obj, β, lam, mask) (the reported objective, §7)
and CASES (its corpus's case definitions, built with the helpers of cases.py).
"""

import importlib
import os
import pkgutil

# In the order of their corpus files (corpus_v1_none, corpus_v2_l1, ...).
MODULES = sorted((importlib.import_module(f"{__name__}.{info.name}")
                  for info in pkgutil.iter_modules([os.path.dirname(os.path.abspath(__file__))])),
                 key=lambda module: module.CORPUS_FILE)
BY_NAME = {module.NAME: module for module in MODULES}
CORPUS_FILES = {module.NAME: module.CORPUS_FILE for module in MODULES}
CASES = {module.NAME: module.CASES for module in MODULES}
