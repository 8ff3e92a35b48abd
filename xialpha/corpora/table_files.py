"""Reading the columns of a table file (CSV, TSV, JSON lines, Parquet) as Python lists, with one-line
errors that name the file and the line, whole or in blocks: byte ranges of text files that begin at
a record (`text_blocks`, found by `xialpha.corpora.text_scan`) and Parquet row groups
(`parquet_blocks`), each readable by itself (`read_block`). Files are local paths or fsspec URIs.

CSV is read strictly: a quote that is never closed (which would swallow the rest of the file
into one field) and NUL bytes are refused, naming the line, instead of read as fewer rows.

Parquet is read by pyarrow's ParquetFile (a row group at a time) into pandas' Arrow-typed columns,
the values pandas.read_parquet gives. CSV/TSV and JSON lines stay with the standard library's csv and json
modules, because pandas (2.x/3.x) reads tables these tests refuse as different data: read_csv takes
`"hel"lo` as `hello`, pads a row with too few fields, reads a row with one field too many as
shifted columns (the first becomes the index), keeps NUL bytes, and names no line; read_json(lines=
True) fills a missing key with NaN instead of naming it, wraps an integer beyond 2**64 to another
number, and reports a byte position, not a line.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xialpha.corpora.sources import file_size, open_binary, read_range
from xialpha.corpora.text_scan import byte_scannable, cut_points
from xialpha.errors import UserError, did_you_mean, one_of

FORMATS = ("csv", "tsv", "jsonl", "parquet")
SUFFIX_FORMATS = {  # a table file's suffix -> its format (format = "auto")
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_FIELD_LIMIT = 2**31 - 1


def table_format(file: Path, format: str) -> str:
    """The format to read `file` as: `format`, or for "auto" the one its suffix names."""
    if format == "auto":
        suffix = file.suffix.lower()
        if suffix not in SUFFIX_FORMATS:
            raise UserError(
                f"cannot tell the format of {file.name} from its suffix; "
                f'set format = "csv" or another of {", ".join(FORMATS[1:])}',
                key="format",
            )
        return SUFFIX_FORMATS[suffix]
    if format not in FORMATS:
        raise UserError(one_of(format, ("auto", *FORMATS)), key="format")
    return format


@dataclass(frozen=True)
class Block:
    """Where one part of a table file lies. Text files: bytes start..stop (stop None: to the end),
    whose first line is line `first_line`, and `names`, the header's column names for a block
    after the header (None: the block holds the header, or the file has none). Parquet: row group
    `row_group`, whose first row is row `first_line` of the file."""

    start: int = 0
    stop: int | None = None
    first_line: int = 1
    names: tuple[str, ...] | None = None
    row_group: int | None = None


def read_columns(
    file: Path | str,
    format: str,
    wanted: list[str],
    header: bool,
    column_names: tuple[str, ...],
    encoding: str,
    field: str = "path",
    keys: dict[str, str] | None = None,
) -> dict[str, list]:
    """{column name: values} for the `wanted` columns of the whole of `file` (UserError naming a
    missing one, keyed by the argument that named it in `keys`: {column: argument}; an empty
    file's error names the argument `field` that gave the file)."""
    columns, _ = read_block(file, format, wanted, header, column_names, encoding, Block(), keys)
    if not columns[wanted[0]]:
        raise UserError(f"{file} has no rows (empty corpus)", key=field)
    return columns


def read_block(
    file: Path | str,
    format: str,
    wanted: list[str],
    header: bool,
    column_names: tuple[str, ...],
    encoding: str,
    block: Block,
    keys: dict[str, str] | None = None,
) -> tuple[dict[str, list], list[str]]:
    """The `wanted` columns of one block of `file` and, per row, where it is ("line 12"; Parquet
    "row 12") for messages. Without a header (CSV/TSV only) the columns are named by
    `column_names`; in a headerless TSV the last column takes the rest of the line, tabs included
    (the `label<TAB>text` corpora). keys: {column: the argument naming it}, the key of the error
    about a column the file does not have."""
    keys = keys or {}
    if format == "parquet":
        return _read_parquet(file, wanted, block, keys)
    if not header and format == "jsonl":
        raise UserError("JSON lines files name their fields; header = false applies to CSV/TSV only", key="header")
    try:
        text = decode_block(read_range(file, block.start, block.stop), encoding, file, block.start)
    except LookupError:
        raise UserError(f"unknown text encoding {encoding!r}", key="encoding") from None
    stream = io.StringIO(text, newline="")
    first = block.first_line
    if format == "jsonl":
        rows, names = _jsonl_rows(stream, file, first), None
    elif header:
        rows, names = _delimited_rows(stream, file, format, first, block.names), block.names
    else:
        rows, names = _headerless_rows(stream, file, format, column_names, first), list(column_names)
    return _collect(rows, wanted, file, None if names is None else list(names), keys, by_row=format == "jsonl")


def decode_block(data: bytes, encoding: str, file, offset: int) -> str:
    """`data` (bytes of `file` from `offset` on) as text, without a UTF-8 byte order mark at the
    start of the file (spreadsheet programs write one: it would be part of the first column's
    name); UserError naming the file offset of bytes that are not valid in `encoding`."""
    if offset == 0 and data.startswith(codecs.BOM_UTF8) and codecs.lookup(encoding).name == "utf-8":
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return codecs.decode(data, encoding)
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{file}: bytes at offset {offset + exc.start} are not valid {encoding}; "
            f'set encoding = "latin-1" (or the file\'s encoding)'
        ) from None


def text_blocks(file: Path | str, format: str, header: bool, encoding: str, step: int) -> list[Block]:
    """`file` (CSV, TSV or JSON lines) cut into blocks of about `step` bytes at record starts,
    each with the number of its first line and the header's names; one block for a file of at
    most `step` bytes or in an encoding whose bytes cannot be scanned (`byte_scannable`)."""
    size = file_size(file)
    if size <= step or not byte_scannable(encoding):
        return [Block()]
    cuts = cut_points(file, size, step, quotes=format == "csv", delimiter="\t" if format == "tsv" else ",")
    names = _header_names(file, format, encoding, cuts[0][1]) if header else None
    return [Block(start, stop, line, None if start == 0 else names) for start, stop, line in cuts]


def _header_names(file, format: str, encoding: str, stop: int | None) -> tuple[str, ...] | None:
    """The column names of a CSV/TSV file's header: its first record (within bytes 0..stop)."""
    if format == "jsonl":
        return None
    text = decode_block(read_range(file, 0, stop), encoding, file, 0)
    first = next(_records(io.StringIO(text, newline=""), file, format, 1), None)
    return None if first is None else tuple(first[1])


def head_columns(
    file: Path | str, format: str, header: bool, column_names: tuple[str, ...], encoding: str, look_bytes: int
) -> tuple[list[str], str] | None:
    """The column names the head of `file` shows and where it shows them, for messages (the file, or
    the file and the line of a JSON lines file's first record): a CSV/TSV header's first record, the
    `column_names` of one without a header, a JSON lines file's first record's fields, a Parquet
    file's schema. Only the first `look_bytes` bytes of a text file are read; None where they hold
    no whole first record or cannot be read (the tasks reading the file then say what is wrong)."""
    if format == "parquet":
        return list(_parquet_file(file).schema_arrow.names), str(file)
    if not header and format != "jsonl":
        return list(column_names), str(file)
    size = file_size(file)
    data = read_range(file, 0, min(size, look_bytes))
    if size > look_bytes:
        data = data[: data.rfind(b"\n") + 1]  # whole lines only
    try:
        text = decode_block(data, encoding, file, 0)
        stream = io.StringIO(text, newline="")
        if format == "jsonl":
            number, row = next(_jsonl_rows(stream, file, 1))
            return [str(name) for name in row], f"{file}, line {number}"
        number, names = next(_records(stream, file, format, 1))
        return names, str(file)
    except (UserError, LookupError, StopIteration):
        return None


def parquet_blocks(file: Path | str) -> list[Block]:
    """One block per row group of Parquet `file`, each with the file row it starts at (from the
    metadata alone); UserError for a file that is not Parquet."""
    metadata = _parquet_file(file).metadata
    starts = np.concatenate([[0], np.cumsum([metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)])])
    return [Block(first_line=int(starts[g]) + 1, row_group=g) for g in range(metadata.num_row_groups)] or [Block()]


def _collect(
    rows: Iterator[tuple[int, dict]],
    wanted: list[str],
    file,
    names: list[str] | None,
    keys: dict[str, str],
    by_row: bool,
) -> tuple[dict[str, list], list[str]]:
    """The `wanted` columns of `rows` ((line, {column: value})); by_row: each row names its own
    columns (JSON lines), so a missing column is named with the line, not as the file's."""
    columns: dict[str, list] = {name: [] for name in wanted}
    places = []
    for number, row in rows:
        for name in wanted:
            if name not in row:
                raise no_column(
                    f"{file}, line {number}" if by_row else str(file),
                    name,
                    list(row) if by_row or names is None else names,
                    keys,
                )
            columns[name].append(row[name])
        places.append(f"line {number}")
    return columns, places


def _delimited_rows(
    stream, file, format: str, first_line: int, names: tuple[str, ...] | None
) -> Iterator[tuple[int, dict]]:
    """Rows of a CSV/TSV block with a header: its first record, or `names` for a block after it."""
    records = _records(stream, file, format, first_line)
    if names is None:
        first = next(records, None)
        if first is None:
            return
        names = first[1]
    for number, fields in records:
        if len(fields) != len(names):
            raise UserError(f"{file}, line {number}: {len(fields)} fields, the header has {len(names)}")
        yield number, dict(zip(names, fields))


def _records(stream, file, format: str, first_line: int) -> Iterator[tuple[int, list[str]]]:
    """(first line number, fields) of each non-empty CSV/TSV record, the stream's first line being
    line `first_line` of the file; UserError naming the line for a NUL byte, a quote never closed
    or other malformed quoting."""
    with _large_fields():
        reader = csv.reader(_without_nul(stream, file, first_line), strict=True, **_dialect(format))
        while True:
            start = reader.line_num + first_line
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                reason = (
                    "a quoted field is never closed (unterminated quote)"
                    if "end of data" in str(exc)
                    else f"malformed CSV ({exc})"
                )
                raise UserError(f"{file}, line {start}: {reason}") from None
            if fields:
                yield start, fields


def _without_nul(stream, file, first_line: int) -> Iterator[str]:
    for number, line in enumerate(stream, start=first_line):
        if "\0" in line:
            raise UserError(f"{file}, line {number}: holds a NUL byte (a binary file, or not {file.suffix or 'text'}?)")
        yield line


def _headerless_rows(stream, file, format: str, names: tuple[str, ...], first_line: int) -> Iterator[tuple[int, dict]]:
    if format == "tsv":
        for number, line in enumerate(_without_nul(stream, file, first_line), start=first_line):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split("\t", len(names) - 1)
            if len(fields) != len(names):
                raise UserError(
                    f"{file}, line {number}: {len(fields)} tab-separated fields, "
                    f"expected {len(names)} ({', '.join(names)})"
                )
            yield number, dict(zip(names, fields))
        return
    for number, fields in _records(stream, file, format, first_line):
        if len(fields) != len(names):
            raise UserError(f"{file}, line {number}: {len(fields)} fields, expected {len(names)} ({', '.join(names)})")
        yield number, dict(zip(names, fields))


def _jsonl_rows(stream, file, first_line: int) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(stream, start=first_line):
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


def no_column(where: str, name: str, names: list[str], keys: dict[str, str]) -> UserError:
    """The error about column `name` missing at `where` (file and line), naming the key that names
    the column and the column closest to it."""
    shown = [str(column) for column in names]
    return UserError(
        f"{where} has no column {name!r}{did_you_mean(name, shown, listing='columns', limit=20)}", key=keys.get(name)
    )


def _read_parquet(file, wanted: list[str], block: Block, keys: dict[str, str]) -> tuple[dict[str, list], list[str]]:
    """The `wanted` columns of Parquet `file` (of one row group when the block names one) as Python
    values, as pandas.read_parquet with Arrow types gives them: None for a null, datetime for a
    timestamp (what pyarrow's to_pylist gives); per row "row N" of the file."""
    import pandas as pd

    parquet = _parquet_file(file)
    names = parquet.schema_arrow.names
    missing = [name for name in wanted if name not in names]
    if missing:
        raise no_column(str(file), missing[0], names, keys)
    try:
        table = (
            parquet.read(columns=wanted)
            if block.row_group is None
            else parquet.read_row_group(block.row_group, columns=wanted)
        )
        frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    except Exception as exc:  # a corrupt page or an unsupported type (several exception types)
        raise UserError(f"{file}: not a readable Parquet file ({' '.join(str(exc).split())})") from None
    columns = {name: [_python_value(value) for value in frame[name].tolist()] for name in wanted}
    return columns, [f"row {block.first_line + i}" for i in range(len(frame))]


def _parquet_file(file):
    """pyarrow's reader of Parquet `file` (local or fsspec URI); UserError when it is not Parquet."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(open_binary(file))
    except Exception as exc:  # not Parquet, truncated: several exception types
        raise UserError(f"{file}: not a readable Parquet file ({' '.join(str(exc).split())})") from None


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
