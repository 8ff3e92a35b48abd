"""Arguments and checks shared by the commands that run a spec on Dask (sweep, drift), and the early
start of a local cluster's fork server."""

from __future__ import annotations

from xialpha.commands.stores import DEFAULT_STORE, add_store_arguments
from xialpha.errors import UserError
from xialpha.jobs.worker_processes import start_local_workers_early
from xialpha.spec.cluster import check_workers as check_cap
from xialpha.spec.cluster import cluster_of_file


def add_run_arguments(parser, what: str, example: str, force_help: str, quiet_help: str) -> None:
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


def check_workers(workers: int | None, cluster) -> None:
    """--workers: at least 1 and at most the spec's cluster.max_workers (a ClusterSpec)."""
    if workers is not None and workers < 1:
        raise UserError(f"--workers: must be >= 1, got {workers}")
    check_cap("--workers", workers, cluster.max_workers)


def start_workers_early(args) -> None:
    """Before the spec is read in full (imports of a second or more): start the fork server a
    local cluster's workers come from, when the spec file's [cluster] and --scheduler say one will
    be started, so that its imports run meanwhile (xialpha.jobs.worker_processes.start_local_workers_early)."""
    cluster = cluster_of_file(args.spec)
    if cluster is not None:
        start_local_workers_early(cluster, address=args.scheduler)
