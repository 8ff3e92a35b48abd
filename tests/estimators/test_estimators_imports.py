"""The estimators package stands alone: it imports in a fresh interpreter without Dask or the
storage/jobs layers, and running every estimator opens no file."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap

from conftest import REPO

# scikit-learn itself imports pandas (and pandas pyarrow), so those are checked in the source only.
FORBIDDEN = {"dask", "distributed", "pyarrow", "pandas", "fsspec"}


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_public_names_import_in_a_fresh_interpreter():
    out = _run(
        "from xialpha.estimators.svm import fit_svm; from xialpha.estimators.xi_alpha import xi_alpha\n"
        "from xialpha.estimators.loo import loo_exact; from xialpha.estimators.xi_alpha import r_delta_squared\n"
        "print('ok')"
    )
    assert out.strip() == "ok"


def test_the_registry_loads_no_algorithm_and_no_numerical_library():
    # the command line's parser and the store's schema read it: it must stay as light as they are
    out = _run(
        "import json, sys; import xialpha.estimators.registry\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'scipy', 'sklearn', 'numba', 'xialpha'))))"
    )
    assert set(json.loads(out)) == {"xialpha", "xialpha.version", "xialpha.estimators", "xialpha.estimators.registry"}


def test_no_dask_or_other_xialpha_layers_after_import_and_use():
    out = _run(
        """
        import json, sys
        import numpy as np
        from xialpha.estimators.baselines import bootstrap, kfold
        from xialpha.estimators.loo import loo_exact
        from xialpha.estimators.xi_alpha import r_delta_squared
        from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
        from xialpha.estimators.xi_alpha import xi_alpha
        X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 1.1], [1.2, 0.1], [0.2, 0.8]])
        y = np.array([1, -1, 1, -1, 1, -1])
        problem, parameters = TrainingProblem(y, X=X), SVMParameters(1.0)
        fit = fit_svm(problem, parameters)
        xi_alpha(fit.alpha, fit.xi, y, r_delta_squared(X=X))
        loo_exact(problem, parameters); kfold(problem, parameters, k=3); bootstrap(problem, parameters, n_boot=2)
        roots = ("dask", "distributed", "fsspec", "xialpha")
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in roots)))
        """
    )
    loaded = set(json.loads(out))
    assert not loaded & {"dask", "distributed", "fsspec"}
    assert not {
        name for name in loaded if name.startswith("xialpha.") and not name.startswith("xialpha.estimators")
    } - {"xialpha.errors", "xialpha.version"}


def test_estimators_source_imports_no_dask_storage_or_jobs():
    for path in sorted((REPO / "xialpha" / "estimators").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, (path.name, name)
                assert not name.startswith(("xialpha.storage", "xialpha.jobs", "xialpha.selection")), (path.name, name)


def test_estimators_open_no_files():
    # Audit every open() while the estimators run (after a warm-up run, so lazy imports inside
    # scikit-learn are done): none may happen, for reading or writing.
    out = _run(
        """
        import json, sys
        import numpy as np
        from xialpha.estimators.baselines import apparent, bootstrap, holdout, kfold
        from xialpha.estimators.loo import loo_exact
        from xialpha.estimators.xi_alpha import r_delta_squared
        from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
        from xialpha.estimators.xi_alpha import xi_alpha

        def work():
            rng = np.random.default_rng(0)
            X = rng.normal(size=(20, 3))
            y = np.where(X[:, 0] > 0, 1, -1)
            gram = X @ X.T
            parameters = SVMParameters(1.0)
            for args in ({"gram": gram}, {"X": X, "kernel": "rbf", "kernel_params": {"gamma": 0.5}}):
                problem = TrainingProblem(y, **args)
                fit = fit_svm(problem, parameters)
                r2 = r_delta_squared(**args)
                xi_alpha(fit.alpha, fit.xi, y, r2, rho=2.0)
                loo_exact(problem, parameters, fit=fit)
                loo_exact(problem, parameters, fit=fit, prune="xi_alpha")
                kfold(problem, parameters, k=3)
                bootstrap(problem, parameters, n_boot=3, fit=fit)
                apparent(fit)
                holdout(fit, y[:5], gram[:5] if "gram" in args else X[:5])

        work()
        opened = []
        sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
        work()
        print(json.dumps(opened))
        """
    )
    assert json.loads(out) == []
