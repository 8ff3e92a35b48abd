"""Read a dataset's files into one table and keep the newest row per key.

The read rule: among rows with the same key, the one with the latest `created_at` wins; on equal
`created_at` the row from the file whose name sorts last wins (file names start with their UTC
write time). Superseded rows stay in the files until `compact` drops them, so DuckDB users who
read the raw files deduplicate with the same rule:

    SELECT * FROM read_parquet('STORE/results/*/*.parquet', filename = true)
    QUALIFY row_number() OVER (PARTITION BY sweep_id, config_key
                               ORDER BY created_at DESC, parse_filename(filename) DESC) = 1
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from xialpha.errors import UserError
from xialpha.storage.location import DataFile, Location

FILE_NAME_COLUMN = "__xialpha_file_name"


def stored_schema(location: Location, files: Sequence[DataFile]) -> pa.Schema:
    """The schema that holds every file's columns (for datasets typed by their rows).

    A column that is null in every file it appears in (its rows were
    all None) reads as string, so reads and joins never meet Arrow's untyped null type.
    """
    schemas = [pq.read_schema(file.path, filesystem=location.filesystem) for file in files]
    try:
        unified = pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise UserError(f"store {location.uri}: stored files disagree on a column type: {exc}") from None
    return pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in unified])


def read_newest(
    location: Location,
    files: Sequence[DataFile],
    schema: pa.Schema,
    key_columns: Sequence[str],
    *,
    columns: Sequence[str] | None = None,
    filter: pc.Expression | None = None,
) -> pa.Table:
    """The newest row per key of `files`, then those rows where `filter` holds, sorted by key.

    Reads only the key columns, `created_at` and `columns` (default: all of `schema`). With a
    filter, a first pass over the key columns picks each key's newest row, and a second pass
    with the filter pushed down keeps the rows that are both newest and matching.
    """
    wanted = list(schema.names if columns is None else columns)
    unknown = [name for name in wanted if name not in schema.names]
    if unknown:
        raise UserError(f"columns: unknown column(s) {', '.join(map(repr, unknown))}")
    keys = list(key_columns)
    order_columns = list(dict.fromkeys([*keys, "created_at"]))
    if filter is None:
        table = scan(location, files, schema, list(dict.fromkeys([*order_columns, *wanted])))
        return newest_per_key(table, keys).drop_columns([FILE_NAME_COLUMN]).select(wanted)
    winners = newest_per_key(scan(location, files, schema, order_columns), keys).select([*keys, FILE_NAME_COLUMN])
    matching = scan(location, files, schema, list(dict.fromkeys([*keys, *wanted])), filter=filter)
    table = matching.join(winners, keys=[*keys, FILE_NAME_COLUMN], join_type="inner")
    table = table.take(pc.sort_indices(table, sort_keys=[(name, "ascending") for name in keys]))
    return table.select(wanted)


def scan(
    location: Location,
    files: Sequence[DataFile],
    schema: pa.Schema,
    columns: Sequence[str],
    *,
    filter: pc.Expression | None = None,
) -> pa.Table:
    """Read `columns` of `files` as typed by `schema` (columns a file lacks read as null), rows
    where `filter` holds, plus the name of each row's file in FILE_NAME_COLUMN."""
    fields = [schema.field(name) for name in columns]
    if not files:
        return pa.schema([*fields, pa.field(FILE_NAME_COLUMN, pa.string())]).empty_table()
    dataset = ds.dataset([f.path for f in files], schema=schema, format="parquet", filesystem=location.filesystem)
    try:
        scanner = dataset.scanner(columns=list(columns), filter=filter)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise UserError(f"filters {filter}: {str(exc).splitlines()[0]}") from None
    name_of = {f.path: f.name for f in files}
    batches, file_names = [], []
    for tagged in scanner.scan_batches():
        batches.append(tagged.record_batch)
        file_names.append(np.full(tagged.record_batch.num_rows, name_of[tagged.fragment.path], dtype=object))
    table = pa.Table.from_batches(batches, schema=pa.schema(fields))
    file_name = pa.array(np.concatenate(file_names) if file_names else [], pa.string())
    return table.append_column(FILE_NAME_COLUMN, file_name)


def newest_per_key(table: pa.Table, key_columns: Sequence[str]) -> pa.Table:
    """The rows of a `scan` that are newest per key (latest created_at, then last file name),
    sorted by key; FILE_NAME_COLUMN is kept."""
    if table.num_rows == 0:
        return table
    order = [(name, "ascending") for name in key_columns]
    order += [("created_at", "descending"), (FILE_NAME_COLUMN, "descending")]
    ordered = table.take(pc.sort_indices(table, sort_keys=order))
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
