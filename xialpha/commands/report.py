"""`xialpha report [STORE] [--sweep ID]`: a sweep's estimates as terminal tables or an HTML page.

The page (--html FILE) is self-contained: tables and plots (estimate vs C per category and
preprocessing, the chosen configurations, estimates beside held-out values, LOO candidates).
"""

from __future__ import annotations

from xialpha.commands.output import add_wide_argument
from xialpha.commands.stores import add_store_arguments, add_sweep_argument
from xialpha.selection.choices import DEFAULT_ESTIMATOR, DEFAULT_RHO, ESTIMATOR_CHOICES, METRIC_CHOICES


def add_arguments(parser) -> None:
    add_store_arguments(parser)
    add_sweep_argument(parser)
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML page to FILE")
    parser.add_argument("--metric", choices=[m for m in METRIC_CHOICES if m != "cost"], default="f1",
                        help="metric to show (default f1)")
    parser.add_argument("--estimator", choices=ESTIMATOR_CHOICES,
                        help=f"estimate to show (default {DEFAULT_ESTIMATOR}; xa for sweeps run without it)")
    parser.add_argument("--rho", type=float, default=DEFAULT_RHO, help=f"xi-alpha rho of the rows shown (default {DEFAULT_RHO:g})")
    add_wide_argument(parser)


def run(args) -> int:
    from pathlib import Path

    from xialpha.errors import UserError
    from xialpha.selection.labels import sweep_labels
    from xialpha.selection.objective import Objective
    from xialpha.selection.records import read_if_stored
    from xialpha.selection.report import best_per_group, estimate_curves, loo_candidates
    from xialpha.commands.stores import open_store, sweep_id
    from xialpha.selection.selector import candidate_rows, default_estimator

    store = open_store(args)
    args.sweep = sweep_id(store, args.sweep)
    results = store.read_results_df(args.sweep)
    estimator = args.estimator or default_estimator(results)
    objective = Objective(metric=args.metric, estimator=estimator, rho=args.rho)
    candidate_rows(results, objective, args.sweep)  # a clear error when there is nothing to show
    labels = sweep_labels(results)
    curves = estimate_curves(results, objective, labels)
    best = best_per_group(curves, objective.maximise)
    candidates = loo_candidates(results)
    stored = read_if_stored(store, "selections", [("sweep_id", "=", args.sweep)])
    selection = None if stored is None else _latest(stored.to_pandas())
    failed = len(store.read_results_df(args.sweep, include_failed=True)) - len(results)
    summary = {
        "store": store.uri, "result rows (ok / failed)": f"{len(results)} / {failed}",
        "categories": results["category"].nunique(), "preprocessings": results["preprocessing_id"].nunique(),
        "kernels": results["kernel_id"].nunique(), "C values": results["C"].nunique(),
        "rho values": ", ".join(f"{r:g}" for r in sorted(results["rho"].unique())),
        "created": f"{results['created_at'].min()} .. {results['created_at'].max()}",
    }
    what = f"{args.metric} of {estimator} (rho={args.rho:g})"
    if args.html:
        from xialpha.selection.report_html import render_report

        page = render_report(args.sweep, summary, curves, best, candidates, selection, what, labels)
        try:
            Path(args.html).write_text(page, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--html: cannot write {args.html}: {exc.strerror or exc}") from None
        print(f"wrote {args.html} ({len(page) // 1024} KiB)")
        return 0
    _print_terminal(args.sweep, summary, curves, best, candidates, selection, what, labels, args.wide)
    return 0


def _latest(selections):
    newest = selections.sort_values("created_at")["selection_id"].iloc[-1]
    return selections[selections["selection_id"] == newest].sort_values("category").reset_index(drop=True)


def _print_terminal(sweep_id, summary, curves, best, candidates, selection, what, labels, wide) -> None:
    from rich.table import Table

    from xialpha.selection.display import Column, key_table, number, percent, print_table, rich_table, selection_table

    facts = Table(title=f"sweep {sweep_id}", show_header=False)
    for key, value in summary.items():
        facts.add_row(key, str(value))
    print_table(facts)
    columns = [Column("category", lambda r: str(r["category"]), text=True),
               Column("config", lambda r: str(r["label"]), text=True),
               Column("best C", lambda r: number(r["best_C"])), Column("estimate", lambda r: percent(r["estimate"])),
               Column("held-out there", lambda r: percent(r["held_out"])),
               Column("best held-out", lambda r: percent(r["best_held_out"]))]
    print_table(rich_table(f"best C by {what}, beside held-out values (%)", columns, best))
    columns = [Column("category", lambda r: str(r["category"]), text=True), Column("n", lambda r: str(r["n"])),
               Column("configs", lambda r: str(r["configs"])), Column("mean", lambda r: number(r["candidates_mean"])),
               Column("max", lambda r: number(r["candidates_max"])),
               Column("exact LOO retrains (mean)", lambda r: number(r["loo_retrains_mean"]))]
    print_table(rich_table("LOO candidates: examples xi-alpha (rho=2) flags, per config", columns, candidates))
    if selection is not None:
        print_table(selection_table(selection, labels, wide), wide)
    print_table(key_table(labels.key(curves)))
