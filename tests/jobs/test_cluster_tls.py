"""TLS: [cluster.security] files -> distributed.Security with mutual TLS, checked at spec time;
sweeps over tls:// on a LocalCluster and on real `dask scheduler`/`dask worker` processes.

Certificates are made with `cryptography` (tests/certificates.py): a CA and one certificate for
127.0.0.1 and localhost (client, scheduler and workers share it), plus a second, untrusted CA.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dask
import pytest

from xialpha.errors import UserError
from xialpha.jobs.cluster import connect, make_security, slurm_cluster_kwargs
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store

pytest.importorskip("cryptography")
from certificates import write_certificates
from sweep_processes import DASK

CORPUS = '[corpus]\nloader = "synthetic"\nn_docs = 50\n'
PROCESS_TIMEOUT = 120  # s, any subprocess of these tests


def _security_toml(files: dict[str, str]) -> str:
    return "[cluster.security]\n" + "".join(f'{key} = "{path}"\n' for key, path in files.items())


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, str]:
    return write_certificates(tmp_path_factory.mktemp("tls"))


# --- Security objects and spec-time checks -----------------------------------------------------


def test_make_security_is_mutual_tls_with_encryption_required(certificates):
    security = make_security(certificates)
    assert security.require_encryption
    for role in ("client", "scheduler", "worker"):
        config = security.get_tls_config_for_role(role)
        assert config == {
            "ca_file": certificates["ca_file"],
            "cert": certificates["cert_file"],
            "key": certificates["key_file"],
            "ciphers": None,
        }
    assert make_security({}) is None


def _with_passphrase(key_file: str, directory: Path) -> str:
    """A copy of the PEM key `key_file` encrypted with a passphrase."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(Path(key_file).read_bytes(), None)
    path = directory / "encrypted-key.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        )
    )
    return str(path)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f, d: {**f, "ca_file": str(d / "absent.pem")}, "cluster.security.ca_file: file not found"),
        (lambda f, d: {**f, "ca_file": f["key_file"]}, "cluster.security.ca_file: not a PEM CA certificate"),
        (
            lambda f, d: {**f, "key_file": write_certificates(d, "other-")["key_file"]},
            "cluster.security.cert_file: not a PEM certificate matching key_file",
        ),
        (
            lambda f, d: {**f, "key_file": _with_passphrase(f["key_file"], d)},  # was "internal error: OSError"
            "cluster.security.key_file: ",
        ),
    ],
)
def test_bad_tls_files_fail_when_the_spec_is_parsed(certificates, tmp_path, change, message):
    files = change(certificates, tmp_path)
    with pytest.raises(UserError) as info:
        parse_spec(CORPUS + _security_toml(files), source="s.toml")
    assert str(info.value).startswith("s.toml: " + message) and "\n" not in str(info.value)


def test_clear_text_address_with_tls_is_refused(certificates):
    with pytest.raises(UserError, match="cluster.address: must be a tls:// address when cluster.security is set"):
        parse_spec(CORPUS + '[cluster]\naddress = "tcp://127.0.0.1:8786"\n' + _security_toml(certificates))
    spec = parse_spec(CORPUS + _security_toml(certificates))
    with pytest.raises(UserError, match="--scheduler: must be a tls:// address"):
        with connect(spec.cluster, address="tcp://127.0.0.1:8786"):
            pass


def test_slurm_worker_jobs_get_the_tls_files(certificates, tmp_path, monkeypatch):
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    monkeypatch.chdir(tmp_path)
    spec = parse_spec(
        CORPUS + '[cluster]\nkind = "slurm"\nmemory_limit = "1GiB"\n' + _security_toml(certificates)
    ).cluster
    with dask_jobqueue.SLURMCluster(security=make_security(spec.security), **slurm_cluster_kwargs(spec)) as cluster:
        script = cluster.job_script()
        assert cluster.scheduler_address.startswith("tls://")
    assert f"--tls-ca-file {certificates['ca_file']}" in script and "--protocol tls://" in script


# --- real clusters over TLS ----------------------------------------------------------------------


@pytest.mark.cluster
def test_local_cluster_speaks_tls_and_refuses_an_untrusted_client(certificates, tmp_path):
    spec = parse_spec(CORPUS + "[cluster]\nworkers = 1\n" + _security_toml(certificates)).cluster
    strangers = parse_spec(CORPUS + _security_toml(write_certificates(tmp_path, "stranger-"))).cluster
    with connect(spec) as client:
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        assert all(w.startswith("tls://") for w in client.scheduler_info()["workers"])
        assert client.submit(sum, [1, 2, 3]).result(timeout=60) == 6
        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
            with pytest.raises(UserError, match="cannot reach a Dask scheduler"):
                with connect(strangers, address=address):
                    pass


def _sweep_spec(path: Path, files: dict[str, str], cluster: str) -> Path:
    path.write_text(f"""
[sweep]
id = "tls"
[corpus]
loader = "synthetic"
n_docs = 120
n_categories = 2
seed = 3
[svm]
C = [0.5, 2.0]
[cluster]
{cluster}
{_security_toml(files)}""")
    return path


def _run_sweep(spec: Path, store: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(store), "--quiet"],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
    )


def _check_complete(store: Path, n_rows: int) -> None:
    results = open_store(str(store), create=False, writable=True).datasets.read_results("tls", include_failed=True)
    assert results.num_rows == n_rows
    assert set(results["status"].to_pylist()) == {"ok"}


@pytest.mark.cluster
def test_sweep_over_tls_on_a_local_cluster(certificates, tmp_path):
    spec = _sweep_spec(tmp_path / "tls.toml", certificates, 'kind = "local"\nworkers = 1')
    done = _run_sweep(spec, tmp_path / "store")
    assert done.returncode == 0, done.stderr
    assert "4 rows stored, 0 skipped" in done.stdout
    _check_complete(tmp_path / "store", 4)


@pytest.mark.cluster
def test_sweep_over_tls_on_scheduler_and_worker_processes(certificates, tmp_path):
    tls = [
        "--tls-ca-file",
        certificates["ca_file"],
        "--tls-cert",
        certificates["cert_file"],
        "--tls-key",
        certificates["key_file"],
    ]
    scheduler_file = tmp_path / "scheduler.json"
    with contextlib.ExitStack() as stack:

        def start(argv: list[str], log: str) -> None:
            """A process in its own session, SIGKILLed with its children when the test ends."""
            out = stack.enter_context((tmp_path / log).open("w"))
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            stack.callback(process.wait, timeout=30)
            stack.callback(os.killpg, process.pid, signal.SIGKILL)

        start(
            [
                *DASK,
                "scheduler",
                "--protocol",
                "tls",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(scheduler_file),
                *tls,
            ],
            "scheduler.log",
        )
        deadline = time.monotonic() + PROCESS_TIMEOUT
        address = ""
        while not address and time.monotonic() < deadline:  # the file can exist before its JSON is written
            with contextlib.suppress(OSError, ValueError):
                address = json.loads(scheduler_file.read_text())["address"]
            time.sleep(0.2)
        assert address.startswith("tls://127.0.0.1:")
        start(
            [*DASK, "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--dashboard-address", ":0", *tls],
            "worker.log",
        )
        spec = _sweep_spec(tmp_path / "tls.toml", certificates, f'kind = "address"\naddress = "{address}"')
        done = _run_sweep(spec, tmp_path / "store")
        assert done.returncode == 0, done.stderr + (tmp_path / "scheduler.log").read_text()[-3000:]
        _check_complete(tmp_path / "store", 4)
        # A client with certificates from another CA fails the handshake: a one-line user error.
        strangers = parse_spec(CORPUS + _security_toml(write_certificates(tmp_path, "stranger-"))).cluster
        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
            with pytest.raises(UserError, match="^--scheduler: cannot reach a Dask scheduler"):
                with connect(strangers, address=address):
                    pass
