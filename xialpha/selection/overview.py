"""What a report shows about one sweep: facts, estimate curves, best C per group, LOO candidates
and the newest stored selection (`sweep_overview`); the terminal tables and the HTML page
(`xialpha.selection.report_html`) are drawn from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from xialpha.selection.labels import ConfigLabels, sweep_labels
from xialpha.selection.objective import Objective
from xialpha.selection.records import read_if_stored
from xialpha.selection.report import best_per_group, estimate_curves, loo_candidates
from xialpha.selection.selector import candidate_rows


@dataclass(frozen=True, eq=False)
class SweepOverview:
    """summary: label -> fact; curves: the objective's estimate and the held-out value per
    category, config and C (`estimate_curves`); best: best C per group; candidates: LOO
    candidates per category; selection: the newest stored selection's rows (None if none);
    what: the objective in words, e.g. "f1 of span (rho=1)"."""

    sweep_id: str
    summary: dict
    curves: pd.DataFrame
    best: pd.DataFrame
    candidates: pd.DataFrame
    selection: pd.DataFrame | None
    what: str
    labels: ConfigLabels


def sweep_overview(store, sweep_id: str, objective: Objective) -> SweepOverview:
    """The overview of `sweep_id` in `store` by `objective`; UserError when it has no such estimates."""
    results = store.read_results_df(sweep_id)
    candidate_rows(results, objective, sweep_id)  # a clear error when there is nothing to show
    labels = sweep_labels(results)
    curves = estimate_curves(results, objective, labels)
    stored = read_if_stored(store, "selections", [("sweep_id", "=", sweep_id)])
    failed = len(store.read_results_df(sweep_id, include_failed=True)) - len(results)
    summary = {
        "store": store.uri, "result rows (ok / failed)": f"{len(results)} / {failed}",
        "categories": results["category"].nunique(), "preprocessings": results["preprocessing_id"].nunique(),
        "kernels": results["kernel_id"].nunique(), "C values": results["C"].nunique(),
        "rho values": ", ".join(f"{r:g}" for r in sorted(results["rho"].unique())),
        "created": f"{results['created_at'].min()} .. {results['created_at'].max()}",
    }
    return SweepOverview(sweep_id, summary, curves, best_per_group(curves, objective.maximise),
                         loo_candidates(results), None if stored is None else _latest(stored.to_pandas()),
                         f"{objective.metric} of {objective.estimator} (rho={objective.rho:g})", labels)


def _latest(selections: pd.DataFrame) -> pd.DataFrame:
    newest = selections.sort_values("created_at")["selection_id"].iloc[-1]
    return selections[selections["selection_id"] == newest].sort_values("category").reset_index(drop=True)
