"""The one ranking engine: candidates best first by an objective's value, ties by one rule.

`rank` sorts any frame of candidates (result rows of one or many categories, shared
configurations, a report's C grids, a search's grid points) that has a VALUE column: each gets
SELECTION_VALUE, what it is ranked by (VALUE averaged with the values of the neighbouring C of the
same curve, `xialpha.selection.smoothing`, when the objective smooths; else VALUE itself).
Selection values equal to VALUE_DECIMALS decimals tie, and ties go by a `TieBreak`: SIMPLER, the
rule of every selection, report and C ladder, unless a caller names another and says why in its
docstring (`XiAlphaSearchCV` keeps scikit-learn's grid order: IN_ORDER).

Per category, candidates are result rows. Globally, a candidate is a shared configuration
(SHARED_CONFIG: preprocessing, kernel, C, j) with one row in every category, valued by the
objective's average over them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from xialpha.selection.objective import Objective
from xialpha.selection.smoothing import VALUE_DECIMALS, smoothed_bounds_over_c, smoothed_over_c
from xialpha.storage.schema import ResultColumn, SelectionColumn

VALUE = SelectionColumn.VALUE  # the candidate's value of the objective (larger better when it maximises)
SELECTION_VALUE = SelectionColumn.SELECTION_VALUE  # what it is ranked by
SUPPORT_VECTORS = "total_sv"  # its support vectors (summed over categories for a shared configuration)
KEY = "key"  # a text naming the candidate, for a stable order among otherwise equal ones
RANK = "rank"  # 1 + the number of candidates ranked better (of the same `within` group)
PLACE = "place"  # 0 for the best of its `within` group, 1 for the next, ... (`best_first`)
ROW = "row"  # a candidate's position in the result rows it is (`result_candidates`)
# With configurations decided by bounds (`Objective.value_bounds`): VALUE is a candidate's best possible
# value, WORST its worst (a column only then), BOUNDED whether its estimate is only bounded, and `rank`
# adds SELECTION_WORST (the worst selection value; SELECTION_VALUE is then the best).
WORST = "worst_value"
BOUNDED = "bounded"
SELECTION_WORST = "worst_selection_value"

SHARED_CONFIG = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.C, ResultColumn.J)
# one category's configurations that differ only in C: a curve smoothed over C
SMOOTH_GROUP = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J)


class Ordering(Protocol):
    """What a ranking needs of an objective (`xialpha.selection.objective.Objective` has both)."""

    @property
    def maximise(self) -> bool: ...

    @property
    def smooth(self) -> bool: ...


@dataclass(frozen=True)
class Order:
    """An Ordering of bare values (no Objective): larger better when `maximise`; `smooth` averages
    each with its C neighbours'."""

    maximise: bool
    smooth: bool


@dataclass(frozen=True)
class TieBreak:
    """What decides between candidates of equal selection value: `columns` compared in order,
    smaller first (a column the frame lacks, and a missing value, decide nothing: last), then the
    frame's own order; `words` says it in a report's sentence."""

    columns: tuple[str, ...]
    words: str


SIMPLER = TieBreak((ResultColumn.C, SUPPORT_VECTORS, KEY), "ties to the smaller C")
IN_ORDER = TieBreak((), "ties to the first in the given order")


def rank(
    frame: pd.DataFrame,
    objective: Ordering,
    *,
    within: tuple[str, ...] = (),
    tie_break: TieBreak = SIMPLER,
    curve: tuple[str, ...] = SMOOTH_GROUP,
) -> pd.DataFrame:
    """`frame` (columns VALUE, C, the `within` and `curve` columns, and the tie-break's; WORST where some
    values are only bounded) with SELECTION_VALUE (and then SELECTION_WORST) and RANK, sorted by the
    `within` columns (as text), then best first within each: a candidate whose value is NaN last,
    equal selection values by `tie_break`. When the objective smooths, each value is averaged over
    the C neighbours of its curve: the rows alike in the `within` and `curve` columns. RANK is shared
    by candidates of equal selection value (to VALUE_DECIMALS; those of NaN value are equal to each
    other)."""
    ranked = frame.copy()
    values = ranked[VALUE].to_numpy(dtype=float)
    worst = ranked[WORST].to_numpy(dtype=float) if WORST in ranked else None
    if objective.smooth and len(ranked):
        groups = _codes(ranked, (*within, *curve))
        C = ranked[ResultColumn.C].to_numpy(dtype=float)
        if worst is None:
            values = smoothed_over_c(groups, C, values, objective.maximise)
        else:
            values, worst = smoothed_bounds_over_c(groups, C, values, worst, objective.maximise)
    ranked[SELECTION_VALUE] = values
    if worst is not None:
        ranked[SELECTION_WORST] = worst
    rounded = np.round(values, VALUE_DECIMALS)
    score = -rounded if objective.maximise else rounded
    within_keys = [_text_codes(ranked[column]) for column in within]
    ties = [_tie_key(ranked, column) for column in tie_break.columns if column in ranked]
    order = _lexsort([*within_keys, score, *ties])
    ranked = ranked.iloc[order].reset_index(drop=True)
    ranked[RANK] = _ranks(score[order], [key[order] for key in within_keys])
    return ranked


def _ranks(score: np.ndarray, within: list[np.ndarray]) -> np.ndarray:
    """(rows,) the RANK of sorted rows of `score` (NaN last) in their groups of equal `within` codes."""
    n = len(score)
    new_group = np.zeros(n, dtype=bool)
    new_group[:1] = True
    for codes in within:
        new_group[1:] |= codes[1:] != codes[:-1]
    same = (score[1:] == score[:-1]) | (np.isnan(score[1:]) & np.isnan(score[:-1]))
    new_run = new_group | np.r_[True, ~same][:n]
    positions = np.arange(n)
    run_start = np.maximum.accumulate(np.where(new_run, positions, 0))
    group_start = np.maximum.accumulate(np.where(new_group, positions, 0))
    return run_start - group_start + 1


def result_candidates(rows: pd.DataFrame, objective: Objective) -> pd.DataFrame:
    """Result rows as candidates, in the columns a ranking reads: category, SMOOTH_GROUP, C, VALUE
    (the objective's), SUPPORT_VECTORS (n_sv), KEY (config_key) and ROW (the row's position in
    `rows`), and WORST and BOUNDED when some rows' estimates are only bounded; without the rows whose
    value is NaN (never a candidate)."""
    columns = [ResultColumn.CATEGORY, *SMOOTH_GROUP, ResultColumn.C]
    candidates = pd.DataFrame({column: rows[column].to_numpy() for column in columns})
    best, worst, bounded = objective.value_bounds(rows)
    candidates[VALUE] = best
    if bounded.any():
        candidates[WORST] = worst
        candidates[BOUNDED] = bounded
    support_vectors = rows[ResultColumn.N_SV] if ResultColumn.N_SV in rows else pd.Series(np.nan, rows.index)
    candidates[SUPPORT_VECTORS] = pd.to_numeric(support_vectors, errors="coerce").to_numpy()
    candidates[KEY] = rows[ResultColumn.CONFIG_KEY].to_numpy()
    candidates[ROW] = np.arange(len(rows))
    return candidates.dropna(subset=[VALUE]).reset_index(drop=True)


def best_first(candidates: pd.DataFrame, objective: Ordering, within: tuple[str, ...]) -> pd.DataFrame:
    """`rank` of `candidates` with PLACE: 0 for the best of its `within` group, 1 for the next, ..."""
    ranked = rank(candidates, objective, within=within)
    first = np.zeros(len(ranked), dtype=bool)
    first[:1] = True
    for column in within:
        codes = _text_codes(ranked[column])
        first[1:] |= codes[1:] != codes[:-1]
    positions = np.arange(len(ranked))
    ranked[PLACE] = positions - np.maximum.accumulate(np.where(first, positions, 0))
    return ranked


def _codes(frame: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    """(rows,) one integer per distinct combination of the values of `columns` (missing ones alike)."""
    codes = np.zeros(len(frame), dtype=np.int64)
    for column in columns:
        column_codes, uniques = pd.factorize(frame[column], use_na_sentinel=False)
        codes = codes * (len(uniques) + 1) + column_codes
    return pd.factorize(codes)[0]


def _text_codes(values: pd.Series) -> np.ndarray:
    """(rows,) the rank of each value as text among the distinct ones."""
    text = values if pd.api.types.infer_dtype(values, skipna=False) == "string" else values.astype(str)
    return pd.factorize(text, sort=True)[0]


def _tie_key(frame: pd.DataFrame, column: str) -> np.ndarray:
    """(rows,) the sort key of a tie-break column: KEY as text, the others as numbers (missing last)."""
    if column == KEY:
        return _text_codes(frame[column])
    return pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _lexsort(keys: list[np.ndarray]) -> np.ndarray:
    """The stable order of rows by `keys`, the first most significant; NaN after every number."""
    columns = []
    for key in reversed(keys):
        if key.dtype.kind == "f":
            missing = np.isnan(key)
            columns.extend([np.where(missing, 0.0, key), missing])
        else:
            columns.append(key)
    return np.lexsort(columns) if columns else np.arange(0)
