"""Selections and results as DataFrames a pandas user reads: what `xialpha.select`,
`xialpha.results` and `xialpha.sweep` return and `xialpha select --format csv|json` writes.

Each row names its configuration by its readable label first (`config`: the parameters that
differ within the sweep, `xialpha.reports.labels`), then what it is about (category, C, ...) and
its estimates, and the ids (hashes, run ids, versions, times: `ID_COLUMNS`) last. A selection
says `significant` (the choice differs significantly from its first runner-up by a test at
`alpha`; null when no test could run) and `tie` (the first runner-up has the same estimate or
was ranked equal: only the C neighbours' average or simplicity decided) instead of the store's
double negative `not_significant`, and where the choice lies on its C grid (`at_edge`, `flat`:
`xialpha.selection.edges`) where the rows were given them; `untidy_selection` turns such a frame back into the
store's rows. Results leave out the
columns that hold no value in any row (estimators the sweep did not run, parameters of kernels
it has not).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xialpha.estimators.registry import by_preference
from xialpha.reports.labels import ConfigLabels
from xialpha.selection.ranking import VALUE_DECIMALS
from xialpha.storage.schema import ESTIMATORS, ID_COLUMNS, P_VALUES, SELECTION_ESTIMATES, ResultColumn, estimate_columns

SELECTION_FIRST = (
    "config",
    ResultColumn.CATEGORY,
    "value",
    "selection_value",
    "significant",
    "tie",
    "at_edge",
    "flat",
    "runner_up_config",
    "runner_up_value",
    "runner_up_selection_value",
    *P_VALUES,
    *SELECTION_ESTIMATES.values(),
)
SHOWN_ONLY = ("at_edge", "flat")  # said of a selection beside its rows (`xialpha.selection.edges`), never stored
RESULTS_FIRST = (
    "config",
    ResultColumn.CATEGORY,
    ResultColumn.C,
    ResultColumn.J,
    ResultColumn.KERNEL,
    ResultColumn.RHO,
    ResultColumn.STATUS,
    *(column for prefix in by_preference(ESTIMATORS) for column in estimate_columns(prefix)),
)
# a configuration's rows together
RESULTS_ORDER = [
    ResultColumn.CATEGORY,
    ResultColumn.PREPROCESSING_ID,
    ResultColumn.KERNEL_ID,
    ResultColumn.J,
    ResultColumn.C,
    ResultColumn.RHO,
]


def tidy_selection(rows: pd.DataFrame, labels: ConfigLabels) -> pd.DataFrame:
    """The store's selection rows (one per category) as shown to people and scripts: `config`
    and `runner_up_config` labels, `significant`, `tie` and `n_runners_up_significant` (of the
    n_runners_up compared) in place of the not_significant columns; SELECTION_FIRST first, ids last."""
    frame = rows.copy()
    frame["config"] = labels.column(rows)
    frame["runner_up_config"] = [None if label == "-" else label for label in labels.column(rows, "runner_up_")]
    frame["significant"] = significant(frame.pop("not_significant"))
    frame["n_runners_up_significant"] = frame["n_runners_up"] - frame.pop("n_runners_up_not_significant")
    frame["tie"] = ties(frame)
    return _ordered(frame, SELECTION_FIRST)


def significant(not_significant: pd.Series) -> pd.arrays.BooleanArray:
    """The store's `not_significant` flags said plainly: True where a test separates the choice
    from its first runner-up, null where no test could run."""
    return pd.array([None if pd.isna(flag) else not bool(flag) for flag in not_significant], dtype="boolean")


def ties(rows: pd.DataFrame) -> pd.arrays.BooleanArray:
    """Per selection row: the first runner-up has the same estimate (`value`) or was ranked equal
    (`selection_value`), to VALUE_DECIMALS, so only its C neighbours' average or the simpler
    configuration decided; null without a runner-up."""

    def equal(column: str):
        ours = pd.to_numeric(rows[column], errors="coerce").round(VALUE_DECIMALS)
        theirs = pd.to_numeric(rows[f"runner_up_{column}"], errors="coerce").round(VALUE_DECIMALS)
        return (ours == theirs).to_numpy(), theirs.isna().to_numpy()

    (same_value, no_value), (same_rank, no_rank) = equal("value"), equal("selection_value")
    return pd.array(np.where(no_value & no_rank, None, same_value | same_rank), dtype="boolean")


def untidy_selection(frame: pd.DataFrame) -> pd.DataFrame:
    """A `tidy_selection` frame as the store's selection rows (rows already in that form unchanged)."""
    if "config" not in frame.columns:
        return frame
    rows = frame.drop(columns=["config", "runner_up_config", "tie", *(c for c in SHOWN_ONLY if c in frame)])
    significant = rows.pop("significant")
    rows["not_significant"] = [None if pd.isna(flag) else not bool(flag) for flag in significant]
    rows["n_runners_up_not_significant"] = rows["n_runners_up"] - rows.pop("n_runners_up_significant")
    return rows


def tidy_results(results: pd.DataFrame, labels: ConfigLabels) -> pd.DataFrame:
    """Result rows with their `config` label, RESULTS_FIRST first and ids last, without the
    columns that hold no value in any row; sorted by RESULTS_ORDER (estimators' own order: by_preference)."""
    frame = results.assign(config=labels.column(results)).sort_values(RESULTS_ORDER, kind="mergesort")
    if len(frame):
        frame = frame.loc[:, frame.notna().any(axis=0)]
    return _ordered(frame, RESULTS_FIRST)


def _ordered(frame: pd.DataFrame, first: tuple[str, ...]) -> pd.DataFrame:
    """`frame`'s columns: those of `first`, the others as they were, then ID_COLUMNS."""
    head = [c for c in first if c in frame.columns]
    tail = [c for c in ID_COLUMNS if c in frame.columns and c not in head]
    middle = [c for c in frame.columns if c not in head and c not in tail]
    return frame[head + middle + tail].reset_index(drop=True)
