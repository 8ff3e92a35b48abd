"""Certification rows: per-category, micro and macro values and bounds; the sealed-test-set rule."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xialpha.errors import UserError
from xialpha.selection.bounds import Confusion, clopper_pearson_lower, clopper_pearson_upper, f1_lower_bound
from xialpha.selection.certification import certification_frame, certification_rows, check_sealed
from xialpha.storage.rows import Certification, certification_columns
from xialpha.storage.validate import typed_frame

REPO = Path(__file__).resolve().parents[2]
COUNTS = {
    "a": Confusion(tp=40, fp=10, fn=20, tn=930),
    "b": Confusion(tp=0, fp=3, fn=0, tn=997),
    "c": Confusion(tp=90, fp=5, fn=5, tn=900),
}


def frame():
    return certification_frame(COUNTS, {"a": "ka", "b": "kb", "c": "kc"}, draws=4000).set_index("category")


def test_per_category_values_and_bounds():
    rows = frame()
    a = rows.loc["a"]
    assert (a["tp"], a["fp"], a["fn"], a["tn"]) == (40, 10, 20, 930)
    assert a["recall"] == pytest.approx(40 / 60) and a["precision"] == pytest.approx(0.8)
    assert a["error_upper"] == pytest.approx(clopper_pearson_upper(30, 1000))
    assert a["recall_lower"] == pytest.approx(clopper_pearson_lower(40, 60))
    assert a["precision_lower"] == pytest.approx(clopper_pearson_lower(40, 50))
    assert a["f1_lower"] == pytest.approx(f1_lower_bound(COUNTS["a"], draws=4000))
    assert rows.loc["b", "f1_lower"] == 0.0  # no true positive


def test_micro_pools_counts_and_macro_averages_completed_values():
    rows = frame()
    micro = rows.loc["(micro)"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (130, 18, 25)
    assert micro["f1"] == pytest.approx(260 / (260 + 18 + 25))
    macro = rows.loc["(macro)"]
    # "b" has no positives: recall 1 (nothing to find), precision 0 (3 false alarms), F1 0 (2TP / (FP + FN) = 0)
    assert macro["recall"] == pytest.approx((40 / 60 + 1.0 + 90 / 95) / 3)
    assert macro["precision"] == pytest.approx((0.8 + 0.0 + 90 / 95) / 3)
    assert macro["f1"] == pytest.approx((80 / 110 + 0.0 + 180 / 190) / 3)
    assert macro["f1_lower"] < macro["f1"] and macro["error_upper"] > macro["error"]
    identity = Certification("cert-x", "s", "sel-x", "test", "fp", 500, 0.95, 4000, False, 0, True)
    rows = typed_frame(
        "certifications", [certification_columns(row) for row in certification_rows(frame().reset_index(), identity)]
    )
    assert len(rows) == 5 and rows["tp"].isna().sum() == 1  # the macro row has no counts


def test_a_test_set_is_certified_once_unless_forced():
    assert check_sealed([], force=False) is None
    with pytest.raises(UserError, match="already used for certification cert-1; .* or force=True"):
        check_sealed(["cert-1"], force=False)
    warning = check_sealed(["cert-1", "cert-2"], force=True)
    assert "2 certification(s)" in warning and "sequential testing" in warning


# --- one certification per test set, also when two run at once (issue 16, defect 7) -------------

# A child process: imports everything, waits for the start signal (a file), then runs the CLI with
# the training slowed by 2 s, so that both certifications have checked the test set before either stores.
CERTIFY_WHEN_SIGNALLED = """
import os, sys, time
import xialpha.commands.certify, xialpha.jobs.refit, xialpha.storage
from xialpha.cli import main

train = xialpha.jobs.refit.RefitSession.train
xialpha.jobs.refit.RefitSession.train = lambda *a, **k: (time.sleep(2), train(*a, **k))[1]
while not os.path.exists(sys.argv[1]):
    time.sleep(0.005)
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture
def selected(tmp_path, capsys):
    """(store dir, selection id) of a selection of the sweep "sel" of test_selection_cli."""
    from swept import fill_store, small_spec

    from xialpha.cli import main
    from xialpha.spec.sweep import load_spec
    from xialpha.storage.opening import open_store

    spec = tmp_path / "sel.toml"
    spec.write_text(small_spec("sel", splits=True))
    store = tmp_path / "store"
    fill_store(load_spec(spec), open_store(str(store), create=True, writable=True))
    assert main(["select", str(store), "--sweep", "sel", "--save"]) == 0
    out = capsys.readouterr().out
    return store, re.search(r"^stored selection (sel-\S+)", out, re.MULTILINE).group(1)


def test_two_certifications_started_together_exactly_one_succeeds(selected, tmp_path):
    from xialpha.storage.opening import open_store

    store, selection_id = selected
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = ["certify", str(store), "--selection", selection_id, "--test-split", "test", "--draws", "1000"]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CERTIFY_WHEN_SIGNALLED, str(go), *argv],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(1.0)  # let both finish importing
    go.touch()
    outcomes = [(child.wait(timeout=300), *child.communicate()) for child in children]
    assert sorted(code for code, _, _ in outcomes) == [0, 2], outcomes
    (winner,) = [out for code, out, _ in outcomes if code == 0]
    (loser,) = [err for code, _, err in outcomes if code == 2]
    # the loser lost the claim ("used this test set"), or, when a loaded machine started it after the
    # winner had finished, found the split used ("this test set was already used"): both refuse it
    assert ("used this test set" in loser or "test set was already used" in loser) and loser.count("\n") == 1, loser
    assert not re.search(r"\bf1\b|%", loser.lower())  # the loser shows no test-set figures (ids may hold "f1")
    stored = open_store(str(store), create=False, writable=True).datasets.read("certifications")
    assert set(stored["certification_id"].to_pylist()) == {
        re.search(r"stored certification (cert-\S+)", winner).group(1)
    }


def test_a_certification_that_cannot_store_its_rows_withdraws_its_claim(selected, capsys, monkeypatch):
    from swept import tree_digest

    from xialpha.cli import main
    from xialpha.errors import StoreWriteError
    from xialpha.storage.datasets import Datasets

    store, selection_id = selected
    before = tree_digest(store)

    def disk_full(self, dataset, rows):
        raise StoreWriteError(f"store {self.uri}: disk full (no space left on device) writing {dataset}")

    monkeypatch.setattr(Datasets, "append", disk_full)
    argv = ["certify", str(store), "--selection", selection_id, "--test-split", "test", "--draws", "1000"]
    assert main(argv) == 4
    assert "disk full" in capsys.readouterr().err
    assert tree_digest(store) == before
    monkeypatch.undo()
    assert main(argv) == 0  # the test set is still fresh


def test_the_closed_form_bounds_are_scipys_exact_binomial_interval():
    # why bounds.py keeps its Beta quantiles: scipy's binomtest solves numerically (not identical)
    from scipy.stats import binomtest

    for n in (1, 7, 60, 1000):
        for k in sorted({0, 1, n // 3, n - 1, n}):
            for confidence in (0.9, 0.95, 0.99):
                interval = binomtest(k, n).proportion_ci(confidence_level=2 * confidence - 1, method="exact")
                assert clopper_pearson_lower(k, n, confidence) == pytest.approx(interval.low, abs=1e-9)
                assert clopper_pearson_upper(k, n, confidence) == pytest.approx(interval.high, abs=1e-9)


# --- a certification killed before it stored its rows is resumed with the same draws (issue 25) ---

# A `xialpha certify` process whose training sleeps first, so that it is surely killed after its claim
# appears and before its rows are stored.
SLOW_CERTIFY = """
import sys, time
import xialpha.jobs.refit
from xialpha.cli import main

train = xialpha.jobs.refit.RefitSession.train
xialpha.jobs.refit.RefitSession.train = lambda *a, **k: (time.sleep(600), train(*a, **k))[1]
sys.exit(main(sys.argv[1:]))
"""


def _kill_after_claim(store: Path, argv: list[str]) -> str:
    """Run `argv` in a certify process, SIGKILL it once its claim is in `store`; the claim's certification id."""
    import json
    import signal

    claims = store / "certifications" / "_claims"
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_CERTIFY, *argv],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not list(claims.glob("*/claim.json")):
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)  # the local cluster's worker processes it started
        except ProcessLookupError:
            pass
        child.communicate()
    (claim,) = claims.glob("*/claim.json")
    return json.loads(claim.read_text())["certification_id"]


def test_a_certification_killed_before_it_stored_its_rows_is_resumed_with_the_same_draws(selected, capsys):
    from xialpha.cli import main
    from xialpha.storage.opening import open_store

    store, selection_id = selected
    argv = ["certify", str(store), "--selection", selection_id, "--test-split", "test"]
    killed = _kill_after_claim(store, [*argv, "--draws", "1000", "--seed", "7", "--confidence", "0.9"])
    assert open_store(str(store), create=False, writable=True).datasets.read("certifications").num_rows == 0

    assert main(["select", str(store), "--sweep", "sel", "--global", "--save"]) == 0
    other = re.search(r"^stored selection (sel-\S+)", capsys.readouterr().out, re.MULTILINE).group(1)
    assert main(["certify", str(store), "--selection", other, "--test-split", "test", "--draws", "1000"]) == 2
    err = capsys.readouterr().err
    assert f"certification {killed} of selection {selection_id} claimed this test set" in err, err
    assert f"certify selection {selection_id} on it again to resume it" in err and err.count("\n") == 1, err

    assert main([*argv, "--draws", "5000"]) == 0  # resumes with the killed one's draws, seed and confidence
    err = capsys.readouterr().err
    assert f"resuming certification {killed}" in err and "process" in err, err
    stored = open_store(str(store), create=False, writable=True).certifications()
    assert set(stored["certification_id"]) == {killed} and set(stored["draws"]) == {1000}
    assert set(stored["confidence"]) == {0.9} and not stored["forced"].any()
    assert not list((store / "certifications" / "_claims").glob("*.heartbeat.json"))  # the killed one's is gone
    for row in stored[stored["scope"] != "macro"].itertuples():
        counts = Confusion(int(row.tp), int(row.fp), int(row.fn), int(row.tn))
        assert row.f1_lower == pytest.approx(f1_lower_bound(counts, 0.9, 1000, 7))

    assert main([*argv, "--draws", "1000"]) == 2  # used once: a second certification is refused
    assert f"already used for certification {killed}" in capsys.readouterr().err


def _pending(tmp_path, **claim) -> tuple:
    """A store whose test set "fp" is claimed by `claim` with no rows stored, and a selection's rows."""
    import pandas as pd

    from xialpha.selection.claims import claim_content
    from xialpha.storage.opening import open_store

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    content = {**claim_content("cert-old", "sel-1", "test", confidence=0.9, draws=3000, seed=5), **claim}
    assert store.claims.claim_test_set("fp", content)
    return store, pd.DataFrame({"selection_id": ["sel-1"]})


def _start(store, rows):
    from xialpha.selection.certification import start_run

    return start_run(store, rows, "test", "fp", force=False, confidence=0.95, draws=1000, seed=0)


def test_a_claim_whose_process_runs_is_not_taken_over(tmp_path):
    store, rows = _pending(tmp_path)  # this very process holds it
    with pytest.raises(
        UserError,
        match=rf"certification cert-old \(process {os.getpid()} on .*\) used this test set "
        "and has not stored its rows",
    ):
        _start(store, rows)


def test_a_claim_whose_process_is_gone_is_resumed_with_its_draws(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    store, rows = _pending(tmp_path, pid=int(ended.stdout))
    with pytest.warns(UserWarning, match=rf"resuming certification cert-old, .* \(process {int(ended.stdout)} on "):
        run = _start(store, rows)
    assert (run.certification_id, run.confidence, run.draws, run.seed, run.claim) == ("cert-old", 0.9, 3000, 5, None)


def test_a_pid_that_now_belongs_to_another_process_is_no_sign_of_life(tmp_path):
    import psutil

    store, rows = _pending(tmp_path, process_started=psutil.Process().create_time() - 3600)
    with pytest.warns(UserWarning, match="resuming certification cert-old"):
        assert _start(store, rows).certification_id == "cert-old"


def test_a_claim_from_another_host_ends_when_its_heartbeat_stops(tmp_path):
    import datetime

    from xialpha.selection.claims import STALE_SECONDS, heartbeat

    long_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=2 * STALE_SECONDS)
    store, rows = _pending(tmp_path, host="elsewhere.invalid", claimed_at=long_ago.isoformat())
    with heartbeat(store, "fp"):  # beating now: still running
        assert store.claims.test_set_beat("fp") is not None
        with pytest.raises(UserError, match="used this test set and has not stored its rows"):
            _start(store, rows)
    assert store.claims.test_set_beat("fp") is None
    with pytest.warns(UserWarning, match="no sign of life for 20 minutes"):
        assert _start(store, rows).certification_id == "cert-old"
