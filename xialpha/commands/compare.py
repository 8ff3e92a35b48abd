"""`xialpha compare A B [--store STORE]`: two saved selections side by side, per category.

A and B are each a saved selection's id or a sweep's id (its newest saved per-category
selection); `xialpha store ls` lists both. Per category: what changed (preprocessing, kernel, C,
j), the configuration each chose, their estimates and held-out F1 and error where the sweeps
scored a held-out split, and a two-sided test of the held-out decisions (McNemar on documents
both were scored on, else an unpaired p-test: the lines under the table say which ran and why);
then the micro and macro summaries. The table shows the most changed categories first.
"""

from __future__ import annotations

import argparse
import textwrap

import pandas as pd

from xialpha.commands.arguments import add_output_arguments, add_store_arguments, named_store
from xialpha.printable import printable
from xialpha.reports.frames import comparison_labels, tidy_comparison
from xialpha.reports.terminal import comparison_table, key_table, print_table, write_records
from xialpha.selection.comparison import SelectionComparison, compare_selections

SHOWN = 50  # categories the terminal table shows without --all
LINE = 80  # characters: the longest line under the table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="a saved selection's id, or a sweep's id (its newest saved selection)")
    parser.add_argument("b", metavar="B", help="the same, for the other side")
    add_store_arguments(parser, positional=False)
    parser.add_argument(
        "--all",
        action="store_true",
        help=f"print every category (by default the table shows the {SHOWN} most changed)",
    )
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    store = named_store(args)
    comparison = compare_selections(store, args.a, args.b)
    if args.format != "table":
        write_records(tidy_comparison(comparison), args.format)
        return 0
    print_comparison(comparison, args.all, args.wide)
    return 0


def print_comparison(comparison: SelectionComparison, every: bool, wide: bool) -> None:
    """The table (the SHOWN most changed categories unless `every`, then the summaries), the lines
    that say what the tests are and how the selections differ, and what the labels stand for."""
    ordered = comparison.most_changed_first()
    shown = ordered if every else ordered[:SHOWN]
    print_table(comparison_table(comparison, [*shown, *comparison.summaries()], wide), wide)
    lines = []
    if len(shown) < len(ordered):
        lines.append(
            f"{len(shown)} of {len(ordered)} categories shown (the most changed first); --all shows every one, "
            "--format csv or json writes them all"
        )
    lines.extend(comparison.summary_lines())
    if not wide:
        lines.append("--wide shows the estimates, the held-out errors and the tests' counts too")
    for line in lines:
        print(textwrap.fill(printable(line), LINE, subsequent_indent="  "))
    chosen = pd.concat([comparison.a.rows, comparison.b.rows])
    print_table(key_table(comparison_labels(comparison).key(chosen)))
