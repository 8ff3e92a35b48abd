"""Machine-readable outputs (issue 48.8): CSV that reads back whole whatever a name holds, one rule
for cells a spreadsheet would run, JSON with no non-finite token and no raw control character."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math

import numpy as np

from xialpha.models.prediction import write_predictions
from xialpha.reports import records

NAMES = ["cr\rhere", "lf\nhere", "semi;colon", 'quote"d', "comma,ed", "plain"]


def _csv(columns, rows) -> list[list[str]]:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        records.write_rows(columns, rows, "csv")
    return list(csv.reader(io.StringIO(stream.getvalue(), newline="")))


def test_csv_reads_back_every_name_with_a_lone_cr_in_one_cell():
    read = _csv(["category", "value"], [{"category": name, "value": 0.5} for name in NAMES])
    assert [len(line) for line in read] == [2] * (1 + len(NAMES)), read
    assert [line[0] for line in read[1:]] == NAMES


def test_one_formula_rule_for_every_text_cell_and_it_can_be_undone():
    names = ["=cmd|' /C calc'!A0", "+1", "-1", "@sum", "\tx", "'quoted", "plain"]
    read = _csv(["category", "value"], [{"category": name, "value": -0.5} for name in names])
    cells = [line[0] for line in read[1:]]
    assert cells == ["'=cmd|' /C calc'!A0", "'+1", "'-1", "'@sum", "'\tx", "''quoted", "plain"]
    assert [cell[1:] if cell.startswith("'") else cell for cell in cells] == names  # the documented undoing
    assert {line[1] for line in read[1:]} == {"-0.5"}  # a number is no text cell
    assert records.csv_cell("-0.5") == "'-0.5"


def test_json_escapes_c1_and_writes_no_non_finite_token():
    out = io.StringIO()
    rows = [{"category": "csi\x9b[31m\x7f\u2028", "value": math.inf, "low": np.float64(-np.inf), "p": np.nan}]
    with contextlib.redirect_stdout(out):
        records.write_rows(["category", "value", "low", "p"], rows, "json")
    text = out.getvalue()
    assert not any("\x7f" <= ch <= "\x9f" or ch in "\u2028\u2029" for ch in text), repr(text)
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == [{"category": "csi\x9b[31m\x7f\u2028", "value": None, "low": None, "p": None}]
    assert records.json_text({"d": [np.float32(1.5), float("nan")]}) == '{"d": [1.5, null]}'


def test_predict_csv_category_cell_is_a_list_that_keeps_a_semicolon():
    stream = io.StringIO()
    categories = ["semi;colon", "two", "cr\rname"]
    write_predictions(stream, ["1", "2"], categories, np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, -2.0]]), "csv")
    read = list(csv.reader(io.StringIO(stream.getvalue(), newline="")))
    assert [len(line) for line in read] == [5, 5, 5], read
    assert [json.loads(line[1]) for line in read[1:]] == [categories, ["two"]]
    assert read[0] == ["id", "categories", "decision_semi;colon", "decision_two", "decision_cr\rname"]
