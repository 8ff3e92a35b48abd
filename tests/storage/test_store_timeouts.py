"""Object stores that do not answer, or have no such bucket (issue 35, finding 3): a server that
accepts connections and never answers made `store ls` print "no answer within 10 s" and then never
exit (its request went on, and the exit waited for it); a missing bucket was "empty, no sweep has
written to it" (store ls) or exit 4, the code of a full disk (sweep). Now every request of an S3
store is bounded (tries of timeout / 3 seconds without a byte), the command ends, and a missing
bucket is one line naming it, exit 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from s3_server import s3_endpoint  # noqa: F401 (a fixture)
from sweep_processes import sweep_spec


@pytest.fixture
def stalled_endpoint():
    """host:port of a local socket that accepts every connection and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def _cli(*argv: str, timeout: float = 90) -> tuple[subprocess.CompletedProcess, float]:
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "XIALPHA_STORE_TIMEOUT": "3",
    }
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", *argv], capture_output=True, text=True, timeout=timeout, env=env
    )
    return done, time.monotonic() - start


@pytest.mark.parametrize("command", [["store", "ls"], ["select"]], ids=["store ls", "select"])
def test_a_stalled_server_ends_the_command_in_bounded_time(stalled_endpoint, command):
    uri = f"s3://xialpha/store?endpoint_override={stalled_endpoint}&scheme=http"
    try:
        done, took = _cli(*command, uri, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the command did not end within 60 s of a stalled server (XIALPHA_STORE_TIMEOUT=3)")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "no answer within 3 s" in done.stderr and took < 30, (took, done.stderr)


def test_the_s3_requests_are_bounded_by_the_timeout(monkeypatch):
    from xialpha.storage.location import Location

    monkeypatch.setenv("XIALPHA_STORE_TIMEOUT", "6")
    monkeypatch.setattr("xialpha.storage.location._probe", lambda *args: None)
    options = Location("s3://xialpha/store?endpoint_override=127.0.0.1:9&scheme=http").filesystem.__reduce__()[1][0]
    assert options["request_timeout"] == options["connect_timeout"] == 2.0


def test_a_missing_bucket_is_one_line_exit_2(s3_endpoint, tmp_path):
    uri = f"s3://no-such-bucket/store?endpoint_override={s3_endpoint}&scheme=http"
    spec = sweep_spec(tmp_path / "s.toml", "bucketless", cluster='kind = "local"\nworkers = 1')
    for argv in (["store", "ls", uri], ["sweep", str(spec), "--store", uri, "--quiet"]):
        done, _ = _cli(*argv)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (argv[0], done.stderr[-2000:])
        assert "the bucket 'no-such-bucket' does not exist" in done.stderr, done.stderr


def test_a_signal_while_the_exit_waits_for_the_store_is_one_line(stalled_endpoint):
    """Once the command has said "no answer", its exit waits for the request still in flight (a
    few seconds now): SIGTERM then ends it at once with one more line, not a traceback from an
    atexit hook."""
    import signal

    uri = f"s3://xialpha/store?endpoint_override={stalled_endpoint}&scheme=http"
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_EC2_METADATA_DISABLED": "true",
        "XIALPHA_STORE_TIMEOUT": "6",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "xialpha.cli", "store", "ls", uri],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        first = process.stderr.readline()
        assert "no answer within 6 s" in first, first
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143 and rest == "xialpha store: interrupted by SIGTERM\n", rest
