"""The workflow from Python: sweep, select, refit, predict, without internal imports.

    import xialpha
    result = xialpha.sweep({"sweep": {"id": "demo"},
                            "corpus": {"loader": "synthetic", "n_docs": 300, "n_categories": 2,
                                       "train_split": "train", "test_split": "test"},
                            "svm": {"C": [0.1, 1.0, 10.0]}},
                           store="my-store")
    chosen = xialpha.select("my-store")            # one row per category
    models = xialpha.refit("my-store", selection=chosen)
    models["cat00"].predict(["some new document"])  # array([1]) or array([-1])

Errors are `xialpha.errors.UserError` naming the parameter (`metric=`, `sweep=`, ...). The
command line (`xialpha sweep|select ...`) runs the same library code.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.storage.naming import choose_sweep, store_location

MAIN_GUARD = ('xialpha.sweep starts worker processes, which import your script again: put the code that '
              'calls it under `if __name__ == "__main__":` (or pass client= a running distributed.Client)')


@dataclass(frozen=True)
class SweepResult:
    """What `sweep` did (`summary`: stored, skipped, failed, wall seconds, ...) and every stored
    row of the sweep (`results`, a DataFrame: one row per configuration, category and rho)."""

    summary: object
    results: pd.DataFrame
    store: str

    @property
    def sweep_id(self) -> str:
        return self.summary.sweep_id


def sweep(spec, *, store=None, client=None, force: bool = False, quiet: bool = True) -> SweepResult:
    """Train every configuration of `spec` and store the estimates (resumable: stored keys are skipped).

    spec: a path to a TOML file, TOML text, or a dict of the same tables. store: see
    `xialpha.storage.naming.store_location`. client: a running `distributed.Client` to use (default: the spec's cluster,
    a local one unless it says otherwise). force: recompute stored keys. quiet: no progress bar.
    """
    from xialpha.jobs.progress import Progress
    from xialpha.spec.sweep import load_spec, parse_spec
    from xialpha.jobs.sweep import run_sweep
    from xialpha.storage import ResultStore

    spec = _spec(spec, load_spec, parse_spec)
    if client is None and spec.cluster.kind == "local":
        _check_main_guard()
    result_store = ResultStore(store_location(store, spec.store))
    try:
        summary = run_sweep(spec, result_store, force=force, progress_mode=Progress.mode_for(quiet), client=client)
    except RuntimeError as exc:
        if "failed to start" in str(exc):
            raise UserError(MAIN_GUARD) from exc
        raise
    return SweepResult(summary, result_store.read_results_df(spec.id, include_failed=True), result_store.uri)


def _check_main_guard() -> None:
    """UserError (before any process starts) when a script calls `sweep` from top-level code
    outside `if __name__ == "__main__":`: the local cluster's worker processes start by
    importing the script again, which would call `sweep` again in each of them."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    frame, top = inspect.currentframe(), None
    while frame is not None:  # the script's module-level frame that led to this call
        if frame.f_globals.get("__name__") in ("__main__", "__mp_main__") and frame.f_code.co_name == "<module>":
            top = frame
        frame = frame.f_back
    if path is None or top is None:
        return  # an interactive session or notebook: nothing is imported again
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return
    for node in tree.body:
        if node.lineno <= top.f_lineno <= (node.end_lineno or node.lineno):
            if not _is_main_test(node):
                raise UserError(MAIN_GUARD)
            return


def _is_main_test(node: ast.stmt) -> bool:
    """node is `if __name__ == "__main__":` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return (isinstance(node.test.ops[0], ast.Eq) and any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def _spec(spec, load_spec, parse_spec):
    if isinstance(spec, dict):
        import tomli_w

        try:
            text = tomli_w.dumps(spec)
        except (TypeError, ValueError) as exc:
            raise UserError(f"spec: cannot be written as TOML: {exc}") from None
        return parse_spec(text, source="spec")
    if isinstance(spec, (str, os.PathLike)) and "\n" not in str(spec) and Path(spec).suffix == ".toml":
        return load_spec(spec)
    if isinstance(spec, str):
        return parse_spec(spec, source="spec")
    raise UserError(f"spec: give a path to a TOML file, TOML text or a dict, got {type(spec).__name__}")


def results(store=None, *, sweep: str | None = None, include_failed: bool = False) -> pd.DataFrame:
    """The stored result rows of one sweep (the only one in the store when `sweep` is None)."""
    from xialpha.storage import ResultStore

    result_store = ResultStore(store_location(store), create=False)
    return result_store.read_results_df(choose_sweep(result_store, sweep), include_failed=include_failed)


def select(store=None, *, sweep: str | None = None, metric: str = "f1", estimator: str | None = None,
           rho: float = 1.0, per_category: bool = True, average: str = "macro", runners_up: int = 3,
           alpha: float = 0.05, save: bool = False) -> pd.DataFrame:
    """Choose a configuration per category (or one shared, per_category=False) from a sweep's estimates.

    Returns one row per category: the chosen configuration (preprocessing, kernel, C, j), the
    estimate it was chosen by (`value`), runners-up and the p-values of the significance tests.
    save=True stores the selection in the store (its id is in the `selection_id` column).
    """
    from xialpha.selection.objective import Objective
    from xialpha.selection.records import new_selection_id, selection_rows
    from xialpha.selection.selector import default_estimator, select_stored
    from xialpha.storage import ResultStore

    if not 0 < alpha < 1:
        raise UserError(f"alpha=: must be between 0 and 1, got {alpha}")
    result_store = ResultStore(store_location(store), create=False)
    sweep_id = choose_sweep(result_store, sweep)
    rows = result_store.read_results_df(sweep_id)
    objective = Objective(metric=metric, estimator=estimator or default_estimator(rows), rho=rho, average=average)
    selection = select_stored(result_store, rows, objective, sweep_id=sweep_id, shared=not per_category,
                              runners_up=runners_up, alpha=alpha)
    table = selection_rows(selection, new_selection_id())
    if save:
        result_store.append("selections", table)
    return table.to_pandas()


class TextClassifier:
    """One category's refitted model: raw texts -> decision values, predictions in {-1, +1}.

    A scikit-learn style estimator (fitted): `decision_function(texts)` (m,), `predict(texts)`
    (m,) of -1/+1, `config` the chosen configuration. Picklable by the user.
    """

    def __init__(self, trained, index: int):
        self._trained, self._index = trained, index
        self.category = trained.models[index].category
        self.config = dict(trained.models[index].config)
        self.classes_ = np.array([-1, 1])

    def decision_function(self, texts) -> np.ndarray:
        item = self._trained.models[self._index]
        return item.model.decision_function(self._trained.features(item.preprocessing_id, texts=list(texts)))

    def predict(self, texts) -> np.ndarray:
        return np.where(self.decision_function(texts) > 0, 1, -1)

    def __repr__(self) -> str:
        return f"TextClassifier({self.category!r}, kernel={self.config.get('kernel')}, C={self.config.get('C')})"


def refit(store=None, *, selection, spec=None) -> dict[str, TextClassifier]:
    """Train the selected configurations on all training data: {category: TextClassifier}.

    selection: the DataFrame `select` returned, or the id of a stored selection. spec: the
    sweep's spec file when the stored spec's corpus path no longer resolves.
    """
    from xialpha.selection.records import read_selection
    from xialpha.selection.refit import refit_selection
    from xialpha.storage import ResultStore

    result_store = ResultStore(store_location(store), create=False)
    if isinstance(selection, str):
        rows = read_selection(result_store, selection)
    elif isinstance(selection, pd.DataFrame):
        rows = selection
    else:
        raise UserError(f"selection=: give the DataFrame select() returned or a selection id, got {type(selection).__name__}")
    if rows.empty:
        raise UserError("selection=: is empty")
    trained = refit_selection(result_store, rows, None if spec is None else str(spec))
    return {model.category: TextClassifier(trained, i) for i, model in enumerate(trained.models)}
