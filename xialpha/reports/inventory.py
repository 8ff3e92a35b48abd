"""What a store holds, one row per thing a person can name: sweeps, saved selections,
certifications and drift checks, with their ids (for `xialpha store ls`).

Rows of the generic datasets are typed by what was appended, so every column but the id may be
missing in an old or hand-written store; a missing one is shown as missing, never an error.
"""

from __future__ import annotations

import pandas as pd

from xialpha.planning.experiment import missing_rows
from xialpha.storage.schema import CertificationColumn, CertificationScope, ResultColumn, SelectionColumn

S, R = SelectionColumn, CertificationColumn

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
        R.N_TEST,
        "micro_f1",
        R.CREATED_AT,
    ],
    "drift": [ResultColumn.RUN_ID, ResultColumn.SWEEP_ID, "newest_batch", "verdicts", ResultColumn.CREATED_AT],
}


def inventory(store) -> dict[str, pd.DataFrame]:
    """{kind: its listing (COLUMNS[kind]), oldest first} for every kind in KINDS."""
    return {
        "sweeps": _sweeps(store),
        "selections": _selections(store),
        "certifications": _certifications(store),
        "drift": _drift(store),
    }


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame else pd.Series([None] * len(frame), index=frame.index, dtype=object)


def _sweeps(store) -> pd.DataFrame:
    sweeps = store.sweeps()
    runs = store.runs()
    counts = (
        runs.groupby(ResultColumn.SWEEP_ID)[ResultColumn.RUN_ID].nunique()
        if {ResultColumn.SWEEP_ID, ResultColumn.RUN_ID} <= set(runs)
        else pd.Series(dtype=int)
    )
    sweeps["runs"] = [int(counts.get(s, 0)) for s in sweeps[ResultColumn.SWEEP_ID]]
    missing = [missing_rows(store, sweep_id) for sweep_id in sweeps[ResultColumn.SWEEP_ID]]
    sweeps["rows_missing"] = [None if m is None else m[0] for m in missing]
    sweeps["rows_planned"] = [None if m is None else m[1] for m in missing]
    return sweeps[COLUMNS["sweeps"]].reset_index(drop=True)


def incomplete_notes(sweeps: pd.DataFrame) -> list[str]:
    """A line per sweep of a `sweeps` listing that misses rows its newest run planned."""
    return [
        f"sweep {row[ResultColumn.SWEEP_ID]}: {int(row['rows_missing'])} of {int(row['rows_planned'])} rows missing "
        "(still running, or interrupted): run it again to finish"
        for _, row in sweeps.iterrows()
        if not pd.isna(row["rows_missing"]) and row["rows_missing"] > 0
    ]


def _first_per(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """One row per `key` (its first row), with the number of rows as `rows`, oldest first."""
    sizes = frame.groupby(key, sort=False).size()
    first = frame.drop_duplicates(key).set_index(key)
    first["rows"] = sizes
    first = first.reset_index()
    return first.sort_values(
        [ResultColumn.CREATED_AT, key] if ResultColumn.CREATED_AT in first else [key], kind="mergesort"
    )


def _selections(store) -> pd.DataFrame:
    frame = store.selections()
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS["selections"])
    first = _first_per(frame, S.SELECTION_ID)
    first["objective"] = [_objective(row) for _, row in first.iterrows()]
    first["categories"] = first["rows"]
    return _with_columns(first, "selections")


def _objective(row: pd.Series) -> str | None:
    """e.g. "f1 of span" (at rho 2: "f1 of xa rho=2")."""
    metric, estimator, rho = row.get(S.METRIC), row.get(S.ESTIMATOR), row.get(S.RHO)
    if not isinstance(metric, str) or not isinstance(estimator, str):
        return None
    rho_text = "" if rho is None or pd.isna(rho) or float(rho) == 1.0 else f" rho={float(rho):g}"
    return f"{metric} of {estimator}{rho_text}"


def _certifications(store) -> pd.DataFrame:
    frame = store.certifications()
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS["certifications"])
    first = _first_per(frame, R.CERTIFICATION_ID)
    micro = frame[_column(frame, R.SCOPE) == CertificationScope.MICRO].set_index(R.CERTIFICATION_ID)
    first["micro_f1"] = [micro[R.F1].get(c) if R.F1 in micro else None for c in first[R.CERTIFICATION_ID]]
    return _with_columns(first, "certifications")


def _drift(store) -> pd.DataFrame:
    """One row per drift check run (its run_id, as `xialpha drift` prints it): the drift id, the
    newest batch and how many config x category groups got each verdict."""
    frame = store.drift_checks()
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS["drift"])
    frame[ResultColumn.RUN_ID] = _column(frame, ResultColumn.RUN_ID).fillna(frame["check_id"])
    groups = [
        c
        for c in (
            ResultColumn.CATEGORY,
            ResultColumn.PREPROCESSING_ID,
            ResultColumn.KERNEL_ID,
            ResultColumn.C,
            ResultColumn.J,
        )
        if c in frame
    ]
    first = _first_per(frame, ResultColumn.RUN_ID)
    verdicts = {}
    for run_id, rows in frame.groupby(ResultColumn.RUN_ID, sort=False):
        counts = (
            (rows.drop_duplicates(groups) if groups else rows)["verdict"].value_counts() if "verdict" in rows else {}
        )
        verdicts[run_id] = ", ".join(f"{n} {verdict}" for verdict, n in sorted(dict(counts).items())) or None
    first["verdicts"] = first[ResultColumn.RUN_ID].map(verdicts)
    return _with_columns(first, "drift")


def _with_columns(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    return pd.DataFrame({name: _column(frame, name).to_numpy() for name in COLUMNS[kind]})


def certifications_of(store, selection_id: str) -> pd.DataFrame:
    """Every stored certification row of a selection, oldest certification first, each with its
    categories, then "(micro)" and "(macro)"; empty when it was never certified."""
    frame = store.certifications(selection_id=selection_id)
    if frame.empty:
        return pd.DataFrame()
    frame["_scope"] = (
        frame[R.SCOPE].map({scope: i for i, scope in enumerate(CertificationScope)}) if R.SCOPE in frame else 0
    )
    frame = frame.sort_values([R.CREATED_AT, R.CERTIFICATION_ID, "_scope", R.CATEGORY], kind="mergesort")
    return frame.drop(columns="_scope").reset_index(drop=True)
