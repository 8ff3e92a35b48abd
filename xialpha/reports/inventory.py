"""What a store holds, one row per thing a person can name: sweeps, saved selections,
certifications and drift checks, with their ids (for `xialpha store ls`).

A listing is a list of rows, each a dict of Python values under the columns of its kind
(`COLUMNS`), read from the store's records without pandas: `store ls` starts in a fraction of
the time pandas takes to import. Rows of the generic datasets are typed by what was appended,
so every column but the id may be missing in an old or hand-written store; a missing one is
shown as missing (None), never an error.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from xialpha.estimators import DEFAULT_RHO
from xialpha.reports.formatting import missing
from xialpha.storage.schema import CertificationColumn, CertificationScope, DriftColumn, ResultColumn, SelectionColumn

if TYPE_CHECKING:
    import pandas as pd

S, R = SelectionColumn, CertificationColumn
Row = dict[str, Any]

KINDS = ("sweeps", "selections", "certifications", "drift")
COLUMNS = {  # per kind: the columns of its listing, id first
    "sweeps": [
        ResultColumn.SWEEP_ID,
        "runs",
        "categories",
        "configs",
        "rows_ok",
        "rows_failed",
        "rows_missing",  # of the rows its newest run planned (a sweep still running, or interrupted)
        "rows_planned",
        "last_created_at",
    ],
    "selections": [S.SELECTION_ID, S.SWEEP_ID, S.MODE, "objective", "categories", S.CREATED_AT],
    "certifications": [
        R.CERTIFICATION_ID,
        R.SELECTION_ID,
        R.TEST_SPLIT,
        R.INDEPENDENT,  # False: the sweep's held-out estimates were scored on the test split
        R.FORCED,  # True: certified with --force on a split certified before (the bounds are biased)
        R.N_TEST,
        "micro_f1",
        R.CREATED_AT,
    ],
    "drift": [
        ResultColumn.RUN_ID,
        ResultColumn.SWEEP_ID,
        DriftColumn.NEWEST_BATCH,
        "verdicts",
        ResultColumn.CREATED_AT,
    ],
}


def inventory(store) -> dict[str, list[Row]]:
    """{kind: its listing (rows of COLUMNS[kind]), oldest first} for every kind in KINDS."""
    return {
        "sweeps": _sweeps(store),
        "selections": _selections(store),
        "certifications": _certifications(store),
        "drift": _drift(store),
    }


def _sweeps(store) -> list[Row]:
    counts = sorted(store.sweep_counts(), key=lambda each: each.sweep_id)
    runs: dict[str, set] = {}
    for run in store.run_records():
        if run.get(ResultColumn.SWEEP_ID) is not None and run.get(ResultColumn.RUN_ID) is not None:
            runs.setdefault(run[ResultColumn.SWEEP_ID], set()).add(run[ResultColumn.RUN_ID])
    listing = []
    for each in counts:
        gap = _missing_rows(store, each.sweep_id) if each.sweep_id in runs else None
        listing.append(
            {
                ResultColumn.SWEEP_ID: each.sweep_id,
                "runs": len(runs.get(each.sweep_id, ())),
                "categories": each.categories,
                "configs": each.configs,
                "rows_ok": each.rows_ok,
                "rows_failed": each.rows_failed,
                "rows_missing": None if gap is None else gap[0],
                "rows_planned": None if gap is None else gap[1],
                "last_created_at": _time(each.last_created_at),
            }
        )
    return listing


def _missing_rows(store, sweep_id: str) -> tuple[int, int] | None:
    """`xialpha.planning.experiment.missing_rows` for a listing, imported for sweeps with a recorded
    run only: it parses the recorded spec, which a store of rows alone does not need."""
    from xialpha.planning.experiment import missing_rows

    return missing_rows(store, sweep_id, listing=True)


def _time(text: str | None) -> datetime.datetime | None:
    return None if text is None else datetime.datetime.fromisoformat(text)


def incomplete_notes(sweeps: Iterable[Row]) -> list[str]:
    """A line per sweep of a `sweeps` listing that misses rows its newest run planned."""
    return [
        f"sweep {row[ResultColumn.SWEEP_ID]}: {int(row['rows_missing'])} of {int(row['rows_planned'])} rows missing "
        "(still running, or interrupted): run it again to finish"
        for row in sweeps
        if row["rows_missing"] is not None and row["rows_missing"] > 0
    ]


def _first_per(rows: Sequence[Row], key: str) -> list[Row]:
    """One row per `key` (its first row), with the number of rows as `rows`, oldest first (rows
    without `created_at` last), then by `key`."""
    sizes = Counter(row[key] for row in rows)
    first: dict[object, Row] = {}
    for row in rows:
        first.setdefault(row[key], {**row, "rows": sizes[row[key]]})
    by_time = ResultColumn.CREATED_AT in rows[0]
    return sorted(
        first.values(),
        key=lambda row: (
            (row[ResultColumn.CREATED_AT] is None, row[ResultColumn.CREATED_AT] or 0) if by_time else (),
            row[key],
        ),
    )


def _selections(store) -> list[Row]:
    rows = store.selection_records()
    if not rows:
        return []
    first = _first_per(rows, S.SELECTION_ID)
    for row in first:
        row["objective"] = _objective(row)
        row["categories"] = row["rows"]
    return _with_columns(first, "selections")


def _objective(row: Row) -> str | None:
    """e.g. "f1 of span" (at rho 2: "f1 of xa rho=2")."""
    metric, estimator, rho = row.get(S.METRIC), row.get(S.ESTIMATOR), row.get(S.RHO)
    if not isinstance(metric, str) or not isinstance(estimator, str):
        return None
    rho_text = "" if missing(rho) or float(rho) == DEFAULT_RHO else f" rho={float(rho):g}"
    return f"{metric} of {estimator}{rho_text}"


def _certifications(store) -> list[Row]:
    rows = store.certification_records()
    if not rows:
        return []
    first = _first_per(rows, R.CERTIFICATION_ID)
    micro = {row[R.CERTIFICATION_ID]: row.get(R.F1) for row in rows if row.get(R.SCOPE) == CertificationScope.MICRO}
    for row in first:
        row["micro_f1"] = micro.get(row[R.CERTIFICATION_ID])
    return _with_columns(first, "certifications")


def _drift(store) -> list[Row]:
    """One row per drift check run (its run_id, as `xialpha drift` prints it): the drift id, the
    newest batch and how many config x category groups got each verdict."""
    rows = store.drift_records()
    if not rows:
        return []
    for row in rows:
        if row.get(ResultColumn.RUN_ID) is None:
            row[ResultColumn.RUN_ID] = row[DriftColumn.CHECK_ID]
    groups = [
        c
        for c in (
            ResultColumn.CATEGORY,
            ResultColumn.PREPROCESSING_ID,
            ResultColumn.KERNEL_ID,
            ResultColumn.C,
            ResultColumn.J,
        )
        if c in rows[0]
    ]
    first = _first_per(rows, ResultColumn.RUN_ID)
    verdicts: dict[object, Counter] = {row[ResultColumn.RUN_ID]: Counter() for row in first}
    seen = set()
    for row in rows:  # one verdict per config x category group of each run (its first row)
        group = (row[ResultColumn.RUN_ID], *(row[c] for c in groups)) if groups else id(row)
        if group not in seen and row.get(DriftColumn.VERDICT) is not None:
            verdicts[row[ResultColumn.RUN_ID]][row[DriftColumn.VERDICT]] += 1
        seen.add(group)
    for row in first:
        counts = verdicts[row[ResultColumn.RUN_ID]]
        row["verdicts"] = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items())) or None
    return _with_columns(first, "drift")


def _with_columns(rows: list[Row], kind: str) -> list[Row]:
    return [{name: row.get(name) for name in COLUMNS[kind]} for row in rows]


def certifications_of(store, selection_id: str) -> pd.DataFrame:
    """Every stored certification row of a selection, oldest certification first, each with its
    categories, then "(micro)" and "(macro)"; empty when it was never certified."""
    import pandas as pd  # here: `xialpha store ls` lists the certifications without pandas

    frame = store.certifications(selection_id=selection_id)
    if frame.empty:
        return pd.DataFrame()
    frame["_scope"] = (
        frame[R.SCOPE].map({scope: i for i, scope in enumerate(CertificationScope)}) if R.SCOPE in frame else 0
    )
    frame = frame.sort_values([R.CREATED_AT, R.CERTIFICATION_ID, "_scope", R.CATEGORY], kind="mergesort")
    return frame.drop(columns="_scope").reset_index(drop=True)
