"""How much memory a sweep may fill, and refusing a corpus or a plan that cannot fit before it is built.

The limit is $XIALPHA_MEMORY_LIMIT where it is set (a size: "64GiB", "500MB"); else, for what the
workers hold (the corpus), this machine's available memory when every worker runs on it (a local
cluster, or a dry run's threads), or the sum of the workers' memory limits of a remote cluster (no
limit when one has none, or none has connected yet); for what this process holds (the plan), this
machine's available memory. Estimates are lower bounds, so only what cannot fit is refused: one
line with the estimate, the limit and where it comes from, before anything is generated or read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xialpha.errors import UserError
from xialpha.planning.plan import KEY_BYTES, planned_keys
from xialpha.spec.sweep import SweepSpec
from xialpha.spec.tables import parse_size

if TYPE_CHECKING:
    from distributed import Client

MEMORY_LIMIT_ENV = "XIALPHA_MEMORY_LIMIT"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class MemoryLimit:
    """`bytes` a sweep may fill, and where the number comes from, in words."""

    bytes: int
    source: str


def memory_limit(client: Client | None = None) -> MemoryLimit | None:
    """The limit on what `client`'s workers may hold (None: what this process holds), see the
    module; None when a remote cluster's workers give none. UserError for a malformed
    $XIALPHA_MEMORY_LIMIT."""
    if os.environ.get(MEMORY_LIMIT_ENV):
        return MemoryLimit(parse_size(f"${MEMORY_LIMIT_ENV}", os.environ[MEMORY_LIMIT_ENV]), f"${MEMORY_LIMIT_ENV}")
    if client is None:
        return MemoryLimit(available_memory(), "this machine's available memory")
    workers = client.scheduler_info().get("workers", {})
    if not workers:  # a batch cluster's workers connect later
        return None
    here = _this_machine()
    if all(address.startswith("inproc://") or worker.get("host") in here for address, worker in workers.items()):
        return MemoryLimit(available_memory(), "this machine's available memory")
    limits = [int(worker.get("memory_limit") or 0) for worker in workers.values()]
    if not all(limits):
        return None
    return MemoryLimit(sum(limits), f"the memory limits of the cluster's {len(limits)} workers")


def available_memory() -> int:
    """Bytes this machine can give without swapping: its available memory (psutil), within the
    limit of this process's container or resource limits (distributed's reading of cgroups and
    `ulimit -v`)."""
    import psutil
    from distributed.system import MEMORY_LIMIT

    return int(min(psutil.virtual_memory().available, MEMORY_LIMIT))


def refuse_beyond(estimate: int, limit: MemoryLimit | None, what: str, key: str | None, advice: str) -> None:
    """UserError (its `key`) when `estimate` bytes (`what`: what they are and how they were
    estimated) exceed `limit`, saying both and `advice`."""
    if limit is None or estimate <= limit.bytes:
        return
    raise UserError(
        f"{what} would take at least {_size(estimate)} of memory, more than {limit.source} "
        f"({_size(limit.bytes)}); {advice} (${MEMORY_LIMIT_ENV} sets another limit)",
        key=key,
    )


def check_plan(spec: SweepSpec, categories: list[str]) -> None:
    """UserError naming the spec file when the plan of `spec` over `categories` cannot fit in this
    process's memory (`planned_keys` x KEY_BYTES), before it is built."""
    n = max(len(categories), 1)
    keys = planned_keys(spec, n)
    what = f"the plan ({keys:,} rows: {keys // n:,} per category x {n:,} categories)"
    advice = "sweep fewer categories ([corpus.categories] top_k) or a smaller grid"
    try:
        refuse_beyond(keys * KEY_BYTES, memory_limit(), what, None, advice)
    except UserError as exc:
        raise exc.within(file=spec.corpus.source or None) from None


def _this_machine() -> set[str]:
    """The host names and addresses a worker on this machine reports."""
    import psutil

    return {*LOCAL_HOSTS, *(found.address for addresses in psutil.net_if_addrs().values() for found in addresses)}


def _size(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"
