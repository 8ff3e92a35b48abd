"""--wide and --format, shared by the commands that print tables (select, certify, report)."""

from __future__ import annotations

FORMATS = ("table", "csv", "json")  # table: rich, for people; csv and json: selection.display.write_records


def add_output_arguments(parser) -> None:
    """--wide (every column in the terminal) and --format table|csv|json (rows for scripts)."""
    add_wide_argument(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or csv / json for scripts: every column, nothing cut",
    )


def add_wide_argument(parser) -> None:
    parser.add_argument("--wide", action="store_true", help="show every column (default: those that fit 80 columns)")
