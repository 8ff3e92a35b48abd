"""Rows as CSV or JSON for scripts (`--format csv|json`, and `predict`'s output): every column and
every digit, written in plain Python, so that a command whose rows need no pandas (`xialpha store
ls`) does not import it.

A row is a mapping from column name to a Python value (None or NaN for a missing one). Values are
written as a pandas DataFrame of them is written (`DataFrame.to_csv`, and JSON from its records),
but for what a hostile name or number could break, and one thing more: a count stays a whole number
in a column other rows lack, where a DataFrame makes the column float (3.0) to hold NaN:

- CSV: a header line, then a line per row (quoted as the csv module quotes, and a cell holding a
  lone "\\r" quoted too, so every reader ends a row only at its "\\n"); missing values empty; times
  as "YYYY-MM-DD HH:MM:SS+00:00", with as many decimals of the second (none, 3 or 6) as the
  column's times need (`_time_format`); every text cell through `csv_cell`, the one rule for
  cells a spreadsheet would run as a formula;
- JSON (`json_text`): a list of objects; missing and non-finite values null (JSON has no NaN or
  Infinity), times in ISO 8601, NumPy scalars as Python values, control characters escaped (C1
  ones such as U+009B, a terminal's CSI, included), so the text is valid JSON that no terminal
  acts on.
"""

from __future__ import annotations

import csv
import datetime
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from xialpha.reports.formatting import missing

Row = Mapping[str, Any]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_UNESCAPED_IN_JSON = re.compile(r"[\x7f-\x9f\u2028\u2029]")  # json.dumps escapes \x00-\x1f itself


def write_rows(columns: Sequence[str], rows: Sequence[Row], fmt: str, stream: IO[str] | None = None) -> None:
    """`rows` (their `columns`, in that order; a column a row lacks is missing) on `stream`
    (standard output when None) as CSV or JSON ("csv" or "json")."""
    stream = stream or sys.stdout
    table = [[_present(row.get(name)) for name in columns] for row in rows]
    if fmt == "csv":
        timespecs = [_time_format(values) for values in zip(*table)] if table else []
        write_csv(
            stream, [columns, *[[_csv_text(value, spec) for value, spec in zip(values, timespecs)] for values in table]]
        )
        return
    stream.write(json_text([dict(zip(columns, values)) for values in table]) + "\n")


def csv_cell(text: str) -> str:
    """The one rule for a CSV text cell (every CSV xialpha writes): a cell starting with = + - @,
    a tab or a carriage return, which a spreadsheet would run as a formula, gets a leading
    apostrophe (OWASP's advice), and so does one that starts with an apostrophe, so that the rule
    can be undone: a script that needs the exact text drops one leading apostrophe from every text
    cell that starts with one. Numbers are not text cells: -0.5 stays -0.5."""
    return f"'{text}" if text.startswith(FORMULA_START) else text


def write_csv(stream: IO[str], lines: Iterable[Sequence[object]]) -> None:
    """`lines` (the header first) on `stream` as CSV, each ended by "\\n": text cells through
    `csv_cell`, and quoted as the csv module quotes them, a cell holding "\\r" included (the module
    quotes only the line terminator's characters, and "\\r" alone ends a row for most readers)."""
    writer = csv.writer(_LineEnds(stream), lineterminator="\r\n")  # "\r" and "\n" in a cell are quoted
    writer.writerows([[csv_cell(cell) if isinstance(cell, str) else cell for cell in line] for line in lines])


class _LineEnds:
    """A stream the csv module writes "\\r\\n"-ended lines to, written on with "\\n" ends."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def write(self, line: str) -> None:
        self.stream.write(line.removesuffix("\r\n") + "\n")


def json_text(value: object) -> str:
    """`value` (lists, dicts, Python and NumPy scalars, times) as one line of JSON: non-finite
    numbers null, times in ISO 8601, and every control character escaped ("\\u009b")."""
    text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, default=_json_value)
    return _UNESCAPED_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _finite(value: object) -> object:
    """`value` with each NumPy scalar as its Python value and each infinite or NaN float as None."""
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    if hasattr(value, "dtype") and hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _present(value: object) -> object:
    """`value`, None when it is `missing`."""
    return None if missing(value) else value


def _time_format(values: Sequence[object]) -> str:
    """How a column's times are written in CSV: to the decimals of the second all of them need
    (a `datetime.isoformat` timespec)."""
    times = [value for value in values if isinstance(value, datetime.datetime)]
    if all(time.microsecond == 0 for time in times):
        return "seconds"
    return "milliseconds" if all(time.microsecond % 1000 == 0 for time in times) else "microseconds"


def _csv_text(value: object, timespec: str) -> object:
    if value is None:
        return ""
    return value.isoformat(sep=" ", timespec=timespec) if isinstance(value, datetime.datetime) else value


def _json_value(value: object) -> str:
    """Times as ISO 8601, other values as their text."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
