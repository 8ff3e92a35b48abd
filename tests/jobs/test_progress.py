"""The sweep's progress: its stage from the start, then fits; a bar on a terminal, a display
updated in place in a notebook (a real kernel: tests/test_notebook.py), plain lines elsewhere."""

from __future__ import annotations

import io
import sys
import threading
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
            _wait_for(lambda stage=stage: stage in stream.getvalue())
        progress.set_total(2)
        progress.advance(2)
    finally:
        progress.close()
    lines = stream.getvalue().splitlines()
    assert [line.rsplit(" (", 1)[0] for line in lines[:-1]] == ["planning", "fitting", "storing"]
    assert lines[-1].startswith("fits 2/2 (100%)")


class _SlowStream(io.StringIO):
    """A stream whose writes from the progress thread take `delay` seconds (a loaded machine)."""

    def __init__(self, delay: float):
        super().__init__()
        self.delay = delay
        self.entered = threading.Event()

    def write(self, text: str) -> int:
        if threading.current_thread().name == "xialpha-progress":
            self.entered.set()
            time.sleep(self.delay)
        return super().write(text)


def test_nothing_is_printed_once_close_returns_even_on_a_slow_machine(fast, monkeypatch):
    """An interrupted sweep's last line ('interrupted by SIGINT') is printed after `close`: a stage
    line the background thread was printing meanwhile must land before it, never after."""
    monkeypatch.setattr(progress_module, "PLAIN_STAGE_AFTER_S", 0)
    stream = _SlowStream(delay=0.5)
    progress = Progress(None, "plain", stream=stream)
    progress.set_stage("storing")
    assert stream.entered.wait(10)  # the thread is inside its stage line's write
    progress.close()
    stream.write("interrupted\n")
    time.sleep(0.7)  # long enough for a write still under way to finish
    assert stream.getvalue().splitlines()[-1] == "interrupted"


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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _fake_ipython(monkeypatch, kernel: bool) -> list:
    """IPython as a Jupyter kernel (or a terminal IPython) has it: get_ipython() and display
    handles; returns the list every displayed or updated bundle is appended to."""
    import types

    shown: list = []

    class Handle:
        def update(self, bundle, raw):
            assert raw
            shown.append(bundle)

    def display(bundle, raw, display_id):
        assert raw and display_id
        shown.append(bundle)
        return Handle()

    shell = types.SimpleNamespace(kernel=object()) if kernel else types.SimpleNamespace()
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell
    ipython.display = types.ModuleType("IPython.display")
    ipython.display.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython.display)
    return shown


def test_progress_fits_where_it_runs(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert Progress.mode_for(False, io.StringIO()) == "plain"  # a log file or a pipe
    assert Progress.mode_for(False, _Terminal()) == "bar"
    assert Progress.mode_for(True, _Terminal()) == "quiet"
    _fake_ipython(monkeypatch, kernel=False)  # IPython in a terminal: the bar
    assert Progress.mode_for(False, _Terminal()) == "bar"
    _fake_ipython(monkeypatch, kernel=True)  # a Jupyter kernel: the notebook display, whatever stderr is
    assert Progress.mode_for(False, io.StringIO()) == "notebook"
    assert Progress.mode_for(True, io.StringIO()) == "quiet"


def test_a_notebook_display_is_updated_in_place_and_keeps_the_final_count(fast, monkeypatch):
    shown = _fake_ipython(monkeypatch, kernel=True)
    monkeypatch.setattr(progress_module, "NOTEBOOK_EVERY_S", 0.0)
    stream = io.StringIO()
    progress = Progress(None, "notebook", stream=stream)
    try:
        progress.set_stage("loading corpus")
        _wait_for(lambda: any("loading corpus" in b["text/plain"] for b in shown))
        progress.set_total(4)
        progress.set_stage("fitting")
        progress.advance(3)
        assert shown[-1]["text/plain"].startswith("fitting: fits 3/4 (75%)")
        assert '<progress value="3" max="4"' in shown[-1]["text/html"]
    finally:
        progress.close()
    assert shown[-1]["text/plain"].startswith("3/4 fits in ") and stream.getvalue() == ""  # nothing on stderr
    assert '<progress value="3" max="4"' in shown[-1]["text/html"]
    assert "<progress " in shown[0]["text/html"] and "value=" not in shown[0]["text/html"]  # no total yet
    count = len(shown)
    time.sleep(0.1)
    assert len(shown) == count  # closed: the background thread draws no more


def test_stage_text_is_escaped_in_the_notebook_display(monkeypatch):
    shown = _fake_ipython(monkeypatch, kernel=True)
    progress = Progress(None, "notebook")
    progress.set_stage("<b>&")
    progress.close()
    page = "".join(b["text/html"] for b in shown)
    assert "&lt;b&gt;&amp;" in page and "<b>" not in page
