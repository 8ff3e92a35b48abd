"""The typed rows hold their modes as the schema's enums, not as bare strings: a selection row's
mode, a certification row's scope and a drift row's window status and verdict."""

from __future__ import annotations

from xialpha.selection.bounds import Confusion
from xialpha.selection.certification import certification_frame, certification_rows
from xialpha.storage.rows import Certification, drift_row
from xialpha.storage.schema import (
    CertificationScope,
    DriftColumn,
    DriftVerdict,
    SelectionColumn,
    SelectionMode,
    WindowStatus,
)
from xialpha.storage.selection_rows import selection_row


def test_a_selection_row_read_back_holds_its_mode_as_a_selection_mode():
    S = SelectionColumn
    row = selection_row({S.SELECTION_ID: "s1", S.SWEEP_ID: "r1", S.CATEGORY: "earn", S.MODE: "global"})
    assert row.mode is SelectionMode.GLOBAL
    assert selection_row({S.SELECTION_ID: "s1", S.SWEEP_ID: "r1", S.CATEGORY: "earn"}).mode is None


def test_certification_rows_hold_their_scope_as_a_certification_scope():
    counts = {"earn": Confusion(tp=40, fp=5, fn=10, tn=445), "acq": Confusion(tp=30, fp=4, fn=8, tn=458)}
    frame = certification_frame(counts, {"earn": "k1", "acq": "k2"}, draws=100)
    identity = Certification("c1", "r1", "s1", "test", "tfp", 500, 0.95, 100, False, 0, True)
    scopes = [row.scope for row in certification_rows(frame, identity)]
    assert all(type(scope) is CertificationScope for scope in scopes)
    assert set(scopes) == set(CertificationScope)


def test_a_drift_row_read_back_holds_its_window_status_and_verdict_as_enums():
    columns = dict.fromkeys(DriftColumn) | {DriftColumn.STATUS: "skipped", DriftColumn.VERDICT: "drift"}
    row = drift_row(columns)
    assert row.status is WindowStatus.SKIPPED and row.verdict is DriftVerdict.DRIFT
