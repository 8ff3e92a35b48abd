"""The linear path's results along C paths are those recorded before the solver's and the span's inner
loops were rewritten (tests/estimators/solver_record.json, written by solver_record.py): alphas,
thresholds and decision values bit for bit, the xi-alpha calls at rho 1 and 2 and the span calls
example by example, on Reuters-21578 (5 categories x 8 C; skipped without ../shared) and on a synthetic
corpus (3 categories x 8 C)."""

from __future__ import annotations

import json

import pytest
from solver_record import RECORD, record, reuters_problem, synthetic_problem

EXPECTED = json.loads(RECORD.read_text())


def _assert_same(got: list[dict], expected: list[dict]) -> None:
    assert len(got) == len(expected)
    differing = [
        (want["category"], want["C"], key) for row, want in zip(got, expected) for key in want if row[key] != want[key]
    ]
    assert not differing, f"{len(differing)} differences from the record, first: {differing[:5]}"


def test_synthetic_c_paths_are_unchanged():
    _assert_same(record(*synthetic_problem(), grid=EXPECTED["grid"], tol=EXPECTED["tol"]), EXPECTED["synthetic"])


@pytest.mark.reuters
def test_reuters_c_paths_are_unchanged(reuters_dir):
    _assert_same(record(*reuters_problem(reuters_dir), grid=EXPECTED["grid"], tol=EXPECTED["tol"]), EXPECTED["reuters"])
