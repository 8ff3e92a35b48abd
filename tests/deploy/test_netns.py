"""A multi-host sweep without a real network: the scheduler and the driver in one network namespace,
each worker in its own, joined by veth pairs to a bridge, everything over mutual TLS; one worker's
link is cut mid-sweep (its packets silently dropped, as when a host drops off the network) and
the sweep finishes on the other worker with nothing lost.

The namespaces, links and addresses (10.213.0.0/24) exist only inside namespaces this test creates
(as root, with iproute2) and deletes at the end; no traffic leaves them. Elsewhere it skips with the
reason. The scheduler and workers detect the lost worker within seconds thanks to short TCP and
worker timeouts (DASK_DISTRIBUTED__COMM__TIMEOUTS__TCP, ...__WORKER_TTL), as a site can set them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sweep_processes import (
    DASK,
    DEADLINE,
    expected_keys,
    kill,
    raw_keys,
    result_files,
    start,
    sweep_argv,
    sweep_spec,
    wait_for,
)

pytestmark = [pytest.mark.netns, pytest.mark.cluster]
pytest.importorskip("cryptography")
from certificates import write_certificates  # noqa: E402

SWEEP = "netns"
SUBNET = "10.213.0"  # only inside this test's namespaces
SCHEDULER = f"{SUBNET}.1"
WORKERS = {"w1": f"{SUBNET}.11", "w2": f"{SUBNET}.12"}
# Fast failure detection: a silent peer is dropped after 12 s (the least Dask allows) of unacknowledged
# data or keepalives, and a worker without heartbeats after 15 s.
TIMEOUTS = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__TCP": "12s", "DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "15s"}


def _ip(*args: str, namespace: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True, text=True, timeout=30)


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2 (ip) not found"
    probe = f"xa-probe-{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except subprocess.CalledProcessError as exc:
        return f"ip netns add failed: {exc.stderr.strip()}"
    _ip("netns", "del", probe)
    return None


@contextlib.contextmanager
def _network(tag: str):
    """Namespaces {"s", "w1", "w2"} -> name: s holds a bridge with SCHEDULER, each worker a veth to it.
    Yields (namespaces, {worker: the bridge-side link name in s, whose `down` cuts that worker off})."""
    names = {role: f"xa{tag}{role}" for role in ("s", *WORKERS)}
    created = []
    try:
        for name in names.values():
            _ip("netns", "add", name)
            created.append(name)
            _ip("link", "set", "lo", "up", namespace=name)
        s = names["s"]
        _ip("link", "add", "br0", "type", "bridge", namespace=s)
        _ip("addr", "add", f"{SCHEDULER}/24", "dev", "br0", namespace=s)
        _ip("link", "set", "br0", "up", namespace=s)
        links = {}
        for worker, address in WORKERS.items():
            outer, inner = f"xa{tag}{worker}b", f"xa{tag}{worker}e"  # <= 15 characters
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", outer, "netns", s)
            _ip("link", "set", inner, "netns", names[worker])
            _ip("link", "set", outer, "master", "br0", namespace=s)
            _ip("link", "set", outer, "up", namespace=s)
            _ip("addr", "add", f"{address}/24", "dev", inner, namespace=names[worker])
            _ip("link", "set", inner, "up", namespace=names[worker])
            links[worker] = outer
        yield names, links
    finally:
        for name in created:  # deleting a namespace deletes its links
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


def _spec(path: Path, files: dict[str, str]) -> Path:
    security = "".join(f'{key} = "{value}"\n' for key, value in files.items())
    cluster = f'kind = "address"\naddress = "tls://{SCHEDULER}:8786"\n[cluster.security]\n{security}'
    # 8 C paths, four rounds on 2 workers: w1 still holds paths when it is cut off after the first stored batch
    # (with 4, a fast sweep could end on w2 alone before the scheduler missed w1)
    return sweep_spec(path, SWEEP, n_docs=1500, categories=8, cluster=cluster)


def test_a_worker_cut_off_mid_sweep_over_tls_loses_nothing(tmp_path):
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    files = write_certificates(tmp_path, addresses=(SCHEDULER, *WORKERS.values()))
    tls = ["--tls-ca-file", files["ca_file"], "--tls-cert", files["cert_file"], "--tls-key", files["key_file"]]
    spec, store = _spec(tmp_path / "netns.toml", files), tmp_path / "store"
    expected = expected_keys(spec, tmp_path / "plan-store")
    processes = []
    with _network(f"{os.getpid() % 10000:04d}") as (names, links):
        try:

            def run(namespace: str, argv: list[str], log: str):
                processes.append(start(["ip", "netns", "exec", names[namespace], *argv], tmp_path / log, env=TIMEOUTS))
                return processes[-1]

            run(
                "s",
                [
                    *DASK,
                    "scheduler",
                    "--protocol",
                    "tls",
                    "--host",
                    SCHEDULER,
                    "--port",
                    "8786",
                    "--dashboard-address",
                    ":0",
                    *tls,
                ],
                "scheduler.log",
            )
            for worker, address in WORKERS.items():
                run(
                    worker,
                    [
                        *DASK,
                        "worker",
                        f"tls://{SCHEDULER}:8786",
                        "--host",
                        address,
                        "--name",
                        worker,
                        "--nthreads",
                        "1",
                        "--dashboard-address",
                        ":0",
                        *tls,
                    ],
                    f"{worker}.log",
                )
            # the driver only once both workers are registered: a sweep that starts sooner finds no
            # scheduler listening yet (it refuses, exit 2) or one worker, which would do all the work
            scheduler_log = tmp_path / "scheduler.log"
            wait_for(
                lambda: scheduler_log.read_text().count("Register worker") >= len(WORKERS),
                "both workers registered",
                process=processes[0],
            )
            driver = run("s", sweep_argv(spec, store), "driver.log")
            wait_for(lambda: result_files(store, SWEEP), "the first stored batch", process=driver)
            _ip("link", "set", links["w1"], "down", namespace=names["s"])  # w1 drops off the network
            stored_at_cut = len(raw_keys(store, SWEEP))
            assert driver.poll() is None and stored_at_cut < len(expected), "the sweep ended before the cut"
            driver.wait(timeout=DEADLINE)
        finally:
            for process in processes:
                kill(process)
    log = (tmp_path / "driver.log").read_text()
    assert driver.returncode == 0, log + (tmp_path / "scheduler.log").read_text()[-3000:]
    raw = raw_keys(store, SWEEP)
    assert set(raw) == expected and set(raw.values()) == {1}  # every key exactly once, none lost
    assert f"{len(expected)} rows stored, 0 skipped (already stored), 0 failed" in log
    # Counted at the end: only w2 is left, so w1 was really cut off, not just idle.
    assert re.search(r"on 1 threads", log), log
    assert "Remove worker" in (tmp_path / "scheduler.log").read_text()
