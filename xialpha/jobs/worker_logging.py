"""Quiet task failures on the workers of a local cluster, whose log is the user's terminal.

A task that raises (a config whose vocabulary comes out empty, a bug) makes its worker log
"Compute Failed" with the task's traceback; the sweep already stores a data failure as a failed
row and prints one line per failed config, and stops at a bug with one line (its traceback under
XIALPHA_DEBUG), so on a local cluster that log would only repeat it as a traceback. Workers of SLURM and Kubernetes
clusters keep their full logs.
"""

from __future__ import annotations

import logging

from distributed.diagnostics.plugin import WorkerPlugin

WORKER_LOGGER = "distributed.worker"


class _DropTaskFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Compute Failed")


class QuietTaskFailures(WorkerPlugin):
    """A worker plugin: the worker's logger drops its "Compute Failed" records."""

    name = "xialpha-quiet-task-failures"

    def setup(self, worker) -> None:
        logger = logging.getLogger(WORKER_LOGGER)
        if not any(isinstance(f, _DropTaskFailures) for f in logger.filters):
            logger.addFilter(_DropTaskFailures())
