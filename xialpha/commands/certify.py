"""`xialpha certify [STORE] --selection ID --test-split NAME`: test a selection once on sealed data.

Trains the selection's configurations on the sweep's training split, evaluates them on the
named test split (never used to choose them), prints error, recall, precision and F1 with
one-sided confidence bounds, and records the test set's fingerprint in the store. A second
certification on the same test set is refused unless --force (sequential testing bias).
"""

from __future__ import annotations

import sys

from xialpha.commands.output import add_output_arguments
from xialpha.commands.stores import add_store_arguments

MAX_DRAWS = 1_000_000  # each category's posterior keeps a few float64 arrays of this length


def add_arguments(parser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--selection", required=True, metavar="ID",
                        help="a saved selection's id (`xialpha select --save` prints it, `xialpha store ls` lists them)")
    parser.add_argument("--test-split", required=True, metavar="NAME", help="the sealed test split of the sweep's corpus")
    parser.add_argument("--force", action="store_true",
                        help="certify even if this test set was used before (the bounds are then biased)")
    parser.add_argument("--confidence", type=float, default=0.95, help="one-sided confidence level (default 0.95)")
    parser.add_argument("--draws", type=int, default=40_000, help="Monte-Carlo draws for the F1 bounds (default 40000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the Monte-Carlo draws (default 0)")
    parser.add_argument("--spec", metavar="FILE", help="the sweep's spec file (default: the stored spec text)")
    add_output_arguments(parser)


def run(args) -> int:
    from xialpha.commands.stores import open_store
    from xialpha.errors import UserError
    from xialpha.selection.certification import (
        certification_frame,
        certification_table,
        check_sealed,
        confusions,
        new_certification_id,
        previous_certifications,
        store_certification,
    )
    from xialpha.selection.context import load_context
    from xialpha.selection.display import certification_table as terminal_table
    from xialpha.selection.display import key_table, print_table, write_records
    from xialpha.selection.labels import sweep_labels
    from xialpha.selection.inventory import saved_selection
    from xialpha.selection.refit import train_selected

    if not 0.5 <= args.confidence < 1:
        raise UserError(f"--confidence: must be in [0.5, 1), got {args.confidence}")
    if not 1000 <= args.draws <= MAX_DRAWS:
        raise UserError(f"--draws: must be between 1,000 and {MAX_DRAWS:,}, got {args.draws:,}")
    if args.seed < 0:
        raise UserError(f"--seed: must be >= 0, got {args.seed}")
    store = open_store(args)
    rows = saved_selection(store, args.selection)
    sweep_id = str(rows["sweep_id"].iloc[0])
    context = load_context(store, sweep_id, str(rows["data_fingerprint"].iloc[0]), args.spec)
    _check_split(context.spec, args.test_split, str(rows["estimator"].iloc[0]), args.force)
    test = context.split(args.test_split)
    test_fingerprint = test.fingerprint()
    previous = previous_certifications(store, test_fingerprint)
    warning = check_sealed(previous, args.force)
    if warning:
        print(warning, file=sys.stderr)
    trained = train_selected(context, rows)
    frame = certification_frame(confusions(trained, test), dict(zip(rows["category"], rows["config_key"])),
                                confidence=args.confidence, draws=args.draws, seed=args.seed)
    certification_id = new_certification_id()
    identity = {"certification_id": certification_id, "sweep_id": sweep_id, "selection_id": args.selection,
                "test_split": args.test_split, "test_fingerprint": test_fingerprint, "n_test": len(test),
                "confidence": args.confidence, "draws": args.draws, "forced": bool(previous),
                "previous_certifications": len(previous)}
    stored = certification_table(frame, identity)
    store_certification(store, stored, test_fingerprint, certification_id, first=not previous)
    labels = sweep_labels(store.read_results_df(sweep_id))
    configs = dict(zip(rows["category"], labels.column(rows)))
    if args.format == "table":
        title = f"certification {certification_id} of {args.selection}"
        caption = f"split {args.test_split!r}: {len(test)} documents; one-sided {args.confidence:.0%} bounds"
        print_table(terminal_table(frame, title, configs, args.wide, caption=caption), args.wide)
        print_table(key_table(labels.key(rows)))
    else:
        records = stored.to_pandas()
        write_records(records.assign(config=records["category"].map(configs)), args.format)
    status = sys.stdout if args.format == "table" else sys.stderr
    print(f"stored certification {certification_id} in {store.uri}", file=status)
    print(f"split {args.test_split!r} is now marked as used (a second certification on it needs --force)", file=status)
    return 0


def _check_split(spec, name: str, estimator: str, force: bool) -> None:
    """Refuse splits the sweep trained or selected on; warn where held-out values were computed."""
    from xialpha.errors import UserError

    train_split = spec.corpus.train_split
    if train_split is None:
        raise UserError(f"--test-split: sweep {spec.id!r} trained on the whole corpus (no corpus.train_split); "
                        "no split of it is sealed")
    if name == train_split:
        raise UserError(f"--test-split: {name!r} is the sweep's training split")
    if name == spec.corpus.test_split and spec.estimators.holdout:
        if estimator == "holdout" and not force:
            raise UserError(f"--test-split: the selection was made with the holdout estimator on {name!r}; it is not "
                            "sealed (use another split, or --force)")
        print(f"warning: the sweep computed held-out estimates on {name!r}; the bounds hold only if no choice "
              "was based on them", file=sys.stderr)
