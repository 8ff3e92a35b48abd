"""Ranking candidate configurations by an objective, best first, ties to the simpler model.

Per category, candidates are result rows. Globally, a candidate is a shared configuration
(SHARED_CONFIG: preprocessing, kernel, C, j) with one row in every category. Both get `value`
(the objective's value: a row's metric, or the shared configuration's average) and
`selection_value`, what they are ranked by: `value` averaged with the values of the neighbouring
C of the same configuration otherwise (SMOOTH_GROUP) when the objective smooths, else `value`.
Selection values equal to VALUE_DECIMALS decimals tie; ties go to the smaller C, then fewer
support vectors (summed over categories for a shared configuration), then the config key (for a
stable order).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xialpha.selection.objective import Objective
from xialpha.selection.smoothing import VALUE_DECIMALS, smoothed_over_c
from xialpha.storage.schema import ResultColumn

SHARED_CONFIG = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.C, ResultColumn.J)
# one category's configurations that differ only in C
SMOOTH_GROUP = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J)


def rank_rows(rows: pd.DataFrame, objective: Objective) -> pd.DataFrame:
    """The rows of one category with a `value` column, sorted best first."""
    return ranked_by_selection_value(_valued(rows, objective), objective, ResultColumn.CONFIG_KEY)


def rank_rows_by_category(rows: pd.DataFrame, objective: Objective) -> pd.DataFrame:
    """The rows of every category with a `value` column, sorted by category, then best first within
    each: per category as `rank_rows` ranks it, in one pass over all of them."""
    ranked = _valued(rows, objective)
    return _sort(
        _with_selection_values(ranked, objective, (ResultColumn.CATEGORY,)),
        objective,
        ResultColumn.CONFIG_KEY,
        (ResultColumn.CATEGORY,),
    )


def ranked_within(frame: pd.DataFrame, objective: Objective, last_key: str, groups: tuple[str, ...]) -> pd.DataFrame:
    """`frame` (columns value, C, total_sv, SMOOTH_GROUP, `groups` and `last_key`) with
    `selection_value`, sorted by the `groups` columns (as text), then best first within each:
    each group as `ranked_by_selection_value` ranks it alone, in one pass over all of them."""
    return _sort(_with_selection_values(frame, objective, groups), objective, last_key, groups)


def _valued(rows: pd.DataFrame, objective: Objective) -> pd.DataFrame:
    """`rows` with `value` (the objective's) and `total_sv`, without the rows whose value is NaN."""
    ranked = rows.copy()
    ranked["value"] = objective.row_values(rows)
    ranked["total_sv"] = (
        pd.to_numeric(rows[ResultColumn.N_SV], errors="coerce") if ResultColumn.N_SV in rows else np.nan
    )
    return ranked.dropna(subset=["value"])


def rank_shared(rows: pd.DataFrame, objective: Objective, categories: list[str]) -> pd.DataFrame:
    """One row per shared configuration present in all `categories`, best first.

    Columns: SHARED_CONFIG, value (the macro or micro average), selection_value, total_sv,
    config_keys (a tuple of the per-category config keys in `categories` order) and group (a
    stable config label).
    """
    counts = objective.counts(rows)
    counts["value"] = objective.row_values(rows)
    counts[ResultColumn.CATEGORY] = rows[ResultColumn.CATEGORY].to_numpy()
    counts[ResultColumn.CONFIG_KEY] = rows[ResultColumn.CONFIG_KEY].to_numpy()
    counts[ResultColumn.N_SV] = (
        pd.to_numeric(rows[ResultColumn.N_SV], errors="coerce").to_numpy() if ResultColumn.N_SV in rows else np.nan
    )
    for column in SHARED_CONFIG:
        counts[column] = rows[column].to_numpy()
    wanted = pd.Index(categories)
    groups = []
    for key, group in counts.groupby(list(SHARED_CONFIG), sort=False, dropna=False):
        by_category = group.drop_duplicates(ResultColumn.CATEGORY).set_index(ResultColumn.CATEGORY)
        if not wanted.isin(by_category.index).all():
            continue
        by_category = by_category.loc[wanted]
        groups.append(
            {
                **dict(zip(SHARED_CONFIG, key)),
                "value": objective.average_value(by_category),
                "total_sv": by_category[ResultColumn.N_SV].sum(min_count=len(wanted)),
                "config_keys": tuple(by_category[ResultColumn.CONFIG_KEY]),
                "group": "|".join(str(part) for part in key),
            }
        )
    ranked = pd.DataFrame(groups, columns=[*SHARED_CONFIG, "value", "total_sv", "config_keys", "group"])
    return ranked_by_selection_value(ranked, objective, "group")


def ranked_by_selection_value(frame: pd.DataFrame, objective: Objective, last_key: str) -> pd.DataFrame:
    """`frame` (columns value, C, total_sv, SMOOTH_GROUP and `last_key`) with `selection_value`,
    best first: ties to the smaller C, then fewer support vectors, then `last_key`."""
    return _sort(_with_selection_values(frame, objective), objective, last_key)


def _with_selection_values(frame: pd.DataFrame, objective: Objective, within: tuple[str, ...] = ()) -> pd.DataFrame:
    """frame with `selection_value`: `value` smoothed over C within SMOOTH_GROUP (and the `within`
    columns), or `value` itself."""
    frame = frame.copy()
    values = frame["value"].to_numpy(dtype=float)
    if objective.smooth and len(frame):
        groups = list(zip(*(frame[column].astype(str) for column in (*within, *SMOOTH_GROUP))))
        values = smoothed_over_c(groups, frame[ResultColumn.C].to_numpy(dtype=float), values, objective.maximise)
    frame["selection_value"] = values
    return frame


def _sort(frame: pd.DataFrame, objective: Objective, last_key: str, first: tuple[str, ...] = ()) -> pd.DataFrame:
    """frame best first (by the `first` columns before that), in a stable order."""
    rounded = frame["selection_value"].astype(float).round(VALUE_DECIMALS)
    order = pd.DataFrame(
        {
            **{f"first_{column}": frame[column].astype(str) for column in first},
            "score": -rounded if objective.maximise else rounded,
            ResultColumn.C: frame[ResultColumn.C].astype(float),
            "total_sv": pd.to_numeric(frame["total_sv"], errors="coerce").fillna(np.inf),
            "last": frame[last_key].astype(str),
        },
        index=frame.index,
    )
    by = [*(f"first_{column}" for column in first), "score", ResultColumn.C, "total_sv", "last"]
    index = order.sort_values(by, kind="mergesort").index
    return frame.loc[index].reset_index(drop=True)
