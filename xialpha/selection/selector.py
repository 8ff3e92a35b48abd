"""Choosing configurations from a sweep's results: per category, or one shared by all.

Per category (default): each category gets the result row that optimises the objective; its
runners-up are the next rows of the same category, compared with micro tests on that
category's examples. Macro tests are not run here: the per-category choice beats each
runner-up in every category by construction, so they would only measure the selection.

Global: one shared configuration (preprocessing, kernel, C, j) for every category, optimising
the macro or micro average; runners-up are the next shared configurations, compared with
the pooled micro tests and the macro S- and T-tests over categories (Yang & Liu 1999).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators.registry import always_on, estimator
from xialpha.selection.objective import DEFAULT_ESTIMATOR, Objective, check_selectable, estimator_counts
from xialpha.selection.ranking import rank_rows_by_category, rank_shared
from xialpha.selection.significance import ALPHA, Comparison, compare
from xialpha.storage.schema import ResultColumn

if TYPE_CHECKING:
    from xialpha.storage.store import StoreQueries

RUNNERS_UP = 3
RHO_ATOL = 1e-9

IndicatorLoader = Callable[[list[str]], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class CategoryChoice:
    """The chosen result row of one category (with `value`), its runners-up best first
    (`others`: their frame, or (ranked, first, end, columns): rows first to end - 1 of a frame
    ranking every category, with its `column_arrays`, sliced only when `runners_up` is asked
    for), and one Comparison per runner-up. `runner_up_group_values` holds the runners-up's
    averaged objective in global mode (empty otherwise)."""

    category: str
    chosen: pd.Series
    others: pd.DataFrame | tuple[pd.DataFrame, int, int, dict[str, np.ndarray]]
    comparisons: list[Comparison]
    runner_up_group_values: list[float] = field(default_factory=list)

    @property
    def runners_up(self) -> pd.DataFrame:
        """The runners-up best first, one row each, indexed from 0."""
        if isinstance(self.others, pd.DataFrame):
            return self.others
        ranked, first, end, _ = self.others
        return ranked.iloc[first:end].reset_index(drop=True)

    def first_runner_up(self, names: Iterable[str]) -> dict | None:
        """{name: value} of the first runner-up in the columns `names` it has; None without one."""
        others = self.others
        if isinstance(others, pd.DataFrame):
            columns, first, end = column_arrays(others), 0, len(others)
        else:
            columns, first, end = others[3], others[1], others[2]
        if first >= end:
            return None
        return {name: columns[name][first] for name in names if name in columns}


class SelectionMode(StrEnum):
    """How a selection chooses, as its stored rows' `mode` says: a configuration per category, or
    one shared by every category (`--global`, per_category=False)."""

    CATEGORY = "category"
    GLOBAL = "global"


@dataclass(frozen=True)
class Selection:
    """A whole selection: the objective, mode (`SelectionMode`), one choice per
    category, the averaged objective the chosen shared configuration was ranked by (global mode;
    smoothed over C when the objective smooths) and the number of candidates ranked (rows per
    category, or shared configurations)."""

    sweep_id: str
    objective: Objective
    mode: SelectionMode
    choices: list[CategoryChoice]
    global_value: float | None
    n_candidates: int
    alpha: float = ALPHA


def select(
    results: pd.DataFrame,
    objective: Objective,
    *,
    sweep_id: str,
    per_category: bool = True,
    runners_up: int = RUNNERS_UP,
    load_indicators: IndicatorLoader | None = None,
    alpha: float = ALPHA,
) -> Selection:
    """Select from `results` (the "ok" result rows of one sweep): per category, or
    (per_category=False) one configuration shared by every category.

    load_indicators(config_keys) returns the stored per-example indicators of the objective's
    estimator (absent keys: micro tests are skipped); None skips all micro tests.
    """
    if runners_up < 0:
        raise UserError(f"must be >= 0, got {runners_up}", parameter="runners_up")
    check_selectable(objective.estimator)
    rows = candidate_rows(results, objective, sweep_id)
    categories = sorted(rows[ResultColumn.CATEGORY].unique())
    loader = load_indicators or (lambda keys: {})
    if not per_category:
        return _select_shared(rows, objective, categories, sweep_id, runners_up, loader, alpha)
    return _select_per_category(rows, objective, categories, sweep_id, runners_up, loader, alpha)


def select_stored(
    store: StoreQueries,
    results: pd.DataFrame,
    objective: Objective,
    *,
    sweep_id: str,
    per_category: bool = True,
    runners_up: int = RUNNERS_UP,
    alpha: float = ALPHA,
) -> Selection:
    """`select` on `results` read from `store`, with the store's per-example indicators of the
    objective's estimator for the micro tests; options: per_category, runners_up, alpha."""

    def load_indicators(keys: list[str]) -> dict[str, np.ndarray]:
        return store.read_examples(keys, estimator=objective.estimator, sweep_id=sweep_id)

    return select(
        results,
        objective,
        sweep_id=sweep_id,
        load_indicators=load_indicators,
        per_category=per_category,
        runners_up=runners_up,
        alpha=alpha,
    )


def default_estimator(results: pd.DataFrame) -> str:
    """DEFAULT_ESTIMATOR when `results` hold its estimates, else the one every sweep computes (xa:
    sweeps run with span off)."""
    if results.empty:
        return DEFAULT_ESTIMATOR
    counts = estimator_counts(results, DEFAULT_ESTIMATOR)
    return DEFAULT_ESTIMATOR if counts["d_pos"].notna().any() else always_on()[0]


def candidate_rows(results: pd.DataFrame, objective: Objective, sweep_id: str) -> pd.DataFrame:
    """The rows at the objective's rho that have the objective's estimator; UserError if none."""
    if results.empty:
        raise UserError(f"no successful results stored for sweep {sweep_id!r}", parameter="sweep")
    rows = at_rho(results, objective.rho)
    if rows.empty:
        found = ", ".join(f"{r:g}" for r in sorted(results[ResultColumn.RHO].unique()))
        raise UserError(
            f"sweep {sweep_id!r} has no results at rho={objective.rho:g} (stored: {found})", parameter="rho"
        )
    counts = objective.counts(rows)
    has_estimate = counts[[ResultColumn.N, "d_pos", "d_neg"]].notna().all(axis=1).to_numpy()
    if not has_estimate.any():
        raise UserError(_not_computed(sweep_id, objective), parameter="estimator")
    return rows[has_estimate]


def _not_computed(sweep_id: str, objective: Objective) -> str:
    """Why sweep `sweep_id` has no estimates of the objective's estimator, and the spec key that
    turns it on (rho matters only to xi-alpha, computed at every rho)."""
    entry = estimator(objective.estimator)
    switch = entry.switch
    where = f" at rho={objective.rho:g}" if entry.per_rho else ""
    how = (
        f"set [estimators] {switch.key} in its spec and sweep again"
        if switch is not None
        else "sweep again with this version of xialpha"
    )
    return f"sweep {sweep_id!r} computed no {objective.estimator!r} estimates{where}; {how}"


def at_rho(results: pd.DataFrame, rho: float) -> pd.DataFrame:
    """The result rows at xi-alpha's `rho` (to RHO_ATOL; the other estimators repeat their values on
    every rho's row)."""
    return results[np.isclose(results[ResultColumn.RHO].astype(float), rho, rtol=0, atol=RHO_ATOL)]


def _select_per_category(
    rows: pd.DataFrame,
    objective: Objective,
    categories: list[str],
    sweep_id: str,
    runners_up: int,
    loader: IndicatorLoader,
    alpha: float,
) -> Selection:
    ranked = rank_rows_by_category(rows, objective)
    top = ranked.groupby(ResultColumn.CATEGORY, sort=False).head(1 + runners_up).reset_index(drop=True)
    indicators = loader(list(top[ResultColumn.CONFIG_KEY]))
    spans = _category_spans(top)
    as_objects = top.to_numpy(dtype=object)  # a row of it is the row's values as `top.iloc[row]` gives them
    columns = column_arrays(top)
    keys, values = top[ResultColumn.CONFIG_KEY].to_numpy(dtype=object), top["value"].to_numpy()
    choices = []
    for category in categories:
        first, end = spans.get(str(category), (0, 0))
        if first == end:  # no ranked row (every value NaN): as `frame.iloc[0]` of no rows did
            raise IndexError(f"category {category!r}: no ranked row")
        chosen = pd.Series(as_objects[first], index=top.columns, name=0, dtype=object)
        comparisons = [
            compare(
                [keys[first]],
                [keys[other]],
                [values[first]],
                [values[other]],
                indicators,
                maximise=objective.maximise,
                macro=False,
            )
            for other in range(first + 1, end)
        ]
        choices.append(CategoryChoice(category, chosen, (top, first + 1, end, columns), comparisons))
    n_candidates = int(ranked.groupby(ResultColumn.CATEGORY, sort=False).size().max())
    return Selection(sweep_id, objective, SelectionMode.CATEGORY, choices, None, n_candidates, alpha)


def column_arrays(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """{column: its values as a NumPy array} of `frame`."""
    return {str(name): frame[name].to_numpy() for name in frame.columns}


def _category_spans(top: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """{category: (first row, end row)} of `top`, whose rows of each category are contiguous."""
    names = top[ResultColumn.CATEGORY].astype(str).to_numpy(dtype=object)
    if not len(names):
        return {}
    starts = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
    ends = np.r_[starts[1:], len(names)]
    return {str(names[start]): (int(start), int(end)) for start, end in zip(starts, ends)}


def _select_shared(
    rows: pd.DataFrame,
    objective: Objective,
    categories: list[str],
    sweep_id: str,
    runners_up: int,
    loader: IndicatorLoader,
    alpha: float,
) -> Selection:
    groups = rank_shared(rows, objective, categories)
    if groups.empty:
        raise UserError(
            f"no configuration of sweep {sweep_id!r} has results in all {len(categories)} categories",
            parameter="per_category",
        )
    top = groups.head(1 + runners_up)
    by_key = rows.set_index(ResultColumn.CONFIG_KEY)
    values = pd.Series(objective.row_values(rows), index=rows[ResultColumn.CONFIG_KEY].to_numpy())
    values = values[~values.index.duplicated()]
    indicators = loader([key for group_keys in top["config_keys"] for key in group_keys])
    chosen_keys = list(top["config_keys"].iloc[0])
    comparisons = [
        compare(
            chosen_keys,
            list(other_keys),
            values[chosen_keys].to_numpy(),
            values[list(other_keys)].to_numpy(),
            indicators,
            maximise=objective.maximise,
            macro=True,
        )
        for other_keys in top["config_keys"].iloc[1:]
    ]
    row = _row_maker(by_key, values)
    other_groups = list(top["config_keys"].iloc[1:])
    group_values = list(top["selection_value"].iloc[1:].astype(float))
    # every category's runners-up in one frame, category after category (sliced per category when read)
    others = pd.DataFrame([row(keys[position]) for position in range(len(categories)) for keys in other_groups])
    columns = column_arrays(others)
    choices = []
    for position, category in enumerate(categories):
        first = position * len(other_groups)
        choices.append(
            CategoryChoice(
                category,
                row(chosen_keys[position]),
                (others, first, first + len(other_groups), columns) if other_groups else others,
                comparisons,
                group_values,
            )
        )
    shared = float(top["selection_value"].iloc[0])
    return Selection(sweep_id, objective, SelectionMode.GLOBAL, choices, shared, len(groups), alpha)


def _row_maker(by_key: pd.DataFrame, values: pd.Series) -> Callable[[str], pd.Series]:
    """row(key): the first result row of config `key` in `by_key` (indexed by config key) as a
    Series of objects, with its config_key first and its objective `values[key]` last."""
    positions: dict[str, int] = {}
    for position, key in enumerate(by_key.index):
        positions.setdefault(key, position)
    as_objects = by_key.to_numpy(dtype=object)
    index = pd.Index([ResultColumn.CONFIG_KEY, *by_key.columns, "value"], dtype=object)
    value_of = dict(zip(values.index, values.to_numpy()))

    def row(key: str) -> pd.Series:
        return pd.Series([key, *as_objects[positions[key]], float(value_of[key])], index=index, dtype=object)

    return row
