"""Selections, certifications and results as DataFrames a pandas user reads: what `xialpha.select`,
`xialpha.certify`, `xialpha.results` and `xialpha.sweep` return and `xialpha select|certify
--format csv|json` write.

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

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xialpha.estimators.registry import by_preference
from xialpha.reports.labels import ConfigLabels, sweep_labels
from xialpha.selection.ranking import VALUE_DECIMALS
from xialpha.storage.schema import ESTIMATORS, ID_COLUMNS, P_VALUES, SELECTION_ESTIMATES, ResultColumn, estimate_columns

if TYPE_CHECKING:  # at run time only where a comparison is shown: selection's imports load scipy.stats,
    # which `xialpha store ls` (through reports.terminal) must not pay for
    from xialpha.selection.comparison import CategoryComparison, SelectionComparison

SELECTION_FIRST = (
    "config",
    ResultColumn.CATEGORY,
    "value",
    "selection_value",
    "significant",
    "tie",
    "at_edge",
    "flat",
    "settled",
    "runner_up_config",
    "runner_up_value",
    "runner_up_selection_value",
    *P_VALUES,
    *SELECTION_ESTIMATES.values(),
)
# said of a selection beside its rows (`xialpha.selection.edges`), never stored
SHOWN_ONLY = ("at_edge", "flat", "settled")
CERTIFICATION_FIRST = (  # what a certification found first: what pandas shows of a wide frame
    ResultColumn.CATEGORY,
    "config",
    "f1",
    "f1_lower",
    "error",
    "error_upper",
    "independent",
    "forced",
    "recall",
    "recall_lower",
    "precision",
    "precision_lower",
    "n_test",
    "tp",
    "fp",
    "fn",
    "tn",
    "test_split",
)
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


def tidy_certification(rows: pd.DataFrame, configs: dict[str, str]) -> pd.DataFrame:
    """A certification's stored rows (per category, then "(micro)" and "(macro)") as shown to
    people and scripts: each category's `config` label (configs: category -> label; empty for the
    averages), CERTIFICATION_FIRST first (metrics are fractions 0..1 beside their one-sided
    bounds, then whether the test was independent and forced), every other column after, ids last."""
    frame = rows.assign(config=[configs.get(category, "") for category in rows[ResultColumn.CATEGORY]])
    return _ordered(frame, CERTIFICATION_FIRST)


def comparison_labels(comparison: SelectionComparison) -> ConfigLabels:
    """The labels of the configurations both selections of `comparison` chose, made over both
    sweeps' results rows: they name what differs between any two of them."""
    return sweep_labels(pd.concat([comparison.a.results, comparison.b.results], ignore_index=True))


def tidy_comparison(comparison: SelectionComparison, rows: list[CategoryComparison] | None = None) -> pd.DataFrame:
    """The rows of `comparison` (or `rows` of it, in their order) as `xialpha.compare` returns them
    and `xialpha compare --format csv|json` writes them: category, `changed` as text ("C, kernel";
    "" where nothing changed), `config_a` and `config_b` (the labels of `comparison_labels`; "-"
    for a category a selection lacks, "" on the micro and macro rows), the other fields of
    CategoryComparison, then the ids: config_key_a, config_key_b, selection_id_a, selection_id_b,
    sweep_id_a, sweep_id_b."""
    from xialpha.selection.comparison import MACRO, MICRO, CategoryComparison

    labels = comparison_labels(comparison)
    chosen = {
        side: selection.rows.set_index(ResultColumn.CATEGORY)
        for side, selection in (("a", comparison.a), ("b", comparison.b))
    }

    def label(side: str, category: str) -> str:
        if category in (MICRO, MACRO):
            return ""
        rows = chosen[side]
        return labels.of_row(rows.loc[category]) if category in rows.index else "-"

    ids = {
        "selection_id_a": comparison.a.selection_id,
        "selection_id_b": comparison.b.selection_id,
        "sweep_id_a": comparison.a.sweep_id,
        "sweep_id_b": comparison.b.sweep_id,
    }
    records = [
        {
            **{name: getattr(row, name) for name in CategoryComparison.__dataclass_fields__},
            "changed": ", ".join(row.changed),
            "config_a": label("a", row.category),
            "config_b": label("b", row.category),
            **ids,
        }
        for row in (comparison.rows if rows is None else rows)
    ]
    first = [ResultColumn.CATEGORY, "changed", "config_a", "config_b"]
    keys = [f"{ResultColumn.CONFIG_KEY}_a", f"{ResultColumn.CONFIG_KEY}_b"]
    middle = [name for name in CategoryComparison.__dataclass_fields__ if name not in (*first, *keys)]
    frame = pd.DataFrame(records, columns=[*first, *middle, *keys, *ids])
    return frame.astype(dict.fromkeys(("n_tested", "only_a_right", "only_b_right"), "Int64"))  # counts, null: none


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
