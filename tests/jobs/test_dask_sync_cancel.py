"""A Ctrl-C that cuts a Dask call short before it began adds no traceback after the command's line:
distributed's `sync` then cancels the call through a loop callback that raises NameError (its future
does not exist yet), which tornado logs with its traceback; `xialpha.jobs.cluster.connect` drops that
record (CI: test_ctrl_c_while_the_sweep_shows_its_progress_adds_one_line printed 13 such lines)."""

from __future__ import annotations

import asyncio
import logging
import threading
import types

import distributed.utils
import pytest

from xialpha.jobs.cluster import SYNC_CANCEL_ERRORS, quiet_sync_cancel_errors


class _InterruptedEvent(threading.Event):
    """sync's event, whose wait is interrupted at once: Ctrl-C before the loop ran the call."""

    def wait(self, timeout=None):
        raise KeyboardInterrupt


class _Kept(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _interrupted_sync_records(monkeypatch) -> list[logging.LogRecord]:
    """What tornado's application logger (distributed's config gives it its own stderr handler, not
    propagated) passes on during a real `distributed.utils.sync` call interrupted before it began."""
    logger, kept = logging.getLogger("tornado.application"), _Kept()
    runner = distributed.utils.LoopRunner(asynchronous=False)
    runner.start()
    logger.addHandler(kept)
    try:
        with monkeypatch.context() as patched:
            events = types.SimpleNamespace(Event=_InterruptedEvent, get_ident=threading.get_ident)
            patched.setattr(distributed.utils, "threading", events)
            go = threading.Event()
            runner.loop.add_callback(go.wait, 60)  # the loop starts the call only after the interrupt
            with pytest.raises(KeyboardInterrupt):
                distributed.utils.sync(runner.loop, asyncio.sleep, 0.1)
            go.set()
        ran = threading.Event()
        runner.loop.add_callback(ran.set)  # run after the call's cancel callback (the loop runs them in order)
        assert ran.wait(60)
    finally:
        logger.removeHandler(kept)
        runner.stop()
    return kept.records


@pytest.fixture
def unquieted():
    logger = logging.getLogger("tornado.application")
    logger.removeFilter(SYNC_CANCEL_ERRORS)
    yield
    logger.removeFilter(SYNC_CANCEL_ERRORS)


def test_dask_logs_the_cancel_of_an_interrupted_call_as_an_error_with_a_name_error(unquieted, monkeypatch):
    """The behaviour the filter is for: without it, the record is there (a newer Dask that fixed it fails here)."""
    records = _interrupted_sync_records(monkeypatch)
    assert [type(record.exc_info[1]) for record in records if record.exc_info] == [NameError]


def test_connect_drops_that_error_and_nothing_else(unquieted, monkeypatch):
    quiet_sync_cancel_errors()
    quiet_sync_cancel_errors()  # once per process, however often a cluster connects
    assert logging.getLogger("tornado.application").filters.count(SYNC_CANCEL_ERRORS) == 1
    assert _interrupted_sync_records(monkeypatch) == []
    try:
        raise NameError("another callback's")
    except NameError as exc:
        other = logging.LogRecord(
            "tornado.application",
            logging.ERROR,
            __file__,
            1,
            "Exception in callback %r",
            ("f",),
            (NameError, exc, None),
        )
    assert SYNC_CANCEL_ERRORS.filter(other)
