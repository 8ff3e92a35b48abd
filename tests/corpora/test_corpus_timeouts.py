"""A corpus read over http:// (any fsspec URI) from a server that stalls ends within
$XIALPHA_STORE_TIMEOUT seconds with one line naming the file, as a remote store does (issue 42 item 5:
a sweep's corpus over a stalled http server was still running after 150 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from stalling_server import stalling_server

from xialpha.corpora.loading import load_corpus
from xialpha.errors import UserError

DOCUMENTS = "".join(
    json.dumps({"text": f"stock bank w{i % 7}", "label": [f"c{i % 2}"], "split": "test" if i % 4 == 0 else "train"})
    + "\n"
    for i in range(80)
).encode()


@pytest.fixture(params=["silent", "answers HEAD"])
def stalled_corpus(request):
    """The URL of a JSON lines corpus on a local server that accepts connections and holds every
    request ("silent"), or answers HEAD with the file's size and then holds every GET."""
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(DOCUMENTS)}\r\nAccept-Ranges: bytes\r\n\r\n".encode()

    def answer(received: bytes) -> bytes | None:
        return head if request.param == "answers HEAD" and received.startswith(b"HEAD") else None

    with stalling_server(answer) as endpoint:
        yield f"http://{endpoint}/docs.jsonl"


def _ended(call, seconds: float):
    """(the exception `call()` raised, or None; whether it ended within `seconds`): a call that
    hangs fails the test instead of blocking the suite."""
    outcome: dict = {}

    def run() -> None:
        try:
            call()
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome.get("error"), not thread.is_alive()


@pytest.mark.parametrize("loader", ["table", "svmlight"])
def test_reading_a_corpus_from_a_stalled_server_ends_within_the_timeout(stalled_corpus, loader, monkeypatch):
    monkeypatch.setenv("XIALPHA_STORE_TIMEOUT", "1")
    arguments = {"path": stalled_corpus, "format": "jsonl"} if loader == "table" else {"path": stalled_corpus}
    start = time.monotonic()
    error, ended = _ended(lambda: load_corpus(loader, **arguments), 30)
    assert ended, "reading the corpus did not end within 30 s of a stalled server (XIALPHA_STORE_TIMEOUT=1)"
    assert isinstance(error, UserError), error
    assert f"{stalled_corpus}: no answer within 1 s" in str(error) and "$XIALPHA_STORE_TIMEOUT" in str(error)
    assert time.monotonic() - start < 20


def test_a_sweep_of_a_corpus_on_a_stalled_server_is_one_line_and_stores_nothing(stalled_corpus, tmp_path):
    spec = tmp_path / "http.toml"
    spec.write_text(
        f'[sweep]\nid = "h"\n[corpus]\nloader = "table"\npath = "{stalled_corpus}"\nsplit_column = "split"\n'
        'train_split = "train"\ntest_split = "test"\n[svm]\nC = [1.0]\n[cluster]\nworkers = 1\n'
    )
    argv = [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(tmp_path / "store"), "--dry-run"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env={**os.environ, "XIALPHA_STORE_TIMEOUT": "2"}
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the dry run did not end within 120 s of a stalled corpus server (XIALPHA_STORE_TIMEOUT=2)")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert f"corpus.path: {stalled_corpus}: no answer within 2 s" in done.stderr
    assert not (tmp_path / "store").exists()
