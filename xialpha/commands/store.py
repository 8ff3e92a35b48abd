"""`xialpha store ls STORE` and `xialpha store compact STORE [--dataset NAME]`."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    ls = actions.add_parser("ls", help="list the sweeps in a store with row counts and times")
    ls.add_argument("store", metavar="STORE", help="store directory or URI (s3://..., memory://...)")
    compact = actions.add_parser("compact", help="merge each partition's files into one; reads are unchanged")
    compact.add_argument("store", metavar="STORE", help="store directory or URI")
    compact.add_argument(
        "--dataset", metavar="NAME",
        help="compact only this dataset (results, examples, selections, ...); default: every dataset",
    )


def run(args: argparse.Namespace) -> int:
    from xialpha.storage import DATASETS, ResultStore

    store = ResultStore(args.store, create=False)
    if args.action == "ls":
        _print_sweeps(store)
        return 0
    for dataset in [args.dataset] if args.dataset else DATASETS:
        before, after = store.compact(dataset)
        print(f"{dataset}: {before} files -> {after} files")
    return 0


def _print_sweeps(store) -> None:
    sweeps = store.sweeps()
    if sweeps.empty:
        print(f"{store.uri}: no results")
        return
    for column in ("first_created_at", "last_created_at"):
        sweeps[column] = sweeps[column].dt.strftime("%Y-%m-%d %H:%M:%SZ")
    print(sweeps.to_string(index=False))
