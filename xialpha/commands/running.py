"""Arguments and checks shared by the commands that run a spec on Dask (sweep, drift): the spec's
mistakes answered before the Dask stack is imported, then the early start of a local cluster's fork
server."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from xialpha.commands.arguments import DEFAULT_STORE, add_store_arguments
from xialpha.errors import UserError
from xialpha.jobs.worker_processes import start_local_workers_early
from xialpha.spec.cluster import check_workers as check_cap

if TYPE_CHECKING:
    from xialpha.spec.cluster import ClusterSpec
    from xialpha.spec.drift import DriftSpec
    from xialpha.spec.sweep import SweepSpec


def add_run_arguments(
    parser: argparse.ArgumentParser, what: str, example: str, force_help: str, quiet_help: str
) -> None:
    """SPEC, --store, --scheduler, --workers, --force and --quiet for a command running `what` specs."""
    parser.add_argument("spec", help=f"{what} spec, a TOML file (see {example})")
    add_store_arguments(
        parser,
        positional=False,
        help_text=f"result store path or URI (default: $XIALPHA_STORE, [{what}] store, ./{DEFAULT_STORE})",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", help="connect to a running Dask scheduler, e.g. tcp://host:8786"
    )
    parser.add_argument("--workers", type=int, help="number of workers for a local or SLURM cluster")
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("--quiet", action="store_true", help=quiet_help)


def check_workers(workers: int | None, cluster: ClusterSpec) -> None:
    """--workers: at least 1 and at most the spec's cluster.max_workers (a ClusterSpec)."""
    if workers is not None and workers < 1:
        raise UserError(f"--workers: must be >= 1, got {workers}")
    check_cap("--workers", workers, cluster.max_workers)


def before_the_stack(args: argparse.Namespace, spec: SweepSpec | DriftSpec, *, start_workers: bool = True) -> None:
    """What a command does with its validated `spec` (a sweep or drift spec, read without numpy or
    Dask) before it imports the Dask stack: check --workers; when a local cluster will read the
    corpus (no --scheduler, [cluster] kind "local"), look at the corpus as its workers would (a
    path that does not exist, a table's header without a column the spec names: `CorpusSpec.look`),
    then start the fork server its workers come from, so that their imports run while this process
    imports the rest (`xialpha.jobs.worker_processes.start_local_workers_early`); not for a dry run
    (`start_workers` False), which starts no worker process."""
    check_workers(args.workers, spec.cluster)
    if spec.cluster.is_local(args.scheduler):
        spec.corpus.look()
        if start_workers:
            start_local_workers_early(spec.cluster, address=args.scheduler)
