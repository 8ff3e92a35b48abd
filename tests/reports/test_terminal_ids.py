"""`xialpha store ls` (and every table with ids users copy): an id is never wrapped or cut,
however narrow the terminal; the other columns fold, or the table is printed a block per row."""

from __future__ import annotations

import pandas as pd
import pytest

from xialpha.reports.terminal import inventory_table, print_table

SELECTION = "sel-20261126T071053-08dd6a"
CERTIFICATION = "cert-20261126T071153-4c1f2e"


def _listings() -> dict[str, pd.DataFrame]:
    created = pd.Timestamp("2026-11-26 07:10", tz="UTC")
    return {
        "sweeps": pd.DataFrame(
            [["reuters-modapte-top10", 2, 10, 20, 240, 0, created]],
            columns=["sweep_id", "runs", "categories", "configs", "rows_ok", "rows_failed", "last_created_at"],
        ),
        "selections": pd.DataFrame(
            [[SELECTION, "reuters-modapte-top10", "category", "f1 of span", 10, created]],
            columns=["selection_id", "sweep_id", "mode", "objective", "categories", "created_at"],
        ),
        "certifications": pd.DataFrame(
            [[CERTIFICATION, SELECTION, "test", True, 3299, 0.8712, created]],
            columns=[
                "certification_id",
                "selection_id",
                "test_split",
                "independent",
                "n_test",
                "micro_f1",
                "created_at",
            ],
        ),
    }


@pytest.mark.parametrize("width", [120, 80, 60, 44])
@pytest.mark.parametrize("wide", [False, True])
def test_ids_are_never_wrapped(width, wide, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    for kind, frame in _listings().items():
        print_table(inventory_table(kind, frame.to_dict("records"), wide), wide)  # rows, as the inventory lists them
    lines = capsys.readouterr().out.splitlines()
    for identifier in (SELECTION, CERTIFICATION, "reuters-modapte-top10"):
        assert any(identifier in line for line in lines), (identifier, width, "\n".join(lines))
    assert max(len(line.rstrip()) for line in lines) <= width
