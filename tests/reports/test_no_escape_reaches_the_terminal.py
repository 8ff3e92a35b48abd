"""Issue 49.9: no sentence a command prints passes a control character from a user's names to the
terminal. Before: the line under the select table naming the categories whose runners-up went
untested printed a category name raw (`\\x1b[31mred\\x1b[0m` reached the terminal as colour).
Every command that prints sentences runs in this process on a store whose categories carry an
ESC, a CSI (C1) and a line break, in a store whose path holds an ESC."""

from __future__ import annotations

import re

import pytest
from newsgroups import NEWSGROUPS, newsgroup_store

from xialpha.cli import main

HOSTILE = ("\x1b[31mred\x1b[0m", "csi\x9b2J.misc", "two\nlines")
RAW = re.compile(r"[\x1b\x7f-\x9f]")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / "st\x1b[8more"  # a path the sentences name: hidden text
    store, ids = newsgroup_store(folder, (*HOSTILE, *NEWSGROUPS[:5]))
    return {"store": store.uri, "certified": ids[0], "other": ids[1], "frame": store.certifications()}


@pytest.mark.parametrize(
    "argv",
    [
        ["select", "{store}", "--estimator", "xa"],
        ["select", "{store}", "--estimator", "xa", "--no-smooth"],
        ["select", "{store}", "--estimator", "xa", "--global"],
        ["select", "{store}", "--estimator", "xa", "--wide", "--save"],
        ["certify", "{store}", "--selection", "{certified}", "--test-split", "test"],
        ["report", "{store}"],
        ["report", "{store}", "--selection", "{certified}", "--compare", "{other}"],
        ["compare", "{certified}", "{other}", "--store", "{store}"],
        ["store", "ls", "{store}"],
    ],
    ids=lambda argv: " ".join(part for part in argv if not part.startswith("{")),
)
def test_no_raw_escape_reaches_the_terminal(world, argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr("xialpha.commands.certify.certify_selection", lambda *args, **kwargs: world["frame"])
    capsys.readouterr()
    assert main([part.format(**world) for part in argv]) == 0
    out, err = capsys.readouterr()
    assert not RAW.search(out + err), [line for line in (out + err).splitlines() if RAW.search(line)]
    if argv[0] != "store":
        assert "\\x1b[31mred\\x1b[0m" in out.replace("\n", ""), out  # shown, escaped
