"""What a sweep's processes import before their first fit (issue 47.2): neither the fork server that
local workers are forked from (`xialpha.jobs.worker_preload`, which every sweep's cluster start waits
for) nor the driver (`xialpha.jobs.sweep`) imports scikit-learn, and a fit on the linear path, its
estimates and its held-out scores do not import it either: scikit-learn (with the scipy.stats it
imports) was about 1 s of the fork server's start, for input checks (check_array), a libsvm
path a linear sweep never takes and the baselines' k-fold splits, which the apparent and held-out
scores do not use. Those uses (libsvm, named kernels, k-fold) import it where they run
(tests/estimators/ cover them)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import REPO

IMPORTED = """
import json, sys
import numpy as np
import scipy.sparse as sp
def loaded():
    return sorted(name for name in ("sklearn", "scipy.stats") if name in sys.modules)
found = {}
import xialpha.jobs.sweep
found["driver"] = loaded()
import xialpha.jobs.worker_preload
found["preload"] = loaded()
from xialpha.estimators.baselines import apparent, holdout
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha
rng = np.random.default_rng(0)
X = sp.random(40, 30, density=0.2, format="csr", random_state=0)
y = np.where(rng.random(40) < 0.5, 1, -1)
y[:2] = (1, -1)
fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0))
span_estimate(fit)
xi_alpha(fit.alpha, fit.xi, y, r_delta_squared(X=X))
apparent(fit)
holdout(fit, y[:5], X[:5])
found["linear fit"] = loaded()
print(json.dumps(found))
"""


def test_driver_preload_and_linear_fit_import_no_scikit_learn():
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(IMPORTED)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"driver": [], "preload": [], "linear fit": []}
