"""A resource tracker killed mid-sweep (issue 48.9): multiprocessing started it again with this
process's standard error, and it printed a KeyError traceback for each semaphore the killed one
had tracked (about 50 lines on a sweep that succeeded), after a warning that it died."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, multiprocessing, multiprocessing.resource_tracker as rt, os, signal, time
from xialpha.jobs.worker_processes import _start_resource_tracker
_start_resource_tracker()
ctx = multiprocessing.get_context("spawn")
first = [ctx.Semaphore() for _ in range(3)]  # tracked by the first tracker
os.kill(rt._resource_tracker._pid, signal.SIGKILL)
os.waitpid(rt._resource_tracker._pid, 0)
second = ctx.Semaphore()  # starts the tracker again, which never saw `first`
del first
gc.collect()
del second
time.sleep(0.3)  # the tracker reads what it is sent in its own time
print("done")
"""


def test_a_tracker_started_again_prints_nothing():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    assert done.stderr == ""
