"""`xialpha certify [STORE] --selection ID --test-split NAME`: test a selection once on sealed data.

Trains the selection's configurations on the sweep's training split, evaluates them on the
named test split (never used to choose them), prints error, recall, precision and F1 with
one-sided confidence bounds, and records the test set's fingerprint in the store. A second
certification on the same test set is refused unless --force (sequential testing bias).
"""

from __future__ import annotations

import argparse
import sys
import warnings

from xialpha.commands.arguments import add_output_arguments, add_store_arguments, named_store
from xialpha.jobs.certify import certify_selection
from xialpha.printable import printable
from xialpha.reports.frames import tidy_certification
from xialpha.reports.labels import sweep_labels
from xialpha.reports.terminal import certification_table as terminal_table
from xialpha.reports.terminal import key_table, print_table, write_records
from xialpha.selection.bounds import CONFIDENCE, DRAWS, DRAWS_SEED
from xialpha.selection.records import read_selection
from xialpha.storage.schema import CertificationColumn, ResultColumn


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument(
        "--selection",
        required=True,
        metavar="ID",
        help="a saved selection's id (`xialpha select --save` prints it, `xialpha store ls` lists them)",
    )
    parser.add_argument(
        "--test-split", required=True, metavar="NAME", help="the sealed test split of the sweep's corpus"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="certify even if this test set was used before (the bounds are then biased)",
    )
    parser.add_argument(
        "--confidence", type=float, default=CONFIDENCE, help=f"one-sided confidence level (default {CONFIDENCE:g})"
    )
    parser.add_argument(
        "--draws", type=int, default=DRAWS, help=f"Monte-Carlo draws for the F1 bounds (default {DRAWS})"
    )
    parser.add_argument(
        "--seed", type=int, default=DRAWS_SEED, help=f"random seed of the Monte-Carlo draws (default {DRAWS_SEED})"
    )
    parser.add_argument("--spec", metavar="FILE", help="the sweep's spec file (default: the stored spec text)")
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    store = named_store(args)
    selection = read_selection(store, args.selection)
    rows = selection.rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        frame = certify_selection(
            store,
            selection,
            args.test_split,
            force=args.force,
            confidence=args.confidence,
            draws=args.draws,
            seed=args.seed,
            spec_path=args.spec,
        )
    for warning in caught:
        print(printable(f"warning: {warning.message}"), file=sys.stderr)
    certification_id = str(frame[CertificationColumn.CERTIFICATION_ID].iloc[0])
    labels = sweep_labels(store.read_results_df(str(rows[ResultColumn.SWEEP_ID].iloc[0])))
    configs = dict(zip(rows[ResultColumn.CATEGORY], labels.column(rows)))
    if args.format == "table":
        title = f"certification {certification_id} of {args.selection}"
        documents = int(frame[CertificationColumn.N_TEST].iloc[0])
        caption = f"split {args.test_split!r}: {documents} documents; one-sided {args.confidence:.0%} bounds"
        print_table(terminal_table(frame, title, configs, args.wide, caption=caption), args.wide)
        print_table(key_table(labels.key(rows)))
    else:
        write_records(tidy_certification(frame, configs), args.format)
    status = sys.stdout if args.format == "table" else sys.stderr
    print(printable(f"stored certification {certification_id} in {store.uri}"), file=status)
    print(f"split {args.test_split!r} is now marked as used (a second certification on it needs --force)", file=status)
    return 0
