"""Connecting to where the sweep runs: a LocalCluster, a scheduler address, SLURM or Kubernetes.

The same task graph runs on all of them; only this module knows how each is started.
`check_cluster` validates `[cluster]` when the spec is parsed (so a typo fails before any
corpus is loaded or store touched); `connect` starts or reaches the cluster. Dask is imported
inside the functions that need it, so validating a spec stays light.

How its worker processes start (SIGINT blocked; a local cluster's forked from a fork server that
imported their modules) is xialpha.jobs.worker_processes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from xialpha.errors import UserError
from xialpha.spec.cluster import ClusterSpec
from xialpha.jobs.worker_processes import forked_local_workers, terminal_interrupts_blocked
from xialpha.spec.tables import parse_size

if TYPE_CHECKING:
    from distributed import Client
    from distributed.security import Security

SECURITY_FILES = ("ca_file", "cert_file", "key_file")
ADDRESS = re.compile(r"^((tcp|tls|ws|wss|ucx)://)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$")
WALLTIME = re.compile(r"^(\d+-)?(\d{1,2}:)?\d{1,2}:\d{2}$")  # SLURM: [D-][HH:]MM:SS
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
WORKER_PORT = 8788  # each Kubernetes worker's dashboard/health port, as the Dask operator expects
IMAGE_UID = 10001  # the non-root user of deploy/Dockerfile


@contextlib.contextmanager
def connect(spec: ClusterSpec, *, address: str | None = None, workers: int | None = None,
            client: Client | None = None, threads_only: bool = False) -> Iterator[Client]:
    """A Dask client for the spec; `address` (--scheduler) and `workers` (--workers) override it;
    a running `client` is used as it is (and left open). threads_only: a local cluster's workers
    are threads of this process (quick to start; for work that only reads and plans, a dry run).

    A cluster it starts is closed on the way out, also on KeyboardInterrupt (Ctrl-C, or SIGTERM as
    the CLI raises it): SLURM worker jobs are cancelled, local worker processes stopped, and Dask's
    warnings about the tasks cut short are silenced meanwhile.
    """
    from distributed import Client

    if client is not None:
        yield client
        return
    security = make_security(spec.security)
    if address is not None:
        _check_address("--scheduler", address, security)
    name = "--scheduler" if address else "cluster.address"
    kind = "address" if address else spec.kind
    address = address or spec.address
    silenced = False
    dask_logger = logging.getLogger("distributed")
    dask_level = dask_logger.level
    try:
        with contextlib.ExitStack() as stack:
            if kind == "address":
                client = _client(name, address, security)
            else:
                if kind == "local" and not threads_only:
                    stack.enter_context(forked_local_workers(spec))
                with terminal_interrupts_blocked():
                    cluster = stack.enter_context(_start_cluster(kind, spec, workers, security, threads_only))
                client = Client(cluster, security=security)
            stack.enter_context(client)
            if kind == "local":
                from xialpha.jobs.worker_logging import QuietTaskFailures

                client.register_plugin(QuietTaskFailures())
                # runs first on the way out: closing a busy machine's workers logs "still alive
                # after 4.0 seconds, killing" warnings about processes that are being stopped anyway
                stack.callback(dask_logger.setLevel, logging.ERROR)
            try:
                yield client
            except KeyboardInterrupt:  # the cluster closes with tasks in flight: one line is printed, not Dask's warnings
                silenced = True
                logging.disable(logging.CRITICAL)
                if kind == "local":  # its workers write to our stderr too
                    with contextlib.suppress(Exception):
                        client.run(logging.disable, logging.CRITICAL, callback_timeout=5)
                raise
    finally:
        if silenced:
            logging.disable(logging.NOTSET)
        dask_logger.setLevel(dask_level)


def check_cluster(spec: ClusterSpec) -> None:
    """Validate `[cluster]` at spec time: kind options, sizes, the address and the TLS files.

    Raises UserError naming the key, e.g. `cluster.walltime: must be a SLURM time [D-]HH:MM:SS, got '2h'`.
    """
    if spec.memory_limit is not None and spec.memory_limit != "auto":
        parse_size("cluster.memory_limit", spec.memory_limit)
    if spec.security:
        check_security_files(spec.security)
    if spec.address is not None:
        _check_address("cluster.address", spec.address, spec.security)
    if spec.kind == "slurm":
        _check_options("slurm", spec.options, SLURM_OPTIONS)
        if spec.memory_limit in (None, "auto"):
            raise UserError('cluster.memory_limit: is required for kind "slurm" (memory per worker, e.g. "8GiB")')
    elif spec.kind == "kubernetes":
        _check_options("kubernetes", spec.options, KUBERNETES_OPTIONS)
        if "image" not in spec.options:
            raise UserError('cluster.image: is required for kind "kubernetes" (an image with xialpha installed, see deploy/Dockerfile)')
        if spec.security:
            raise UserError('cluster.security: not supported for kind "kubernetes"; use a service mesh or kind = "address" with tls://')


def check_security_files(files: dict) -> None:
    """Each of ca_file, cert_file, key_file exists and is PEM; the certificate matches the key."""
    for key in SECURITY_FILES:
        if key not in files:
            raise UserError(f"cluster.security.{key}: is required with the other TLS files")
        if not os.path.isfile(files[key]):
            raise UserError(f"cluster.security.{key}: file not found: {files[key]}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cafile=files["ca_file"])
    except (ssl.SSLError, ValueError) as exc:
        raise UserError(f"cluster.security.ca_file: not a PEM CA certificate: {files['ca_file']} ({exc})") from None
    try:
        context.load_cert_chain(files["cert_file"], files["key_file"])
    except (ssl.SSLError, ValueError) as exc:
        raise UserError(f"cluster.security.cert_file: not a PEM certificate matching key_file "
                        f"{files['key_file']}: {files['cert_file']} ({exc})") from None


def make_security(files: dict) -> Security | None:
    """distributed.Security for mutual TLS from ca_file, cert_file and key_file (None without them).

    The one certificate serves the client, scheduler and workers; encryption is required, so a
    tcp:// address is refused rather than silently used in clear text.
    """
    if not files:
        return None
    from distributed.security import Security

    check_security_files(files)
    return Security(
        tls_ca_file=files["ca_file"],
        tls_client_cert=files["cert_file"],
        tls_client_key=files["key_file"],
        tls_scheduler_cert=files["cert_file"],
        tls_scheduler_key=files["key_file"],
        tls_worker_cert=files["cert_file"],
        tls_worker_key=files["key_file"],
        require_encryption=True,
    )


def slurm_cluster_kwargs(spec: ClusterSpec) -> dict:
    """dask_jobqueue.SLURMCluster keyword arguments from `[cluster]`.

    One SLURM job runs `processes` workers (default 1), each with threads_per_worker threads
    and memory_limit memory, so a job asks for processes x threads cores and processes x
    memory_limit bytes. Other keys (account, queue, walltime, ...) pass through unchanged. The
    scheduler's dashboard takes a free port, as a local cluster's does (the sweep prints its link):
    on a shared login node 8787 is often taken, and Dask would warn in five lines.
    """
    check_cluster(spec)
    options = dict(spec.options)
    processes = options.pop("processes", 1)
    return {
        "cores": processes * spec.threads_per_worker,
        "processes": processes,
        "memory": processes * parse_size("cluster.memory_limit", spec.memory_limit),
        "scheduler_options": {"dashboard_address": ":0"},
        **options,
    }


def kubernetes_cluster_spec(spec: ClusterSpec, n_workers: int | None = None) -> dict:
    """The DaskCluster resource (kubernetes.dask.org/v1) for `[cluster] kind = "kubernetes"`.

    Containers set `command` (not `args`) because the xialpha image's ENTRYPOINT is `xialpha`;
    workers get --nthreads threads_per_worker, --memory-limit memory_limit and `resources`;
    pods run as the image's non-root user. deploy/kubernetes/daskcluster.yaml is this for
    config/kubernetes.toml.
    """
    check_cluster(spec)
    options = spec.options
    name = options.get("name", "xialpha")
    image = {"image": options["image"], "imagePullPolicy": options.get("image_pull_policy", "IfNotPresent")}
    env = {"env": [{"name": key, "value": value} for key, value in options["env"].items()]} if "env" in options else {}
    worker_command = ["dask", "worker", "--name", "$(DASK_WORKER_NAME)", "--nthreads", str(spec.threads_per_worker),
                      "--dashboard-address", str(WORKER_PORT)]
    if spec.memory_limit is not None:
        worker_command += ["--memory-limit", spec.memory_limit]
    worker = {"name": "worker", **image, **env, "command": worker_command,
              "ports": [{"name": "http-dashboard", "containerPort": WORKER_PORT, "protocol": "TCP"}]}
    if "resources" in options:
        worker["resources"] = options["resources"]
    health = {"httpGet": {"port": "http-dashboard", "path": "/health"}}
    scheduler = {
        "name": "scheduler", **image, **env, "command": ["dask", "scheduler", "--host", "0.0.0.0"],
        "ports": [{"name": "tcp-comm", "containerPort": 8786, "protocol": "TCP"},
                  {"name": "http-dashboard", "containerPort": 8787, "protocol": "TCP"}],
        "readinessProbe": {**health, "initialDelaySeconds": 0, "periodSeconds": 1, "timeoutSeconds": 300},
        "livenessProbe": {**health, "initialDelaySeconds": 15, "periodSeconds": 20},
    }
    security_context = {"runAsNonRoot": True, "runAsUser": IMAGE_UID, "runAsGroup": IMAGE_UID}
    return {
        "apiVersion": "kubernetes.dask.org/v1",
        "kind": "DaskCluster",
        "metadata": {"name": name},
        "spec": {
            "worker": {
                "replicas": n_workers or spec.workers or 2,
                "spec": {"securityContext": security_context, "containers": [worker]},
            },
            "scheduler": {
                "spec": {"securityContext": security_context, "containers": [scheduler]},
                "service": {
                    "type": "ClusterIP",
                    "selector": {"dask.org/cluster-name": name, "dask.org/component": "scheduler"},
                    "ports": [{"name": "tcp-comm", "protocol": "TCP", "port": 8786, "targetPort": "tcp-comm"},
                              {"name": "http-dashboard", "protocol": "TCP", "port": 8787, "targetPort": "http-dashboard"}],
                },
            },
        },
    }


def slurm_cluster_class() -> type:
    """dask_jobqueue.SLURMCluster, imported without letting dask_jobqueue take SIGINT: its runner
    module installs a handler calling sys.exit(), which made Ctrl-C a silent exit 0."""
    handler = signal.getsignal(signal.SIGINT)
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise UserError('cluster.kind = "slurm" needs dask-jobqueue: pip install "xialpha[slurm]"') from None
    finally:
        if threading.current_thread() is threading.main_thread() and handler is not None:
            signal.signal(signal.SIGINT, handler)
    return SLURMCluster


# --- starting clusters ---------------------------------------------------------------------


def _client(name: str, address: str, security: Security | None) -> Client:
    """A client of a running scheduler; waits distributed.comm.timeouts.connect (dask config), except
    where nothing listens at the address at all (refused at once: said at once)."""
    import dask
    from distributed import Client

    timeout = dask.config.get("distributed.comm.timeouts.connect")
    _refuse_if_nothing_listens(name, address)
    try:
        return Client(address, security=security, timeout=timeout)
    except OSError as exc:
        raise UserError(f"{name}: cannot reach a Dask scheduler at {address} within {timeout} "
                        f"({type(exc).__name__}); is it running, with the same TLS settings?") from None


def _refuse_if_nothing_listens(name: str, address: str) -> None:
    """UserError when a tcp:// or tls:// address refuses a connection: no scheduler runs there, and
    waiting for Dask's connect timeout would not start one. Anything else (no answer yet, a name
    that does not resolve yet) is left to Dask's retries."""
    match = ADDRESS.match(address)
    if not match or (match[2] or "tcp") not in ("tcp", "tls") or not match[4]:
        return
    host, port = match[3].strip("[]"), int(match[4][1:])
    try:
        socket.create_connection((host, port), timeout=2).close()
    except ConnectionRefusedError:
        raise UserError(f"{name}: no Dask scheduler listens at {address} (connection refused); is it running?") from None
    except OSError:
        return


def _start_cluster(kind: str, spec: ClusterSpec, workers: int | None, security: Security | None,
                   threads_only: bool = False):
    n_workers = workers or spec.workers
    if kind == "local":
        from distributed import LocalCluster

        cores = os.cpu_count() or 1
        return LocalCluster(
            n_workers=n_workers or max(1, cores // spec.threads_per_worker),
            threads_per_worker=spec.threads_per_worker,
            processes=not threads_only,
            memory_limit=spec.memory_limit or "auto",
            dashboard_address=None if threads_only else ":0",
            protocol="tls://" if security else None,
            security=security,
            host=None if threads_only else "127.0.0.1",  # threads talk in-process (inproc://)
        )
    if kind == "slurm":
        cluster = slurm_cluster_class()(security=security, **slurm_cluster_kwargs(spec))
        # Not scale(n): it never replaces jobs that end (walltime, scancel, node failure), and the
        # sweep would wait forever; adapt keeps n workers, submitting new jobs for lost ones.
        n = n_workers or 1
        cluster.adapt(minimum=n, maximum=n)
        return cluster
    try:
        from dask_kubernetes.operator import KubeCluster
    except ImportError:
        raise UserError('cluster.kind = "kubernetes" needs dask-kubernetes: pip install "xialpha[kubernetes]"') from None
    try:
        return KubeCluster(custom_cluster_spec=kubernetes_cluster_spec(spec, n_workers),
                           namespace=spec.options.get("namespace"))
    except TimeoutError as exc:  # the DaskCluster was created (and deleted again) but nothing acted on it
        raise UserError(f'cluster.kind = "kubernetes": {" ".join(str(exc).split())}') from None


# --- option validation ---------------------------------------------------------------------


def _check_address(name: str, address: str, security: dict | Security | None) -> None:
    if not ADDRESS.match(address):
        raise UserError(f"{name}: not a scheduler address like tcp://host:8786 or tls://host:8786, got {address!r}")
    if security and not address.startswith("tls://"):
        raise UserError(f"{name}: must be a tls:// address when cluster.security is set, got {address!r}")
    if not security and address.startswith("tls://"):
        raise UserError(f"{name}: a tls:// address needs [cluster.security] with ca_file, cert_file and key_file")


def _check_options(kind: str, options: dict, checks: dict) -> None:
    for key, value in options.items():
        if key not in checks:
            hint = {"cores": "threads_per_worker", "memory": "memory_limit", "n_workers": "workers"}.get(key)
            raise UserError(f'cluster.{key}: unknown key for kind "{kind}"' + (f"; use {hint}" if hint else ""))
        checks[key](f"cluster.{key}", value)


def _string(path: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise UserError(f"{path}: must be a non-empty string, got {value!r}")
    return value


def _string_list(path: str, value) -> list:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{path}: must be a list of strings, got {value!r}")
    return value


def _positive_int(path: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{path}: must be an integer >= 1, got {value!r}")
    return value


def _positive_number(path: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise UserError(f"{path}: must be a number > 0, got {value!r}")
    return value


def _walltime(path: str, value) -> str:
    if not isinstance(value, str) or not WALLTIME.match(value):
        raise UserError(f"{path}: must be a SLURM time [D-]HH:MM:SS, got {value!r}")
    return value


def _dns_label(path: str, value) -> str:
    if not isinstance(value, str) or not DNS_LABEL.match(value):
        raise UserError(f"{path}: must be a Kubernetes name (lower-case letters, digits, '-', at most 63), got {value!r}")
    return value


def _env(path: str, value) -> dict:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UserError(f"{path}: must be a table of string values, got {value!r}")
    return value


def _resources(path: str, value) -> dict:
    if not isinstance(value, dict) or not all(k in ("requests", "limits") and isinstance(v, dict) for k, v in value.items()):
        raise UserError(f"{path}: must be a table with requests and/or limits tables, got {value!r}")
    return value


def _pull_policy(path: str, value) -> str:
    if value not in ("Always", "IfNotPresent", "Never"):
        raise UserError(f"{path}: must be one of Always, IfNotPresent, Never, got {value!r}")
    return value


SLURM_OPTIONS = {
    "queue": _string, "account": _string, "walltime": _walltime, "processes": _positive_int,
    "interface": _string, "local_directory": _string,
    "log_directory": _string, "shared_temp_directory": _string, "python": _string, "job_name": _string,
    "death_timeout": _positive_number, "job_extra_directives": _string_list, "job_script_prologue": _string_list,
    "job_directives_skip": _string_list, "worker_extra_args": _string_list,
}
KUBERNETES_OPTIONS = {
    "image": _string, "name": _dns_label, "namespace": _dns_label, "env": _env, "resources": _resources,
    "image_pull_policy": _pull_policy,
}
