"""`xialpha drift SPEC`: check the newest batch of a stream for concept drift (xi-alpha window selection).

For every category and configuration, an SVM is trained on each candidate window (the h most
recent batches) and its xi-alpha error estimate is counted on the newest batch only; the window
with the smallest estimate is chosen. DRIFT: the chosen window drops older batches and the
full-memory estimate is worse by more than [drift] margin points, with an exact one-sided
McNemar test p < [drift] alpha. Rows go to the store's drift dataset; a newest batch already
checked with the same spec and data is not rechecked (its stored verdict is reported) unless --force.

exit codes (for cron, systemd timers, Kubernetes CronJobs):
  0  no drift
  1  checks failed (stored with verdict "failed"; a rerun retries them)
  2  bad input: spec, corpus, store or arguments
  3  drift detected
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING, cast

from xialpha.commands.arguments import store_uri
from xialpha.commands.running import add_run_arguments, before_the_stack
from xialpha.printable import printable

if TYPE_CHECKING:
    from xialpha.concept_drift.outcome import DriftReport
    from xialpha.reports.labels import ConfigLabels
    from xialpha.spec.drift import DriftSpec
    from xialpha.storage.contract import StoreQueries
    from xialpha.storage.rows import DriftRow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__
    add_run_arguments(
        parser,
        "drift",
        "config/drift.toml",
        force_help="recheck a newest batch already checked with this spec and data",
        quiet_help="print only the one-line summary",
    )


def run(args: argparse.Namespace) -> int:
    from xialpha.spec.drift import load_drift_spec

    spec = load_drift_spec(args.spec)  # mistakes first: the spec and its corpus, before the Dask stack is imported
    before_the_stack(args, spec)
    from xialpha.jobs.drift_check import run_drift_check
    from xialpha.storage.opening import open_store

    store = open_store(store_uri(args, spec.store), create=True, writable=True)
    dashboard = None if args.quiet else (lambda link: print(f"dashboard: {link}", file=sys.stderr))
    report = run_drift_check(
        spec, store, address=args.scheduler, workers=args.workers, force=args.force, on_dashboard=dashboard
    )
    if not args.quiet:
        print(textwrap.fill(printable(_header(report, store.uri)), 80, subsequent_indent="  "))
        for line in _verdict_lines(report, spec):
            print(printable(line))
        next_step = report.next_step(_selection_of_these_categories(store, report))
        if next_step:
            print(textwrap.fill(printable(next_step), 80, subsequent_indent="  ", break_on_hyphens=False))
    verdicts = report.verdicts()
    n_ok = len(verdicts) - report.n_drift - report.n_failed
    print(
        printable(
            f"drift {report.drift_id} at batch {report.newest_batch}: {report.n_drift} drift, {n_ok} no drift, "
            f"{report.n_failed} failed{' (stored verdict, use --force to recheck)' if report.skipped else ''}; "
            f"exit {report.exit_code}"
        )
    )
    return report.exit_code


def _selection_of_these_categories(store: StoreQueries, report: DriftReport) -> str | None:
    """The newest saved per-category selection that chose for a category this check checked (what a
    new selection of the recent batches is compared with), None when none did: a selection of
    another sweep's categories, or one configuration for all (--global), is no baseline for it."""
    from xialpha.storage.schema import SelectionColumn, SelectionMode

    S = SelectionColumn
    frame = store.selections()
    if frame.empty:
        return None
    checked = {category for category, *_ in report.verdicts()}
    mode = frame[S.MODE] if S.MODE in frame else SelectionMode.CATEGORY
    related = frame[(mode == SelectionMode.CATEGORY) & frame[S.CATEGORY].isin(checked)]
    if related.empty:
        return None
    newest = related.sort_values([S.CREATED_AT, S.SELECTION_ID], kind="mergesort")
    return str(newest[S.SELECTION_ID].iloc[-1])


def _header(report: DriftReport, uri: str) -> str:
    how = "already checked" if report.skipped else f"run {report.run_id}, {report.wall_seconds:.1f} s"
    dropped = f", {report.n_dropped} without a timestamp left out" if report.n_dropped else ""
    return (
        f"drift check {report.drift_id}: newest batch {report.newest_batch} of {report.n_batches} "
        f"({report.n_documents} documents{dropped}); {how}; store {uri}"
    )


def _verdict_lines(report: DriftReport, spec: DriftSpec) -> list[str]:
    """Per category and config (by its label, `xialpha.reports.labels`): the verdict, chosen
    window and full memory, then every window's estimate; lines of at most 80 characters."""
    from xialpha.concept_drift.outcome import group_key
    from xialpha.storage.schema import DriftVerdict

    windows: dict[tuple, list[DriftRow]] = {}
    for row in report.rows:
        windows.setdefault(group_key(row), []).append(row)
    labels = _labels(spec, report.rows)
    lines = []
    for key, row in report.verdicts().items():
        category, pre, kernel_id, C, j = key
        config = f"{category} {labels.config(pre, kernel_id, C, j)}"
        if row.verdict is DriftVerdict.FAILED:
            lines.append(f"  FAILED    {config}: {row.check_error}")
            continue
        label = "DRIFT" if row.verdict is DriftVerdict.DRIFT else "no drift"
        assert row.chosen_error is not None and row.full_error is not None  # a check that did not fail has both
        text = (
            f"{label:<9} {config}: window {row.chosen_window} of {row.n_batches} batches, xi-alpha error "
            f"{100 * row.chosen_error:.1f}% vs full memory {100 * row.full_error:.1f}% (discordant "
            f"{row.full_worse}:{row.chosen_worse}, p={row.p_value:.3g}); windows (batches: error %): "
            + " ".join(_window_estimate(r) for r in sorted(windows[key], key=lambda r: r.window))
        )
        lines.extend(textwrap.wrap(text, 80, initial_indent="  ", subsequent_indent=" " * 12))
    return lines


def _labels(spec: DriftSpec, rows: list[DriftRow]) -> ConfigLabels:
    """The ConfigLabels of the configurations in `rows`, from the spec's preprocessing and kernel parameters."""
    import pandas as pd

    from xialpha.reports.labels import sweep_labels
    from xialpha.storage.schema import ResultColumn, config_values

    pres = {p.id: p for p in spec.preprocessings}
    kernels = {k.id: k for k in spec.kernels}
    return sweep_labels(
        pd.DataFrame(
            [
                {
                    **config_values(pres[r.preprocessing_id], kernels[r.kernel_id]),
                    ResultColumn.C: r.C,
                    ResultColumn.J: r.j,
                }
                for r in rows
            ]
        )
    )


def _window_estimate(row: DriftRow) -> str:
    from xialpha.storage.schema import WindowStatus, estimate_column

    if row.status != WindowStatus.OK:
        return f"{row.window}:{row.status}"
    error = cast(float, row.estimate[estimate_column("xa", "error")])  # an ok window's estimate is a number
    return f"{row.window}:{100 * error:.1f}{'*' if row.chosen else ''}"
