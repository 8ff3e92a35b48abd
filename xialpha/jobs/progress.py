"""Progress of a running sweep: a live bar on a terminal, periodic plain lines otherwise."""

from __future__ import annotations

import sys
import time

PLAIN_EVERY_S = 10.0


class Progress:
    """Counts finished fits out of `total`; mode "bar", "plain" or "quiet"."""

    def __init__(self, total: int, mode: str, stream=None):
        self.total = total
        self.done = 0
        self.mode = mode
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self._last_line = self.start
        self._bar = None
        if mode == "bar":
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress
            from rich.progress import TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = RichProgress(
                TextColumn("fits"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                transient=False,
            )
            self._task = self._bar.add_task("fits", total=total, rate="")
            self._bar.start()

    @staticmethod
    def mode_for(quiet: bool, stream=None) -> str:
        stream = stream or sys.stderr
        return "quiet" if quiet else ("bar" if stream.isatty() else "plain")

    def advance(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{self.rate():.1f} fits/s")
        elif self.mode == "plain" and (now - self._last_line >= PLAIN_EVERY_S or self.done >= self.total):
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)

    def rate(self) -> float:
        elapsed = time.monotonic() - self.start
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        rate = self.rate()
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        return f"fits {self.done}/{self.total} ({100 * self.done / max(self.total, 1):.0f}%), {rate:.1f} fits/s, ETA {eta:.0f} s"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
