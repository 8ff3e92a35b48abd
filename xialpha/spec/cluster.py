"""The `[cluster]` table of a sweep or drift spec: where the Dask graph runs.

Light to import (no numpy, no Dask), as the whole spec layer is: a command reads and checks its spec
before it imports anything heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xialpha.errors import UserError
from xialpha.spec.cluster_options import (
    KUBERNETES_OPTIONS,
    SECURITY_FILES,
    SLURM_OPTIONS,
    check_address,
    check_options,
    check_security_files,
)
from xialpha.spec.tables import Table, parse_size

CLUSTER_KINDS = ("local", "address", "slurm", "kubernetes")
DEFAULT_MAX_WORKERS = 1024  # [cluster] max_workers: caps cluster.workers and --workers
MAX_THREADS_PER_WORKER = 1024


@dataclass(frozen=True)
class ClusterSpec:
    """Where the Dask graph runs. kind: local | address | slurm | kubernetes."""

    kind: str = "local"
    address: str | None = None
    workers: int | None = None
    max_workers: int = DEFAULT_MAX_WORKERS
    threads_per_worker: int = 1
    memory_limit: str | None = None
    options: dict = field(default_factory=dict, hash=False)
    security: dict = field(default_factory=dict, hash=False)

    def is_local(self, address: str | None = None) -> bool:
        """Whether the workers run on this machine and see its files: a local cluster, unless a
        scheduler `address` (--scheduler) is given instead."""
        return address is None and self.kind == "local"


def parse_cluster(t: Table, base_dir: Path) -> ClusterSpec:
    """The `[cluster]` table `t` (TLS file paths relative to `base_dir`); UserError naming the key."""
    kind = t.choice("kind", CLUSTER_KINDS, "local")
    address = t.str("address", None)
    if kind == "address" and address is None:
        raise UserError('cluster.address: is required when cluster.kind = "address"')
    if address is not None and kind == "local":
        kind = "address"
    security = t.table("security")
    files = {k: security.str(k, None) for k in SECURITY_FILES}
    security.done()
    files = {k: str((base_dir / v).resolve()) for k, v in files.items() if v is not None}
    if files and set(files) != set(SECURITY_FILES):
        raise UserError("cluster.security: needs ca_file, cert_file and key_file together")
    max_workers = t.int("max_workers", DEFAULT_MAX_WORKERS, minimum=1)
    spec = ClusterSpec(
        kind=kind,
        address=address,
        workers=check_workers("cluster.workers", t.int("workers", None, minimum=1), max_workers),
        max_workers=max_workers,
        threads_per_worker=t.int("threads_per_worker", 1, minimum=1, maximum=MAX_THREADS_PER_WORKER),
        memory_limit=t.str("memory_limit", None),
        options=t.rest(),
        security=files,
    )
    if spec.options and kind in ("local", "address"):
        raise UserError(f"cluster: unknown key {sorted(spec.options)[0]!r} for kind {kind!r}")
    check_cluster(spec)
    return spec


def check_workers(name: str, workers: int | None, max_workers: int) -> int | None:
    """`workers` unless it exceeds max_workers ([cluster] max_workers): UserError with the number."""
    if workers is not None and workers > max_workers:
        raise UserError(
            f"{name}: {workers:,} workers is more than cluster.max_workers = {max_workers:,}; "
            "raise [cluster] max_workers if you mean it"
        )
    return workers


def check_cluster(spec: ClusterSpec) -> None:
    """Validate `[cluster]` at spec time: kind options, sizes, the address and the TLS files.

    Raises UserError naming the key, e.g. `cluster.walltime: must be a SLURM time [D-]HH:MM:SS, got '2h'`.
    """
    if spec.memory_limit is not None and spec.memory_limit != "auto":
        parse_size("cluster.memory_limit", spec.memory_limit)
    if spec.security:
        check_security_files(spec.security)
    if spec.address is not None:
        check_address("cluster.address", spec.address, spec.security)
    if spec.kind == "slurm":
        check_options("slurm", spec.options, SLURM_OPTIONS)
        if spec.memory_limit in (None, "auto"):
            raise UserError('cluster.memory_limit: is required for kind "slurm" (memory per worker, e.g. "8GiB")')
    elif spec.kind == "kubernetes":
        check_options("kubernetes", spec.options, KUBERNETES_OPTIONS)
        if "image" not in spec.options:
            raise UserError(
                'cluster.image: is required for kind "kubernetes" (an image with xialpha installed, see '
                "deploy/Dockerfile)"
            )
        if spec.security:
            raise UserError(
                'cluster.security: not supported for kind "kubernetes"; use a service mesh or kind = "address" with tls://'
            )
