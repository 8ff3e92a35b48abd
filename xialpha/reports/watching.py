"""`xialpha report --html FILE --watch`: the report page rewritten from the store every few
seconds while a sweep writes to it, so a browser (which the page tells to reload itself) or a
colleague on a shared disk can follow a running sweep from anywhere, and nothing of the sweep's
own process (its Dask dashboard) has to outlive it.

The page is replaced whole (`write_page`): a browser never reads half a page. Watching ends when the sweep's newest run has ended (`ResultStore.sweep_finished`: done,
failed or interrupted), with a last page that no longer reloads, or at KeyboardInterrupt (Ctrl-C),
which leaves the last page without the reload too.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable

from xialpha.errors import UserError
from xialpha.reports.html import page, render_report, write_page


def watch_report(read: Callable[[], tuple], path, every: float, say: Callable[[str], None]) -> bool:
    """Until the sweep has ended or KeyboardInterrupt: every `every` seconds, `read()` the store
    as (Report, finished) and write its page to `path`, reloading every `every` seconds; a store
    or sweep that cannot be read yet (UserError: not created yet, no results yet) gets a page
    saying so, and `say` says it once. Returns True when the sweep ended, False when interrupted."""
    report, waiting = None, None
    try:
        while True:
            try:
                report, finished = read()
            except UserError as exc:
                if str(exc) != waiting:
                    waiting = str(exc)
                    say(f"waiting: {waiting}")
                write_page(path, page("xialpha: waiting for the sweep", f"<p>Waiting: {html.escape(waiting)}</p>", every))
            else:
                if finished:
                    write_page(path, render_report(report))
                    return True
                write_page(path, render_report(report, refresh=every))
            time.sleep(every)
    except KeyboardInterrupt:
        if report is not None:
            write_page(path, render_report(report))
        return False

