"""`xialpha store ls|check|compact [STORE]`: list what a store holds (sweeps, saved selections,
certifications, drift checks) with their ids, find files reads skip, merge small files."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from xialpha.commands.arguments import add_output_arguments, add_store_arguments, named_store
from xialpha.printable import printable
from xialpha.reports.formatting import plural
from xialpha.reports.inventory import COLUMNS, incomplete_notes, inventory
from xialpha.reports.records import write_rows
from xialpha.reports.terminal import inventory_table, print_table
from xialpha.storage.arrow_schema import DATASETS
from xialpha.storage.pandas_probe import skip_pandas_probe

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    ls = actions.add_parser("ls", help="list sweeps, saved selections, certifications and drift checks with their ids")
    add_store_arguments(ls)
    add_output_arguments(ls)
    check = actions.add_parser(
        "check",
        help="list the data files reads skip (unreadable or foreign); exit 1 if there are any",
    )
    add_store_arguments(check)
    check.add_argument(
        "--quarantine",
        action="store_true",
        help="move those files to STORE/_quarantine/ (same relative path), where nothing reads them",
    )
    compact = actions.add_parser("compact", help="merge each partition's files into one; reads are unchanged")
    add_store_arguments(compact)
    compact.add_argument(
        "--dataset",
        metavar="NAME",
        help="compact only this dataset (results, examples, selections, ...); default: every dataset",
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "ls":  # it reads records and writes text: pandas is not needed
        skip_pandas_probe()
    store = named_store(args)
    if args.action == "ls":
        _list(store, args.format, args.wide)
        return 0
    if args.action == "check":
        return _check(store, args.quarantine)
    for dataset in [args.dataset] if args.dataset else DATASETS:
        before, after = store.compact(dataset)
        print(f"{dataset}: {plural(before, 'file')} -> {plural(after, 'file')}")
    return 0


def _check(store: StoreQueries, quarantine: bool) -> int:
    """Print one line per skipped file (`printable`: a file's name may hold any character); 0 when
    there is none or they were moved, else 1."""
    problems = store.check()
    if not problems:
        print(printable(f"{store.uri}: every data file is readable and of its dataset"))
        return 0
    for problem in problems:
        print(printable(f"{store.relative(problem.path)}: {problem.kind}: {problem.reason}"))
    if quarantine:
        moved = store.quarantine(problems)
        print(f"moved {len(moved)} file(s) under {store.quarantine_directory}/ in the store, where nothing reads them")
        left = [problem for problem in problems if store.outside(problem.path)]
        for problem in left:
            print(
                printable(
                    f"{store.relative(problem.path)}: left where it is: a link leads outside the store to it "
                    "(remove the link)"
                )
            )
        return 1 if left else 0
    print(
        printable(
            f"{len(problems)} file(s) skipped by reads; `xialpha store check {store.uri} --quarantine` moves them aside"
        )
    )
    return 1


def _list(store: StoreQueries, fmt: str, wide: bool) -> None:
    """One table per kind of thing stored (kinds with nothing stored are left out); csv and json:
    one row per thing with its `kind` and every column (the columns of the kinds listed, in their order)."""
    listings = {kind: rows for kind, rows in inventory(store).items() if rows}
    if fmt != "table":
        columns = list(dict.fromkeys(["kind", *(name for kind in listings for name in COLUMNS[kind])]))
        rows = [{"kind": kind, **row} for kind, kind_rows in listings.items() for row in kind_rows]
        write_rows(columns, rows, fmt)
        return
    if not listings:
        print(printable(f"{store.uri}: empty (no sweep, selection, certification or drift check stored)"))
        return
    for kind, rows in listings.items():
        print_table(inventory_table(kind, rows, wide), wide)
        if kind == "sweeps":
            for note in incomplete_notes(rows):
                print(printable(note))
