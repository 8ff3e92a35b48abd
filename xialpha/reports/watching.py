"""`xialpha report --html FILE --watch`: the report page rewritten from the store every few
seconds while a sweep writes to it, so a browser (which the page tells to reload itself) or a
colleague on a shared disk can follow a running sweep from anywhere, and nothing of the sweep's
own process (its Dask dashboard) has to outlive it.

The page is replaced whole (`write_page`): a browser never reads half a page; and it is never
written into a store, whichever page it is (`xialpha.outputs.check_output`). Watching ends when
the sweep's newest run ends (`StoreQueries.sweep_ended_at`: done, failed or interrupted) after
watching began, with a last page that no longer reloads, or at KeyboardInterrupt (Ctrl-C, or the
command's SIGTERM and SIGHUP), which leaves the last page without the reload too and goes on up to
the command, which tells Ctrl-C (how watching is stopped) from the others. A run that ended before
watching began does not end it: that is a finished sweep watched for its next run (say, one
started a moment later that has not recorded itself yet).
"""

from __future__ import annotations

import html
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from xialpha.errors import UserError
from xialpha.outputs import check_output
from xialpha.reports.formatting import minute
from xialpha.reports.html import page, render_report, write_page

if TYPE_CHECKING:
    from xialpha.reports.contents import Report


def watch_report(
    read: Callable[[], tuple[Report, pd.Timestamp | None]],
    path: str | os.PathLike,
    every: float,
    say: Callable[[str], None],
    protected: Sequence[tuple[str, str | os.PathLike]] = (),
) -> None:
    """Until the sweep has ended or KeyboardInterrupt: every `every` seconds, `read()` the store
    as (Report, when the sweep's newest run ended or None: read before the rows, so that a final
    page holds every row of the run) and write its page to `path`, reloading
    every `every` seconds. Only a run that ends after watching began ends the watching: a sweep
    that ended before is shown while waiting for its next run (`say` says so once). A store or
    sweep that cannot be read yet (UserError: not created yet, no results yet) gets a page saying
    so, and `say` says it once. Returns when the sweep ended; a KeyboardInterrupt is raised on after
    the last page is written without its reload. Each page is written as `write_page` says
    (`protected`: what the command reads, the store): `path` is checked before the first read."""
    check_output(path, "html", protected)
    started = pd.Timestamp.now(tz="UTC")
    report, said = None, None
    try:
        while True:
            try:
                report, ended = read()
            except UserError as exc:
                reason = exc.named(dict.fromkeys(exc.parameters, ""))  # what is missing, not who asked ("sweep=:")
                said = _once(say, f"waiting: {reason}", said)
                write_page(
                    path,
                    page("xialpha: waiting for the sweep", f"<p>Waiting: {html.escape(reason)}</p>", every),
                    protected=protected,
                )
            else:
                if ended is not None and _utc(ended) >= started:
                    write_page(path, render_report(report), protected=protected)
                    return
                if ended is not None:
                    said = _once(say, f"the sweep's newest run ended at {minute(ended)}; waiting for another run", said)
                write_page(path, render_report(report, refresh=every), protected=protected)
            time.sleep(every)
    except KeyboardInterrupt:
        if report is not None:
            write_page(path, render_report(report), protected=protected)
        raise


def _once(say: Callable[[str], None], text: str, said: str | None) -> str:
    """`say(text)` unless it was the last thing said; returns what was said last."""
    if text != said:
        say(text)
    return text


def _utc(time_stamp: pd.Timestamp) -> pd.Timestamp:
    stamp = pd.Timestamp(time_stamp)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp
