"""A Selection as rows of the store's "selections" dataset, and reading one back.

One function per question: the rows of a Selection (`selection_records`, typed as the store gives
them back: `records_frame`), whether they still need storing (`rows_to_save`), the id of a stored
selection that is the same (`same_selection_id`), a stored selection by id (`read_selection`), the
newest of a sweep (`newest_selection`), the id of the store's newest (`newest_selection_id`). A
`xialpha.select` frame back as rows: `reports.frames.untidy_selection`.

One row per category, keyed by (selection_id, category). Besides the objective it holds the
chosen config (config_key and the results columns that rebuild it: CONFIG_COLUMNS), the
chosen config's estimates (estimate_*: completed metrics and counts of the selection
estimator), the first runner-up (runner_up_*), the p-values of chosen vs first runner-up
(NaN where not computed), `not_significant` (no test rejects at `alpha`; null when no test
ran) and how many of the n_runners_up compared are not significantly different. `value` is the
chosen config's metric, `selection_value` what it was ranked by (smoothed over C with
`smooth_c`; the shared configuration's average in global mode).
"""

from __future__ import annotations

import datetime
import secrets
from typing import TYPE_CHECKING

import pandas as pd

from xialpha.errors import UserError, did_you_mean
from xialpha.selection.objective import stored_values
from xialpha.selection.selector import Selection
from xialpha.storage.schema import CONFIG_COLUMNS, COUNTS, METRICS, P_VALUES, SELECTION_ESTIMATES, ResultColumn
from xialpha.storage.validate import typed_frame
from xialpha.version import __version__

if TYPE_CHECKING:
    from xialpha.storage.store import StoreQueries

DATASET = "selections"


def new_selection_id() -> str:
    """A fresh id: sel-<UTC time>-<6 hex>, safe as a file name part."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    return f"sel-{now}-{secrets.token_hex(3)}"


def selection_records(selection: Selection, selection_id: str) -> list[dict]:
    """The "selections" rows of `selection`, one per category (`xialpha.storage.schema.SELECTION_COLUMNS`;
    `records_frame` shows them as the store gives them back)."""
    objective = selection.objective
    now = datetime.datetime.now(datetime.UTC)
    chosen_rows = _chosen_rows(selection)
    counts = objective.counts(chosen_rows)
    count_values = {name: counts[name].to_numpy() for name in COUNTS}
    estimates = {m: stored_values(chosen_rows, objective.estimator, m) for m in METRICS}
    names: dict[int, list] = {}  # the column names of each index the chosen rows share, listed once
    rows = []
    for position, choice in enumerate(selection.choices):
        index = choice.chosen.index
        chosen = dict(zip(names.get(id(index)) or names.setdefault(id(index), list(index)), choice.chosen.to_numpy()))
        first = choice.first_runner_up(_RUNNER_UP_COLUMNS)
        comparison = choice.comparisons[0] if choice.comparisons else None
        flags = [c.not_significant(selection.alpha) for c in choice.comparisons]
        row = {
            "selection_id": selection_id,
            ResultColumn.SWEEP_ID: selection.sweep_id,
            ResultColumn.CATEGORY: choice.category,
            "mode": selection.mode,
            "metric": objective.metric,
            "estimator": objective.estimator,
            ResultColumn.RHO: objective.rho,
            "average": objective.average if selection.mode == "global" else None,
            "smooth_c": objective.smooth,
            "cost_fn": objective.cost_fn,
            "cost_fp": objective.cost_fp,
            "alpha": selection.alpha,
            "value": float(chosen["value"]),
            "selection_value": selection.global_value
            if selection.mode == "global"
            else float(chosen["selection_value"]),
            **{name: chosen.get(name) for name in CONFIG_COLUMNS},
            **{SELECTION_ESTIMATES[m]: float(estimates[m][position]) for m in METRICS},
            **{SELECTION_ESTIMATES[name]: float(count_values[name][position]) for name in COUNTS},
            **_runner_up(first, choice.runner_up_group_values),
            **(comparison.p_values() if comparison else dict.fromkeys(P_VALUES, float("nan"))),
            "not_significant": flags[0] if flags else None,
            "n_runners_up": len(flags),
            "n_runners_up_not_significant": sum(bool(f) for f in flags),
            "n_candidates": selection.n_candidates,
            ResultColumn.XIALPHA_VERSION: __version__,
            ResultColumn.CREATED_AT: now,
        }
        rows.append(row)
    return rows


def _chosen_rows(selection: Selection) -> pd.DataFrame:
    """The chosen rows of `selection` as one frame, one row per choice (as a frame of the chosen
    Series is; built from their values when they share one index, as choices ranked together do)."""
    chosen = [choice.chosen for choice in selection.choices]
    index = chosen[0].index if chosen else None
    if index is None or not all(row.index is index or row.index.equals(index) for row in chosen):
        return pd.DataFrame(chosen).reset_index(drop=True)
    return pd.DataFrame([row.to_numpy() for row in chosen], columns=index)


def records_frame(rows: list[dict]) -> pd.DataFrame:
    """Selection rows as a DataFrame typed as the store gives them back once saved."""
    return typed_frame(DATASET, rows)


# What makes two stored selections the same: objective, choices and the values they were chosen by.
SAME_SELECTION = (
    ResultColumn.CATEGORY,
    "mode",
    "metric",
    "estimator",
    ResultColumn.RHO,
    "average",
    "smooth_c",
    "cost_fn",
    "cost_fp",
    "alpha",
    ResultColumn.CONFIG_KEY,
    "value",
    "runner_up_config_key",
    "n_runners_up",
)


def rows_to_save(store: StoreQueries, selection: Selection, save: bool) -> tuple[list[dict], bool]:
    """The "selections" rows of `selection` and whether they still need storing: under a new id;
    with `save`, under the id of a stored selection that is the same (SAME_SELECTION) if there is
    one, so that saving a selection twice (`select --save`, then `select --refit`) keeps one id,
    the one its certifications and reports name."""
    rows = selection_records(selection, new_selection_id())
    if not save:
        return rows, False
    same = same_selection_id(store, records_frame(rows))
    return (rows, True) if same is None else (selection_records(selection, same), False)


def same_selection_id(store: StoreQueries, frame: pd.DataFrame) -> str | None:
    """The id of a stored selection that is the same (SAME_SELECTION) as the selection rows
    `frame` (as `records_frame` gives them), or None."""
    stored = store.selections(sweep_id=str(frame[ResultColumn.SWEEP_ID].iloc[0]))
    mine = _comparable(frame)
    for selection_id, theirs in [] if stored.empty else stored.groupby("selection_id", sort=False):
        if _comparable(theirs).equals(mine):
            return str(selection_id)
    return None


def _comparable(rows: pd.DataFrame) -> pd.DataFrame:
    """SAME_SELECTION of `rows` by category (a column stored selections predate, smooth_c, is null)."""
    return rows.sort_values(ResultColumn.CATEGORY).reindex(columns=list(SAME_SELECTION)).reset_index(drop=True)


_RUNNER_UP_COLUMNS = (
    ResultColumn.CONFIG_KEY,
    ResultColumn.PREPROCESSING_ID,
    ResultColumn.KERNEL_ID,
    ResultColumn.C,
    ResultColumn.J,
    "value",
    "selection_value",
)


def _runner_up(first: dict | None, group_values: list[float]) -> dict:
    if first is None:
        return {
            "runner_up_config_key": None,
            "runner_up_preprocessing_id": None,
            "runner_up_kernel_id": None,
            "runner_up_C": None,
            "runner_up_j": None,
            "runner_up_value": None,
            "runner_up_selection_value": None,
        }
    return {
        "runner_up_config_key": first[ResultColumn.CONFIG_KEY],
        "runner_up_preprocessing_id": first[ResultColumn.PREPROCESSING_ID],
        "runner_up_kernel_id": first[ResultColumn.KERNEL_ID],
        "runner_up_C": float(first[ResultColumn.C]),
        "runner_up_j": float(first[ResultColumn.J]),
        "runner_up_value": float(first["value"]),
        "runner_up_selection_value": group_values[0] if group_values else float(first["selection_value"]),
    }


def read_selection(store: StoreQueries, selection_id: str, sweep_id: str | None = None) -> pd.DataFrame:
    """The rows of saved selection `selection_id` (of `sweep_id`, when given), sorted by category;
    UserError naming the saved ones, and saying how to save one, when it is not stored."""
    rows = store.selections(selection_id=selection_id)
    if rows.empty:
        stored = store.selections()
        known = [] if stored.empty else sorted(set(stored["selection_id"]), reverse=True)
        raise UserError(
            f"no selection {selection_id!r} in store {store.uri}"
            f"{did_you_mean(selection_id, known, listing='newest stored')} "
            "(`xialpha select --save` stores a selection; `xialpha store ls` lists them)",
            parameter="selection",
        )
    if sweep_id is not None and str(rows[ResultColumn.SWEEP_ID].iloc[0]) != sweep_id:
        raise UserError(
            f"{selection_id} is a selection of sweep {rows[ResultColumn.SWEEP_ID].iloc[0]!r}, not of {sweep_id!r}",
            parameter="selection",
        )
    return rows.sort_values(ResultColumn.CATEGORY).reset_index(drop=True)


def newest_selection(store: StoreQueries, sweep_id: str, mode: str = "category") -> pd.DataFrame | None:
    """The rows of the newest saved selection of `sweep_id` made in `mode` ("category": one
    configuration per category, "global"), sorted by category; None when there is none (a row
    without a mode, hand-written, is of none)."""
    frame = store.selections(sweep_id=sweep_id)
    if frame.empty or "mode" not in frame:
        return None
    frame = frame[frame["mode"] == mode]
    if frame.empty:
        return None
    newest = frame.sort_values([ResultColumn.CREATED_AT, "selection_id"], kind="mergesort")["selection_id"].iloc[-1]
    return frame[frame["selection_id"] == newest].sort_values(ResultColumn.CATEGORY).reset_index(drop=True)


def newest_selection_id(store: StoreQueries) -> str | None:
    """The id of the newest saved selection of any sweep in the store (by created_at), None when none is saved."""
    frame = store.selections()
    if frame.empty:
        return None
    return str(frame.sort_values([ResultColumn.CREATED_AT, "selection_id"], kind="mergesort")["selection_id"].iloc[-1])
