"""Reading the columns of a table file (CSV, TSV, JSON lines, Parquet) as Python lists, with one-line
errors that name the file and the line.

CSV is read strictly: a quote that is never closed (which would swallow the rest of the file
into one field) and NUL bytes are refused, naming the line, instead of read as fewer rows.

Parquet is read by pandas. CSV/TSV and JSON lines stay with the standard library's csv and json
modules, because pandas (2.x/3.x) reads tables these tests refuse as different data: read_csv takes
`"hel"lo` as `hello`, pads a row with too few fields, reads a row with one field too many as
shifted columns (the first becomes the index), keeps NUL bytes, and names no line; read_json(lines=
True) fills a missing key with NaN instead of naming it, wraps an integer beyond 2**64 to another
number, and reports a byte position, not a line.
"""

from __future__ import annotations

import csv
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from xialpha.errors import UserError

FORMATS = ("csv", "tsv", "jsonl", "parquet")
_SUFFIX_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl",
                   ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}
_FIELD_LIMIT = 2**31 - 1


def table_format(file: Path, format: str) -> str:
    """The format to read `file` as: `format`, or for "auto" the one its suffix names."""
    if format == "auto":
        suffix = file.suffix.lower()
        if suffix not in _SUFFIX_FORMATS:
            raise UserError(f"format: cannot tell the format of {file.name} from its suffix; "
                            f"set format = \"csv\" or another of {', '.join(FORMATS[1:])}")
        return _SUFFIX_FORMATS[suffix]
    if format not in FORMATS:
        raise UserError(f"format: must be 'auto' or one of {', '.join(FORMATS)}, got {format!r}")
    return format


def read_columns(file: Path, format: str, wanted: list[str], header: bool,
                 column_names: tuple[str, ...], encoding: str, field: str = "path") -> dict[str, list]:
    """{column name: values} for the `wanted` columns of `file` (UserError naming a missing one;
    an empty file's error names the argument `field` that gave the file).

    Without a header (CSV/TSV only) the columns are named by `column_names`; in a headerless TSV
    the last column takes the rest of the line, tabs included (the `label<TAB>text` corpora).
    """
    if format == "parquet":
        return _read_parquet(file, wanted, field)
    if not header and format == "jsonl":
        raise UserError("header: JSON lines files name their fields; header = false applies to CSV/TSV only")
    try:
        with open(file, encoding=encoding, newline="") as stream:
            if format == "jsonl":
                rows, names = _jsonl_rows(stream, file), None
            elif header:
                rows, names = _delimited_rows(stream, file, format), None
            else:
                rows, names = _headerless_rows(stream, file, format, column_names), list(column_names)
            return _collect(rows, wanted, file, names, field)
    except UnicodeDecodeError as exc:
        raise UserError(f"{file}: bytes at offset {exc.start} are not valid {encoding}; "
                        f"set encoding = \"latin-1\" (or the file's encoding)") from None
    except LookupError:
        raise UserError(f"encoding: unknown text encoding {encoding!r}") from None


def _collect(rows: Iterator[tuple[int, dict]], wanted: list[str], file: Path,
             names: list[str] | None, field: str) -> dict[str, list]:
    columns: dict[str, list] = {name: [] for name in wanted}
    for number, row in rows:
        names = names or list(row)
        for name in wanted:
            if name not in row:
                where = "" if number is None else f", line {number}"
                raise UserError(f"{file}{where}: no column {name!r} (columns: {', '.join(names)})")
            columns[name].append(row[name])
    if not columns[wanted[0]]:
        raise UserError(f"{field}: {file} has no rows (empty corpus)")
    return columns


def _delimited_rows(stream, file: Path, format: str) -> Iterator[tuple[int, dict]]:
    records = _records(stream, file, format)
    first = next(records, None)
    if first is None:
        return
    names = first[1]
    for number, fields in records:
        if len(fields) != len(names):
            raise UserError(f"{file}, line {number}: {len(fields)} fields, the header has {len(names)}")
        yield number, dict(zip(names, fields))


def _records(stream, file: Path, format: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, fields) of each non-empty CSV/TSV record; UserError naming the line for a
    NUL byte, a quote never closed or other malformed quoting."""
    with _large_fields():
        reader = csv.reader(_without_nul(stream, file), strict=True, **_dialect(format))
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                reason = ("a quoted field is never closed (unterminated quote)" if "end of data" in str(exc)
                          else f"malformed CSV ({exc})")
                raise UserError(f"{file}, line {start}: {reason}") from None
            if fields:
                yield start, fields


def _without_nul(stream, file: Path) -> Iterator[str]:
    for number, line in enumerate(stream, start=1):
        if "\0" in line:
            raise UserError(f"{file}, line {number}: holds a NUL byte (a binary file, or not {file.suffix or 'text'}?)")
        yield line


def _headerless_rows(stream, file: Path, format: str, names: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    if format == "tsv":
        for number, line in enumerate(_without_nul(stream, file), start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split("\t", len(names) - 1)
            if len(fields) != len(names):
                raise UserError(f"{file}, line {number}: {len(fields)} tab-separated fields, "
                                f"expected {len(names)} ({', '.join(names)})")
            yield number, dict(zip(names, fields))
        return
    for number, fields in _records(stream, file, format):
        if len(fields) != len(names):
            raise UserError(f"{file}, line {number}: {len(fields)} fields, expected {len(names)} ({', '.join(names)})")
        yield number, dict(zip(names, fields))


def _jsonl_rows(stream, file: Path) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{file}, line {number}: not valid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # a number of more than 4300 digits; deep nesting
            reason = "values nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
            raise UserError(f"{file}, line {number}: unreadable JSON ({reason})") from None
        if not isinstance(row, dict):
            raise UserError(f"{file}, line {number}: expected a JSON object, got {type(row).__name__}")
        yield number, row


def _read_parquet(file: Path, wanted: list[str], field: str) -> dict[str, list]:
    """The `wanted` columns of Parquet `file` through pandas (Arrow types kept), as Python values:
    None for a null, datetime for a timestamp (what pyarrow's to_pylist gives). The whole file is
    read only to name the columns it has when one is missing."""
    import pandas as pd

    try:
        frame = pd.read_parquet(file, columns=wanted, dtype_backend="pyarrow")
    except Exception as exc:  # a missing column, or a file that is not Parquet (several exception types)
        try:
            names = pd.read_parquet(file, dtype_backend="pyarrow").columns.tolist()
        except Exception:
            names = None
        missing = [name for name in wanted if names is not None and name not in names]
        if missing:
            raise UserError(f"{file}: no column {missing[0]!r} (columns: {', '.join(map(str, names))})") from None
        raise UserError(f"{file}: not a readable Parquet file ({' '.join(str(exc).split())})") from None
    if len(frame) == 0:
        raise UserError(f"{field}: {file} has no rows (empty corpus)")
    return {name: [_python_value(value) for value in frame[name].tolist()] for name in wanted}


def _python_value(value):
    """pandas' missing value as None, its Timestamp as a datetime; other values as they are."""
    import pandas as pd

    if value is pd.NA:
        return None
    return value.to_pydatetime(warn=False) if isinstance(value, pd.Timestamp) else value


def _dialect(format: str) -> dict:
    if format == "tsv":
        return {"delimiter": "\t", "quoting": csv.QUOTE_NONE}
    return {"delimiter": ","}


@contextmanager
def _large_fields():
    """Let the csv module read documents longer than its default 128 KiB field limit."""
    previous = csv.field_size_limit(_FIELD_LIMIT)
    try:
        yield
    finally:
        csv.field_size_limit(previous)
