"""Connecting to where the sweep runs: a LocalCluster, a scheduler address, SLURM or Kubernetes.

The same task graph runs on all of them; only this module knows how each is started.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from distributed import Client, LocalCluster
from distributed.security import Security

from xialpha.errors import UserError
from xialpha.jobs.spec import ClusterSpec


@contextlib.contextmanager
def connect(spec: ClusterSpec, *, address: str | None = None, workers: int | None = None) -> Iterator[Client]:
    """A Dask client for the spec; `address`/`workers` are command-line overrides."""
    security = make_security(spec.security)
    kind = "address" if address else spec.kind
    address = address or spec.address
    with contextlib.ExitStack() as stack:
        if kind == "address":
            client = _client(address, security)
        else:
            cluster = stack.enter_context(_start_cluster(kind, spec, workers, security))
            client = Client(cluster, security=security)
        stack.enter_context(client)
        yield client


def make_security(files: dict) -> Security | None:
    """distributed.Security for TLS from ca_file, cert_file and key_file (None without them)."""
    if not files:
        return None
    for key, path in files.items():
        if not os.path.isfile(path):
            raise UserError(f"cluster.security.{key}: file not found: {path}")
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


def _client(address: str | None, security: Security | None) -> Client:
    try:
        return Client(address, security=security, timeout="20s")
    except OSError as exc:
        raise UserError(f"cluster.address: cannot reach a Dask scheduler at {address}: {exc}") from None


def _start_cluster(kind: str, spec: ClusterSpec, workers: int | None, security: Security | None):
    n_workers = workers or spec.workers
    if kind == "local":
        cores = os.cpu_count() or 1
        n_workers = n_workers or max(1, cores // spec.threads_per_worker)
        return LocalCluster(
            n_workers=n_workers,
            threads_per_worker=spec.threads_per_worker,
            processes=True,
            memory_limit=spec.memory_limit or "auto",
            dashboard_address=":0",
            protocol="tls://" if security else None,
            security=security,
            host="127.0.0.1",
        )
    if kind == "slurm":
        return _jobqueue_cluster(spec, n_workers, security)
    return _kubernetes_cluster(spec, n_workers)


def slurm_cluster_kwargs(spec: ClusterSpec) -> dict:
    """SLURMCluster keyword arguments from [cluster] (cores, memory, walltime, queue, account, ...)."""
    options = dict(spec.options)
    kwargs = {
        "cores": options.pop("cores", spec.threads_per_worker),
        "processes": options.pop("processes", 1),
        "memory": options.pop("memory", spec.memory_limit or "4GiB"),
        "walltime": options.pop("walltime", "01:00:00"),
    }
    for key in ("queue", "account", "job_extra_directives", "job_script_prologue", "local_directory", "log_directory", "interface"):
        if key in options:
            kwargs[key] = options.pop(key)
    if options:
        raise UserError(f"cluster.{sorted(options)[0]}: unknown key for kind \"slurm\"")
    return kwargs


def _jobqueue_cluster(spec: ClusterSpec, n_workers: int | None, security: Security | None):
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise UserError('cluster.kind = "slurm" needs dask-jobqueue: pip install "xialpha[slurm]"') from None
    cluster = SLURMCluster(security=security, **slurm_cluster_kwargs(spec))
    cluster.scale(jobs=n_workers or 1)
    return cluster


def _kubernetes_cluster(spec: ClusterSpec, n_workers: int | None):
    try:
        from dask_kubernetes.operator import KubeCluster
    except ImportError:
        raise UserError('cluster.kind = "kubernetes" needs dask-kubernetes: pip install "xialpha[kubernetes]"') from None
    options = dict(spec.options)
    cluster = KubeCluster(
        name=options.pop("name", "xialpha"),
        image=options.pop("image", "ghcr.io/dask/dask:latest"),
        n_workers=n_workers or 2,
        resources=options.pop("resources", None),
        env=options.pop("env", None),
        namespace=options.pop("namespace", None),
    )
    if options:
        raise UserError(f"cluster.{sorted(options)[0]}: unknown key for kind \"kubernetes\"")
    return cluster
