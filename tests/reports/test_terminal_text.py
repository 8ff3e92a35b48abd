"""Labels are untrusted text (issue 25): the terminal shows them as they are, never as rich markup
or emoji, with control characters escaped; predict's CSV neutralises cells a spreadsheet would run."""

from __future__ import annotations

import io
import json
import random

import numpy as np
import pytest
from swept import fill_store

from xialpha.cli import main
from xialpha.models.prediction import write_predictions
from xialpha.printable import printable
from xialpha.reports.records import csv_cell
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store

HOSTILE = ["[/]", "[bold red]pwn[/bold red]:warning:", "esc\x1b[31mred\x9b"]


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory):
    """A swept table corpus whose three categories are HOSTILE, with a saved selection."""
    folder = tmp_path_factory.mktemp("hostile")
    words = [f"w{i}" for i in range(40)]
    rng = random.Random(5)
    with (folder / "docs.jsonl").open("w", encoding="utf-8") as stream:
        for i in range(240):
            label = HOSTILE[i % 3]
            text = " ".join([f"topic{i % 3}"] * 3 + rng.sample(words, 8))
            stream.write(
                json.dumps({"text": text, "label": [label], "split": "test" if i % 4 == 0 else "train"}) + "\n"
            )
    spec = parse_spec(
        f'[sweep]\nid = "hostile"\n[corpus]\nloader = "table"\npath = "{folder / "docs.jsonl"}"\n'
        'split_column = "split"\ntrain_split = "train"\ntest_split = "test"\n[svm]\nC = [0.5, 5.0]\n'
        "[cluster]\nworkers = 1\n",
        source="spec",
    )
    store = folder / "store"
    fill_store(spec, open_store(str(store), create=True, writable=True))
    return store


@pytest.mark.parametrize(
    "argv",
    [
        ["select", "{store}"],
        ["select", "{store}", "--save"],
        ["select", "{store}", "--wide"],
        ["report", "{store}"],
        ["store", "ls", "{store}"],
    ],
)
def test_hostile_labels_are_shown_as_text(hostile_store, argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # one line per row: the labels unbroken
    assert main([part.format(store=hostile_store) for part in argv]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x9b" not in out + err
    if argv[0] != "store":
        assert "[/]" in out and "[bold red]pwn[/bold red]:warning:" in out and "esc\\x1b[31mred\\x9b" in out, out
        assert "⚠" not in out


def test_printable_escapes_control_characters_only():
    assert printable("a\x1b[1mb\tc\u2028é [x]") == "a\\x1b[1mb\\tc\\u2028é [x]"


def test_predict_csv_cells_a_spreadsheet_would_run_are_text():
    stream = io.StringIO()
    write_predictions(
        stream, ["=1+1", "2"], ["=cmd|' /C calc'!A0", "@sum"], np.array([[1.0, -2.0], [-1.0, 0.5]]), "csv"
    )
    lines = stream.getvalue().splitlines()
    assert lines[1] == '\'=1+1,"[""=cmd|\' /C calc\'!A0""]",1.0,-2.0' and lines[2] == '2,"[""@sum""]",-1.0,0.5', lines
    assert csv_cell("-0.5") == "'-0.5" and csv_cell("plain") == "plain"
