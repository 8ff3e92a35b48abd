"""The sweep's progress: its stage from the start, then fits; plain lines outside a terminal."""

from __future__ import annotations

import io
import time

import pytest

from xialpha.jobs import progress as progress_module
from xialpha.jobs.progress import Progress


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(progress_module, "TICK_S", 0.01)
    monkeypatch.setattr(progress_module, "WATCH_EVERY_S", 0.01)


def test_a_plain_stage_line_comes_once_the_stage_lasts_and_only_once(fast, monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(progress_module, "PLAIN_STAGE_AFTER_S", 3600)  # no stage lasts that long here
    progress = Progress(None, "plain", stream=stream)
    try:
        progress.set_stage("loading corpus")
        progress.set_stage("planning")
        time.sleep(0.1)
        assert stream.getvalue() == ""  # stages that end at once (and errors at once) print nothing
        monkeypatch.setattr(progress_module, "PLAIN_STAGE_AFTER_S", 0)
        _wait_for(lambda: stream.getvalue())
        for stage in ("fitting", "storing", "fitting"):
            progress.set_stage(stage)
            _wait_for(lambda: stage in stream.getvalue())
        progress.set_total(2)
        progress.advance(2)
    finally:
        progress.close()
    lines = stream.getvalue().splitlines()
    assert [line.rsplit(" (", 1)[0] for line in lines[:-1]] == ["planning", "fitting", "storing"]
    assert lines[-1].startswith("fits 2/2 (100%)")


def test_the_stage_follows_the_tasks_the_cluster_runs(fast):
    running = [["count-3-pp1-run"]]
    progress = Progress(4, "plain", stream=io.StringIO())
    progress.watch(lambda: running[0])
    try:
        _wait_for(lambda: progress.stage == "vectorising")
        running[0] = ["block-0-pp2-run", "gram-linear-pp1-run"]
        _wait_for(lambda: progress.stage == "building features")
        running[0] = ["features-pp1-run", "fit-batch-3-run"]
        _wait_for(lambda: progress.stage == "fitting")
        progress.set_stage("storing")  # the driver writing a batch: not overwritten by what workers run
        time.sleep(0.1)
        assert progress.stage == "storing"
    finally:
        progress.close()


def test_watching_ends_quietly_when_the_cluster_goes_away(fast):
    calls = []

    def closed():
        calls.append(1)
        raise OSError("client closed")

    progress = Progress(1, "plain", stream=io.StringIO())
    progress.watch(closed)
    try:
        _wait_for(lambda: calls)
        time.sleep(0.1)
        assert len(calls) == 1  # asked once, then stopped
    finally:
        progress.close()
