"""Typed rows of the "selections" dataset: a saved selection is `SelectionRow`s (one per category,
with its `RunnerUp` and `Significance`). `ResultStore` turns them into columns here
(`selection_columns`; `selection_frame` for many rows at once, column by column); `selection_row`
reads a stored selection's columns back into a row, and `stored_selections` brings rows stored
by older versions to this version's columns.

Frozen, slotted dataclasses, as the other datasets' rows (`xialpha.storage.rows`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from xialpha.storage.arrow_schema import CONFIG_COLUMNS, DATASETS
from xialpha.storage.rows import optional_value
from xialpha.storage.schema import (
    LEGACY_N_NOT_SIGNIFICANT,
    LEGACY_NOT_SIGNIFICANT,
    P_VALUES,
    RUNNER_UP,
    SELECTION_ESTIMATES,
    SelectionColumn,
    SelectionMode,
)

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, slots=True)
class RunnerUp:
    """The first runner-up of a selection row: its configuration (config key, preprocessing,
    kernel, C, j), its value of the objective and what it was ranked by."""

    config_key: str
    preprocessing_id: str
    kernel_id: str
    C: float
    j: float
    value: float
    selection_value: float


@dataclass(frozen=True, slots=True)
class Significance:
    """What the significance tests of a choice against its runners-up found: the p-values against
    the first (`p_values`: each of P_VALUES, NaN where that test did not run), whether a test at
    the selection's alpha separates the choice from it (None: no test ran), how many runners-up
    were compared, how many of them a test ran on, how many a test found significantly worse
    (None when none was tested) and, when a runner-up went untested, why (`untested`)."""

    p_values: Mapping[str, float]
    significant: bool | None
    n_runners_up: int
    n_tested: int
    n_significant: int | None
    untested: str | None


@dataclass(frozen=True, slots=True)
class SelectionRow:
    """One category of a saved selection: the objective (metric of estimator at rho; average and
    mode; smooth_c: ranked by values averaged over C neighbours; costs), the significance level,
    the chosen configuration (`config`: its CONFIG_COLUMNS as in results), its value of the
    objective and what it was ranked by (`selection_value`), its estimates (`estimates`: METRICS
    and COUNTS of the selection estimator), its first runner-up (None without one), the tests'
    findings and how many candidates were ranked."""

    selection_id: str
    sweep_id: str
    category: str
    mode: SelectionMode | None  # None where the rows do not say (a frame built without it)
    metric: str
    estimator: str
    rho: float
    average: str | None
    smooth_c: bool | None
    cost_fn: float
    cost_fp: float
    alpha: float
    value: float
    selection_value: float
    config: Mapping[str, object]
    estimates: Mapping[str, float]
    runner_up: RunnerUp | None
    significance: Significance
    n_candidates: int
    xialpha_version: str
    created_at: datetime.datetime


def selection_columns(row: SelectionRow) -> dict:
    """{column: value} of a selection row (the one place a selection row becomes columns)."""
    S = SelectionColumn
    runner_up = row.runner_up
    tests = row.significance
    first = dict.fromkeys(RUNNER_UP) if runner_up is None else dict(zip(RUNNER_UP, _runner_up_values(runner_up)))
    return {
        S.SELECTION_ID: row.selection_id,
        S.SWEEP_ID: row.sweep_id,
        S.CATEGORY: row.category,
        S.MODE: row.mode,
        S.METRIC: row.metric,
        S.ESTIMATOR: row.estimator,
        S.RHO: row.rho,
        S.AVERAGE: row.average,
        S.SMOOTH_C: row.smooth_c,
        S.COST_FN: row.cost_fn,
        S.COST_FP: row.cost_fp,
        S.ALPHA: row.alpha,
        S.VALUE: row.value,
        S.SELECTION_VALUE: row.selection_value,
        **{name: row.config.get(name) for name in CONFIG_COLUMNS},
        **{column: row.estimates.get(name) for name, column in SELECTION_ESTIMATES.items()},
        **first,
        **{name: tests.p_values.get(name, float("nan")) for name in P_VALUES},
        S.SIGNIFICANT: tests.significant,
        S.N_RUNNERS_UP: tests.n_runners_up,
        S.N_CANDIDATES: row.n_candidates,
        S.N_RUNNERS_UP_SIGNIFICANT: tests.n_significant,
        S.N_RUNNERS_UP_TESTED: tests.n_tested,
        S.UNTESTED: tests.untested,
        S.XIALPHA_VERSION: row.xialpha_version,
        S.CREATED_AT: row.created_at,
    }


def selection_frame(columns: Mapping[str, object], n: int) -> pd.DataFrame:
    """`n` selection rows given by column (SELECTION_COLUMNS name -> n values; a column not given is
    null) as a DataFrame typed as the store gives them back: the columnar twin of `selection_columns`,
    for a selection of many categories."""
    table = pa.table(
        {
            column.name: _typed_array(columns.get(column.name), n, column.type)
            for column in DATASETS["selections"].row_columns or ()
        }
    )
    return table.to_pandas()


def _typed_array(values: object, n: int, type_: pa.DataType) -> pa.Array:
    """`values` (n of them, or None: all null) as an Arrow array of `type_`; NaN is null outside
    float columns, as `xialpha.storage.validate.typed_table` makes it."""
    if values is None:
        return pa.nulls(n, type_)
    if pa.types.is_timestamp(type_):
        return pa.array(list(values), type_)  # type: ignore[call-overload]
    return pa.array(np.asarray(values), type_, from_pandas=not pa.types.is_floating(type_))


def _runner_up_values(runner_up: RunnerUp) -> tuple:
    return (
        runner_up.config_key,
        runner_up.preprocessing_id,
        runner_up.kernel_id,
        runner_up.C,
        runner_up.j,
        runner_up.value,
        runner_up.selection_value,
    )


def selection_row(columns: Mapping[str, object]) -> SelectionRow:
    """The selection row of a stored selection's `columns` (a mapping: column -> value, as
    `selection_columns` gives them or `stored_selections` reads them back)."""
    S = SelectionColumn
    values = columns
    first = values.get(S.RUNNER_UP_CONFIG_KEY)
    runner_up = None if optional_value(first) is None else RunnerUp(*(values.get(name) for name in RUNNER_UP))  # type: ignore[arg-type]
    significance = Significance(
        p_values={name: _number(values.get(name)) for name in P_VALUES},
        significant=optional_value(values.get(S.SIGNIFICANT)),
        n_runners_up=int(values.get(S.N_RUNNERS_UP) or 0),  # type: ignore[call-overload]
        n_tested=int(values.get(S.N_RUNNERS_UP_TESTED) or 0),  # type: ignore[call-overload]
        n_significant=optional_value(values.get(S.N_RUNNERS_UP_SIGNIFICANT)),
        untested=optional_value(values.get(S.UNTESTED)),
    )
    return SelectionRow(
        selection_id=values[S.SELECTION_ID],  # type: ignore[arg-type]
        sweep_id=values[S.SWEEP_ID],  # type: ignore[arg-type]
        category=values[S.CATEGORY],  # type: ignore[arg-type]
        mode=None if optional_value(mode := values.get(S.MODE)) is None else SelectionMode(str(mode)),
        metric=values.get(S.METRIC),  # type: ignore[arg-type]
        estimator=values.get(S.ESTIMATOR),  # type: ignore[arg-type]
        rho=_number(values.get(S.RHO)),
        average=optional_value(values.get(S.AVERAGE)),
        smooth_c=optional_value(values.get(S.SMOOTH_C)),
        cost_fn=_number(values.get(S.COST_FN)),
        cost_fp=_number(values.get(S.COST_FP)),
        alpha=_number(values.get(S.ALPHA)),
        value=_number(values.get(S.VALUE)),
        selection_value=_number(values.get(S.SELECTION_VALUE)),
        config={name: values.get(name) for name in CONFIG_COLUMNS},
        estimates={name: _number(values.get(column)) for name, column in SELECTION_ESTIMATES.items()},
        runner_up=runner_up,
        significance=significance,
        n_candidates=int(values.get(S.N_CANDIDATES) or 0),  # type: ignore[call-overload]
        xialpha_version=values.get(S.XIALPHA_VERSION),  # type: ignore[arg-type]
        created_at=values.get(S.CREATED_AT),  # type: ignore[arg-type]
    )


def stored_selections(frame: pd.DataFrame) -> pd.DataFrame:
    """Stored selection rows (`frame`, as the store reads them) in this version's columns: rows
    stored before xialpha counted only the tests that ran (LEGACY_NOT_SIGNIFICANT,
    LEGACY_N_NOT_SIGNIFICANT; N_RUNNERS_UP_TESTED null) get SIGNIFICANT and, where their first
    runner-up was tested, the counts shown then (every runner-up tested: N_RUNNERS_UP); the legacy
    columns go."""
    import pandas as pd  # here: `xialpha store ls` reads the rows it lists without pandas

    S = SelectionColumn
    if LEGACY_NOT_SIGNIFICANT not in frame:
        return frame
    frame = frame.copy()
    not_significant = frame.pop(LEGACY_NOT_SIGNIFICANT)
    n_not_significant = pd.to_numeric(frame.pop(LEGACY_N_NOT_SIGNIFICANT), errors="coerce")
    n_runners_up = pd.to_numeric(frame[S.N_RUNNERS_UP], errors="coerce")
    legacy = frame[S.N_RUNNERS_UP_TESTED].isna() if S.N_RUNNERS_UP_TESTED in frame else pd.Series(True, frame.index)
    tested = legacy & not_significant.notna()
    significant = (
        frame[S.SIGNIFICANT].astype(object) if S.SIGNIFICANT in frame else pd.Series(None, frame.index, object)
    )
    frame[S.SIGNIFICANT] = significant.where(~legacy, [None if pd.isna(f) else not bool(f) for f in not_significant])
    for column, old in (
        (S.N_RUNNERS_UP_TESTED, n_runners_up.where(tested, 0)),
        (S.N_RUNNERS_UP_SIGNIFICANT, (n_runners_up - n_not_significant.fillna(0)).where(tested)),
    ):
        current = frame[column] if column in frame else pd.Series(np.nan, frame.index)
        frame[column] = pd.array(current.where(~legacy, old), dtype="Int64")
    return frame


def _number(value: object) -> float:
    return float("nan") if optional_value(value) is None else float(value)  # type: ignore[arg-type]
