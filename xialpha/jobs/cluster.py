"""Connecting to where the sweep runs: a LocalCluster, a scheduler address, SLURM or Kubernetes.

The same task graph runs on all of them; only this module knows how each is started:
`connect` starts or reaches the cluster that `xialpha.spec.cluster_options` checked when the spec
was parsed.

How its worker processes start (SIGINT blocked; a local cluster's forked from a fork server that
imported their modules) is xialpha.jobs.worker_processes.

A local cluster's workers log to the user's terminal, so they get `QuietTaskFailures`: a task that
raises (a config whose vocabulary comes out empty, a bug) makes its worker log "Compute Failed"
with the task's traceback; the sweep already stores a data failure as a failed row and prints one
line per failed config, and stops at a bug with one line (its traceback under XIALPHA_DEBUG), so
that log would only repeat it as a traceback. Workers of SLURM and Kubernetes clusters keep their
full logs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator

import dask
from distributed import Client, LocalCluster, Worker
from distributed.deploy.cluster import Cluster
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.security import Security

from xialpha.errors import ClusterFailure, UserError
from xialpha.jobs.worker_processes import forked_local_workers, terminal_interrupts_blocked
from xialpha.spec.cluster import ClusterSpec, check_cluster
from xialpha.spec.cluster_options import ADDRESS, check_address, check_security_files
from xialpha.spec.tables import parse_size

WORKER_PORT = 8788  # each Kubernetes worker's dashboard/health port, as the Dask operator expects
IMAGE_UID = 10001  # the non-root user of deploy/Dockerfile
WORKER_LOGGER = "distributed.worker"


@contextlib.contextmanager
def connect(
    spec: ClusterSpec,
    *,
    address: str | None = None,
    workers: int | None = None,
    client: Client | None = None,
    threads_only: bool = False,
) -> Iterator[Client]:
    """A Dask client for the spec; `address` (--scheduler) and `workers` (--workers) override it;
    a running `client` is used as it is (and left open). threads_only: a local cluster's workers
    are threads of this process (quick to start; for work that only reads and plans, a dry run).

    A cluster it starts is closed on the way out, also on KeyboardInterrupt (Ctrl-C, or SIGTERM as
    the CLI raises it) or an error: SLURM worker jobs are cancelled, local worker processes stopped,
    and Dask's warnings about the tasks cut short are silenced meanwhile (and from now on, the
    error Dask's event loop logs when an interrupt cut a call short before it started:
    `DropSyncCancelErrors`).
    """
    quiet_sync_cancel_errors()
    if client is not None:
        yield client
        return
    security = make_security(spec.security)
    if address is not None:
        check_address("--scheduler", address, security)
    name = "--scheduler" if address else "cluster.address"
    kind = "address" if address else spec.kind
    address = address or spec.address
    silenced = False
    dask_logger = logging.getLogger("distributed")
    dask_level = dask_logger.level
    try:
        with contextlib.ExitStack() as stack:
            if kind == "address":
                assert address is not None  # kind "address" comes with one (--scheduler or cluster.address)
                client = _client(name, address, security)
            else:
                if kind == "local":
                    check_local_limits(_local_workers(spec, workers), threads_only)
                if kind == "local" and not threads_only:
                    stack.enter_context(forked_local_workers(spec))
                with terminal_interrupts_blocked(starting=kind == "local"):
                    cluster = stack.enter_context(_start_cluster(kind, spec, workers, security, threads_only))
                client = Client(cluster, security=security)
            stack.enter_context(client)
            if kind == "local":
                client.register_plugin(QuietTaskFailures())
                # runs first on the way out: closing a busy machine's workers logs "still alive
                # after 4.0 seconds, killing" warnings about processes that are being stopped anyway
                stack.callback(dask_logger.setLevel, logging.ERROR)
            try:
                yield client
            except BaseException:  # the cluster closes with tasks in flight: the command's one line is printed,
                silenced = True  # not Dask's warnings (a worker closing a cancelled task's, after a full disk)
                logging.disable(logging.CRITICAL)
                if kind == "local":  # its workers write to our stderr too
                    with contextlib.suppress(Exception):
                        client.run(logging.disable, logging.CRITICAL, callback_timeout=5)
                raise
    finally:
        if silenced:
            logging.disable(logging.NOTSET)
        dask_logger.setLevel(dask_level)


# open files a local cluster needs at least: the driver's (its store, its sockets) and per worker
# process (nanny, pipes, sockets); measured: 2 workers failed to start at `ulimit -n 40`, ran at 50
FILES_BASE, FILES_PER_WORKER = 32, 16
# below this address-space limit (`ulimit -v`) a local cluster of 2 workers failed to start (0.85
# and 1.1 GB: "can't start new thread", std::bad_alloc, a library failing to map) or hung (2 GB, 3 of
# 3 runs: MemoryError serialising a task), though 1.0, 1.5 and 3 GB ran: NumPy, numba, pyarrow and
# Dask's threads reserve far more address space than they use, so small limits fail at random
ADDRESS_SPACE_FLOOR = 4 * 2**30


def check_local_limits(n_workers: int, threads_only: bool = False) -> None:
    """UserError naming the limit and what to raise when this process's resource limits are too low
    for a local cluster of `n_workers` workers: open files (RLIMIT_NOFILE, `ulimit -n`) and address
    space (RLIMIT_AS, `ulimit -v`). Checked before anything starts: Dask's failures under such
    limits are tracebacks, a hang or an abort."""
    import resource

    files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = FILES_BASE + FILES_PER_WORKER * (1 if threads_only else n_workers)
    if files != resource.RLIM_INFINITY and files < needed:
        raise UserError(
            f"file descriptors: this process may open {files} files (ulimit -n); a local cluster of "
            f"{n_workers} worker{'s' if n_workers != 1 else ''} needs at least {needed}: raise it "
            f"(`ulimit -n {max(needed, 1024)}`) or start fewer workers (--workers)"
        )
    space, _ = resource.getrlimit(resource.RLIMIT_AS)
    if space != resource.RLIM_INFINITY and space < ADDRESS_SPACE_FLOOR:
        raise UserError(
            f"memory: the address-space limit is {space / 2**30:.1f} GiB (ulimit -v); a local cluster "
            f"needs at least {ADDRESS_SPACE_FLOOR // 2**30} GiB of address space, most of it reserved, "
            "never used: lift it (`ulimit -v unlimited`) and bound the workers' memory with "
            "cluster.memory_limit instead"
        )


def _local_workers(spec: ClusterSpec, workers: int | None) -> int:
    """The number of worker processes (or threads) of the local cluster `_start_cluster` starts."""
    return workers or spec.workers or max(1, (os.cpu_count() or 1) // spec.threads_per_worker)


def make_security(files: dict) -> Security | None:
    """distributed.Security for mutual TLS from ca_file, cert_file and key_file (None without them).

    The one certificate serves the client, scheduler and workers; encryption is required, so a
    tcp:// address is refused rather than silently used in clear text.
    """
    if not files:
        return None
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
    worker_command = [
        "dask",
        "worker",
        "--name",
        "$(DASK_WORKER_NAME)",
        "--nthreads",
        str(spec.threads_per_worker),
        "--dashboard-address",
        str(WORKER_PORT),
    ]
    if spec.memory_limit is not None:
        worker_command += ["--memory-limit", spec.memory_limit]
    worker = {
        "name": "worker",
        **image,
        **env,
        "command": worker_command,
        "ports": [{"name": "http-dashboard", "containerPort": WORKER_PORT, "protocol": "TCP"}],
    }
    if "resources" in options:
        worker["resources"] = options["resources"]
    health = {"httpGet": {"port": "http-dashboard", "path": "/health"}}
    scheduler = {
        "name": "scheduler",
        **image,
        **env,
        "command": ["dask", "scheduler", "--host", "0.0.0.0"],
        "ports": [
            {"name": "tcp-comm", "containerPort": 8786, "protocol": "TCP"},
            {"name": "http-dashboard", "containerPort": 8787, "protocol": "TCP"},
        ],
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
                    "ports": [
                        {"name": "tcp-comm", "protocol": "TCP", "port": 8786, "targetPort": "tcp-comm"},
                        {"name": "http-dashboard", "protocol": "TCP", "port": 8787, "targetPort": "http-dashboard"},
                    ],
                },
            },
        },
    }


def check_worker_job(script: str) -> None:
    """UserError with SLURM's own reason when `sbatch --test-only` refuses the worker job `script`
    (a partition, account, memory or time limit SLURM rejects): submitted, it would fail in
    dask-jobqueue's callback, and the sweep would wait forever for workers."""
    with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="xialpha-worker-job-") as file:
        file.write(script)
        file.flush()
        try:
            done = subprocess.run(["sbatch", "--test-only", file.name], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise UserError(
                'cluster.kind = "slurm": `sbatch --test-only` gave no answer within 60 s; is slurmctld running?'
            ) from None
    if done.returncode != 0:
        reason = "; ".join(" ".join(line.split()) for line in done.stderr.splitlines() if line.strip())
        raise UserError(
            f'cluster.kind = "slurm": SLURM refuses the worker job ({reason[:300]}); check '
            "[cluster] queue, account, memory_limit and walltime"
        )


def slurm_cluster_class() -> type:
    """dask_jobqueue.SLURMCluster, imported without letting dask_jobqueue take SIGINT: its runner
    module installs a handler calling sys.exit(), which made Ctrl-C a silent exit 0. UserError
    when `sbatch` is not on PATH."""
    if (
        shutil.which("sbatch") is None
    ):  # else dask-jobqueue's submission fails in a callback and the sweep waits forever
        raise UserError(
            'cluster.kind = "slurm": sbatch is not on PATH; run the sweep where SLURM\'s commands are '
            '(a login node), or use kind = "local"'
        )
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
    timeout = dask.config.get("distributed.comm.timeouts.connect")
    _refuse_if_nothing_listens(name, address)
    try:
        return Client(address, security=security, timeout=timeout)
    except OSError as exc:
        raise UserError(
            f"{name}: cannot reach a Dask scheduler at {address} within {timeout} "
            f"({type(exc).__name__}); is it running, with the same TLS settings?"
        ) from None


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
        raise UserError(
            f"{name}: no Dask scheduler listens at {address} (connection refused); is it running?"
        ) from None
    except OSError:
        return


def _start_cluster(
    kind: str, spec: ClusterSpec, workers: int | None, security: Security | None, threads_only: bool = False
) -> Cluster:
    n_workers = workers or spec.workers
    if kind == "local":
        try:
            return LocalCluster(
                n_workers=_local_workers(spec, workers),
                threads_per_worker=spec.threads_per_worker,
                processes=not threads_only,
                memory_limit=spec.memory_limit or "auto",
                dashboard_address=":0",  # any free port: even unshown, the HTTP server would take 8787 and warn
                protocol="tls://" if security else None,
                security=security,
                host=None if threads_only else "127.0.0.1",  # threads talk in-process (inproc://)
            )
        except RuntimeError as exc:  # a worker process ended before it connected: Dask's "Nanny failed to start."
            if not str(exc).endswith("failed to start."):
                raise
            raise ClusterFailure(
                f"the local cluster did not start: a worker process ended as it started (killed, or out of "
                f"memory?; Dask: {exc}); nothing was fitted: rerun, or start fewer workers (--workers)"
            ) from None
    if kind == "slurm":
        cluster = slurm_cluster_class()(security=security, **slurm_cluster_kwargs(spec))
        try:
            check_worker_job(cluster.job_script())
        except BaseException:
            cluster.close()
            raise
        # Not scale(n): it never replaces jobs that end (walltime, scancel, node failure), and the
        # sweep would wait forever; adapt keeps n workers, submitting new jobs for lost ones.
        n = n_workers or 1
        cluster.adapt(minimum=n, maximum=n)
        return cluster
    try:
        from dask_kubernetes.operator import KubeCluster
    except ImportError:
        raise UserError(
            'cluster.kind = "kubernetes" needs dask-kubernetes: pip install "xialpha[kubernetes]"'
        ) from None
    try:
        return KubeCluster(
            custom_cluster_spec=kubernetes_cluster_spec(spec, n_workers), namespace=spec.options.get("namespace")
        )
    except TimeoutError as exc:  # the DaskCluster was created (and deleted again) but nothing acted on it
        raise UserError(f'cluster.kind = "kubernetes": {" ".join(str(exc).split())}') from None


class DropSyncCancelErrors(logging.Filter):
    """Drops the error tornado logs (with its traceback, on the driver's stderr) when distributed's
    `sync` cancels a call that a KeyboardInterrupt cut short before the call began: its `cancel`
    callback reads the call's future before it exists and raises NameError (distributed 2026.8,
    utils.sync; after the command's one line, a Ctrl-C printed 13 lines of it). Every other record
    passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, NameError) and "sync.<locals>.cancel" in record.getMessage())


SYNC_CANCEL_ERRORS = DropSyncCancelErrors()


def quiet_sync_cancel_errors() -> None:
    """`DropSyncCancelErrors` on tornado's application logger, once per process (it stays: the
    callback may run after the cluster closed)."""
    logger = logging.getLogger("tornado.application")
    if SYNC_CANCEL_ERRORS not in logger.filters:
        logger.addFilter(SYNC_CANCEL_ERRORS)


class _DropTaskFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Compute Failed")


class QuietTaskFailures(WorkerPlugin):
    """A worker plugin: the worker's logger drops its "Compute Failed" records."""

    name = "xialpha-quiet-task-failures"

    def setup(self, worker: Worker) -> None:
        logger = logging.getLogger(WORKER_LOGGER)
        if not any(isinstance(f, _DropTaskFailures) for f in logger.filters):
            logger.addFilter(_DropTaskFailures())
