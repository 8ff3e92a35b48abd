"""What a sweep report shows, as DataFrames: estimate-vs-C curves, the best C per group with
the held-out value beside it, how many examples xi-alpha flags as LOO candidates, and
(`gather_report`) everything a report page shows: the selection, its certifications,
calibration against held-out values, each estimator's choices and provenance.

A "group" is one (category, preprocessing, kernel, j): its rows differ only in C.
"""

from __future__ import annotations

import datetime
import platform
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, TypedDict, Unpack

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators import registry
from xialpha.parameters import PATH, TEXT, Check
from xialpha.printable import redact
from xialpha.reports.calibration import calibration_points, estimator_choices
from xialpha.reports.columns import ReportColumn
from xialpha.reports.formatting import minute, objective_text
from xialpha.reports.inventory import certifications_of
from xialpha.reports.labels import ConfigLabels, sweep_labels
from xialpha.selection.comparison import SelectionComparison, compare_selections
from xialpha.selection.edges import EdgeColumn, grid_edges, with_grid_edges
from xialpha.selection.objective import (
    DEFAULT_RHO,
    DEFAULT_SMOOTH,
    RHO,
    SHOWN_ESTIMATOR,
    SHOWN_METRIC,
    Objective,
    estimator_counts,
    metric_values,
)
from xialpha.selection.ranking import SIMPLER, SUPPORT_VECTORS, VALUE, rank
from xialpha.selection.records import newest_selection, read_selection
from xialpha.selection.selected import Selection
from xialpha.selection.selector import at_rho, candidate_rows, default_estimator, rho_mask
from xialpha.storage.naming import choose_sweep
from xialpha.storage.schema import CertificationColumn, ResultColumn, SelectionColumn, SweepColumn
from xialpha.version import __version__

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries

S = SelectionColumn

GROUP = (ResultColumn.CATEGORY, ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J)
BOUND_RHO = 2.0  # xi-alpha with rho = 2 bounds the LOO error: its flagged examples are the LOO candidates
LOO_RETRAINS = registry.estimator("loo").columns[0].name  # the retrainings exact LOO ran
NO_HELD_OUT = (  # why a report has no held-out values, and how a sweep gets them
    "scored no held-out split to compare estimates with ([estimators] holdout = true with "
    "corpus.validation_fraction scores one carved from training)"
)


def estimate_curves(results: pd.DataFrame, objective: Objective, labels: ConfigLabels | None = None) -> pd.DataFrame:
    """One row per result at the objective's rho: GROUP, label (the group's, from `labels`;
    default: the labels of `results`), C, estimate, held_out (the holdout metric, NaN where not
    computed), n_sv; sorted by group and C."""
    labels = labels or sweep_labels(results)
    rows = at_rho(results, objective.rho)
    curves = rows[list(GROUP) + [ResultColumn.C]].copy()
    parts = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J)
    groups: dict[tuple, str] = {}  # each group labelled once
    curves[ReportColumn.LABEL] = [
        groups.get(key) or groups.setdefault(key, labels.group(*key)) for key in zip(*(rows[c].tolist() for c in parts))
    ]
    curves[ReportColumn.ESTIMATE] = objective.values(objective.counts(rows))
    curves[ReportColumn.HELD_OUT] = metric_values(
        estimator_counts(rows, "holdout"), objective.metric, objective.cost_fn, objective.cost_fp
    )
    curves[ResultColumn.N_SV] = rows[ResultColumn.N_SV].to_numpy() if ResultColumn.N_SV in rows else np.nan
    return curves.sort_values([*GROUP, ResultColumn.C]).reset_index(drop=True)


def best_per_group(curves: pd.DataFrame, objective: Objective) -> pd.DataFrame:
    """Per group: its label, the C a selection by `objective` would choose among the group's C
    (`xialpha.selection.ranking.rank`, as a selection ranks: averaged over C neighbours when the
    objective smooths, ties by its rule), its estimate, the value it was ranked by (`selection_value`), its
    held-out value, the best held-out value over the group's C values (NaN without holdout), and
    where it lies on the group's C grid (`at_edge`, `flat`: `xialpha.selection.edges`)."""
    columns = [
        *GROUP,
        ReportColumn.LABEL,
        ReportColumn.BEST_C,
        ReportColumn.ESTIMATE,
        S.SELECTION_VALUE,
        ReportColumn.HELD_OUT,
        ReportColumn.BEST_HELD_OUT,
        EdgeColumn.AT_EDGE,
        EdgeColumn.FLAT,
    ]
    curves = curves.dropna(subset=list(GROUP))  # as a group-by over GROUP leaves such rows out
    candidates = curves.dropna(subset=[ReportColumn.ESTIMATE])
    if candidates.empty:
        return pd.DataFrame([], columns=columns)
    ranked = rank(
        candidates.assign(**{VALUE: candidates[ReportColumn.ESTIMATE], SUPPORT_VECTORS: candidates[ResultColumn.N_SV]}),
        objective,
        within=GROUP,
    )
    best = ranked.groupby(list(GROUP), sort=False).head(1)
    best = best.sort_values(list(GROUP), kind="mergesort").reset_index(drop=True)  # groups in GROUP order
    held = curves.dropna(subset=[ReportColumn.HELD_OUT]).groupby(list(GROUP))[ReportColumn.HELD_OUT]
    best_held = (held.max() if objective.maximise else held.min()).rename(ReportColumn.BEST_HELD_OUT)
    best = best.join(best_held, on=list(GROUP))
    at_edge, flat, _ = grid_edges(best, candidates, ReportColumn.ESTIMATE, objective.maximise)
    out = best.rename(columns={ResultColumn.C: ReportColumn.BEST_C})
    out[EdgeColumn.AT_EDGE] = at_edge
    out[EdgeColumn.FLAT] = flat
    return out.reindex(columns=columns)


def loo_candidates(results: pd.DataFrame) -> pd.DataFrame:
    """Per category: training examples n, the mean and max over configs of xa_d at rho = 2
    (examples that may be LOO errors, the retrainings an exact LOO needs at most), where exact LOO
    ran the mean retrainings it actually made, and the positive training examples n_pos."""
    flagged = estimator_counts(results, "xa")  # per row, computed once for every category
    bound = (flagged["d_pos"] + flagged["d_neg"]).to_numpy(dtype=float)
    at_bound_rho = rho_mask(results, BOUND_RHO)
    retrains = pd.to_numeric(results.get(LOO_RETRAINS, pd.Series(np.nan, index=results.index)), errors="coerce")
    frame = pd.DataFrame(
        {
            ResultColumn.CATEGORY: results[ResultColumn.CATEGORY].to_numpy(),
            ResultColumn.N: pd.to_numeric(results[ResultColumn.N]).to_numpy(),
            ResultColumn.N_POS: pd.to_numeric(results[ResultColumn.N_POS]).to_numpy(),
            "bound": np.where(at_bound_rho, bound, np.nan),
            "retrains": retrains.to_numpy(dtype=float),
        }
    )
    by_category = frame.groupby(ResultColumn.CATEGORY, sort=True)
    out = pd.DataFrame(
        {
            ResultColumn.N: by_category[ResultColumn.N].max().astype(int),
            ReportColumn.CONFIGS: by_category["bound"].count().astype(int),
            ReportColumn.CANDIDATES_MEAN: by_category["bound"].mean(),
            ReportColumn.CANDIDATES_MAX: by_category["bound"].max(),
            ReportColumn.LOO_RETRAINS_MEAN: by_category["retrains"].mean(),
            ResultColumn.N_POS: by_category[ResultColumn.N_POS].max(),
        }
    )
    return out.rename_axis(ResultColumn.CATEGORY).reset_index()


@dataclass(frozen=True)
class Report:
    """Everything a report shows. metric/estimator/rho: what the curves and best-C tables show
    (`what` in words); best: per group, the C a selection by them would choose (`best_per_group`),
    and best_note how it relates to the selection shown; selection: the selection shown (None when the
    sweep has no saved selection), selection_edges its rows with where each choice lies on its C grid
    (`at_edge`, `flat` and `settled`: `xialpha.selection.edges.with_grid_edges`; None likewise), and
    selection_note, which says which one it is and how to choose another;
    certifications: the stored certification rows of that selection; calibration: the
    calibration points (`xialpha.reports.calibration`); provenance: label -> text facts;
    runs: the sweep's runs (run_id, created_at, xialpha_version, command, data_fingerprint,
    spec_toml), oldest first; comparison: the selection shown (A) against another (B), when asked for."""

    sweep_id: str
    metric: str
    what: str
    summary: dict
    curves: pd.DataFrame
    best: pd.DataFrame
    best_note: str
    candidates: pd.DataFrame
    labels: ConfigLabels
    selection: Selection | None
    selection_edges: pd.DataFrame | None
    selection_note: str
    certifications: pd.DataFrame
    calibration: pd.DataFrame
    choices: pd.DataFrame
    provenance: dict
    runs: pd.DataFrame
    comparison: SelectionComparison | None = None


# The constraints (`xialpha.parameters.checked`) of what the Python API's report views are chosen by:
# the store (a location), the sweep and saved selection, and ReportView's metric and rho;
# `xialpha.report` and `xialpha.plot.curves` take the estimator too (VIEW_ESTIMATOR).
VIEW_CONSTRAINTS: dict[str, Check] = {
    "store": PATH,
    "sweep": TEXT,
    "selection": TEXT,
    "metric": SHOWN_METRIC.or_none(),
    "rho": RHO.or_none(),
}
VIEW_ESTIMATOR = SHOWN_ESTIMATOR.or_none()


class ReportView(TypedDict, total=False):
    """What `report_of` passes on to `gather_report`: the metric, estimator and rho the curves show, the command."""

    metric: str | None
    estimator: str | None
    rho: float | None
    command: str | None


def report_of(
    store: StoreQueries,
    sweep: str | None = None,
    selection: str | None = None,
    compare: str | None = None,
    **view: Unpack[ReportView],
) -> Report:
    """The Report of saved selection `selection` (an id), else of the newest per-category
    selection of `sweep` (the store's only sweep when None); `view`: gather_report's metric,
    estimator, rho and command. compare: a selection or sweep id to compare the selection shown
    with (A: the selection shown, B: `compare`; `xialpha.selection.comparison`). The `xialpha
    report` command and `xialpha.report` both use it."""
    if selection is not None:
        shown: Selection | None = read_selection(store, selection, sweep)
        sweep_id = shown.sweep_id  # type: ignore[union-attr]
    else:
        sweep_id = choose_sweep(store, sweep)
        shown = newest_selection(store, sweep_id)
    report = gather_report(store, sweep_id, shown, explicit=selection is not None, **view)
    if compare is None:
        return report
    if shown is None:
        raise UserError(
            f"the report of sweep {sweep_id!r} shows no saved selection to compare with {compare!r} "
            "(name a saved one to show, or save one with `xialpha select --save`)",
            parameter="compare",
        )
    return replace(report, comparison=compare_selections(store, shown.selection_id, compare, ("selection", "compare")))


def gather_report(
    store: StoreQueries,
    sweep_id: str,
    shown: Selection | None,
    *,
    explicit: bool = False,
    metric: str | None = None,
    estimator: str | None = None,
    rho: float | None = None,
    command: str | None = None,
) -> Report:
    """The Report of `sweep_id` showing `shown` (a saved selection, or None); `explicit`: the user
    named it (else it is the newest per-category one). metric, estimator and rho default to the
    selection's (its metric unless cost), else f1, the sweep's default estimator and rho 1.
    `command`: the command line that asked for the report."""
    results = store.read_results_df(sweep_id)
    chosen_by = None if shown is None else shown.objective
    metric = metric or (chosen_by.metric if chosen_by is not None and chosen_by.metric != "cost" else "f1")
    estimator = estimator or (chosen_by.estimator if chosen_by is not None else default_estimator(results))
    rho = rho if rho is not None else (chosen_by.rho if chosen_by is not None else DEFAULT_RHO)
    objective = Objective(
        metric=metric, estimator=estimator, rho=rho, smooth=DEFAULT_SMOOTH if chosen_by is None else chosen_by.smooth
    )
    candidate_rows(results, objective, sweep_id)  # a clear error when there is nothing to show
    edges = None if shown is None else with_grid_edges(shown, results)
    labels = sweep_labels(results)
    curves = estimate_curves(results, objective, labels)
    certifications = pd.DataFrame() if shown is None else certifications_of(store, shown.selection_id)
    stored = store.sweep_summary(sweep_id)  # stored when the sweep ended, while its files are unchanged
    failed = stored.rows_failed if stored else len(store.read_results_df(sweep_id, include_failed=True)) - len(results)
    summary = {
        "store": store.uri,
        "result rows (ok / failed)": f"{len(results)} / {failed}",
        "categories": results[ResultColumn.CATEGORY].nunique(),
        "preprocessings": results[ResultColumn.PREPROCESSING_ID].nunique(),
        "kernels": results[ResultColumn.KERNEL_ID].nunique(),
        "C values": results[ResultColumn.C].nunique(),
        "rho values": ", ".join(f"{r:g}" for r in sorted(results[ResultColumn.RHO].unique())),
        "created": f"{minute(results[ResultColumn.CREATED_AT].min())} .. "
        f"{minute(results[ResultColumn.CREATED_AT].max())}",
    }
    runs = _runs(store, sweep_id)
    return Report(
        sweep_id=sweep_id,
        metric=metric,
        what=objective_text(metric, estimator, rho),
        summary=summary,
        curves=curves,
        best=best_per_group(curves, objective),
        best_note=_best_note(objective, chosen_by),
        candidates=loo_candidates(results),
        labels=labels,
        selection=shown,
        selection_edges=edges,
        selection_note=_selection_note(shown, explicit, sweep_id),
        certifications=certifications,
        calibration=calibration_points(results, metric, rho),
        choices=estimator_choices(results, metric, rho, labels),
        provenance=_provenance(results, runs, shown, certifications, command),
        runs=runs,
    )


def _best_note(objective: Objective, chosen_by: Objective | None) -> str:
    """How the best C per group was ranked, and whether the selection shown ranked the same way
    (then its choice is the best C of its group; else the sentence says what differs)."""
    how = f"averaged with its C neighbours' (plateaus and {SIMPLER.words})" if objective.smooth else "alone"
    text = f"Each group's C is ranked by its estimate {how}"
    if chosen_by is None:
        return text + "."
    differ = [
        f"{name} {getattr(chosen_by, name)} (here {getattr(objective, name)})"
        for name in ("metric", "estimator", "rho")
        if getattr(chosen_by, name) != getattr(objective, name)
    ]
    if not differ:
        return text + ", as the selection ranked: its choice is the best C of its group."
    return text + f"; the selection chose by {', '.join(differ)}, so its C may differ."


def _selection_note(selection: Selection | None, explicit: bool, sweep_id: str) -> str:
    if selection is None:
        return (
            f"no selection: sweep {sweep_id!r} has no saved per-category one (`xialpha select --save` "
            "stores one; `--selection ID` shows a --global one)"
        )
    first = selection.rows.iloc[0]
    which = "chosen with --selection" if explicit else "the newest per-category selection of the sweep"
    return (
        f"selection {first[S.SELECTION_ID]} ({which}, made {minute(first[S.CREATED_AT])}); "
        "`--selection ID` shows another, `xialpha store ls` lists them"
    )


def _runs(store: StoreQueries, sweep_id: str) -> pd.DataFrame:
    """The sweep's runs from the "sweeps" dataset, oldest first (missing columns as None; commands
    and specs without credentials, which stores written before xialpha redacted them may hold)."""
    columns = [
        SweepColumn.RUN_ID,
        SweepColumn.CREATED_AT,
        SweepColumn.XIALPHA_VERSION,
        SweepColumn.COMMAND,
        SweepColumn.DATA_FINGERPRINT,
        SweepColumn.SPEC_TOML,
    ]
    frame = store.runs(sweep_id)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame = frame.sort_values(SweepColumn.CREATED_AT, kind="mergesort")
    runs = pd.DataFrame({c: frame[c].to_numpy() if c in frame else [None] * len(frame) for c in columns})
    for column in (SweepColumn.COMMAND, SweepColumn.SPEC_TOML):
        runs[column] = [redact(text) if isinstance(text, str) else text for text in runs[column]]
    return runs


def _provenance(
    results: pd.DataFrame,
    runs: pd.DataFrame,
    selection: Selection | None,
    certifications: pd.DataFrame,
    command: str | None,
) -> dict:
    """label -> text: how the report, the sweep's results, the selection and its certifications came about."""
    facts = {
        "report made": f"{minute(datetime.datetime.now(datetime.UTC))} with xialpha {__version__}, "
        f"Python {platform.python_version()}, {_library_versions()}"
    }
    if command:
        facts["report command"] = redact(command)
    facts["sweep runs"] = ", ".join(str(r) for r in sorted(results[ResultColumn.RUN_ID].unique())) or "-"
    if ResultColumn.XIALPHA_VERSION in results:
        facts["results written by"] = ", ".join(
            f"xialpha {v}" for v in sorted(results[ResultColumn.XIALPHA_VERSION].dropna().unique())
        )
    commands = [c for c in runs[SweepColumn.COMMAND].dropna().unique() if c]
    if commands:
        facts["sweep command"] = "; ".join(commands)
    if selection is not None:
        first = selection.rows.iloc[0]
        facts["selection"] = (
            f"{first[S.SELECTION_ID]}, made {minute(first[S.CREATED_AT])} with xialpha "
            f"{first.get(S.XIALPHA_VERSION, '-')}"
        )
    groups = certifications.groupby(CertificationColumn.CERTIFICATION_ID, sort=False) if len(certifications) else []
    for certification_id, rows in groups:
        facts[f"certification {certification_id}"] = (
            f"made {minute(rows[ResultColumn.CREATED_AT].iloc[0])} "
            f"with xialpha {rows[ResultColumn.XIALPHA_VERSION].iloc[0]}"
        )
    return facts


def _library_versions() -> str:
    parts = []
    for name in ("numpy", "scipy", "scikit-learn", "dask", "distributed", "pyarrow"):
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    return ", ".join(parts)
