"""A test set's claim: who certifies on it, whether that certification still runs, its heartbeat.

A certification claims its test set before it trains (`store.claims.claim_test_set`), with what
redoing it exactly needs (its id, selection, confidence, draws, seed) and what tells whether its
process still runs: host, pid and the process's start time. While it trains it rewrites the
claim's heartbeat every HEARTBEAT_SECONDS. A claim whose certification stored no rows is
pending: its holder still runs, or it ended (killed, crashed) before it could store them. A later
certification tells which, as Optuna tells a stale trial: on the claim's host the process is
gone (or its pid is another process's now); from another host, its last heartbeat is older than
STALE_SECONDS. An ended claim is resumed by certifying its selection again (see
`xialpha.selection.certification`), so the test set is neither lost nor used twice.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import psutil

from xialpha.storage.schema import CertificationColumn

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries

Cert = CertificationColumn

HEARTBEAT_SECONDS = 30.0
STALE_SECONDS = 600.0  # 20 heartbeats missed: ended, for a holder on another host (clocks agreeing within minutes)


def claim_content(
    certification_id: str, selection_id: str, test_split: str, *, confidence: float, draws: int, seed: int
) -> dict:
    """What a claim holds: the certification (to resume it with the same draws: named as its
    columns) and its process."""
    return {
        Cert.CERTIFICATION_ID: certification_id,
        Cert.SELECTION_ID: selection_id,
        Cert.TEST_SPLIT: test_split,
        Cert.CONFIDENCE: confidence,
        Cert.DRAWS: draws,
        "seed": seed,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "process_started": psutil.Process().create_time(),
        "claimed_at": _now(),
    }


def holder_ended(claim: dict, last_beat: dict | None) -> str | None:
    """Why the certification holding `claim` has ended (a clause: "process 12 on host h is gone"),
    or None when it may still run (or the claim is too damaged to tell)."""
    pid, host = claim.get("pid"), claim.get("host")
    if not isinstance(pid, int) or not isinstance(host, str):
        return None
    if host == socket.gethostname():
        return None if _running(pid, claim.get("process_started")) else f"process {pid} on {host} is gone"
    last = (last_beat or {}).get("at", claim.get("claimed_at"))
    if not isinstance(last, str):  # fromisoformat would raise TypeError, caught below
        return None
    try:
        age = (datetime.datetime.now(datetime.UTC) - datetime.datetime.fromisoformat(last)).total_seconds()
    except (TypeError, ValueError):
        return None
    if age <= STALE_SECONDS:
        return None
    return f"process {pid} on {host} has given no sign of life for {age / 60:.0f} minutes"


def _running(pid: int, started: object) -> bool:
    """Process `pid` of this host runs and is the one that started at `started` (epoch seconds)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return not isinstance(started, (int, float)) or abs(process.create_time() - started) < 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # another user's process: it runs
        return True


@contextlib.contextmanager
def heartbeat(store: StoreQueries, test_fingerprint: str, seconds: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Inside, the claim of `test_fingerprint` gets a heartbeat every `seconds`; deleted on the way out."""
    stop = threading.Event()

    def beat() -> None:
        with contextlib.suppress(Exception):  # a missed beat only makes the claim look older
            store.claims.beat_test_set(test_fingerprint, {"at": _now()})

    def beats() -> None:
        while not stop.wait(seconds):
            beat()

    beat()
    thread = threading.Thread(target=beats, name="xialpha-claim-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        with contextlib.suppress(Exception):
            store.claims.beat_test_set(test_fingerprint, None)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()
