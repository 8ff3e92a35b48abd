"""`xialpha select [STORE] [--sweep ID]`: choose configurations from a sweep's estimates.

Per category (default) or one shared configuration (--global) optimising --metric of
--estimator; the choice is printed, and stored in the "selections" dataset with --save (what
`certify` and `report` read: exploring with `select` changes nothing they show). --refit DIR
trains the chosen configurations on all training data and saves a deployable artefact (JSON and
NumPy arrays, no pickle); it saves the selection too, as the artefact names it. A selection
saved before with the same objective and choices keeps its id and is not stored again, so a
`--refit` after `--save` names the selection already certified and reported.
"""

from __future__ import annotations

import dataclasses
import sys
from argparse import SUPPRESS

from xialpha.commands.arguments import (
    add_output_arguments,
    add_store_arguments,
    add_sweep_argument,
    named_store,
    sweep_id,
)
from xialpha.printable import printable
from xialpha.reports.formatting import plural
from xialpha.reports.frames import SHOWN, shown_rows, tidy_selection
from xialpha.reports.labels import sweep_labels
from xialpha.reports.terminal import key_table, print_table, selection_table, write_records
from xialpha.reports.verdicts import legend
from xialpha.selection.objective import (
    AVERAGES,
    DEFAULT_ESTIMATOR,
    DEFAULT_RHO,
    ESTIMATOR_CHOICES,
    MAX_COST,
    METRIC_CHOICES,
)
from xialpha.selection.options import SelectionOptions
from xialpha.selection.workflow import select_sweep
from xialpha.selection_saving import store_selection
from xialpha.storage.schema import SelectionColumn

OPTIONS = {field.name: field.default for field in dataclasses.fields(SelectionOptions)}  # and their defaults


def add_arguments(parser) -> None:
    """The flags of `SelectionOptions` (its defaults and choices, not restated here: a flag left out is
    absent from the parsed arguments, and `SelectionOptions` fills in its default), then the rest."""
    add_store_arguments(parser)
    add_sweep_argument(parser)
    parser.add_argument(
        "--metric",
        default=SUPPRESS,
        help=f"what to optimise: {', '.join(METRIC_CHOICES)} (default f1; cost when --cost-fn/--cost-fp are given)",
    )
    parser.add_argument(
        "--estimator",
        default=SUPPRESS,
        help=f"estimate to select by: {', '.join(ESTIMATOR_CHOICES)} (default {DEFAULT_ESTIMATOR}; "
        "xa for sweeps run without it)",
    )
    parser.add_argument(
        "--rho", type=float, default=SUPPRESS, help=f"rows of this xi-alpha rho (default {DEFAULT_RHO:g})"
    )
    parser.add_argument(
        "--no-smooth",
        dest="smooth",
        action="store_false",
        default=SUPPRESS,
        help="rank by each config's own estimate, not averaged with its C neighbours' (the default)",
    )
    parser.add_argument(
        "--global",
        dest="per_category",
        action="store_false",
        default=SUPPRESS,
        help="one configuration (preprocessing, kernel, C, j) shared by all categories",
    )
    parser.add_argument(
        "--average",
        default=SUPPRESS,
        help=f"how --global averages categories: {', '.join(AVERAGES)} (default {OPTIONS['average']})",
    )
    parser.add_argument(
        "--cost-fn",
        type=float,
        default=SUPPRESS,
        help=f"cost of a false negative (metric cost; default 1, at most {MAX_COST:g})",
    )
    parser.add_argument(
        "--cost-fp",
        type=float,
        default=SUPPRESS,
        help=f"cost of a false positive (metric cost; default 1, at most {MAX_COST:g})",
    )
    parser.add_argument(
        "--runners-up",
        type=int,
        default=SUPPRESS,
        metavar="K",
        help=f"runners-up to test against (default {OPTIONS['runners_up']})",
    )
    parser.add_argument(
        "--alpha", type=float, default=SUPPRESS, help=f"significance level (default {OPTIONS['alpha']:g})"
    )
    parser.add_argument(
        "--save", action="store_true", help="store the selection (its id is what certify and report --selection take)"
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="with --save or --refit: save a selection of a sweep that is still running or was interrupted",
    )
    parser.add_argument(
        "--refit",
        metavar="DIR",
        help="train the chosen configs on all training data and save an artefact to DIR (implies --save)",
    )
    parser.add_argument(
        "--spec", metavar="FILE", help="the sweep's spec file, for --refit (default: the stored spec text)"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help=f"print every category (by default the table shows the {SHOWN} with the most positive examples)",
    )
    add_output_arguments(parser)


def options_of(args) -> SelectionOptions:
    """The SelectionOptions of the flags given (`xialpha.select` takes the same, as parameters);
    --refit saves the selection too."""
    given = {name: value for name, value in vars(args).items() if name in OPTIONS}
    return SelectionOptions(**{**given, "save": args.save or bool(args.refit)})


def run(args) -> int:
    options = options_of(args)
    store = named_store(args)
    args.sweep = sweep_id(store, args.sweep)
    chosen = select_sweep(store, args.sweep, options)
    if chosen.incomplete:
        print(printable(f"note: {chosen.incomplete}; this selection is of the rows stored so far"), file=sys.stderr)
    if options.estimator is None and chosen.objective.estimator != DEFAULT_ESTIMATOR:
        print(
            f"note: sweep {args.sweep!r} has no {DEFAULT_ESTIMATOR} estimates; selecting by "
            f"{chosen.objective.estimator}",
            file=sys.stderr,
        )
    results, rows = chosen.results, chosen.frame
    if not options.save:  # an unsaved selection has no id anything can take: none is shown
        rows = rows.assign(**{SelectionColumn.SELECTION_ID: None})
    labels = sweep_labels(results)
    if args.format == "table":
        shown = rows if args.all else shown_rows(rows)
        titled = shown if options.save else shown.assign(**{SelectionColumn.SELECTION_ID: "(not saved)"})
        print_table(selection_table(titled, labels, args.wide), args.wide)
        if len(shown) < len(rows):
            print(
                f"{len(shown)} of {len(rows)} categories shown (those with the most positive examples); "
                "--all shows every one, --format csv or json writes them all"
            )
        print("\n".join(legend(shown)))
        print_table(key_table(labels.key(shown, ("", "runner_up_") if args.wide else ("",))))
    else:
        write_records(tidy_selection(rows, labels), args.format)
    status = sys.stdout if args.format == "table" else sys.stderr  # csv and json: standard output holds only the rows
    if not options.save:
        print("selection not stored: --save stores it and prints its id (for certify, report)", file=status)
        return 0
    done = store_selection(store, chosen, labels, refit=args.refit, spec=args.spec)
    if done.stored:
        print(
            printable(
                f"stored selection {done.selection_id} in {store.uri} ({plural(len(rows), 'category', 'categories')})"
            ),
            file=status,
        )
    else:
        print(f"selection {done.selection_id} is stored already (the same choices)", file=status)
    if done.artifact is not None:
        print(printable(f"saved {plural(done.n_models, 'model')} to {done.artifact}"), file=status)
    return 0
