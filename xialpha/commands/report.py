"""`xialpha report [STORE] [--sweep ID]`: a sweep's estimates as terminal tables or an HTML page.

The page (--html FILE) is self-contained: tables and plots (estimate vs C per category and
preprocessing, the chosen configurations, estimates beside held-out values, LOO candidates).
"""

from __future__ import annotations

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


def run(args) -> int:
    from pathlib import Path

    from xialpha.errors import UserError
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
    curves = estimate_curves(results, objective)
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

        page = render_report(args.sweep, summary, curves, best, candidates, selection, what)
        try:
            Path(args.html).write_text(page, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--html: cannot write {args.html}: {exc.strerror or exc}") from None
        print(f"wrote {args.html} ({len(page) // 1024} KiB)")
        return 0
    _print_terminal(args.sweep, summary, best, candidates, selection, what)
    return 0


def _latest(selections):
    newest = selections.sort_values("created_at")["selection_id"].iloc[-1]
    return selections[selections["selection_id"] == newest].sort_values("category").reset_index(drop=True)


def _print_terminal(sweep_id, summary, best, candidates, selection, what) -> None:
    from rich.table import Table

    from xialpha.selection.display import number, percent, print_table, selection_table

    facts = Table(title=f"sweep {sweep_id}", show_header=False)
    for key, value in summary.items():
        facts.add_row(key, str(value))
    print_table(facts)
    table = Table(title=f"best C by {what}, beside held-out values (%)")
    for column in ("category", "preprocessing", "kernel", "j", "best C", "estimate", "held-out there", "best held-out"):
        table.add_column(column, justify="left" if column in ("category", "preprocessing", "kernel") else "right")
    for _, r in best.iterrows():
        table.add_row(str(r["category"]), str(r["preprocessing_id"])[:8], str(r["kernel_label"]), number(r["j"]),
                      number(r["best_C"]), percent(r["estimate"]), percent(r["held_out"]), percent(r["best_held_out"]))
    print_table(table)
    loo = Table(title="LOO candidates: examples xi-alpha (rho=2) flags, per config")
    for column in ("category", "n", "configs", "mean", "max", "exact LOO retrains (mean)"):
        loo.add_column(column, justify="left" if column == "category" else "right")
    for _, r in candidates.iterrows():
        loo.add_row(str(r["category"]), str(r["n"]), str(r["configs"]), number(r["candidates_mean"]),
                    number(r["candidates_max"]), number(r["loo_retrains_mean"]))
    print_table(loo)
    if selection is not None:
        print_table(selection_table(selection))
