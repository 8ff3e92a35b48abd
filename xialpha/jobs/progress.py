"""Progress of a running sweep: its stage from the start (starting cluster, loading corpus,
planning, vectorising, building features, fitting, storing), then fits done out of the total.

Shown where it runs (`mode_for`). On a terminal a live bar shows the stage as its label; it
vanishes at the end (the summary line says what it did), so an error stays one line. In a
Jupyter notebook one output of the running cell (`NotebookDisplay`) shows a progress bar with
the stage, fits, rate and ETA, updated in place at most every NOTEBOOK_EVERY_S, and keeps the
final count. Elsewhere (a log file, a pipe) a stage gets a line once it has lasted
PLAIN_STAGE_AFTER_S, so stages that end at once (and bad input, which fails at once) print
nothing; fits get a line every PLAIN_EVERY_S.

While the cluster starts, the stage can follow what is done meanwhile (`follow`: numba compiling
a cold cache in the workers' fork server, with its count). While the cluster works, the stage is
what its workers run (`watch`): the task keys of
`xialpha.jobs.data` and `xialpha.jobs.graph` name it (count-, block-, ...; features-, gram-;
fit-batch-).
"""

from __future__ import annotations

import html
import sys
import threading
import time
from collections.abc import Callable
from enum import StrEnum

NOTEBOOK_EVERY_S = 0.5  # the notebook display is redrawn at most this often (and at the end)
PLAIN_EVERY_S = 10.0
PLAIN_STAGE_AFTER_S = 1.0  # a stage lasting this long gets a plain line
TICK_S = 0.1  # how often the background thread looks at the stage
WATCH_EVERY_S = 0.5  # how often `watch` asks the scheduler what is running
STAGES_BY_TASK = (
    ("fit-batch-", "fitting"),
    ("gram-", "building features"),
    ("features-", "building features"),
    ("linear-data-", "building features"),
    ("count-", "vectorising"),
    ("frequencies-", "vectorising"),
    ("merge-", "vectorising"),
    ("vocabulary-", "vectorising"),
    ("block-", "vectorising"),
)  # the first prefix a running task has names the stage


class NotebookDisplay:
    """One output of the running notebook cell, replaced in place (IPython's display handle:
    no widget library needed): an HTML progress bar and its text, plain text where HTML is not shown."""

    def __init__(self):
        from IPython.display import display

        self._handle = display(self._bundle("starting", 0, None), raw=True, display_id=True)

    def show(self, text: str, done: int, total: int | None) -> None:
        self._handle.update(self._bundle(text, done, total), raw=True)

    @staticmethod
    def _bundle(text: str, done: int, total: int | None) -> dict:
        value = f' value="{done}" max="{total}"' if total else ""  # no total yet: an indeterminate bar
        return {
            "text/plain": text,
            "text/html": f'<progress{value} style="width: 16em"></progress> <code>{html.escape(text)}</code>',
        }


class ProgressMode(StrEnum):
    """Where progress is shown (`Progress.mode_for` picks one): a live bar on a terminal, a cell's
    display in a notebook, plain lines elsewhere, or nothing."""

    BAR = "bar"
    NOTEBOOK = "notebook"
    PLAIN = "plain"
    QUIET = "quiet"


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's ZMQ shell), whose cells can show live output."""
    ipython = sys.modules.get("IPython")  # never imported here: a kernel has it loaded already
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return getattr(shell, "kernel", None) is not None


class Progress:
    """A stage, and finished fits out of `total` (None until planned), shown as `mode` says."""

    def __init__(self, total: int | None, mode: ProgressMode, stream=None):
        self.total = total
        self.done = 0
        self.mode = ProgressMode(mode)
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.stage = ""
        self.entered: dict[str, float] = {}  # when each stage was first entered (time.monotonic())
        self._since = self.start
        self._shown: set[str] = set()
        self._last_line = self.start
        self._lock = threading.Lock()
        self._running = None
        self._following: tuple[Callable[[], str], str] | None = None
        self._followed = ""
        self._stop = threading.Event()
        self._bar = None
        self._notebook = NotebookDisplay() if self.mode == ProgressMode.NOTEBOOK else None
        self._drawn = 0.0
        if self.mode == ProgressMode.BAR:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description:<17}"),
                BarColumn(bar_width=20),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=True,
            )
            self._task = self._bar.add_task("starting", total=total, rate="")
            self._bar.start()
        self._thread = None
        if self.mode != ProgressMode.QUIET:
            self._thread = threading.Thread(target=self._loop, name="xialpha-progress", daemon=True)
            self._thread.start()

    @staticmethod
    def mode_for(quiet: bool, stream=None) -> ProgressMode:
        """QUIET when asked, NOTEBOOK in a Jupyter kernel, BAR on a terminal, else PLAIN lines."""
        stream = stream or sys.stderr
        if quiet:
            return ProgressMode.QUIET
        if in_notebook():
            return ProgressMode.NOTEBOOK
        return ProgressMode.BAR if stream.isatty() else ProgressMode.PLAIN

    def set_stage(self, stage: str) -> None:
        """The stage from now on (shown on the bar at once; see the module docstring for plain lines)."""
        with self._lock:
            self._set_stage(stage)
        self._draw()

    def _set_stage(self, stage: str) -> None:
        if stage == self.stage:
            return
        self.stage, self._since = stage, time.monotonic()
        self.entered.setdefault(stage, self._since)
        if self._bar is not None:
            self._bar.update(self._task, description=stage)

    def follow(self, stage: Callable[[], str], base: str) -> None:
        """While the stage is `base` (or what `stage` last said), every TICK_S make it what `stage()`
        returns, `base` when that is ""; once the stage moves on (`set_stage`), `stage` is asked
        no more."""
        self._following = (stage, base)

    def _follow(self) -> None:
        stage, base = self._following or (None, "")
        if stage is None:
            return
        try:
            text = stage() or base
        except Exception:  # nothing to follow any more
            text = base
        with self._lock:
            if self.stage not in (base, self._followed):
                self._following = None
                return
            self._followed = text
            self._set_stage(text)
        self._draw()

    def note(self, text: str) -> None:
        """A line for the user now, whatever the mode (above the bar on a terminal)."""
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)

    def set_total(self, total: int) -> None:
        """The number of fits, once planned."""
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total)
        self._draw()

    def watch(self, running) -> None:
        """Until `close`, every WATCH_EVERY_S set the stage from `running()`, the keys of the tasks
        running now (not while storing; an error, e.g. from a closing cluster, ends the watching)."""
        self._running = running

    def _loop(self) -> None:
        next_poll = 0.0
        while not self._stop.wait(TICK_S):
            self._follow()
            now = time.monotonic()
            if self._running is not None and now >= next_poll:
                next_poll = now + WATCH_EVERY_S
                try:
                    keys = [str(key) for key in self._running()]
                except Exception:  # the cluster is closing: nothing more to watch
                    self._running = None
                    continue
                stage = next((s for prefix, s in STAGES_BY_TASK if any(k.startswith(prefix) for k in keys)), None)
                if stage is not None and self.stage != "storing":
                    self.set_stage(stage)
            if self.mode == ProgressMode.PLAIN:
                self._print_stage_if_due(now)
            self._draw()

    def _print_stage_if_due(self, now: float) -> None:
        with self._lock:
            if self._stop.is_set():  # closed: nothing more may follow the command's last line
                return
            if self.stage and self.stage not in self._shown and now - self._since >= PLAIN_STAGE_AFTER_S:
                self._shown.add(self.stage)
                print(f"{self.stage} ({now - self.start:.0f} s)", file=self.stream, flush=True)

    def advance(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{self.rate():.1f} fits/s")
        elif self.mode == ProgressMode.PLAIN and (
            now - self._last_line >= PLAIN_EVERY_S or self.done >= (self.total or 0)
        ):
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)
        self._draw()

    def _draw(self, final: bool = False) -> None:
        """Redraw the notebook display (at most every NOTEBOOK_EVERY_S, and when `final`)."""
        if self._notebook is None or (self._stop.is_set() and not final):
            return
        with self._lock:
            now = time.monotonic()
            if not final and now - self._drawn < NOTEBOOK_EVERY_S:
                return
            self._drawn = now
            elapsed, stage = now - self.start, self.stage or "starting"
            if final:
                text = (
                    f"{self.done}/{self.total} fits in {elapsed:.1f} s"
                    if self.total
                    else f"nothing to fit ({elapsed:.1f} s)"
                )
            else:
                text = f"{stage}: {self.line()}" if self.total else f"{stage} ({elapsed:.0f} s)"
            self._notebook.show(text, self.done, self.total)

    def rate(self) -> float:
        elapsed = time.monotonic() - self.start
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        rate = self.rate()
        total = self.total or 0
        eta = (total - self.done) / rate if rate > 0 else float("nan")
        return f"fits {self.done}/{total} ({100 * self.done / max(total, 1):.0f}%), {rate:.1f} fits/s, ETA {eta:.0f} s"

    def close(self) -> None:
        """Stop the display; once this returns, nothing more is printed (the background thread is
        waited for, so an interrupted sweep's last line stays the last)."""
        with self._lock:
            self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._bar is not None:
            self._bar.stop()
        self._draw(final=True)
