"""`xialpha report [STORE] [--sweep ID] [--selection ID]`: a sweep's estimates as terminal tables
or an HTML page.

The report shows one saved selection: --selection ID, else the newest per-category selection of
the sweep (the page says which, and how to choose another). The page (--html FILE) is
self-contained: the selection and its certifications, estimates against held-out values per
estimator (a calibration plot), what each estimator would choose, estimate vs C per category
and preprocessing, LOO candidates, and provenance (commands, spec, versions, run ids, dates).
With --watch the page is rewritten from the store every few seconds while a sweep runs
(`xialpha.reports.watching`), to follow it in a browser from anywhere.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from xialpha.commands.arguments import (
    add_store_arguments,
    add_sweep_argument,
    add_wide_argument,
    named_store,
    store_uri,
    sweep_id,
)
from xialpha.commands.compare import print_comparison
from xialpha.errors import UserError
from xialpha.printable import printable
from xialpha.reports.columns import ReportColumn
from xialpha.reports.contents import NO_HELD_OUT, Report, report_of
from xialpha.reports.formatting import missing
from xialpha.reports.frames import SHOWN, shown_rows
from xialpha.reports.html import render_report, write_page
from xialpha.reports.terminal import (
    CATEGORY,
    NOT_INDEPENDENT,
    TableColumn,
    calibration_table,
    cell_text,
    certification_table,
    key_table,
    number,
    percent,
    print_table,
    rich_table,
    selection_table,
)
from xialpha.reports.verdicts import grid_word, legend
from xialpha.selection.objective import DEFAULT_ESTIMATOR, DEFAULT_RHO, SHOWN_ESTIMATORS, SHOWN_METRIC
from xialpha.storage.schema import CertificationColumn, CertificationScope, ResultColumn

if TYPE_CHECKING:
    import pandas as pd

    from xialpha.storage.contract import StoreQueries

WATCH_EVERY_S = 5.0  # default --watch interval, seconds


# What report does instead of an option other commands take (`xialpha.cli` says it when it is given).
INSTEAD = {"--format": "it writes --html"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    add_sweep_argument(parser)
    parser.add_argument(
        "--selection",
        metavar="ID",
        help="the saved selection to show (default: the sweep's newest per-category one; "
        "`xialpha store ls` lists them)",
    )
    parser.add_argument(
        "--compare",
        metavar="ID",
        help="also compare the selection shown (A) with another (B): a selection's or a sweep's id, as "
        "`xialpha compare A B` does",
    )
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML page to FILE (-: stdout)")
    parser.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=WATCH_EVERY_S,
        metavar="SECONDS",
        help=f"with --html: rewrite FILE from the store every SECONDS (default {WATCH_EVERY_S:g}) while "
        "a sweep runs, the page reloading itself, until the sweep ends or Ctrl-C",
    )
    parser.add_argument(
        "--metric",
        choices=SHOWN_METRIC.choices,
        help="metric to show (default: the selection's, else f1)",
    )
    parser.add_argument(
        "--estimator",
        choices=SHOWN_ESTIMATORS,
        help=f"estimate to show (default: the selection's, else {DEFAULT_ESTIMATOR}; xa for sweeps run without it)",
    )
    parser.add_argument(
        "--rho", type=float, help=f"xi-alpha rho of the rows shown (default: the selection's, else {DEFAULT_RHO:g})"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help=f"print every category (by default the tables show the {SHOWN} with the most positive examples)",
    )
    add_wide_argument(parser)


def run(args: argparse.Namespace) -> int:
    command = shlex.join(["xialpha", *sys.argv[1:]]) if Path(sys.argv[0]).name in ("xialpha", "cli.py") else None
    if args.watch is not None:
        return _watch(args, command)
    store = named_store(args)
    report = report_of(
        store,
        args.sweep,
        args.selection or None,
        args.compare,
        metric=args.metric,
        estimator=args.estimator,
        rho=args.rho,
        command=command,
    )
    if args.html:
        page = render_report(report)
        write_page(args.html, page, "html", _store_read(args, store))
        if args.html != "-":  # - is the page on standard output, nothing else
            print(printable(f"wrote {args.html} ({len(page) // 1024} KiB)"))
            print(textwrap.fill(printable(f"It shows {report.selection_note}."), 80))
        return 0
    _print_terminal(report, args.wide, args.all)
    return 0


def _watch(args: argparse.Namespace, command: str | None) -> int:
    """--watch: the page rewritten from the store until the sweep ends (exit 0) or Ctrl-C (exit 0:
    stopping is how watching ends). SIGTERM and SIGHUP end it as they end every command (the last
    page written without its reload): one line, exit 143 or 129."""
    import signal

    from xialpha.commands.signals import Interrupted
    from xialpha.reports.watching import watch_report

    if not args.html:
        raise UserError("--watch: needs --html FILE, the page to keep up to date")
    if not args.watch > 0:
        raise UserError(f"--watch: must be > 0 seconds, got {args.watch:g}")

    def read() -> tuple[Report, pd.Timestamp | None]:
        store = named_store(args)
        sweep = sweep_id(store, args.sweep)
        ended = store.sweep_ended_at(sweep)  # first: rows read after a run's end are all its rows
        report = report_of(
            store,
            sweep,
            args.selection or None,
            args.compare,
            metric=args.metric,
            estimator=args.estimator,
            rho=args.rho,
            command=command,
        )
        return report, ended

    print(f"writing {args.html} every {args.watch:g} s until the sweep ends (Ctrl-C stops)", flush=True)
    try:
        watch_report(read, args.html, args.watch, lambda text: print(text, flush=True), _store_read(args))
        ended = "the sweep ended"
    except KeyboardInterrupt as exc:
        if isinstance(exc, Interrupted) and exc.signum != signal.SIGINT:
            raise
        ended = "stopped watching"
    print(f"{ended}; {args.html} shows the store as it was last read")
    return 0


def _store_read(args: argparse.Namespace, store: StoreQueries | None = None) -> list[tuple[str, str]]:
    """The store a report reads (`store`, else the one the arguments name, which --watch may wait
    for), as what its page must not be written into (see `xialpha.outputs.check_output`): its
    directory, when the store is local."""
    from xialpha.storage.opening import open_store

    if store is None:
        try:
            store = open_store(store_uri(args), create=True, writable=False)  # opening changes nothing
        except UserError:  # unreachable for now: each read says why
            return []
    directory = store.local_directory()
    return [] if directory is None else [("STORE", directory)]


def _print_terminal(report: Report, wide: bool, every: bool) -> None:
    shown = report.candidates if every else shown_rows(report.candidates)
    categories = set(shown[ResultColumn.CATEGORY])

    def of_shown(frame: pd.DataFrame) -> pd.DataFrame:  # the rows of the categories shown
        return frame if every else frame[frame[ResultColumn.CATEGORY].isin(categories)]

    facts = Table(title=cell_text(f"sweep {report.sweep_id}"), show_header=False)
    for key, value in report.summary.items():
        facts.add_row(cell_text(key), cell_text(value))
    print_table(facts)
    columns = [
        CATEGORY,
        TableColumn("config", lambda r: str(r[ReportColumn.LABEL]), text=True),
        TableColumn("best C", lambda r: number(r[ReportColumn.BEST_C])),
        TableColumn("estimate", lambda r: percent(r[ReportColumn.ESTIMATE])),
        TableColumn("held-out at best C", lambda r: percent(r[ReportColumn.HELD_OUT])),
        TableColumn("best held-out", lambda r: percent(r[ReportColumn.BEST_HELD_OUT])),
        TableColumn("on the C grid", grid_word, text=True, wide=True),
    ]
    best = of_shown(report.best)
    print_table(rich_table(f"best C by {report.what}, beside held-out values (%)", columns, best, wide), wide)
    print(textwrap.fill(printable(report.best_note), 80))
    if not report.calibration.empty:
        print_table(calibration_table(report.calibration, report.metric))
    else:  # the held-out columns above are dashes: say why
        print(textwrap.fill(f"held-out values: the sweep {NO_HELD_OUT}.", 80))
    columns = [
        CATEGORY,
        TableColumn("n", lambda r: str(r[ResultColumn.N])),
        TableColumn("configs", lambda r: str(r[ReportColumn.CONFIGS])),
        TableColumn("mean", lambda r: number(r[ReportColumn.CANDIDATES_MEAN])),
        TableColumn("max", lambda r: number(r[ReportColumn.CANDIDATES_MAX])),
        TableColumn("exact LOO retrains (mean)", lambda r: number(r[ReportColumn.LOO_RETRAINS_MEAN])),
    ]
    if report.candidates[ReportColumn.CONFIGS].sum() == 0:  # a table of dashes would say nothing
        print("LOO candidates: the sweep has no rho = 2 rows (add 2.0 to estimators.rho)")
    else:
        title = "LOO candidates: examples xi-alpha (rho=2) flags, per config"
        print_table(rich_table(title, columns, shown))
    if report.selection_edges is not None:
        selection = of_shown(report.selection_edges)
        print_table(selection_table(selection, report.labels, wide), wide)
        print("\n".join(legend(selection)))
        configs = dict(zip(selection[ResultColumn.CATEGORY], report.labels.column(selection)))
        certifications = report.certifications
        groups = certifications.groupby(CertificationColumn.CERTIFICATION_ID, sort=False) if len(certifications) else []
        for certification_id, rows in groups:
            first = rows.iloc[0]
            title = (
                f"certification {certification_id} on {first[CertificationColumn.TEST_SPLIT]!r} "
                f"({first[CertificationColumn.N_TEST]} documents)"
            )
            if not missing(first.get(CertificationColumn.INDEPENDENT)) and not bool(
                first[CertificationColumn.INDEPENDENT]
            ):
                title += f"; {NOT_INDEPENDENT.removeprefix('* ')}"
            averages = rows[CertificationColumn.SCOPE] != CertificationScope.CATEGORY  # micro and macro: always
            rows = rows if every else rows[averages | rows[ResultColumn.CATEGORY].isin(categories)]
            print_table(certification_table(rows, title, configs, wide), wide)
    if len(shown) < len(report.candidates):
        print(
            f"{len(shown)} of {len(report.candidates)} categories shown (those with the most positive examples); "
            "--all shows every one, --html writes them all"
        )
    print_table(key_table(report.labels.key(of_shown(report.curves))))
    print(textwrap.fill(printable(f"This report shows {report.selection_note}."), 80))
    if report.comparison is not None:
        print_comparison(report.comparison, every=False, wide=wide)
