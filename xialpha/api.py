"""The workflow from Python: sweep, select, refit, predict, without internal imports.

    import xialpha
    result = xialpha.sweep({"sweep": {"id": "demo"},
                            "corpus": {"loader": "synthetic", "n_docs": 300, "n_categories": 2,
                                       "train_split": "train", "test_split": "test"},
                            "svm": {"C": [0.1, 1.0, 10.0]}},
                           store="my-store")
    chosen = xialpha.select("my-store")            # one row per category
    models = xialpha.refit("my-store", selection=chosen)
    models["cat00"].predict(["some new document"])  # array([ True]): in the category, or array([False])

Errors are `xialpha.errors.UserError` naming the parameter (`metric=`, `sweep=`, ...). The
command line (`xialpha sweep|select ...`) runs the same library code.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from xialpha.corpora.corpus import Corpus
from xialpha.errors import ClusterFailure, UserError
from xialpha.jobs.certify import CONFIDENCE_LEVEL, DRAW_COUNT, SEED, certify_selection
from xialpha.jobs.drift_check import run_drift_check
from xialpha.jobs.progress import Progress
from xialpha.jobs.refit import refit_selection
from xialpha.jobs.sweep import run_sweep
from xialpha.parameters import (
    CLIENT,
    FLAG,
    PATH,
    REQUIRED_TEXT,
    TEXT,
    Instance,
    ParameterValueError,
    checked,
)
from xialpha.reports.contents import VIEW_CONSTRAINTS, VIEW_ESTIMATOR, report_of
from xialpha.reports.frames import tidy_certification, tidy_comparison, tidy_results, tidy_selection
from xialpha.reports.html import render_report, write_page
from xialpha.reports.labels import sweep_labels
from xialpha.selection.bounds import CONFIDENCE, DRAWS, DRAWS_SEED
from xialpha.selection.comparison import compare_selections
from xialpha.selection.options import CONSTRAINTS as SELECTION_CONSTRAINTS
from xialpha.selection.options import SelectionOptions
from xialpha.selection.records import read_selection, same_selection_id
from xialpha.selection.selected import Selection
from xialpha.selection.workflow import select_sweep
from xialpha.selection_saving import store_selection
from xialpha.spec.drift import load_drift_spec, parse_drift_spec
from xialpha.spec.sweep import load_spec, parse_spec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.naming import choose_sweep, store_location
from xialpha.storage.opening import open_store
from xialpha.storage.schema import ResultColumn

if TYPE_CHECKING:
    from distributed import Client

    from xialpha.concept_drift.outcome import DriftReport
    from xialpha.jobs.sweep import SweepSummary
    from xialpha.models.trained import CategoryModel, TrainedSelection
    from xialpha.spec.sweep import SweepSpec

# The constraints of the parameters several functions share (`xialpha.parameters`); the others
# are declared where they are checked (SelectionOptions, Objective, certify_selection).
SWEEP_SPEC = Instance((str, os.PathLike, dict), "give a path to a TOML file, TOML text or a dict")
DRIFT_SPEC = Instance((str, os.PathLike), "give a path to a TOML file or TOML text")
SELECTION = Instance((str, pd.DataFrame), "give the DataFrame select() returned or a selection id")
CORPUS = Instance((Corpus, tuple, list), "give a Corpus, (texts, label_sets) or (texts, label_sets, splits)")

MAIN_GUARD = (
    "xialpha.sweep (as drift, refit and certify) starts worker processes, which import your script "
    'again: put the code that calls it under `if __name__ == "__main__":` (or pass client= a running '
    "distributed.Client)"
)


@dataclass(frozen=True)
class SweepResult:
    """What `sweep` did (`summary`: stored, skipped, failed, wall seconds, ...) and every stored
    row of the sweep (`results`, a DataFrame as `results` returns it: one row per configuration,
    category and rho)."""

    summary: SweepSummary
    results: pd.DataFrame
    store: str

    @property
    def sweep_id(self) -> str:
        return self.summary.sweep_id


@checked(
    spec=SWEEP_SPEC,
    store=PATH,
    client=CLIENT,
    corpus=CORPUS.or_none(),
    force=FLAG,
    quiet=FLAG,
    force_new_run=FLAG,
)
def sweep(
    spec: str | os.PathLike[str] | dict[str, Any],
    *,
    store: str | os.PathLike[str] | None = None,
    client: Client | None = None,
    corpus: Corpus | Sequence[Iterable[Any]] | None = None,
    force: bool = False,
    quiet: bool = False,
    force_new_run: bool = False,
) -> SweepResult:
    """Train every configuration of `spec` and store the estimates (resumable: stored keys are skipped).

    spec: a path to a TOML file, TOML text, or a dict of the same tables. store: see
    `xialpha.storage.naming.store_location`. client: a running `distributed.Client` to use (default: the spec's cluster,
    a local one unless it says otherwise). corpus: the documents in memory instead of the spec's loader
    (see `as_corpus`; the spec's [corpus] then names only splits and categories; pass the same
    corpus to `refit`). force: recompute stored keys. quiet: no progress display (by default a
    notebook shows one in the cell's output, a terminal a bar, a log file plain lines).
    force_new_run: run under an id whose recorded run had other data or another grid (refused
    otherwise: one sweep id is one experiment), recording the change.
    """
    parsed = _spec(spec, corpus)
    result_store = open_store(store_location(store, parsed.store), create=True, writable=True)
    with _local_workers(client, parsed.cluster.kind):
        summary = run_sweep(
            parsed,
            result_store,
            force=force,
            progress_mode=Progress.mode_for(quiet),
            client=client,
            force_new_run=force_new_run,
        )
    if summary.held_out_note:
        warnings.warn(summary.held_out_note, UserWarning, stacklevel=2)
    return SweepResult(
        summary, _tidy_results(result_store.read_results_df(parsed.id, include_failed=True)), result_store.uri
    )


@contextlib.contextmanager
def _local_workers(client: Client | None, kind: str = "local") -> Iterator[None]:
    """Around a call that starts a local cluster unless given a running `client` (the spec's
    cluster `kind`: only "local" starts processes here): UserError MAIN_GUARD before any process
    starts when the calling script lacks the guard, and one UserError saying why when the
    cluster's worker processes fail to start anyway (the guard advice only where it applies)."""
    local = client is None and kind == "local"
    if local and _main_script_guarded() is False:
        raise UserError(MAIN_GUARD)
    try:
        yield
    except (RuntimeError, ClusterFailure) as exc:  # Dask's "Nanny failed to start.", as jobs.cluster words it
        if not (local and "failed to start" in str(exc)):
            raise
        script = _main_script()
        again = (
            f"; they import your script {Path(script).name} again first (as `__mp_main__`), which must work "
            "without running anything: see its error printed above"
            if script
            else "; see the errors above"
        )
        raise UserError(
            f"the local cluster's worker processes failed to start ({exc}){again} (or pass client= a "
            "running distributed.Client)",
            mentions="client=",
        ) from None


def _main_script() -> str | None:
    """The file of the running script, which local worker processes import again; None for an
    interactive session, a notebook or a script read from standard input (nothing is imported again)."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    return path if path is not None and os.path.isfile(path) else None


def _main_script_guarded() -> bool | None:
    """Whether the running script's top-level statement that led to this call is
    `if __name__ == "__main__":` (False: the local cluster's worker processes, which start by
    importing the script again, would run it again); None where no script is imported again
    or its source cannot be read."""
    path = _main_script()
    frame, top = inspect.currentframe(), None
    while frame is not None:  # the script's module-level frame that led to this call
        if frame.f_globals.get("__name__") in ("__main__", "__mp_main__") and frame.f_code.co_name == "<module>":
            top = frame
        frame = frame.f_back
    if path is None or top is None:
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if node.lineno <= top.f_lineno <= (node.end_lineno or node.lineno):
            return _is_main_test(node)
    return None


def _is_main_test(node: ast.stmt) -> bool:
    """node is `if __name__ == "__main__":` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return (
        isinstance(node.test.ops[0], ast.Eq)
        and any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
        and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides)
    )


def _spec(
    spec: str | os.PathLike[str] | dict[str, Any], corpus: Corpus | Sequence[Iterable[Any]] | None = None
) -> SweepSpec:
    """The SweepSpec of a path, TOML text or dict (`sweep`'s spec=), over `as_corpus(corpus)` if given."""
    corpus = None if corpus is None else as_corpus(corpus)
    if isinstance(spec, dict):
        import tomli_w

        try:
            text = tomli_w.dumps(spec)
        except (TypeError, ValueError) as exc:
            raise UserError(f"spec: cannot be written as TOML: {exc}") from None
        except RecursionError:  # a dict that holds itself, or nested deeper than any spec
            raise UserError("spec: cannot be written as TOML: a table holds itself (or nests too deep)") from None
        return parse_spec(text, source="spec", corpus=corpus)
    if _is_path(spec):
        return load_spec(spec, corpus=corpus)
    return parse_spec(str(spec), source="spec", corpus=corpus)


def _is_path(spec: object) -> bool:
    """spec= names a TOML file (a path, or a one-line string ending in .toml) rather than holding TOML text."""
    return isinstance(spec, os.PathLike) or (
        isinstance(spec, str) and "\n" not in spec and Path(spec).suffix == ".toml"
    )


@checked(corpus=CORPUS)
def as_corpus(corpus: Corpus | Sequence[Iterable[Any]]) -> Corpus:
    """corpus= as an `xialpha.corpora.Corpus`: one already, or (texts, label_sets) or (texts,
    label_sets, splits) with one label set (an iterable of category names, or one name) and one
    split name ("train", "test", ...) per text; documents are numbered 0..n-1."""
    if isinstance(corpus, Corpus):
        return corpus
    if len(corpus) not in (2, 3):
        raise ParameterValueError(
            f"{CORPUS.wanted}, got a {type(corpus).__name__} of {len(corpus)}", parameter="corpus"
        )
    for name, part in zip(("texts", "label_sets", "splits"), corpus):
        if isinstance(part, (str, bytes)) or not isinstance(part, Iterable):
            raise UserError(
                f"its {name} must be an iterable with one item per document, got {type(part).__name__}",
                parameter="corpus",
            )
    texts, labels, *splits = (list(part) for part in corpus)
    try:
        return Corpus(
            ids=np.arange(len(texts)).astype(str),
            labels=labels,
            name="corpus=",
            texts=texts,
            splits=None if not splits else np.asarray(list(splits[0]), dtype=str),
        )
    except UserError as exc:
        raise UserError(str(exc), parameter="corpus") from None


@checked(store=PATH, sweep=TEXT, include_failed=FLAG)
def results(
    store: str | os.PathLike[str] | None = None, *, sweep: str | None = None, include_failed: bool = False
) -> pd.DataFrame:
    """The stored result rows of one sweep (the only one in the store when `sweep` is None), one
    per configuration, category and rho: `config` (the configuration's label, as the command
    line shows it) first, then category, C, j, kernel, rho, status, each estimator's estimates
    (`span_f1`, `xa_error`, ...: <estimator>_<metric>, fractions 0..1, and counts d_pos, d_neg),
    the other columns, and the ids last; columns without any value are left out."""
    result_store = open_store(store_location(store), create=False, writable=False)
    return _tidy_results(result_store.read_results_df(choose_sweep(result_store, sweep), include_failed=include_failed))


def _tidy_results(rows: pd.DataFrame) -> pd.DataFrame:
    return tidy_results(rows, sweep_labels(rows)) if len(rows) else rows


@checked(store=PATH, sweep=TEXT, refit=PATH, spec=PATH, client=CLIENT, **SELECTION_CONSTRAINTS)
def select(
    store: str | os.PathLike[str] | None = None,
    *,
    sweep: str | None = None,
    metric: str | None = SelectionOptions.metric,
    estimator: str | None = SelectionOptions.estimator,
    rho: float = SelectionOptions.rho,
    smooth: bool = SelectionOptions.smooth,
    per_category: bool = SelectionOptions.per_category,
    average: str = SelectionOptions.average,
    cost_fn: float | None = SelectionOptions.cost_fn,
    cost_fp: float | None = SelectionOptions.cost_fp,
    runners_up: int = SelectionOptions.runners_up,
    alpha: float = SelectionOptions.alpha,
    save: bool = SelectionOptions.save,
    partial: bool = SelectionOptions.partial,
    refit: str | os.PathLike[str] | None = None,
    spec: str | os.PathLike[str] | None = None,
    client: Client | None = None,
) -> pd.DataFrame:
    """Choose a configuration per category (or one shared, per_category=False) from a sweep's estimates.

    The parameters are `xialpha select`'s flags (`xialpha.selection.options.SelectionOptions`,
    whose defaults and constraints they have; per_category=False is --global, smooth=False
    --no-smooth): metric (default f1, or cost when cost_fn or cost_fp is given: the cost of a
    false negative, of a false positive; default 1 each, at most 1e12) of estimator (default: the
    sweep's, span) at rho, averaged over C neighbours (smooth).

    Returns one row per category, as `xialpha select --format csv` writes it: the chosen
    configuration's label (`config`), the category, its estimate (`value`) and what it was ranked
    by (`selection_value`: with smooth, the default, the estimate averaged with those of the
    neighbouring C of the same configuration), `significant` (the choice differs significantly
    from its first runner-up by a test at `alpha`; null when no test could run), `tie` (the
    runner-up has the same estimate or was ranked equal: only the C neighbours' average or
    simplicity decided), `at_edge` ("high", "low": the choice is its C grid's largest or smallest
    C and the optimum may lie beyond; `flat`: the same estimate at every C), the first runner-up,
    the p-values and estimates, the configuration's parameters, and the ids last.
    save=True stores the selection in the store (its id is in the `selection_id` column; the same
    selection saved before keeps its id and is not stored twice). A sweep that misses rows (still
    running, or interrupted) warns (UserWarning); saving a selection of it needs partial=True.
    refit: a directory to save the chosen configurations to, trained on all training data, as a
    deployable artefact (`xialpha predict`; saves the selection too, after the training, as the
    artefact names it; spec, client: as for `refit`, which returns the models in memory instead).
    """
    options = SelectionOptions(
        metric=metric,
        estimator=estimator,
        rho=rho,
        smooth=smooth,
        per_category=per_category,
        average=average,
        cost_fn=cost_fn,
        cost_fp=cost_fp,
        runners_up=runners_up,
        alpha=alpha,
        save=save or refit is not None,
        partial=partial,
    )
    result_store = open_store(store_location(store), create=False, writable=True)
    chosen = select_sweep(result_store, choose_sweep(result_store, sweep), options)
    if chosen.incomplete:
        warnings.warn(f"{chosen.incomplete}; this selection is of the rows stored so far", UserWarning, stacklevel=2)
    labels = sweep_labels(chosen.results)
    if options.save:
        with _local_workers(client) if refit is not None else contextlib.nullcontext():
            store_selection(
                result_store, chosen, labels, refit=refit, spec=None if spec is None else str(spec), client=client
            )
    return tidy_selection(chosen.frame, labels)


class TextClassifier:
    """One category's refitted model: raw texts -> decision values and membership.

    A scikit-learn style estimator (fitted): `predict(texts)` (m,) booleans, True for a text in
    the category (classes_ [False, True]); `decision_function(texts)` (m,) signed decision values,
    > 0 in the category, larger the surer; `config` the chosen configuration. Picklable by the user.
    """

    def __init__(self, trained: TrainedSelection, index: int):
        self._trained, self._index = trained, index
        self.category = trained.models[index].category
        self.config = dict(trained.models[index].config)
        self.classes_ = np.array([False, True])

    def decision_function(self, texts: Iterable[str]) -> np.ndarray:
        return self._item.model.decision_function(self._features(texts))

    def predict(self, texts: Iterable[str]) -> np.ndarray:
        return self._item.model.predict(self._features(texts))

    @property
    def _item(self) -> CategoryModel:
        return self._trained.models[self._index]

    def _features(self, texts: Iterable[str]) -> Any:
        return self._trained.features(self._item.preprocessing_id, texts=list(texts))

    def __repr__(self) -> str:
        kernel, C = self.config.get(ResultColumn.KERNEL), self.config.get(ResultColumn.C)
        return f"TextClassifier({self.category!r}, kernel={kernel}, C={C})"


def _selection_argument(result_store: StoreQueries, selection: str | pd.DataFrame) -> Selection:
    """selection=: a stored selection's id, or the DataFrame `select` returned."""
    if isinstance(selection, str):
        return read_selection(result_store, selection)
    return Selection.of_frame(selection)


def _saved(result_store: StoreQueries, selection: Selection) -> Selection:
    """`selection` as the store holds it: under its id, or the id of the same selection saved
    before, or stored now under its id (one write)."""
    if not result_store.selections(selection_id=selection.selection_id).empty:
        return read_selection(result_store, selection.selection_id)
    same = same_selection_id(result_store, selection.rows)
    if same is not None:
        return read_selection(result_store, same)
    try:
        result_store.add_selection(selection.typed_rows())
    except UserError as exc:
        raise UserError(
            f"cannot be stored before it is certified ({exc}); pass the DataFrame "
            "select(save=True) returned, or a stored selection's id",
            parameter="selection",
        ) from None
    return read_selection(result_store, selection.selection_id)


@checked(store=PATH, selection=SELECTION, spec=PATH, corpus=CORPUS.or_none(), client=CLIENT)
def refit(
    store: str | os.PathLike[str] | None = None,
    *,
    selection: str | pd.DataFrame,
    spec: str | os.PathLike[str] | None = None,
    corpus: Corpus | Sequence[Iterable[Any]] | None = None,
    client: Client | None = None,
) -> dict[str, TextClassifier]:
    """Train the selected configurations on all training data: {category: TextClassifier}.

    selection: the DataFrame `select` returned, or the id of a stored selection. spec: the
    sweep's spec file when the stored spec's corpus path no longer resolves. corpus: the corpus
    given to `sweep(corpus=)`, for a sweep of documents in memory. The training runs on the
    sweep's cluster, where the corpus is read (client: a running `distributed.Client` to use).
    """
    result_store = open_store(store_location(store), create=False, writable=True)
    chosen = _selection_argument(result_store, selection)
    with _local_workers(client):
        trained = refit_selection(
            result_store,
            chosen,
            None if spec is None else str(spec),
            corpus=None if corpus is None else as_corpus(corpus),
            client=client,
        )
    return {model.category: TextClassifier(trained, i) for i, model in enumerate(trained.models)}


@checked(spec=DRIFT_SPEC, store=PATH, client=CLIENT, force=FLAG)
def drift(
    spec: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    client: Client | None = None,
    force: bool = False,
) -> DriftReport:
    """Check the newest batch of a drift spec (a path to a TOML file, or TOML text) for concept
    drift and store the verdicts, as `xialpha drift` does; returns the `DriftReport`
    (`exit_code`: 0 no drift, 3 drift, 1 a check failed; `rows`: one `DriftRow` per config, category
    and window; `verdicts()`). client: a running `distributed.Client` to use.
    """
    parsed = load_drift_spec(spec) if _is_path(spec) else parse_drift_spec(str(spec), source="spec")
    with _local_workers(client, parsed.cluster.kind):
        opened = open_store(store_location(store, parsed.store), create=True, writable=True)
        return run_drift_check(parsed, opened, force=force, client=client)


@checked(
    store=PATH,
    selection=SELECTION,
    test_split=REQUIRED_TEXT,
    force=FLAG,
    confidence=CONFIDENCE_LEVEL,
    draws=DRAW_COUNT,
    seed=SEED,
    spec=PATH,
    corpus=CORPUS.or_none(),
    client=CLIENT,
)
def certify(
    store: str | os.PathLike[str] | None = None,
    *,
    selection: str | pd.DataFrame,
    test_split: str,
    force: bool = False,
    confidence: float = CONFIDENCE,
    draws: int = DRAWS,
    seed: int = DRAWS_SEED,
    spec: str | os.PathLike[str] | None = None,
    corpus: Corpus | Sequence[Iterable[Any]] | None = None,
    client: Client | None = None,
) -> pd.DataFrame:
    """Test a stored selection once on the sealed split `test_split`, as `xialpha certify` does,
    and store the result: one row per category, then "(micro)" and "(macro)", its `config`
    label, F1, error, recall and precision (fractions 0..1) each beside its one-sided
    `confidence` bound, whether the test was `independent` (False: the sweep's held-out estimates
    used the split) and `forced`, then the test counts and every other column, ids last. A second
    certification on the same test set is refused unless force=True (sequential testing bias).

    selection: a stored selection's id, or the DataFrame `select` returned; one `select` did not
    save is stored first (as save=True would), so a test set is never marked used by a selection
    the store does not hold. spec, corpus, client: as for `refit`.
    """
    result_store = open_store(store_location(store), create=False, writable=True)
    saved = _saved(result_store, _selection_argument(result_store, selection))
    rows = saved.rows
    with _local_workers(client):
        certified = certify_selection(
            result_store,
            saved,
            test_split,
            force=force,
            confidence=confidence,
            draws=draws,
            seed=seed,
            spec_path=None if spec is None else str(spec),
            corpus=None if corpus is None else as_corpus(corpus),
            client=client,
        )
    labels = sweep_labels(result_store.read_results_df(str(rows[ResultColumn.SWEEP_ID].iloc[0])))
    return tidy_certification(certified, dict(zip(rows[ResultColumn.CATEGORY], labels.column(rows))))


@checked(store=PATH, a=REQUIRED_TEXT, b=REQUIRED_TEXT)
def compare(store: str | os.PathLike[str] | None, a: str, b: str) -> pd.DataFrame:
    """Two saved selections side by side, as `xialpha compare A B` shows them: a and b are each a
    saved selection's id, or a sweep's id (its newest saved per-category selection). Returns one
    row per category, then "(micro)" and "(macro)": what `changed` (the configuration's parts that
    differ: preprocessing, kernel, C, j; or "only in A"/"only in B"), each side's configuration
    (`config_a`, `config_b`), estimate (`estimate_*`: the selection's value) and held-out F1 and
    error (fractions; NaN where the sweep did not score the held-out split), a two-sided `test`
    of the held-out decisions with its `p_value` (McNemar on the same documents, else an unpaired
    p-test; `xialpha.selection.comparison` says when each), and the ids last.
    """
    return tidy_comparison(compare_selections(open_store(store_location(store), create=False, writable=False), a, b))


@checked(**VIEW_CONSTRAINTS, estimator=VIEW_ESTIMATOR, html=PATH, compare=TEXT)
def report(
    store: str | os.PathLike[str] | None = None,
    *,
    sweep: str | None = None,
    selection: str | None = None,
    metric: str | None = None,
    estimator: str | None = None,
    rho: float | None = None,
    html: str | os.PathLike[str] | None = None,
    compare: str | None = None,
) -> pd.DataFrame:
    """A sweep's report as `xialpha report` shows it: returns the estimate curves (one row per
    category, config and C: `estimate` of `metric` by `estimator` at `rho`, `held_out` where the
    sweep computed it). selection: a saved selection's id (default: the newest per-category one);
    metric, estimator and rho default to that selection's. html: a path to write the
    self-contained HTML page to as well (selection, certifications, calibration, provenance; with
    compare, a selection's or a sweep's id, the selection shown against it, as `compare` shows it).
    """
    result_store = open_store(store_location(store), create=False, writable=False)
    directory = result_store.local_directory()
    read = [] if directory is None else [("store", directory)]  # what the page shows: never written into
    view = report_of(result_store, sweep, selection, compare, metric=metric, estimator=estimator, rho=rho)
    if html is not None:
        write_page(html, render_report(view), "html", read)
    return view.curves
