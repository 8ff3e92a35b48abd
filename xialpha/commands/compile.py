"""`xialpha compile`: compile the numba kernels a sweep's tasks call, once for this machine, now.

Without it the first sweep after an install compiles them while its cluster starts (saying so), and
waits for it (bench/first_run.py). Run it after `pip install` (the README's set-up command does), when
building an image, or on a cluster's shared install before a batch of jobs: every sweep then loads the
kernels from numba's cache. Running it again only loads them, and compiles again what a damaged
cache entry or a changed kernel needs (xialpha.jobs.compiled.warm).

Exit codes: 0 done; 2 numba's cache is damaged where it cannot be cleared (the message names it).
"""

from __future__ import annotations

import argparse
import sys

from xialpha.printable import printable
from xialpha.reports.formatting import plural


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments: the kernels and numba's cache (NUMBA_CACHE_DIR) are the installation's."""


def run(args: argparse.Namespace) -> int:
    from xialpha.jobs.compiled import compiling_count, warm

    def stage(text: str) -> None:  # said once, as compiling starts
        count = compiling_count(text)
        if count is not None and count[0] == 0:
            print(f"xialpha compile: compiling {_specialisations(count[1])} for this machine", file=sys.stderr)

    warmed = warm(stage=stage, note=lambda text: print(f"xialpha compile: {printable(text)}", file=sys.stderr))
    where = f"numba's cache: {printable(', '.join(warmed.cache_dirs))}" if warmed.cache_dirs else "numba's cache"
    seconds = f"{warmed.seconds:.1f} s"
    if warmed.compiled == warmed.specialisations:
        print(f"compiled {_specialisations(warmed.compiled)} in {seconds} into {where}")
    elif warmed.compiled:
        compiled = f"{warmed.compiled} of {_specialisations(warmed.specialisations)}"
        print(f"compiled {compiled} in {seconds}; loaded the rest from {where}")
    else:
        print(f"all {_specialisations(warmed.specialisations)} were compiled already: loaded in {seconds} from {where}")
    return 0


def _specialisations(count: int) -> str:
    return plural(count, "kernel specialisation")
