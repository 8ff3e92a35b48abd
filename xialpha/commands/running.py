"""Arguments and checks shared by the commands that run a spec on Dask (sweep, drift)."""

from __future__ import annotations

import os

DEFAULT_STORE = "xialpha-store"


def add_run_arguments(parser, what: str, example: str, force_help: str, quiet_help: str) -> None:
    """SPEC, --store, --scheduler, --workers, --force and --quiet for a command running `what` specs."""
    parser.add_argument("spec", help=f"{what} spec, a TOML file (see {example})")
    parser.add_argument("--store", help=f"result store path or URI (default: [{what}] store, $XIALPHA_STORE, ./{DEFAULT_STORE})")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="connect to a running Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("--workers", type=int, help="number of workers for a local or SLURM cluster")
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("--quiet", action="store_true", help=quiet_help)


def check_workers(workers: int | None, cluster) -> None:
    """--workers: at least 1 and at most the spec's cluster.max_workers (a ClusterSpec)."""
    from xialpha.errors import UserError
    from xialpha.jobs.spec import check_workers as check_cap

    if workers is not None and workers < 1:
        raise UserError(f"--workers: must be >= 1, got {workers}")
    check_cap("--workers", workers, cluster.max_workers)


def store_uri(cli_value: str | None, spec_value: str | None) -> str:
    """--store, else $XIALPHA_STORE, else the spec's store, else ./xialpha-store."""
    return cli_value or os.environ.get("XIALPHA_STORE") or spec_value or DEFAULT_STORE
