"""Saved selections: whether a Selection still needs storing, and reading stored ones back.

One function per question: whether a selection's rows still need storing (`rows_to_save`), the id
of a stored selection that is the same (`same_selection_id`), what a selection is as a digest
(`selection_digest`, which a save claims its id by), a stored selection by id
(`read_selection`), the newest of a sweep (`newest_selection`), the id of the store's newest
(`newest_selection_id`). A stored selection is read back as the `Selection` that was stored (its
rows; `xialpha.storage.selection_rows.SelectionRow` is one of them as the store takes it).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import pandas as pd

from xialpha.errors import UserError, did_you_mean
from xialpha.selection.selected import Selection
from xialpha.storage.schema import SelectionColumn, SelectionMode

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries

S = SelectionColumn
# What makes two stored selections the same: objective, choices and the values they were chosen by.
SAME_SELECTION = (
    S.CATEGORY,
    S.MODE,
    S.METRIC,
    S.ESTIMATOR,
    S.RHO,
    S.AVERAGE,
    S.SMOOTH_C,
    S.COST_FN,
    S.COST_FP,
    S.ALPHA,
    S.CONFIG_KEY,
    S.VALUE,
    S.RUNNER_UP_CONFIG_KEY,
    S.N_RUNNERS_UP,
)
NEWEST = [S.CREATED_AT, S.SELECTION_ID]  # the order in which selections were made


def rows_to_save(store: StoreQueries, selection: Selection, save: bool) -> tuple[Selection, bool]:
    """`selection` and whether it still needs storing: under its new id; with `save`, under the
    id of a stored selection that is the same (SAME_SELECTION) if there is one, so that saving a
    selection twice (`select --save`, then `select --refit`) keeps one id, the one its
    certifications and reports name."""
    if not save:
        return selection, False
    same = same_selection_id(store, selection.rows)
    return (selection, True) if same is None else (selection.with_id(same), False)


def selection_digest(selection: Selection) -> str:
    """What `selection` is (its sweep and SAME_SELECTION), as 48 hex digits: equal for the same
    selection made twice, whatever its id and the time it was made."""
    what = f"{selection.sweep_id}\n{_comparable(selection.rows).to_numpy().tolist()!r}"
    return hashlib.sha256(what.encode("utf-8")).hexdigest()[:48]


def same_selection_id(store: StoreQueries, frame: pd.DataFrame) -> str | None:
    """The id of a stored selection that is the same (SAME_SELECTION) as the selection rows
    `frame` (a `Selection`'s rows), or None."""
    stored = store.selections(sweep_id=str(frame[S.SWEEP_ID].iloc[0]))
    mine = _comparable(frame)
    for selection_id, theirs in [] if stored.empty else stored.groupby(S.SELECTION_ID, sort=False):
        if _comparable(theirs).equals(mine):
            return str(selection_id)
    return None


def _comparable(rows: pd.DataFrame) -> pd.DataFrame:
    """SAME_SELECTION of `rows` by category (a column stored selections predate, smooth_c, is null)."""
    return rows.sort_values(S.CATEGORY).reindex(columns=list(SAME_SELECTION)).reset_index(drop=True)


def read_selection(store: StoreQueries, selection_id: str, sweep_id: str | None = None) -> Selection:
    """Saved selection `selection_id` (of `sweep_id`, when given); UserError naming the saved ones,
    and saying how to save one, when it is not stored."""
    rows = store.selections(selection_id=selection_id)
    if rows.empty:
        stored = store.selections()
        known = [] if stored.empty else sorted(set(stored[S.SELECTION_ID]), reverse=True)
        raise UserError(
            f"no selection {selection_id!r} in store {store.uri}"
            f"{did_you_mean(selection_id, known, listing='newest stored')}; run `xialpha select --save` to store "
            "one and print its id (`select` without --save stores nothing; `xialpha store ls` lists the stored)",
            parameter="selection",
        )
    if sweep_id is not None and str(rows[S.SWEEP_ID].iloc[0]) != sweep_id:
        raise UserError(
            f"{selection_id} is a selection of sweep {rows[S.SWEEP_ID].iloc[0]!r}, not of {sweep_id!r}",
            parameter="selection",
        )
    return _selection(rows)


def newest_selection(
    store: StoreQueries, sweep_id: str, mode: SelectionMode = SelectionMode.CATEGORY
) -> Selection | None:
    """The newest saved selection of `sweep_id` made in `mode` (one configuration per category, or
    one shared by all); None when there is none (a row without a mode, hand-written, is of none)."""
    frame = store.selections(sweep_id=sweep_id)
    if frame.empty or S.MODE not in frame:
        return None
    frame = frame[frame[S.MODE] == mode]
    if frame.empty:
        return None
    newest = frame.sort_values(NEWEST, kind="mergesort")[S.SELECTION_ID].iloc[-1]
    return _selection(frame[frame[S.SELECTION_ID] == newest])


def newest_selection_id(store: StoreQueries) -> str | None:
    """The id of the newest saved selection of any sweep in the store (by created_at), None when none is saved."""
    frame = store.selections()
    if frame.empty:
        return None
    return str(frame.sort_values(NEWEST, kind="mergesort")[S.SELECTION_ID].iloc[-1])


def _selection(rows: pd.DataFrame) -> Selection:
    """The Selection of one stored selection's rows, sorted by category."""
    return Selection(rows.sort_values(S.CATEGORY).reset_index(drop=True))
