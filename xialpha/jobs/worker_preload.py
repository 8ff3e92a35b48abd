"""Imported once by the fork server a local cluster's workers are forked from (see
xialpha.jobs.worker_processes.LOCAL_WORKER_MODULES): the modules a sweep's tasks run (a drift
check's workers import xialpha.jobs.drift_check at their first task: it is a tenth of these imports,
which every sweep's cluster start waits for), every numba specialisation they call
(`xialpha.jobs.compiled.warm`: loaded from numba's on-disk cache, or compiled there once when it
is cold or damaged, reported to the driver as it goes: `worker_processes.preload_reporter`), and
the lazy imports of one fit and span of a 4-document problem, so that no forked worker pays any
of them at its first task. Not scikit-learn (about 1 s here): a linear sweep's tasks never call it;
the libsvm path, named kernels and k-fold import it at their first call. Importing this module
anywhere else only costs time.

The fork server ends with the driver; its objects are frozen out of the garbage collector on the
way out, as the CLI's are (xialpha.cli.console), or its last collection would hold the driver's
stderr pipe open a while longer. Forked workers leave by os._exit and skip both."""

import atexit
import gc

import numpy as np
import scipy.sparse as sp

import xialpha.estimators.baselines  # the apparent and held-out scores (the registry imports it at first use)
import xialpha.jobs.tasks  # noqa: F401  (the sweep's tasks)
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.jobs.compiled import DamagedCache, warm
from xialpha.jobs.worker_processes import preload_reporter


def _warm() -> None:
    try:
        warm(stage=preload_reporter("stage"), note=preload_reporter("note"))
    except DamagedCache as exc:  # the driver stops the sweep with it
        preload_reporter("error")(str(exc))
    except Exception:  # as below: a task compiles what it calls and reports any error with its config
        pass


def _fit_a_tiny_problem() -> None:
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]]))
    try:
        span_estimate(fit_svm(TrainingProblem(np.array([1, -1, 1, -1]), X=X), SVMParameters(1.0)))
    except Exception:  # a fork server that failed here would fail every worker's start with no reason
        pass  # given; a worker's first fit meets the same error and reports it with its config


_warm()
_fit_a_tiny_problem()
atexit.register(gc.freeze)
