"""The store opens only regular files, as the corpus readers do (issue 44, item 2): a FIFO, a
device, or a symbolic link to one, where the store keeps a file (a sweep's summary, the store
marker, a data file, a claim's heartbeat), is one line naming it and exit 2, at once: never a
command that waits in `open()` for a writer that never comes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from store_rows import result_rows

from xialpha.storage.location import NotRegularFile
from xialpha.storage.marker import MARKER
from xialpha.storage.opening import open_store
from xialpha.storage.store import ResultStore
from xialpha.storage.summary import SUMMARY_NAME

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 60  # a command that blocks is still running then


@pytest.fixture
def store(tmp_path) -> ResultStore:
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows("r1"))
    store.finish_sweep("r1")
    return store


def _plant(path: Path, kind: str) -> str:
    """Put a node of `kind` at `path` (replacing what is there); what a message calls it."""
    if path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
        return "is a FIFO (named pipe)"
    if kind == "link to a fifo":
        os.mkfifo(path.parent / "the-fifo")
        path.symlink_to(path.parent / "the-fifo")
        return "is a FIFO (named pipe), through a symbolic link to"
    if kind == "device":
        try:
            os.mknod(path, 0o20666, os.makedev(1, 3))  # a copy of /dev/null's node
        except PermissionError:
            pytest.skip("making a device node needs root")
        return "is a character device"
    path.symlink_to("/dev/null")
    return "is a character device, through a symbolic link to /dev/null"


KINDS = ["fifo", "link to a fifo", "device", "link to a device"]
PLACES = {
    "summary": f"results/sweep_id=r1/{SUMMARY_NAME}",
    "marker": MARKER,
    "data file": "results/sweep_id=r1/part-s0000000000000009-x.parquet",
}
COMMANDS = {"store ls": ["store", "ls"], "select": ["select"], "report": ["report"]}


def _xialpha(*argv: str) -> subprocess.CompletedProcess | None:
    """`xialpha ARGV` in a new process; None when it is still running after WAIT_S seconds."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "xialpha.cli", *argv],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=WAIT_S,
        )
    except subprocess.TimeoutExpired:
        return None


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_special_file_in_the_store_is_one_line_exit_2_at_once(store, kind, place, command):
    if command != "store ls" and kind not in ("fifo", "device"):
        pytest.skip("the links are read by the same code: store ls tries them")
    described = _plant(Path(store.uri) / PLACES[place], kind)
    done = _xialpha(*COMMANDS[command], store.uri)
    assert done is not None, f"{command} still waits after {WAIT_S} s"
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{PLACES[place]} {described}" in done.stderr, done.stderr
    assert "not a regular file" in done.stderr and "remove it" in done.stderr


def _ends_within(call, seconds: float, fifo: Path) -> tuple[bool, object]:
    """(whether `call` ended within `seconds`, its outcome); a call that waits on `fifo` is let go."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except Exception as exc:
            outcome["value"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    ended = not thread.is_alive()
    if not ended:  # release the open() of old code: a writer comes and goes
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
    return ended, outcome.get("value")


def test_a_claims_heartbeat_that_is_a_fifo_is_named_not_waited_on(store):
    directory = Path(store.uri) / "certifications" / "_claims"
    directory.mkdir(parents=True)
    heartbeat = directory / "test-set-abc.heartbeat.json"
    os.mkfifo(heartbeat)
    ended, outcome = _ends_within(lambda: store.claims.test_set_beat("abc"), 10, heartbeat)
    assert ended
    assert isinstance(outcome, NotRegularFile) and "test-set-abc.heartbeat.json is a FIFO" in str(outcome)


def test_a_claim_that_is_a_fifo_is_named_not_waited_on(store):
    claim = Path(store.uri) / "certifications" / "_claims" / "test-set-abc"
    claim.mkdir(parents=True)
    os.mkfifo(claim / "claim.json")
    ended, outcome = _ends_within(lambda: store.claims.test_set_claim("abc"), 10, claim / "claim.json")
    assert ended
    assert isinstance(outcome, NotRegularFile) and "claim.json is a FIFO" in str(outcome)


def test_a_marker_nested_deeply_is_not_a_marker_and_no_recursion_error(store):
    (Path(store.uri) / MARKER).write_text("[" * 100_000 + "]" * 100_000)
    done = _xialpha("store", "ls", store.uri)
    assert done is not None and done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"{MARKER} is not a valid xialpha store marker" in done.stderr
