"""Outputs that say the true thing (issue 49.6): an unsaved selection shows no id anything could
take, certify's error for an unknown id says how to store one, and `store ls` marks a certification
forced on a test split used before."""

from __future__ import annotations

import json
import re

from store_rows import certify_by_hand, result_rows, saved_selections

from xialpha.cli import main
from xialpha.reports.inventory import inventory
from xialpha.storage.opening import open_store

SELECTION_ID = re.compile(r"sel-\d{8}T\d{6}-[0-9a-f]{6}")


def test_an_unsaved_selection_shows_no_id_and_certify_says_run_select_save(tmp_path, capsys):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    for argv in ([], ["--format", "csv"], ["--format", "json"]):
        assert main(["select", store.uri, "--estimator", "xa", *argv]) == 0
        out, err = capsys.readouterr()
        assert not SELECTION_ID.search(out + err), out + err
        assert "selection not stored: --save stores it and prints its id" in (out if not argv else err)
    assert main(["select", store.uri, "--estimator", "xa", "--format", "json"]) == 0
    assert {row["selection_id"] for row in json.loads(capsys.readouterr().out)} == {None}
    assert main(["certify", store.uri, "--selection", "sel-20260101T000000-abcdef", "--test-split", "test"]) == 2
    err = capsys.readouterr().err
    assert "no selection 'sel-20260101T000000-abcdef'" in err and "run `xialpha select --save` to store one" in err


def test_store_ls_marks_a_forced_certification(tmp_path, capsys, monkeypatch):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    assert main(["select", store.uri, "--estimator", "xa", "--save"]) == 0
    certify_by_hand(store, saved_selections(store), "cert-first")
    certify_by_hand(store, saved_selections(store), "cert-again", forced=True)
    listed = {row["certification_id"]: row["forced"] for row in inventory(store)["certifications"]}
    assert listed == {"cert-first": False, "cert-again": True}
    capsys.readouterr()
    assert main(["store", "ls", store.uri, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "forced" in out.splitlines()[0].split(",") and "cert-again" in out
    for width in (120, 80):  # the table marks it as the HTML does, and says what the mark means
        monkeypatch.setenv("COLUMNS", str(width))
        assert main(["store", "ls", store.uri]) == 0
        out = capsys.readouterr().out
        marked = {line.split()[0]: "test!" in line.split() for line in out.splitlines() if "cert-" in line}
        assert marked == {"cert-first": False, "cert-again": True}, out
        assert "! forced on a test set used before: the bounds are biased (sequential testing)" in " ".join(out.split())
