"""Read a dataset's usable files into one table and keep one row per key.

The read rule (precedence): among the rows of one key, the row written last wins, where the
order of writes is the order of file names (they carry the store's write sequence: see
`xialpha.storage.location`), never the `created_at` clocks. In the results dataset a row with
status "ok" wins over every failed row of its key, however new the failed one: a failed
attempt is kept as history but never hides a result, and only a newer "ok" row replaces an "ok"
row. Superseded rows stay in the files until `compact` drops them, so DuckDB users who read the
raw files deduplicate with the same rule (after `xialpha store check --quarantine` has moved
unreadable or foreign files aside):

    SELECT * FROM read_parquet('STORE/results/*/*.parquet', filename = true)
    QUALIFY row_number() OVER (PARTITION BY sweep_id, config_key
                               ORDER BY status = 'ok' DESC, parse_filename(filename) DESC) = 1
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from xialpha.errors import UserError, out_of_files
from xialpha.storage.files import FileSet
from xialpha.storage.schema import ResultStatus
from xialpha.storage.validate import first_line

FILE_ORDER_COLUMN = "__xialpha_file_order"  # the place of a row's file in write order (int32)
_OK_COLUMN = "__xialpha_ok"


def read_newest(
    files: FileSet,
    key_columns: Sequence[str],
    *,
    status_column: str | None = None,
    columns: Sequence[str] | None = None,
    filter: pc.Expression | None = None,
) -> pa.Table:
    """The winning row per key of `files`, then those rows where `filter` holds, sorted by key.

    With `status_column`, rows whose status is "ok" win over the others. Reads only the key
    and status columns and `columns` (default: all of the schema). With a filter, a first
    pass over the key columns picks each key's winner, and a second pass with the filter pushed
    down keeps the rows that both win and match.
    """
    schema = _schema(files)
    wanted = list(schema.names if columns is None else columns)
    unknown = [name for name in wanted if name not in schema.names]
    if unknown:
        raise UserError(f"columns: unknown column(s) {', '.join(map(repr, unknown))}")
    keys = list(key_columns)
    identity = [*keys, status_column] if status_column else keys
    if filter is None:
        table = scan(files, list(dict.fromkeys([*identity, *wanted])))
        return newest_per_key(table, keys, status_column).select(wanted)
    winners = newest_per_key(scan(files, identity), keys, status_column).select([*identity, FILE_ORDER_COLUMN])
    matching = scan(files, list(dict.fromkeys([*identity, *wanted])), filter=filter)
    table = matching.join(winners, keys=[*identity, FILE_ORDER_COLUMN], join_type="inner")
    table = table.take(pc.sort_indices(table, sort_keys=[(name, "ascending") for name in keys]))
    return table.select(wanted)


def scan(files: FileSet, columns: Sequence[str], *, filter: pc.Expression | None = None) -> pa.Table:
    """Read `columns` of the usable files as typed by their schema (columns a file lacks read as
    null), rows where `filter` holds, plus the place of each row's file in write order (the order of
    the files' names) in FILE_ORDER_COLUMN: a number, not the name, so that the column costs 4 bytes a
    row whatever the names' length.

    A file whose data cannot be decoded is dropped from `files` (named in its problems) and the
    others are read.
    """
    fields = [_schema(files).field(name) for name in columns]
    try:
        return _scan(files, files.fragments, columns, fields, filter)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        pass  # a corrupt page, or too many files open at once: read file by file, leave out the ones that fail
    tables = []
    for fragment in list(files.fragments):
        try:
            tables.append(_scan(files, [fragment], columns, fields, filter))
        except (pa.ArrowException, OSError) as exc:
            if out_of_files(exc):  # the machine's limit, not the file's fault: the read cannot go on
                raise
            files.drop(fragment, first_line(exc))
    return pa.concat_tables(tables) if tables else _empty(fields)


def _schema(files: FileSet) -> pa.Schema:
    """The schema of `files`, which have one where they are read: None only for a row-typed
    dataset without a usable file, which callers answer without reading."""
    if files.schema is None:
        raise ValueError("files without a schema (a row-typed dataset with no usable file) cannot be read")
    return files.schema


def _scan(
    files: FileSet,
    fragments: Sequence[ds.ParquetFileFragment],
    columns: Sequence[str],
    fields: Sequence[pa.Field],
    filter: pc.Expression | None,
) -> pa.Table:
    if not fragments:
        return _empty(fields)
    dataset = ds.FileSystemDataset(fragments, files.schema, ds.ParquetFileFormat(), files.location.filesystem)
    try:
        scanner = dataset.scanner(columns=list(columns), filter=filter)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise UserError(f"filters {filter}: {first_line(exc)}") from None
    written = {
        path: place for place, path in enumerate(sorted(files.names, key=lambda path: (files.names[path], path)))
    }
    batches, places = [], []
    for tagged in scanner.scan_batches():
        batches.append(tagged.record_batch)
        places.append(np.full(tagged.record_batch.num_rows, written[tagged.fragment.path], dtype=np.int32))
    table = pa.Table.from_batches(batches, schema=pa.schema(fields))
    return table.append_column(FILE_ORDER_COLUMN, pa.array(np.concatenate(places) if places else [], pa.int32()))


def _empty(fields: Sequence[pa.Field]) -> pa.Table:
    return pa.schema([*fields, pa.field(FILE_ORDER_COLUMN, pa.int32())]).empty_table()


def newest_per_key(table: pa.Table, key_columns: Sequence[str], status_column: str | None = None) -> pa.Table:
    """The winning row per key of a `scan` ("ok" first if `status_column`, then the file written
    last), sorted by key; FILE_ORDER_COLUMN is kept."""
    if table.num_rows == 0:
        return table
    order = [(name, "ascending") for name in key_columns]
    if status_column:
        table = table.append_column(_OK_COLUMN, pc.fill_null(pc.equal(table[status_column], ResultStatus.OK), False))
        order.append((_OK_COLUMN, "descending"))
    order.append((FILE_ORDER_COLUMN, "descending"))
    ordered = table.take(pc.sort_indices(table, sort_keys=order))
    if status_column:
        ordered = ordered.drop_columns([_OK_COLUMN])
    first = np.ones(ordered.num_rows, dtype=bool)
    if ordered.num_rows > 1:
        changed = np.zeros(ordered.num_rows - 1, dtype=bool)
        for name in key_columns:
            column = ordered[name]
            differs = pc.not_equal(column.slice(1), column.slice(0, ordered.num_rows - 1))
            changed |= pc.fill_null(differs, True).to_numpy(zero_copy_only=False)
        first[1:] = changed
    return ordered.filter(pa.array(first))


def as_expression(filters: object) -> pc.Expression | None:
    """A pyarrow Expression from an Expression or pyarrow.parquet-style DNF tuples."""
    if filters is None or isinstance(filters, pc.Expression):
        return filters
    try:
        return pq.filters_to_expression(filters)
    except (TypeError, ValueError, pa.ArrowException) as exc:
        raise UserError(f"filters {filters!r}: {exc}") from None
