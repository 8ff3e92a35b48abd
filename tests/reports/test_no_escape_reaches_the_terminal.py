"""Issue 49.9: no sentence a command prints passes a control character from a user's names to the
terminal. Before: the line under the select table naming the categories whose runners-up went
untested printed a category name raw (`\\x1b[31mred\\x1b[0m` reached the terminal as colour).
Every command that prints sentences runs in this process on a store whose categories carry an
ESC, a CSI (C1) and a line break, in a store whose path holds an ESC (`store check` and a sweep's
closing lines too)."""

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


def test_store_check_and_an_empty_store_name_their_paths_escaped(tmp_path, capsys):
    """`store ls` of an empty store, `store check` of a clean one, of one with a damaged file (whose
    name holds an ESC too) and its --quarantine: each line names the store or the file escaped."""
    from newsgroups import newsgroup_rows

    from xialpha.storage.opening import open_store

    store = open_store(str(tmp_path / "st\x1b[8more"), create=True, writable=True)
    store.datasets.create_if_absent()  # a store that holds nothing yet
    runs = [(["store", "ls", store.uri], 0), (["store", "check", store.uri], 0)]
    outs = []
    for argv, code in runs:
        assert main(argv) == code
        outs.append(capsys.readouterr())
    store.datasets.write_results(newsgroup_rows(NEWSGROUPS[:1]))
    (tmp_path / "st\x1b[8more" / "results" / "bad\x1b[2J.parquet").write_bytes(b"not parquet")
    for argv, code in ([["store", "check", store.uri], 1], [["store", "check", store.uri, "--quarantine"], 0]):
        assert main(argv) == code
        outs.append(capsys.readouterr())
    for out, err in outs:
        assert not RAW.search(out + err), [line for line in (out + err).splitlines() if RAW.search(line)]
    assert all("st\\x1b[8more" in out for out, _ in outs[:3]), outs  # shown, escaped
    assert "bad\\x1b[2J.parquet" in outs[2].out and "bad\\x1b[2J.parquet" in outs[3].out, outs


def test_the_sweeps_closing_lines_print_no_raw_escape(world, capsys):
    """The lines a sweep ends with (`_print_best`: the best config per category, the key, the
    select command for significance tests) on the store whose path and categories hold an ESC."""
    from xialpha.commands.sweep import _print_best
    from xialpha.spec.sweep import parse_spec
    from xialpha.storage.opening import open_store

    spec = parse_spec('[sweep]\nid = "r1"\nestimator = "xa"\n[corpus]\nloader = "synthetic"\n[svm]\nC = [1.0]\n')
    capsys.readouterr()
    _print_best(spec, open_store(world["store"], create=True, writable=True))
    out, err = capsys.readouterr()
    assert not RAW.search(out + err), [line for line in (out + err).splitlines() if RAW.search(line)]
    assert "significance tests: xialpha select " in out and "st\\x1b[8more" in out, out


def test_drift_prints_no_raw_escape(tmp_path, capsys, monkeypatch):
    """`xialpha drift`'s lines (header, a verdict per category and config, next step, summary) on
    a check whose category carries an ESC and whose store's path does: the check itself (a cluster's
    work) replaced by rows `check_rows` made in this process."""
    import datetime
    from dataclasses import replace

    from streams import relevance_stream

    from xialpha.concept_drift.outcome import DriftReport, check_rows
    from xialpha.jobs.drift_check import check_stream
    from xialpha.spec.drift import parse_drift_spec, split_batches

    text = (
        '[drift]\nmargin = 2.0\nalpha = 0.05\n[batches]\nperiod = "1D"\n[corpus]\nloader = "synthetic"\n'
        '[corpus.categories]\nnames = ["relevant"]\n[[preprocessing]]\nmin_df = 2\n[svm]\nC = [0.5]\n'
    )
    spec = parse_drift_spec(text)
    stream = split_batches(relevance_stream(n_docs=200, n_batches=4, seed=4, shift_batch=None), spec.batches)
    checks = check_stream(spec, stream, ["relevant"])
    typed = check_rows(
        spec, stream, checks, {"relevant": 5}, check_key="k", run_id="r", fingerprint="f",
        checked_at=datetime.datetime.now(datetime.UTC),
    )  # fmt: skip
    rows = [replace(row, category=HOSTILE[0]) for row in typed]
    report = DriftReport("drift\x1b[2J", "k", stream.batch_ids[-1], 4, len(stream.corpus), 0, rows=rows, run_id="r")
    (tmp_path / "drift.toml").write_text(text, encoding="utf-8")
    monkeypatch.setattr("xialpha.commands.drift.before_the_stack", lambda *args, **kwargs: None)
    monkeypatch.setattr("xialpha.jobs.drift_check.run_drift_check", lambda *args, **kwargs: report)
    monkeypatch.setenv("COLUMNS", "80")
    capsys.readouterr()
    store = tmp_path / "st\x1b[8more"
    main(["drift", str(tmp_path / "drift.toml"), "--store", str(store)])
    out, err = capsys.readouterr()
    assert not RAW.search(out + err), [line for line in (out + err).splitlines() if RAW.search(line)]
    assert "\\x1b[31mred\\x1b[0m" in out and "drift\\x1b[2J" in out, out


def test_the_sweeps_summary_line_prints_its_store_path_escaped(capsys):
    """The line a finished sweep prints first (`_print_summary`: rows stored, skipped and failed in
    the store at its path) on a store whose path holds an ESC."""
    from types import SimpleNamespace

    from xialpha.commands.sweep import _print_summary

    summary = SimpleNamespace(
        fits=0, sweep_id="s1", ok=3, skipped=0, failed=0, run_id="r1", auto=None, held_out_note="", failures=[]
    )
    _print_summary(summary, "st\x1b[8more")
    out, err = capsys.readouterr()
    assert not RAW.search(out + err), [line for line in (out + err).splitlines() if RAW.search(line)]
    assert "sweep s1 in st\\x1b[8more: 3 rows stored" in out, out
