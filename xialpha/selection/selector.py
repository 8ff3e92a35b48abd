"""Choosing configurations from a sweep's results: per category, or one shared by all.

Per category (default): each category gets the result row that optimises the objective; its
runners-up are the next rows of the same category, compared with micro tests on that
category's examples. Macro tests are not run here: the per-category choice beats each
runner-up in every category by construction, so they would only measure the selection.

Global: one shared configuration (preprocessing, kernel, C, j) for every category, optimising
the macro or micro average; runners-up are the next shared configurations, compared with
the pooled micro tests and the macro S- and T-tests over categories (Yang & Liu 1999).

Every category is chosen at once, as columns: one `rank` of all candidates, the micro tests of
every (choice, runner-up) pair from their stacked indicators (`micro_p_values`), and the
selection's rows built column by column (`xialpha.storage.selection_rows.selection_frame`). A runner-up no
test could separate from the choice (its per-example vectors are not stored, or lost) is counted
as untested, never as significantly worse, and the rows say why (`untested`).
"""

from __future__ import annotations

import datetime
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators.registry import always_on, estimator
from xialpha.parameters import Interval
from xialpha.selection.objective import (
    DEFAULT_ESTIMATOR,
    SELECTABLE_ESTIMATOR,
    Objective,
    estimator_counts,
    stored_values,
)
from xialpha.selection.ranking import (
    BOUNDED,
    KEY,
    PLACE,
    ROW,
    SELECTION_VALUE,
    SELECTION_WORST,
    SHARED_CONFIG,
    SUPPORT_VECTORS,
    VALUE,
    best_first,
    rank,
    result_candidates,
)
from xialpha.selection.selected import RUNNER_UP_RANK, Selection
from xialpha.selection.significance import ALPHA, compare, micro_p_values
from xialpha.selection.smoothing import VALUE_DECIMALS
from xialpha.storage.arrow_schema import CONFIG_COLUMNS
from xialpha.storage.schema import (
    COUNTS,
    METRICS,
    P_VALUES,
    RUNNER_UP,
    SELECTION_ESTIMATES,
    ResultColumn,
    SelectionColumn,
    SelectionMode,
)
from xialpha.storage.selection_rows import selection_frame
from xialpha.version import __version__

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries

S = SelectionColumn
RUNNERS_UP = 3
RUNNER_UP_COUNT = Interval(0, None, integer=True)  # how many runners-up to test: >= 0
RHO_ATOL = 1e-9
NO_RUNNER_UP = "no runner-up to test against"
NO_VECTORS = "no per-example vectors were given"
UNEQUAL_VECTORS = "the per-example vectors of the choice and its runner-up differ in length"

IndicatorLoader = Callable[[list[str]], Mapping[str, np.ndarray]]
# why_untested(keys): why the per-example vectors of the config `keys` are missing, in a phrase
Explainer = Callable[[list[str]], str]


def new_selection_id() -> str:
    """A fresh id: sel-<UTC time>-<6 hex>, safe as a file name part."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    return f"sel-{now}-{secrets.token_hex(3)}"


def select(
    results: pd.DataFrame,
    objective: Objective,
    *,
    sweep_id: str,
    per_category: bool = True,
    runners_up: int = RUNNERS_UP,
    load_indicators: IndicatorLoader | None = None,
    why_untested: Explainer | None = None,
    alpha: float = ALPHA,
) -> Selection:
    """Select from `results` (the "ok" result rows of one sweep): per category, or
    (per_category=False) one configuration shared by every category; the Selection under a new id.

    load_indicators(config_keys) returns the stored per-example indicators of the objective's
    estimator (absent keys: micro tests are skipped); None skips all micro tests.
    why_untested(config_keys) says why the indicators of `config_keys` are missing (default: they
    were not given).
    """
    RUNNER_UP_COUNT("runners_up", runners_up)
    SELECTABLE_ESTIMATOR("estimator", objective.estimator)
    rows = candidate_rows(results, objective, sweep_id)
    loader = load_indicators or (lambda keys: {})
    explain = why_untested or (lambda keys: NO_VECTORS)
    choose = _select_per_category if per_category else _select_shared
    columns, runners, n = choose(rows, objective, sweep_id, runners_up, loader, explain, alpha)
    mode = SelectionMode.CATEGORY if per_category else SelectionMode.GLOBAL
    columns.update(
        {
            S.SELECTION_ID: [new_selection_id()] * n,
            S.SWEEP_ID: [sweep_id] * n,
            S.MODE: [str(mode)] * n,
            S.METRIC: [objective.metric] * n,
            S.ESTIMATOR: [objective.estimator] * n,
            S.RHO: np.full(n, objective.rho),
            S.AVERAGE: [objective.average if mode == SelectionMode.GLOBAL else None] * n,
            S.SMOOTH_C: [objective.smooth] * n,
            S.COST_FN: np.full(n, objective.cost_fn),
            S.COST_FP: np.full(n, objective.cost_fp),
            S.ALPHA: np.full(n, alpha),
            S.XIALPHA_VERSION: [__version__] * n,
            S.CREATED_AT: [datetime.datetime.now(datetime.UTC)] * n,
        }
    )
    return Selection(selection_frame(columns, n), runners)


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
    objective's estimator for the micro tests (and, where some are missing, the store says why:
    `missing_vectors`); options: per_category, runners_up, alpha."""

    def load_indicators(keys: list[str]) -> Mapping[str, np.ndarray]:
        return store.read_examples(keys, estimator=objective.estimator, sweep_id=sweep_id)

    return select(
        results,
        objective,
        sweep_id=sweep_id,
        load_indicators=load_indicators,
        why_untested=lambda keys: missing_vectors(store, sweep_id, objective.estimator, keys),
        per_category=per_category,
        runners_up=runners_up,
        alpha=alpha,
    )


def missing_vectors(store: StoreQueries, sweep_id: str, estimator_name: str, keys: list[str]) -> str:
    """Why the store holds no per-example vectors of `estimator_name` for the configs `keys` of
    sweep `sweep_id`: the estimator stores none (the sweep's always-on estimator has them), or the
    sweep's examples are missing (lost, or moved aside by `xialpha store check --quarantine`)."""
    other = always_on()[0]
    if estimator_name != other and store.read_examples(keys[:1], estimator=other, sweep_id=sweep_id):
        return f"the {estimator_name} estimator stores no per-example vectors (span and xa do: select by one to test)"
    return (
        f"the per-example vectors of {len(keys)} configuration(s) are missing from the store "
        "(lost, or moved aside by `xialpha store check --quarantine`)"
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
    at = rho_mask(results, objective.rho)
    if not at.any():
        found = ", ".join(f"{r:g}" for r in sorted(results[ResultColumn.RHO].unique()))
        raise UserError(
            f"sweep {sweep_id!r} has no results at rho={objective.rho:g} (stored: {found})", parameter="rho"
        )
    counts = objective.counts(results)
    has_estimate = at & counts[[ResultColumn.N, "d_pos", "d_neg"]].notna().all(axis=1).to_numpy()
    has_estimate |= at & objective.value_bounds(results)[2]  # decided by bounds: a candidate all the same
    if not has_estimate.any():
        raise UserError(_not_computed(sweep_id, objective), parameter="estimator")
    return results if has_estimate.all() else results[has_estimate]  # at most one copy of the rows


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
    every rho's row): `results` itself when every row is (a sweep of one rho: no copy), so callers
    do not change what they get."""
    at = rho_mask(results, rho)
    return results if at.all() else results[at]


def rho_mask(results: pd.DataFrame, rho: float) -> np.ndarray:
    """(rows,) whether each result row is at xi-alpha's `rho` (to RHO_ATOL)."""
    return np.isclose(results[ResultColumn.RHO].astype(float), rho, rtol=0, atol=RHO_ATOL)


Chosen = tuple[dict[str, object], pd.DataFrame, int]  # selection columns, runners-up, categories


def _select_per_category(
    rows: pd.DataFrame,
    objective: Objective,
    sweep_id: str,
    runners_up: int,
    loader: IndicatorLoader,
    explain: Explainer,
    alpha: float,
) -> Chosen:
    ranked = best_first(result_candidates(rows, objective), objective, (ResultColumn.CATEGORY,))
    if BOUNDED in ranked:
        _check_bounded(ranked, objective, runners_up + 1, sweep_id)
    kept = ranked[ranked[PLACE] <= runners_up]
    top = rows.iloc[kept[ROW].to_numpy()].reset_index(drop=True)
    top[VALUE] = kept[VALUE].to_numpy()
    top[SELECTION_VALUE] = kept[SELECTION_VALUE].to_numpy()
    top_place = kept[PLACE].to_numpy()
    chosen_at = np.flatnonzero(top_place == 0)
    others_at = np.flatnonzero(top_place > 0)
    keys = top[ResultColumn.CONFIG_KEY].to_numpy(dtype=object)
    choice_of = np.cumsum(top_place == 0) - 1  # each top row's choice (its category's first row)
    indicators = loader(list(keys))
    tests = micro_p_values(keys[chosen_at[choice_of[others_at]]], keys[others_at], indicators)
    runners = _runners_up(top.iloc[others_at], top_place[others_at], tests, alpha)
    pair_keys = (keys[chosen_at[choice_of[others_at]]], keys[others_at])
    untested = _untested(runners[S.SIGNIFICANT], choice_of[others_at], len(chosen_at), pair_keys, indicators, explain)
    chosen = top.iloc[chosen_at].reset_index(drop=True)
    columns = _chosen_columns(chosen, objective, chosen[SELECTION_VALUE].to_numpy(dtype=float))
    columns.update(_significance(runners, choice_of[others_at], len(chosen_at), untested))
    columns[S.N_CANDIDATES] = np.full(len(chosen_at), int(ranked[PLACE].max()) + 1 if len(ranked) else 0)
    return columns, runners, len(chosen_at)


def _check_bounded(ranked: pd.DataFrame, objective: Objective, places: int, sweep_id: str) -> None:
    """UserError unless the first `places` candidates of each category (`best_first`'s ranking, with
    BOUNDED and SELECTION_WORST) are what the full computation ranks first: each has an exact estimate
    and a known selection value, and every candidate whose value is only bounded is ranked below them
    whatever its value (its best selection value is worse than theirs)."""
    sign = 1.0 if objective.maximise else -1.0
    best = np.round(sign * ranked[SELECTION_VALUE].to_numpy(dtype=float), VALUE_DECIMALS)
    worst = np.round(sign * ranked[SELECTION_WORST].to_numpy(dtype=float), VALUE_DECIMALS)
    uncertain = ranked[BOUNDED].to_numpy(dtype=bool) | (best != worst)
    top = ranked[PLACE].to_numpy() < places
    category = ranked[ResultColumn.CATEGORY].to_numpy(dtype=object)
    last_top = pd.Series(np.where(top, best, np.inf)).groupby(category).transform("min").to_numpy()
    reaching = uncertain & (top | (best >= last_top))
    if reaching.any():
        raise UserError(
            f"sweep {sweep_id!r} decided the span estimates of {int(ranked[BOUNDED].sum())} configuration(s) "
            f"by bounds ([estimators] span_prune), which leave {int(reaching.sum())} candidate(s) that could "
            f"change this selection (metric {objective.metric}, {places - 1} runners-up); select per category "
            f"by the metric it names with at most {RUNNERS_UP} runners-up, or by another estimator, or sweep "
            'again with span_prune = "off"',
            parameter=("metric", "runners_up"),
        )


def _chosen_columns(chosen: pd.DataFrame, objective: Objective, selection_values: np.ndarray) -> dict[str, object]:
    """The selection columns of the chosen result rows (`chosen`, one per category, ranked: with
    VALUE): category, value, selection_value, CONFIG_COLUMNS and the estimates."""
    counts = objective.counts(chosen)
    return {
        S.CATEGORY: chosen[ResultColumn.CATEGORY].to_numpy(dtype=object),
        S.VALUE: chosen[VALUE].to_numpy(dtype=float),
        S.SELECTION_VALUE: selection_values,
        **{name: chosen[name].to_numpy(dtype=object) for name in CONFIG_COLUMNS if name in chosen},
        **{SELECTION_ESTIMATES[m]: stored_values(chosen, objective.estimator, m) for m in METRICS},
        **{SELECTION_ESTIMATES[name]: counts[name].to_numpy(dtype=float) for name in COUNTS},
    }


def _runners_up(
    others: pd.DataFrame, place: np.ndarray, p_values: Mapping[str, np.ndarray], alpha: float
) -> pd.DataFrame:
    """The runners-up (`others`: ranked candidate rows, their `place` 1, 2, ...) with the P_VALUES
    of their tests against their choice and `significant` (a test rejects at `alpha`; None when no
    test ran)."""
    frame = others.reset_index(drop=True).assign(**{RUNNER_UP_RANK: place})
    for name in P_VALUES:
        frame[name] = p_values.get(name, np.full(len(frame), np.nan))
    smallest = frame[list(P_VALUES)].min(axis=1, skipna=True).to_numpy(dtype=float)
    frame[S.SIGNIFICANT] = pd.array([None if np.isnan(p) else bool(p < alpha) for p in smallest], dtype="boolean")
    return frame


def _untested(
    significant: pd.Series,
    choice: np.ndarray,
    n_choices: int,
    pair_keys: tuple[np.ndarray, np.ndarray],
    indicators: Mapping[str, np.ndarray],
    explain: Explainer,
) -> list[str | None]:
    """Per choice, why some of its runners-up went untested (None when each was tested): it has
    no runner-up, or the missing per-example vectors (`explain`ed) of the configurations of its
    untested pairs (`pair_keys`: the choice's and the runner-up's key of each pair)."""
    reasons: list[str | None] = [NO_RUNNER_UP] * n_choices
    for index in np.unique(choice):
        reasons[index] = None
    untested = significant.isna().to_numpy()
    if untested.any():
        keys = {str(key) for side in pair_keys for key in side[untested]}
        missing = sorted(key for key in keys if key not in indicators)
        reason = explain(missing) if missing else UNEQUAL_VECTORS
        for index in np.unique(choice[untested]):
            reasons[index] = reason
    return reasons


def _significance(
    runners: pd.DataFrame,
    choice: np.ndarray,
    n_choices: int,
    untested: list[str | None],
) -> dict[str, object]:
    """The first runner-up's and the significance columns of each choice, from its `runners`
    (ranked, with P_VALUES and `significant`; `choice`: the choice each is of)."""
    significant = runners[S.SIGNIFICANT]
    tested = significant.notna().to_numpy()
    n_runners_up = np.bincount(choice, minlength=n_choices)
    n_tested = np.bincount(choice[tested], minlength=n_choices)
    n_significant = np.bincount(choice[tested & significant.fillna(False).to_numpy(dtype=bool)], minlength=n_choices)
    firsts = np.full(n_choices, -1)
    firsts[choice[::-1]] = np.arange(len(choice))[::-1]  # each choice's first runner-up (they are ranked)
    has_first = firsts >= 0
    columns: dict[str, object] = {}
    for column, source in RUNNER_UP.items():
        values = runners[source].to_numpy(dtype=object) if source in runners else np.full(len(runners), None)
        columns[column] = np.where(has_first, values[np.maximum(firsts, 0)] if len(values) else None, None)
    for name in P_VALUES:
        values = runners[name].to_numpy(dtype=float)
        columns[name] = np.where(has_first, values[np.maximum(firsts, 0)] if len(values) else np.nan, np.nan)
    flags = significant.to_numpy(dtype=object, na_value=None)
    columns[S.SIGNIFICANT] = np.where(has_first, flags[np.maximum(firsts, 0)] if len(flags) else None, None)
    columns[S.N_RUNNERS_UP] = n_runners_up
    columns[S.N_RUNNERS_UP_TESTED] = n_tested
    columns[S.N_RUNNERS_UP_SIGNIFICANT] = [int(k) if n else None for k, n in zip(n_significant, n_tested)]
    columns[S.UNTESTED] = untested
    return columns


def _select_shared(
    rows: pd.DataFrame,
    objective: Objective,
    sweep_id: str,
    runners_up: int,
    loader: IndicatorLoader,
    explain: Explainer,
    alpha: float,
) -> Chosen:
    categories = sorted(rows[ResultColumn.CATEGORY].unique())
    bounded = objective.value_bounds(rows)[2]
    if bounded.any():
        raise UserError(
            f"sweep {sweep_id!r} decided the span estimates of {int(bounded.sum())} configuration(s) by bounds "
            "([estimators] span_prune): a selection shared by every category needs them all; select per "
            'category, or by another estimator, or sweep again with span_prune = "off"',
            parameter="per_category",
        )
    groups = rank(_shared_candidates(rows, objective, categories), objective)
    if groups.empty:
        raise UserError(
            f"no configuration of sweep {sweep_id!r} has results in all {len(categories)} categories",
            parameter="per_category",
        )
    top = groups.head(1 + runners_up)
    first_rows = rows.drop_duplicates(ResultColumn.CONFIG_KEY).set_index(ResultColumn.CONFIG_KEY, drop=False)
    values = pd.Series(objective.row_values(first_rows), index=first_rows.index)
    group_keys = [list(keys) for keys in top["config_keys"]]
    indicators = loader([key for keys in group_keys for key in keys])
    comparisons = [
        compare(
            group_keys[0],
            keys,
            values[group_keys[0]].to_numpy(),
            values[keys].to_numpy(),
            indicators,
            maximise=objective.maximise,
            macro=True,
        )
        for keys in group_keys[1:]
    ]
    n = len(categories)
    chosen = first_rows.loc[group_keys[0]].reset_index(drop=True).assign(**{VALUE: values[group_keys[0]].to_numpy()})
    global_value = float(top[SELECTION_VALUE].iloc[0])
    columns = _chosen_columns(chosen, objective, np.full(n, global_value))
    # every category's runners-up, category by category, best first
    others = [
        first_rows.loc[keys]
        .reset_index(drop=True)
        .assign(**{VALUE: values[keys].to_numpy(), SELECTION_VALUE: float(group_value)})
        for keys, group_value in zip(group_keys[1:], top[SELECTION_VALUE].iloc[1:])
    ]
    k = len(others)
    order = np.arange(n * k).reshape(k, n).T.ravel()  # runner-up r of category c at c * k + r
    stacked = pd.concat(others, ignore_index=True).iloc[order] if others else first_rows.iloc[:0]
    tests: dict[str, np.ndarray] = {
        name: np.repeat([[c.p_values()[name] for c in comparisons]], n, axis=0).ravel() for name in P_VALUES
    }
    runners = _runners_up(stacked, np.tile(np.arange(1, k + 1), n), tests, alpha)
    choice = np.repeat(np.arange(n), k)
    pair_keys = (
        np.asarray(group_keys[0], dtype=object)[choice],
        runners[ResultColumn.CONFIG_KEY].to_numpy(dtype=object),
    )
    untested = _untested(runners[S.SIGNIFICANT], choice, n, pair_keys, indicators, explain)
    columns.update(_significance(runners, choice, n, untested))
    columns[S.N_CANDIDATES] = np.full(n, len(groups))
    return columns, runners, n


def _shared_candidates(rows: pd.DataFrame, objective: Objective, categories: list[str]) -> pd.DataFrame:
    """One candidate per shared configuration present in all `categories`: SHARED_CONFIG, VALUE
    (the macro or micro average), SUPPORT_VECTORS (summed over the categories), config_keys (a tuple
    of the per-category config keys in `categories` order) and KEY (a stable config label)."""
    counts = objective.counts(rows)
    counts[VALUE] = objective.row_values(rows)
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
                VALUE: objective.average_value(by_category),
                SUPPORT_VECTORS: by_category[ResultColumn.N_SV].sum(min_count=len(wanted)),
                "config_keys": tuple(by_category[ResultColumn.CONFIG_KEY]),
                KEY: "|".join(str(part) for part in key),
            }
        )
    return pd.DataFrame(groups, columns=[*SHARED_CONFIG, VALUE, SUPPORT_VECTORS, "config_keys", KEY])
