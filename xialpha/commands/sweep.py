"""`xialpha sweep SPEC`: train every configuration of a spec on Dask and store the estimates.

Exit codes: 0 all configs stored ok; 1 some configs failed (stored with status "failed");
2 bad input (spec, corpus, store; nothing stored, and no store created); 4 the store could not
be written part-way, e.g. disk full (the batches stored before are kept; rerun to resume);
130 interrupted (what was stored is kept). `--dry-run` reads the store and writes nothing.
"""

from __future__ import annotations

import shlex
import sys

from xialpha.commands.arguments import store_uri
from xialpha.commands.running import add_run_arguments, before_the_stack
from xialpha.printable import printable


def add_arguments(parser) -> None:
    add_run_arguments(
        parser,
        "sweep",
        "config/demo.toml",
        force_help="recompute configs already stored",
        quiet_help="print only the summary",
    )
    parser.add_argument(
        "--force-new-run",
        action="store_true",
        help="run under this sweep id although its recorded run had other data or another grid "
        "(the new run records the change)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the numbers of configs, fits, rows and tasks and the Gram memory per worker, run nothing",
    )


def run(args) -> int:
    from xialpha.spec.sweep import load_spec

    spec = load_spec(args.spec)  # mistakes first: the spec and its corpus, before the Dask stack is imported
    before_the_stack(args, spec, start_workers=not args.dry_run)
    from xialpha.storage.opening import open_store

    store = open_store(store_uri(args, spec.store), create=True, writable=not args.dry_run)
    if args.dry_run:
        from xialpha.jobs.dry_run import dry_run  # not the sweep's machinery: a surveyed corpus starts no cluster

        _print_dry_run(
            dry_run(
                spec,
                store,
                address=args.scheduler,
                workers=args.workers,
                force=args.force,
                force_new_run=args.force_new_run,
            )
        )
        return 0
    from xialpha.jobs.progress import Progress
    from xialpha.jobs.sweep import run_sweep

    mode = Progress.mode_for(args.quiet)
    dashboard = None if args.quiet else (lambda link: print(f"dashboard: {link}", file=sys.stderr))
    summary = run_sweep(
        spec,
        store,
        address=args.scheduler,
        workers=args.workers,
        force=args.force,
        progress_mode=mode,
        on_dashboard=dashboard,
        command=shlex.join(["xialpha", *sys.argv[1:]]),
        force_new_run=args.force_new_run,
    )
    work = (
        (
            f"{summary.fits} fits in {summary.wall_seconds:.1f} s ({summary.fits_per_second:.1f}/s), "
            f"compute {summary.task_seconds:.1f} s on {summary.threads} threads"
        )
        if summary.fits
        else "nothing to compute"
    )
    print(
        f"sweep {summary.sweep_id} in {store.uri}: {summary.ok} rows stored, {summary.skipped} skipped (already "
        f"stored), {summary.failed} failed"
    )
    print(f"run {summary.run_id}: {work}")
    if summary.auto is not None:
        print(printable(summary.auto.describe()))
    if summary.held_out_note:
        print(printable(summary.held_out_note), file=sys.stderr)
    for failure in summary.failures:
        print(f"  failed: {printable(failure)}", file=sys.stderr)
    if not args.quiet:
        _print_best(spec, store)
    return 1 if summary.failed else 0


def _print_dry_run(dry) -> None:
    """The dry run's counts and memory: documents and parts (counted from the corpus's file listing
    when it was surveyed, else read by the workers; none by this process), features stacked per
    worker (linear path) and Gram matrices (kernel path), each estimate said to be one."""
    import textwrap

    from xialpha.reports.formatting import plural
    from xialpha.spec.grid import AUTO_C_LIMIT, AUTO_C_START, auto_C_rule

    plan, spec = dry.plan, dry.plan.spec
    if spec.C_auto:
        print(f"sweep {spec.id}: the C values are found from the data as the sweep runs, in rounds")
        print(textwrap.fill(auto_C_rule(), width=80, initial_indent="  ", subsequent_indent="  "))
        paths = len(spec.preprocessings) * len(spec.kernels) * len(spec.j) * len(plan.categories)
        print(
            f"first round: {plural(paths * AUTO_C_START, 'fit')} ({AUTO_C_START} C on each of "
            f"{plural(paths, 'path')}); at most {plural(paths * AUTO_C_LIMIT, 'fit')} in all"
        )
    else:
        configs = len(spec.preprocessings) * len(spec.kernels) * len(spec.j) * len(spec.C)
        rhos = plural(len(spec.estimators.rhos), "rho value")
        print(
            f"sweep {spec.id}: {plural(configs, 'config')} x "
            f"{plural(len(plan.categories), 'category', 'categories')} = "
            f"{plural(configs * len(plan.categories), 'fit')}, stored as {plural(plan.n_keys, 'row')} ({rhos} per fit)"
        )
        assumed = f", if the corpus is as in run {printable(dry.assumed_run)}" if dry.assumed_run else ""
        print(f"to run: {plural(plan.n_fits, 'fit')} ({plan.n_skipped} of {plan.n_keys} rows already stored{assumed})")
    batches = "" if spec.C_auto else f"{plural(len(plan.batches), 'fit batch', 'fit batches')}, "
    print(
        f"{batches}{plural(len(plan.categories), 'category', 'categories')}, "
        f"{plural(plan.n_train, 'training document')}"
    )
    how = "counted from its file listing, not read" if dry.sampled else "read and vectorised by the workers"
    print(f"corpus: {plural(dry.n_documents, 'document')} in {plural(dry.n_parts, 'part')}, {how}")
    linear = sum(len(b.jobs) for b in plan.batches if plan.is_linear(b.kernel))
    if linear and plan.path_cut is not None:
        print(
            f"linear path: {linear} fits on sparse features (no Gram matrix) in "
            f"{plural(plan.path_cut.segments, 'fit task')}"
        )
        print(f"  {plan.path_cut.describe()}")
    if dry.feature_bytes:
        sizes = ", ".join(f"{size / 2**20:.1f}" for size in dry.feature_bytes.values())
        stacked = (
            f"a worker stacks {dry.stacked_bytes_per_worker / 2**20:.1f} MiB at most ({plural(dry.workers, 'worker')})"
        )
        if dry.sampled:
            print(f"features: about {sizes} MiB per preprocessing, estimated from {plural(dry.sampled, 'document')};")
            print(f"  {stacked}")
        else:
            print(f"features: about {sizes} MiB per preprocessing; {stacked}")
    if linear < plan.n_fits:
        print(
            f"kernel path: Gram memory {plan.peak_gram_bytes_per_worker(dry.workers) / 2**20:.1f} MiB per worker at "
            "most "
            f"({plural(dry.workers, 'worker')}; {plan.gram_bytes() / 2**20:.1f} MiB per Gram)"
        )


def _print_best(spec, store) -> None:
    """The best stored config per category by the spec's selection metric and estimator."""
    from xialpha.reports.formatting import objective_text
    from xialpha.reports.labels import sweep_labels
    from xialpha.reports.terminal import key_table, number, print_table
    from xialpha.selection.objective import Objective
    from xialpha.selection.selector import select
    from xialpha.storage.schema import SelectionColumn

    results = store.read_results_df(spec.id)
    if results.empty:
        return
    objective = Objective(metric=spec.metric, estimator=spec.selection_estimator, rho=spec.estimators.rhos[0])
    selection = select(results, objective, sweep_id=spec.id, runners_up=0)
    print(f"best per category by {objective_text(spec.metric, spec.selection_estimator, spec.estimators.rhos[0])}:")
    labels = sweep_labels(results)
    categories = selection.rows[SelectionColumn.CATEGORY].astype(str)
    width = int(categories.str.len().max())  # every name whole, the configs aligned
    for _, row in selection.rows.iterrows():
        print(
            printable(
                f"  {row[SelectionColumn.CATEGORY]!s:<{width}}  {labels.of_row(row)}  "
                f"{spec.metric}={number(row[SelectionColumn.VALUE])}"
            )
        )
    print_table(key_table(labels.key(selection.rows)))
    print(printable(f"significance tests: xialpha select {shlex.quote(store.uri)} --sweep {shlex.quote(spec.id)}"))
