"""Rows as CSV or JSON for scripts (`--format csv|json`): every column and every digit, written in
plain Python, so that a command whose rows need no pandas (`xialpha store ls`) does not import it.

A row is a mapping from column name to a Python value (None or NaN for a missing one). Values are
written as a pandas DataFrame of them is written (`DataFrame.to_csv`, and JSON from its records),
byte for byte, but for one thing: a count stays a whole number in a column other rows lack, where
a DataFrame makes the column float (3.0) to hold NaN:

- CSV: a header line, then a line per row (quoted as the csv module quotes; lines end in "\\n");
  missing values empty; times as "YYYY-MM-DD HH:MM:SS+00:00", with as many decimals of the
  second (none, 3 or 6) as the column's times need (`_time_format`);
- JSON: a list of objects; missing values null, times in ISO 8601, NumPy scalars as Python values.
"""

from __future__ import annotations

import csv
import datetime
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from xialpha.reports.formatting import missing

Row = Mapping[str, Any]


def write_rows(columns: Sequence[str], rows: Sequence[Row], fmt: str) -> None:
    """`rows` (their `columns`, in that order; a column a row lacks is missing) on standard output
    as CSV or JSON ("csv" or "json")."""
    table = [[_present(row.get(name)) for name in columns] for row in rows]
    if fmt == "csv":
        timespecs = [_time_format(values) for values in zip(*table)] if table else []
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_csv_text(value, spec) for value, spec in zip(values, timespecs)] for values in table])
        return
    records = [dict(zip(columns, values)) for values in table]
    sys.stdout.write(json.dumps(records, ensure_ascii=False, default=_json_value) + "\n")


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


def _json_value(value):
    """Times as ISO 8601, NumPy scalars as Python values."""
    return value.isoformat() if hasattr(value, "isoformat") else value.item() if hasattr(value, "item") else str(value)
