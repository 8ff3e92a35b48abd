"""The arguments the commands share: how each names the result store and the sweep in it (and
`named_store` opens that store), and how tables are printed.

The store: the positional STORE or `--store` (commands whose positional argument is a spec file
take `--store` only), else $XIALPHA_STORE, else the spec's `store` (sweep and drift), else
./xialpha-store. The sweep: `--sweep ID`, which may be left out when the store holds one sweep.
The commands that print tables (select, certify, report, store) share --wide and --format.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from xialpha.errors import UserError
from xialpha.storage.naming import DEFAULT_STORE, ENV_STORE, choose_sweep, store_location

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries

FORMATS = ("table", "csv", "json")  # table: rich, for people; csv and json: reports.terminal.write_records
STORE_HELP = f"result store path or URI (default: $XIALPHA_STORE, else ./{DEFAULT_STORE})"


def add_store_arguments(
    parser: argparse.ArgumentParser, *, positional: bool = True, help_text: str = STORE_HELP
) -> None:
    """STORE (optional positional, when `positional`) and --store, both read by `store_uri(args)`."""
    if positional:
        parser.add_argument("store", nargs="?", metavar="STORE", help=f"{help_text}; or give it as --store")
    parser.add_argument("--store", dest="store_option" if positional else "store", metavar="STORE", help=help_text)


def add_sweep_argument(parser: argparse.ArgumentParser) -> None:
    """--sweep ID, optional (see `sweep_id`)."""
    parser.add_argument("--sweep", metavar="ID", help="sweep id (may be left out when the store holds one sweep)")


def store_uri(args: argparse.Namespace, spec_value: str | None = None) -> str:
    """STORE or --store (UserError when both are given and differ), else $XIALPHA_STORE, else
    `spec_value`, else ./xialpha-store."""
    positional, option = getattr(args, "store", None), getattr(args, "store_option", None)
    if positional and option and positional != option:
        raise UserError(f"--store: given twice, as {positional!r} and --store {option!r}; give one")
    return store_location(positional or option, spec_value)


def named_store(args: argparse.Namespace) -> StoreQueries:
    """The existing store the arguments name (`xialpha.storage.opening.open_store`: it may be written,
    by select --save, certify, store compact); a missing default store says how to name one."""
    from xialpha.storage import opening

    uri = store_uri(args)
    try:
        return opening.open_store(uri, create=False, writable=True)
    except UserError as exc:
        if uri != DEFAULT_STORE or getattr(args, "store", None) or getattr(args, "store_option", None):
            raise
        raise UserError(f"{exc} (no store was named: give STORE, --store or ${ENV_STORE})") from None


def sweep_id(store: StoreQueries, given: str | None) -> str:
    """--sweep, or the store's only sweep (see `choose_sweep`)."""
    return choose_sweep(store, given)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """--wide (every column in the terminal) and --format table|csv|json (rows for scripts)."""
    add_wide_argument(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or csv / json for scripts: every column, nothing cut",
    )


def add_wide_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wide", action="store_true", help="show every column (default: those that fit 80 columns)")
