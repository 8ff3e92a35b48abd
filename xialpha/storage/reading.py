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
    """The schema that holds every file's columns (for datasets typed by their rows)."""
    schemas = [pq.read_schema(file.path, filesystem=location.filesystem) for file in files]
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise UserError(f"store {location.uri}: stored files disagree on a column type: {exc}") from None


def scan(
    location: Location,
    files: Sequence[DataFile],
    schema: pa.Schema,
    *,
    columns: Sequence[str] | None = None,
    filter: pc.Expression | None = None,
) -> pa.Table:
    """Read `files` as `schema` (columns a file lacks read as null) plus a file name column.

    `filter` is pushed into the scan; use it only on key columns, so that it cannot change
    which row of a key is the newest.
    """
    names = list(columns) if columns is not None else schema.names
    if not files:
        empty = pa.table({name: pa.array([], schema.field(name).type) for name in names})
        return empty.append_column(FILE_NAME_COLUMN, pa.array([], pa.string()))
    dataset = ds.dataset([f.path for f in files], schema=schema, format="parquet", filesystem=location.filesystem)
    name_of = {f.path: f.name for f in files}
    batches, file_names = [], []
    for tagged in dataset.scanner(columns=names, filter=filter).scan_batches():
        batch = tagged.record_batch
        batches.append(batch)
        file_names.append(np.full(batch.num_rows, name_of[tagged.fragment.path], dtype=object))
    table = pa.Table.from_batches(batches, schema=pa.schema([schema.field(n) for n in names]))
    file_name = pa.array(np.concatenate(file_names) if file_names else [], pa.string())
    return table.append_column(FILE_NAME_COLUMN, file_name)


def newest_per_key(table: pa.Table, key_columns: Sequence[str]) -> pa.Table:
    """Keep one row per key: latest created_at, then last file name; drops the file name column.

    Rows come back sorted by key.
    """
    if table.num_rows == 0:
        return table.drop_columns([FILE_NAME_COLUMN])
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
    return ordered.filter(pa.array(first)).drop_columns([FILE_NAME_COLUMN])


def as_expression(filters: object) -> pc.Expression | None:
    """A pyarrow Expression from an Expression or pyarrow.parquet-style DNF tuples."""
    if filters is None or isinstance(filters, pc.Expression):
        return filters
    try:
        return pq.filters_to_expression(filters)
    except (TypeError, ValueError, pa.ArrowException) as exc:
        raise UserError(f"filters {filters!r}: {exc}") from None


def apply_filter(table: pa.Table, expression: pc.Expression | None) -> pa.Table:
    """`table` rows where `expression` holds; unknown columns raise UserError."""
    if expression is None:
        return table
    try:
        return table.filter(expression)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise UserError(f"filters {expression}: {str(exc).splitlines()[0]}") from None
