"""Selections, certifications and results as DataFrames a pandas user reads: what `xialpha.select`,
`xialpha.certify`, `xialpha.results` and `xialpha.sweep` return and `xialpha select|certify
--format csv|json` write.

Each row names its configuration by its readable label first (`config`: the parameters that
differ within the sweep, `xialpha.reports.labels`), then what it is about (category, C, ...) and
its estimates, and the ids (hashes, run ids, versions, times: `ID_COLUMNS`) last. A selection
is its stored rows (`xialpha.selection.selected.Selection`: `significant`, null when no test
could run, and why in `untested`) with labels, `tie` (the first runner-up has the same estimate
or was ranked equal: only the C neighbours' average or simplicity decided) and where the choice
lies on its C grid (`at_edge`, `flat`, `settled`: `xialpha.selection.edges`) where the rows were
given them; `Selection.of_frame` reads such a frame back as the store's rows (the columns it adds
dropped). Results leave out the columns that hold no value in any row (estimators the sweep did
not run, parameters of kernels it has not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xialpha.estimators.registry import by_preference
from xialpha.reports.columns import ReportColumn
from xialpha.reports.labels import ConfigLabels, sweep_labels
from xialpha.selection.edges import EdgeColumn
from xialpha.selection.smoothing import VALUE_DECIMALS
from xialpha.storage.schema import (
    ESTIMATORS,
    ID_COLUMNS,
    P_VALUES,
    SELECTION_ESTIMATES,
    CertificationColumn,
    ResultColumn,
    SelectionColumn,
    estimate_columns,
)

if TYPE_CHECKING:  # at run time only where a comparison is shown: selection's imports load scipy.stats,
    # which `xialpha store ls` (through reports.terminal) must not pay for
    from xialpha.selection.comparison import CategoryComparison, SelectionComparison

S = SelectionColumn
SELECTION_FIRST = (
    ReportColumn.CONFIG,
    S.CATEGORY,
    S.VALUE,
    S.SELECTION_VALUE,
    S.SIGNIFICANT,
    ReportColumn.TIE,
    EdgeColumn.AT_EDGE,
    EdgeColumn.FLAT,
    EdgeColumn.SETTLED,
    ReportColumn.RUNNER_UP_CONFIG,
    S.RUNNER_UP_VALUE,
    S.RUNNER_UP_SELECTION_VALUE,
    *P_VALUES,
    *SELECTION_ESTIMATES.values(),
)
COUNTS = (S.N_RUNNERS_UP_SIGNIFICANT, S.N_RUNNERS_UP_TESTED)  # counts, null where none was tested
SHOWN = 50  # categories a terminal table shows unless every one is asked for
CERTIFICATION_FIRST = (  # what a certification found first: what pandas shows of a wide frame
    ResultColumn.CATEGORY,
    ReportColumn.CONFIG,
    CertificationColumn.F1,
    CertificationColumn.F1_LOWER,
    CertificationColumn.ERROR,
    CertificationColumn.ERROR_UPPER,
    CertificationColumn.INDEPENDENT,
    CertificationColumn.FORCED,
    CertificationColumn.RECALL,
    CertificationColumn.RECALL_LOWER,
    CertificationColumn.PRECISION,
    CertificationColumn.PRECISION_LOWER,
    CertificationColumn.N_TEST,
    CertificationColumn.TP,
    CertificationColumn.FP,
    CertificationColumn.FN,
    CertificationColumn.TN,
    CertificationColumn.TEST_SPLIT,
)
RESULTS_FIRST = (
    ReportColumn.CONFIG,
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
    """A selection's rows (one per category: `Selection.rows`, perhaps with its grid edges) as
    shown to people and scripts: `config` and `runner_up_config` labels and `tie` beside the stored
    columns; SELECTION_FIRST first, ids last."""
    frame = rows.copy()
    frame[ReportColumn.CONFIG] = labels.column(rows)
    frame[ReportColumn.RUNNER_UP_CONFIG] = [
        None if label == "-" else label for label in labels.column(rows, "runner_up_")
    ]
    frame[S.SIGNIFICANT] = flags(frame[S.SIGNIFICANT])
    for column in COUNTS:
        frame[column] = pd.array(pd.to_numeric(frame[column]), dtype="Int64")
    frame[ReportColumn.TIE] = ties(frame)
    return _ordered(frame, SELECTION_FIRST)


def flags(values: pd.Series) -> pd.arrays.BooleanArray:
    """Stored flags (True, False, None) as pandas' nullable booleans: null where the flag is missing."""
    return pd.array([None if pd.isna(flag) else bool(flag) for flag in values], dtype="boolean")


def ties(rows: pd.DataFrame) -> pd.arrays.BooleanArray:
    """Per selection row: the first runner-up has the same estimate (`value`) or was ranked equal
    (`selection_value`), to VALUE_DECIMALS, so only its C neighbours' average or the simpler
    configuration decided; null without a runner-up."""

    def equal(column: str, runner_up: str) -> tuple[np.ndarray, np.ndarray]:
        ours = pd.to_numeric(rows[column], errors="coerce").round(VALUE_DECIMALS)
        theirs = pd.to_numeric(rows[runner_up], errors="coerce").round(VALUE_DECIMALS)
        return (ours == theirs).to_numpy(), theirs.isna().to_numpy()

    same_value, no_value = equal(S.VALUE, S.RUNNER_UP_VALUE)
    same_rank, no_rank = equal(S.SELECTION_VALUE, S.RUNNER_UP_SELECTION_VALUE)
    return pd.array(np.where(no_value & no_rank, None, same_value | same_rank), dtype="boolean")


def shown_rows(rows: pd.DataFrame, limit: int = SHOWN) -> pd.DataFrame:
    """The rows (one per category) of the `limit` categories with the most positive training
    examples (n_pos), in their order in `rows`: their choices weigh most in micro-averaged results
    and rest on the least noisy estimates (the others, each a small share of the positives, are
    one flag away)."""
    if len(rows) <= limit:
        return rows
    positives = pd.to_numeric(rows[ResultColumn.N_POS], errors="coerce").fillna(-1).to_numpy()
    largest = np.argsort(-positives, kind="stable")[:limit]
    return rows.iloc[np.sort(largest)]


def tidy_certification(rows: pd.DataFrame, configs: dict[str, str]) -> pd.DataFrame:
    """A certification's stored rows (per category, then "(micro)" and "(macro)") as shown to
    people and scripts: each category's `config` label (configs: category -> label; empty for the
    averages), CERTIFICATION_FIRST first (metrics are fractions 0..1 beside their one-sided
    bounds, then whether the test was independent and forced), every other column after, ids last."""
    frame = rows.assign(
        **{ReportColumn.CONFIG: [configs.get(category, "") for category in rows[ResultColumn.CATEGORY]]}
    )
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
        f"{S.SELECTION_ID}_a": comparison.a.selection_id,
        f"{S.SELECTION_ID}_b": comparison.b.selection_id,
        "sweep_id_a": comparison.a.sweep_id,
        "sweep_id_b": comparison.b.sweep_id,
    }
    records = [
        {
            **{name: getattr(row, name) for name in CategoryComparison.__dataclass_fields__},
            ReportColumn.CHANGED: ", ".join(row.changed),
            ReportColumn.CONFIG_A: label("a", row.category),
            ReportColumn.CONFIG_B: label("b", row.category),
            **ids,
        }
        for row in (comparison.rows if rows is None else rows)
    ]
    first = [ResultColumn.CATEGORY, ReportColumn.CHANGED, ReportColumn.CONFIG_A, ReportColumn.CONFIG_B]
    keys = [f"{ResultColumn.CONFIG_KEY}_a", f"{ResultColumn.CONFIG_KEY}_b"]
    middle = [name for name in CategoryComparison.__dataclass_fields__ if name not in (*first, *keys)]
    frame = pd.DataFrame(records, columns=[*first, *middle, *keys, *ids])
    return frame.astype(dict.fromkeys(("n_tested", "only_a_right", "only_b_right"), "Int64"))  # counts, null: none


def tidy_results(results: pd.DataFrame, labels: ConfigLabels) -> pd.DataFrame:
    """Result rows with their `config` label, RESULTS_FIRST first and ids last, without the
    columns that hold no value in any row; sorted by RESULTS_ORDER (estimators' own order: by_preference)."""
    frame = results.assign(**{ReportColumn.CONFIG: labels.column(results)}).sort_values(RESULTS_ORDER, kind="mergesort")
    if len(frame):
        frame = frame.loc[:, frame.notna().any(axis=0)]
    return _ordered(frame, RESULTS_FIRST)


def _ordered(frame: pd.DataFrame, first: tuple[str, ...]) -> pd.DataFrame:
    """`frame`'s columns: those of `first`, the others as they were, then ID_COLUMNS."""
    head = [c for c in first if c in frame.columns]
    tail = [c for c in ID_COLUMNS if c in frame.columns and c not in head]
    middle = [c for c in frame.columns if c not in head and c not in tail]
    return frame[head + middle + tail].reset_index(drop=True)
