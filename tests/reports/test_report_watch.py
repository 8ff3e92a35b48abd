"""`xialpha report --html FILE --watch`: the page follows a sweep another process runs, reloading
itself, and watching ends by itself once the sweep's record says it ended, or cleanly at Ctrl-C."""

from __future__ import annotations

import datetime
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from sweep_processes import DEADLINE, LONG_C_GRID, kill, result_files, start, sweep_spec, wait_for

from xialpha.storage.opening import open_store

pytestmark = pytest.mark.cluster
REFRESH = '<meta http-equiv="refresh" content="1">'


def _watch(store: Path, page: Path, log: Path, stderr: Path | None = None):
    return start(
        [sys.executable, "-m", "xialpha.cli", "report", str(store), "--html", str(page), "--watch", "0.5"],
        log,
        stderr=stderr,
    )


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def test_the_page_follows_a_running_sweep_and_watching_ends_with_it(tmp_path):
    store, page = tmp_path / "store", tmp_path / "watch.html"
    # four C paths of 30 C on one worker thread: after its first stored batch the sweep has seconds of
    # fits left, so it is held (SIGSTOP) before it can end (with two short paths it sometimes ended first)
    spec = sweep_spec(tmp_path / "watched.toml", "watched", cluster="workers = 1", categories=4, C=LONG_C_GRID)
    watcher = _watch(store, page, tmp_path / "watch.log")
    sweep = None
    try:
        # before the sweep has written anything: a waiting page that reloads itself
        wait_for(lambda: "Waiting" in _text(page), "the waiting page", process=watcher)
        assert REFRESH in _text(page)
        sweep = start(
            [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(store)], tmp_path / "sweep.log"
        )
        # while it runs (held after its first stored batch: SIGSTOP to its driver and workers): the
        # report of the rows stored so far, still reloading
        wait_for(lambda: result_files(store, "watched"), "the first stored batch", process=sweep)
        os.killpg(sweep.pid, signal.SIGSTOP)
        try:
            wait_for(
                lambda: "<h1>xialpha sweep watched</h1>" in (text := _text(page)) and REFRESH in text,
                "a report page of the running sweep",
                process=watcher,
            )
        finally:
            os.killpg(sweep.pid, signal.SIGCONT)
        assert sweep.wait(timeout=DEADLINE) == 0, (tmp_path / "sweep.log").read_text()[-3000:]
        assert watcher.wait(timeout=60) == 0, (tmp_path / "watch.log").read_text()
    finally:
        for process in (watcher, sweep):
            if process is not None:
                kill(process)
    final = _text(page)
    rows = len(open_store(str(store), create=False, writable=True).read_results_df("watched"))
    assert REFRESH not in final and "<meta http-equiv" not in final  # the last page stays
    assert f">{rows} / 0</td>" in final  # every stored row
    log = (tmp_path / "watch.log").read_text()
    assert log.splitlines()[-1] == f"the sweep ended; {page} shows the store as it was last read"
    assert "Traceback" not in log
    # the sweep's suggested next command is one line
    sweep_out = (tmp_path / "sweep.log").read_text()
    assert re.search(
        rf"^significance tests: xialpha select {re.escape(str(store))} --sweep watched$", sweep_out, re.MULTILINE
    ), sweep_out[-2000:]


def _watching_an_ended_sweep(tmp_path: Path, signum: signal.Signals, selection_store) -> tuple[int, Path, str, str]:
    """Watch a sweep whose newest run ended before watching began (a new run may be starting, not
    recorded yet), so watching goes on until `signum` is sent once its page is written: (exit code,
    the page, standard output, standard error)."""
    store, page = selection_store(tmp_path), tmp_path / "watch.html"
    ended = datetime.datetime.now(datetime.UTC)  # the newest run, ended before watching
    open_store(str(store), create=True, writable=True).datasets.append(
        "sweeps", [{"sweep_id": "sel", "run_id": "ended", "created_at": ended, "finished_at": ended}]
    )
    watcher = _watch(store, page, tmp_path / "watch.log", stderr=tmp_path / "watch.err")
    try:
        wait_for(
            lambda: REFRESH in _text(page) and "<h1>xialpha sweep sel</h1>" in _text(page), "the page", process=watcher
        )
        watcher.send_signal(signum)
        code = watcher.wait(timeout=60)
    finally:
        kill(watcher)
    return code, page, (tmp_path / "watch.log").read_text(), (tmp_path / "watch.err").read_text()


def test_ctrl_c_stops_watching_cleanly(tmp_path, selection_store):
    """Ctrl-C is how watching is stopped: the last page stays without the reload, exit 0 without
    a traceback."""
    code, page, out, err = _watching_an_ended_sweep(tmp_path, signal.SIGINT, selection_store)
    assert code == 0, err
    assert "<h1>xialpha sweep sel</h1>" in _text(page) and "<meta http-equiv" not in _text(page)
    assert out.splitlines()[-1] == f"stopped watching; {page} shows the store as it was last read"
    assert re.search(
        r"^the sweep's newest run ended at [0-9-]+ [0-9:]+ UTC; waiting for another run$", out, re.MULTILINE
    )
    assert err == ""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_sigterm_and_sighup_end_watching_like_every_command(tmp_path, signum, selection_store):
    """`kill` or a closed terminal ends watching as it ends every other command: one line, exit
    128 + signum (143, 129), the last page written without its reload. It exited 0 as at Ctrl-C."""
    code, page, out, err = _watching_an_ended_sweep(tmp_path, signum, selection_store)
    assert code == 128 + signum, err
    assert err == f"xialpha report: interrupted by {signum.name}; results stored so far are kept\n"
    assert "<h1>xialpha sweep sel</h1>" in _text(page) and "<meta http-equiv" not in _text(page)
    assert "stopped watching" not in out and "Traceback" not in out


def test_watch_needs_an_html_page(tmp_path, capsys):
    from xialpha.cli import main

    assert main(["report", str(tmp_path / "store"), "--watch"]) == 2
    assert "--watch: needs --html FILE" in capsys.readouterr().err
