"""A selection: what was chosen per category, in the one shape that `select` makes and that storing,
reports, compare and the C ladder read.

`Selection.rows` holds one row per category, sorted by category, in the "selections" columns
(`SelectionColumn`; typed as the store gives them back, `xialpha.storage.selection_rows.selection_frame`):
the objective, the chosen configuration and its estimates, its first runner-up and what the
significance tests found. A selection made now also holds every runner-up compared
(`runners_up`); one read back from the store holds the first one only, in its rows. Stored, each
row is a typed `xialpha.storage.selection_rows.SelectionRow` (`typed_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from xialpha.errors import UserError
from xialpha.selection.objective import Objective
from xialpha.storage.arrow_schema import SELECTION_COLUMNS
from xialpha.storage.schema import ResultColumn, SelectionColumn, SelectionMode
from xialpha.storage.selection_rows import SelectionRow, selection_row
from xialpha.storage.validate import missing_columns

S = SelectionColumn
RUNNER_UP_RANK = "runner_up"  # a runner-up's place: 1 for the first, 2 for the next, ...


@dataclass(frozen=True, eq=False)
class Selection:
    """One row per category (`rows`, sorted by category: SELECTION_COLUMNS) and, for a selection
    made now, every runner-up compared (`runners_up`: category, RUNNER_UP_RANK, the results
    columns of its configuration, value, selection_value, the P_VALUES against the choice and
    `significant`; empty for one read back from the store)."""

    rows: pd.DataFrame
    runners_up: pd.DataFrame = field(default_factory=pd.DataFrame)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> Selection:
        """The selection of `frame`: its SELECTION_COLUMNS (a DataFrame `xialpha.select` returned,
        or rows the store gave back); UserError naming the columns it lacks, or when it is empty."""
        missing = missing_columns("selections", frame.columns)
        if missing:
            raise UserError(
                f"not a selection select() returned: it has no column(s) {', '.join(map(repr, missing))}",
                parameter="selection",
            )
        if frame.empty:
            raise UserError("is empty", parameter="selection")
        columns = [column for column in frame.columns if column not in _shown_only(frame)]
        return cls(frame[columns].sort_values(S.CATEGORY, kind="mergesort").reset_index(drop=True))

    @property
    def selection_id(self) -> str:
        return str(self.rows[S.SELECTION_ID].iloc[0])

    @property
    def sweep_id(self) -> str:
        return str(self.rows[S.SWEEP_ID].iloc[0])

    @property
    def data_fingerprints(self) -> list[str]:
        """The fingerprints of the training data its choices were trained on (one, for one sweep)."""
        return [str(fingerprint) for fingerprint in self.rows[ResultColumn.DATA_FINGERPRINT].unique()]

    @property
    def categories(self) -> list[str]:
        """Its categories, sorted."""
        return [str(category) for category in self.rows[S.CATEGORY]]

    def config_keys(self) -> dict[str, str]:
        """{category: the config_key of its choice}."""
        return dict(zip(self.categories, map(str, self.rows[S.CONFIG_KEY])))

    @property
    def mode(self) -> SelectionMode:
        return SelectionMode(self.rows[S.MODE].iloc[0])

    @property
    def objective(self) -> Objective:
        """The objective the selection was made by."""
        return Objective.of_selection(self.rows.iloc[0])

    def with_id(self, selection_id: str) -> Selection:
        """The same selection under `selection_id`."""
        return Selection(self.rows.assign(**{S.SELECTION_ID: selection_id}), self.runners_up)

    def typed_rows(self) -> list[SelectionRow]:
        """Its rows as the store takes them, one per category."""
        return [selection_row(record) for record in self.rows.to_dict("records")]

    def runners_up_of(self, category: str) -> pd.DataFrame:
        """The runners-up of `category` compared, best first, indexed from 0 (empty when none, or
        when the selection was read back from the store)."""
        if self.runners_up.empty:
            return self.runners_up
        found = self.runners_up[self.runners_up[S.CATEGORY] == category]
        return found.sort_values(RUNNER_UP_RANK, kind="mergesort").reset_index(drop=True)


def _shown_only(frame: pd.DataFrame) -> set[str]:
    """The columns of `frame` that are not the store's (labels, verdicts, grid edges: what
    `xialpha.reports.frames.tidy_selection` adds to show a selection)."""
    stored = {column.name for column in SELECTION_COLUMNS}
    return {column for column in frame.columns if column not in stored}
