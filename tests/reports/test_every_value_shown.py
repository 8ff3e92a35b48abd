"""Issue 49.1: every terminal table keeps every value at 80 and 120 columns for names as long as
20 Newsgroups' (24 characters). Before: certify and report cut the `<= upper` column off, select
and compare printed a block per category. Each value of a command's CSV appears on its
category's row of the table (a name wrapped inside its cell reads whole, piece after piece)."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from newsgroups import NEWSGROUPS, newsgroup_store

from xialpha.cli import main
from xialpha.reports.formatting import number, p_value, percent

SELECT = {"value": number, "runner_up_value": number, "p_micro_sign": p_value}
CERTIFY = {"f1": percent, "f1_lower": percent, "error": percent, "error_upper": percent}
COMPARE = {"held_out_f1_a": percent, "held_out_f1_b": percent, "p_value": p_value}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    store, ids = newsgroup_store(tmp_path_factory.mktemp("newsgroups") / "store")
    return {"store": store.uri, "certified": ids[0], "other": ids[1], "frame": store.certifications()}


@pytest.fixture
def certify_by_hand(world, monkeypatch):
    """`xialpha certify` of the certified selection, its test set counted by hand (no cluster)."""
    monkeypatch.setattr("xialpha.commands.certify.certify_selection", lambda *args, **kwargs: world["frame"])


def _run(capsys, monkeypatch, columns: int | None, *argv: str) -> str:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _csv(capsys, monkeypatch, *argv: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(_run(capsys, monkeypatch, None, *argv, "--format", "csv")), keep_default_na=False)


def _rows_of(table: str, names) -> dict[str, list[str]]:
    """name -> the lines of its row in `table` (up to the next row, or a blank line): the category
    column's pieces, read down the lines after each header rule, make whole names one after another."""
    lines = table.splitlines()
    starts: list[tuple[str, int]] = []
    piece, start, column = "", None, None
    for i, line in enumerate(lines):
        if line.strip().startswith("─"):
            left = line.index("─")
            column = left + 1 if left else 0  # natural tables pad their cells, narrowed ones not
            piece, start = "", None
            continue
        head = "" if column is None else line[column:].split(" ")[0]
        if not head:
            continue
        if piece == "":
            start = i
        piece += head
        if piece in names:
            starts.append((piece, start))
            piece, start = "", None
        elif not any(name.startswith(piece) for name in names):
            piece, start = "", None
    rows: dict[str, list[str]] = {}
    for (name, first), (_, after) in zip(starts, [*starts[1:], ("", len(lines))]):
        end = next((j for j in range(first + 1, after) if not lines[j].strip()), after)
        rows.setdefault(name, lines[first:end])
    return rows


def _check(table: str, frame: pd.DataFrame, formats: dict, width: int, configs=("config",)) -> None:
    lines = [line for line in table.splitlines() if "/store" not in line]  # status lines naming the store's path
    assert max(len(line) for line in lines) <= width, table
    names = set(frame["category"])
    rows = _rows_of(table, names)
    assert set(rows) == names, (sorted(names - set(rows)), table)
    for _, record in frame.iterrows():
        row = rows[record["category"]]
        first = row[0]
        shown = [formats[name](record[name] if record[name] != "" else None) for name in formats]
        position = 0
        for text in shown:  # the row's values, in the order of the table's columns
            found = first.find(f" {text}", position)
            assert found >= 0, (record["category"], text, first, table)
            position = found + len(text)
        for name in configs:  # a label's words, wrapped at spaces, and if they must after "_" "=" ...
            for part in re.split(r"(?<=[ ./:_=-])", str(record[name])):
                assert any(part.strip() in line for line in row), (record["category"], part, row)


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("extra", [[], ["--global"]], ids=["per-category", "global"])
def test_select_shows_every_value(world, capsys, monkeypatch, width, extra):
    argv = ["select", world["store"], "--estimator", "xa", *extra]
    table = _run(capsys, monkeypatch, width, *argv)
    frame = _csv(capsys, monkeypatch, *argv)
    assert "category alt.atheism" not in table  # a table, not a block per category
    _check(table, frame, SELECT, width)


@pytest.mark.parametrize("width", [80, 120])
def test_certify_shows_every_value(world, capsys, monkeypatch, width, certify_by_hand):
    argv = ["certify", world["store"], "--selection", world["certified"], "--test-split", "test"]
    table = _run(capsys, monkeypatch, width, *argv)
    frame = _csv(capsys, monkeypatch, *argv)
    assert "<= upper" in table.replace("\n", " ") or "upper" in table
    _check(table, frame, CERTIFY, width, configs=())


@pytest.mark.parametrize("width", [80, 120])
def test_report_shows_every_value(world, capsys, monkeypatch, width, certify_by_hand):
    table = _run(capsys, monkeypatch, width, "report", world["store"], "--selection", world["certified"])
    selection = _csv(capsys, monkeypatch, "select", world["store"], "--estimator", "xa")
    certification = _csv(
        capsys, monkeypatch, "certify", world["store"], "--selection", world["certified"], "--test-split", "test"
    )
    parts = table.split("certification cert-hand")
    assert len(parts) == 2, table
    _check(parts[0][parts[0].index("selection sel-") :], selection, SELECT, width)
    _check(parts[1], certification, CERTIFY, width, configs=())


@pytest.mark.parametrize("width", [80, 120])
def test_compare_shows_every_value(world, capsys, monkeypatch, width):
    argv = ["compare", world["certified"], world["other"], "--store", world["store"]]
    table = _run(capsys, monkeypatch, width, *argv)
    frame = _csv(capsys, monkeypatch, *argv)
    frame = frame[frame["category"].isin(NEWSGROUPS)]
    _check(table, frame, COMPARE, width, configs=("config_a", "config_b", "changed"))


@pytest.mark.parametrize("width", [80, 120])
def test_store_ls_shows_every_value(world, capsys, monkeypatch, width):
    table = _run(capsys, monkeypatch, width, "store", "ls", world["store"])
    frame = _csv(capsys, monkeypatch, "store", "ls", world["store"])
    assert max(len(line) for line in table.splitlines() if "/store" not in line) <= width
    for column in ("sweep_id", "selection_id", "certification_id", "objective"):
        for value in frame[column]:
            assert not value or value in table, (column, value, table)
