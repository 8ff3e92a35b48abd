"""Turn rows (dicts) or Arrow tables into tables of a dataset's exact schema, or say what is wrong.

Every check raises `UserError` naming the column (and row) at fault, before anything is written.
"""

from __future__ import annotations

import datetime
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from xialpha.errors import UserError
from xialpha.storage.arrow_schema import DATASETS, TIMESTAMP, Column
from xialpha.storage.sweep_ids import SWEEP_ID_RULE, valid_sweep_id

if TYPE_CHECKING:
    import pandas as pd


def check_sweep_id(sweep_id: object) -> str:
    """Return `sweep_id` if it is safe as a path part (`valid_sweep_id`), else UserError."""
    if not valid_sweep_id(sweep_id):
        raise UserError(f"sweep_id {sweep_id!r}: use {SWEEP_ID_RULE}")
    return sweep_id


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_aware_datetime(value: object) -> bool:
    return isinstance(value, datetime.datetime) and value.utcoffset() is not None


def _python_check(type_: pa.DataType) -> tuple[str, Callable[[object], bool]]:
    """(description, predicate) for Python values accepted in a column of `type_`."""
    if pa.types.is_string(type_):
        return "str", lambda v: isinstance(v, str)
    if pa.types.is_boolean(type_):
        return "bool", lambda v: isinstance(v, (bool, np.bool_))
    if pa.types.is_integer(type_):
        return "int", _is_int
    if pa.types.is_floating(type_):
        return "float", _is_real
    if pa.types.is_timestamp(type_):
        return "timezone-aware datetime", _is_aware_datetime
    if pa.types.is_binary(type_):
        return "bytes", lambda v: isinstance(v, (bytes, bytearray, memoryview))
    raise TypeError(f"no Python check for {type_}")


def first_true(mask: pa.Array | pa.ChunkedArray) -> int | None:
    """Index of the first true value of a boolean array (nulls count as false), or None."""
    index = pc.index(pc.fill_null(mask, False), True).as_py()
    return None if index < 0 else index


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _reject_unknown(names: Iterable[str], columns: Sequence[Column], where: str) -> None:
    known = {c.name for c in columns}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UserError(f"{where}: unknown column(s) {', '.join(map(repr, unknown))}")


def table_from_rows(rows: Sequence[Mapping], columns: Sequence[Column], what: str) -> pa.Table:
    """Build a table from row dicts; keys must be column names, values of the column's kind.

    Columns that no row sets are left out (`conform` fills them).
    """
    check_row_list(rows, what)
    for index, row in enumerate(rows):
        _reject_unknown(row.keys(), columns, f"{what} row {index}")
    arrays = {}
    for column in columns:
        values = [row.get(column.name) for row in rows]
        if all(value is None for value in values):
            continue
        expected, accepts = _python_check(column.type)
        for index, value in enumerate(values):
            if value is not None and not accepts(value):
                raise UserError(
                    f"{what} row {index}: column {column.name!r} needs {expected}, got {type(value).__name__} "
                    f"{value!r:.60}"
                )
        try:
            arrays[column.name] = pa.array(values, type=column.type)
        except (pa.ArrowException, OverflowError, ValueError) as exc:
            raise UserError(f"{what}: column {column.name!r}: {first_line(exc)}") from None
    return pa.table(arrays)


def check_row_list(rows: object, what: str) -> None:
    if not isinstance(rows, Sequence) or isinstance(rows, (str, bytes)):
        raise UserError(f"{what}: expected a list of dicts or a pyarrow Table, got {type(rows).__name__}")
    if not rows:
        raise UserError(f"{what}: no rows to write")
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise UserError(f"{what} row {index}: expected a dict, got {type(row).__name__}")


def _kind(type_: pa.DataType) -> str:
    for kind, test in (
        ("null", pa.types.is_null),
        ("bool", pa.types.is_boolean),
        ("int", pa.types.is_integer),
        ("float", pa.types.is_floating),
        ("str", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)),
        ("bytes", lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)),
        ("timestamp", pa.types.is_timestamp),
    ):
        if test(type_):
            return kind
    return str(type_)


_CASTS = {
    ("int", "float"),
    ("null", "bool"),
    ("null", "int"),
    ("null", "float"),
    ("null", "str"),
    ("null", "bytes"),
    ("null", "timestamp"),
}


def _cast_column(array: pa.ChunkedArray, column: Column, what: str) -> pa.ChunkedArray:
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    source, target = _kind(array.type), _kind(column.type)
    if source != target and (source, target) not in _CASTS:
        raise UserError(f"{what}: column {column.name!r} needs {column.type}, got {array.type}")
    if source == "timestamp":
        if array.type.tz is None:
            raise UserError(f"{what}: column {column.name!r} holds naive timestamps; give them a time zone (UTC)")
        return array.cast(TIMESTAMP, safe=False)  # drops sub-microsecond digits
    try:
        return array.cast(column.type)
    except (pa.ArrowException, OverflowError) as exc:
        raise UserError(f"{what}: column {column.name!r}: {first_line(exc)}") from None


def conform(table: pa.Table, columns: Sequence[Column], what: str, defaults: Mapping[str, object]) -> pa.Table:
    """Return `table` with exactly `columns`, in order and type; fill nulls from `defaults`.

    Raises UserError for unknown columns, impossible casts and nulls in required columns.
    """
    if table.num_rows == 0:
        raise UserError(f"{what}: no rows to write")
    _reject_unknown(table.column_names, columns, what)
    arrays = []
    for column in columns:
        if column.name in table.column_names:
            array = _cast_column(table[column.name], column, what)
        else:
            array = pa.chunked_array([pa.nulls(table.num_rows, column.type)])
        if column.name in defaults and array.null_count:
            array = pc.fill_null(array, pa.scalar(defaults[column.name], column.type))
        if column.required and array.null_count:
            row = first_true(pc.is_null(array))
            raise UserError(f"{what} row {row}: required column {column.name!r} is missing or null")
        arrays.append(array)
    return pa.table(arrays, schema=pa.schema([pa.field(c.name, c.type) for c in columns]))


def reject_duplicate_keys(table: pa.Table, key_columns: Sequence[str], what: str) -> None:
    """Raise UserError if two rows of `table` share the same values of `key_columns`."""
    counts = table.group_by(list(key_columns)).aggregate([([], "count_all")])
    duplicated = counts.filter(pc.greater(counts["count_all"], 1))
    if duplicated.num_rows:
        example = {name: duplicated[name][0].as_py() for name in key_columns}
        raise UserError(f"{what}: {duplicated.num_rows} key(s) appear more than once in one write, e.g. {example}")


def require_values(table: pa.Table, column: str, allowed: Sequence[str], what: str) -> None:
    """Raise UserError unless every non-null value of `column` is one of `allowed`."""
    values = table[column]
    row = first_true(pc.and_(pc.is_valid(values), pc.invert(pc.is_in(values, value_set=pa.array(allowed)))))
    if row is not None:
        raise UserError(
            f"{what} row {row}: column {column!r} is {table[column][row].as_py()!r}; use one of {list(allowed)}"
        )


def check_sweep_ids(table: pa.Table, what: str) -> str:
    """Validate the sweep_id column; return its single value (one write holds one sweep)."""
    sweep_ids = [check_sweep_id(value) for value in pc.unique(table["sweep_id"]).to_pylist()]
    if len(sweep_ids) != 1:
        raise UserError(f"{what}: rows hold {len(sweep_ids)} sweep_id values; write one sweep at a time")
    return sweep_ids[0]


_FLAT_KINDS = {"null", "bool", "int", "float", "str", "bytes", "timestamp"}


def flat_table(rows_or_table: object, what: str) -> pa.Table:
    """A table of flat standard types from row dicts or a table: no nested, extension or float16.

    Dictionary columns are decoded; timestamps become timestamp[us, UTC] (naive ones are refused).
    """
    if isinstance(rows_or_table, pa.Table):
        table = rows_or_table
    else:
        check_row_list(rows_or_table, what)
        rows = cast("Sequence[Mapping[object, object]]", rows_or_table)  # as check_row_list checked
        names = list(dict.fromkeys(name for row in rows for name in row))
        arrays = {}
        for name in names:
            if not isinstance(name, str) or not name:
                raise UserError(f"{what}: column names must be non-empty strings, got {name!r}")
            try:
                arrays[name] = pa.array([row.get(name) for row in rows])
            except (pa.ArrowException, OverflowError, ValueError) as exc:
                raise UserError(f"{what}: column {name!r}: {first_line(exc)}") from None
        table = pa.table(arrays)
    if table.num_rows == 0:
        raise UserError(f"{what}: no rows to write")
    columns = []
    for field in table.schema:
        value_type = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if _kind(value_type) not in _FLAT_KINDS or pa.types.is_float16(value_type):
            raise UserError(
                f"{what}: column {field.name!r} has type {value_type}; stored tables hold only flat "
                "str, int, float, bool, bytes and timestamp columns"
            )
        columns.append(Column(field.name, TIMESTAMP if _kind(value_type) == "timestamp" else value_type, False, ""))
    return conform(table, columns, what, defaults={})


def typed_table(dataset: str, rows: Sequence[Mapping]) -> pa.Table:
    """xialpha's own rows (dicts) of `dataset` (selections, certifications, drift, sweeps) as a
    table of its declared columns (`Dataset.row_columns`), ready for `ResultStore.append`.

    Missing columns are null, numpy and pandas scalars become Python values, NaN (pandas' missing
    value) becomes null outside float columns; `created_at` defaults to now. A key that is not
    a column raises UserError.
    """
    columns = _row_columns(dataset)
    check_row_list(rows, dataset)
    for index, row in enumerate(rows):
        _reject_unknown(row.keys(), columns, f"{dataset} row {index}")
    now = datetime.datetime.now(datetime.UTC)
    plain = [
        {c.name: _plain(row.get(c.name, now if c.name == "created_at" else None), c.type) for c in columns}
        for row in rows
    ]
    return pa.Table.from_pylist(plain, schema=pa.schema([pa.field(c.name, c.type) for c in columns]))


def missing_columns(dataset: str, names: Iterable[str]) -> list[str]:
    """The declared columns of `dataset` (selections, certifications, ...) not among `names`."""
    given = set(names)
    return [c.name for c in _row_columns(dataset) if c.name not in given]


def _row_columns(dataset: str) -> tuple[Column, ...]:
    """The declared columns of a dataset typed by its rows (`Dataset.row_columns`)."""
    columns = DATASETS[dataset].row_columns
    if columns is None:
        raise ValueError(f"dataset {dataset!r} is typed by its columns, not by rows")
    return columns


def typed_frame(dataset: str, rows: Sequence[Mapping]) -> pd.DataFrame:
    """`typed_table` as a pandas DataFrame: the rows as the store gives them back once appended."""
    return typed_table(dataset, rows).to_pandas()


def _plain(value: object, type_: pa.DataType) -> object:
    """numpy scalars as Python values; pandas' NA and NaT, and NaN outside float columns, as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, float) and np.isnan(value) and not pa.types.is_floating(type_):
        return None
    return value
