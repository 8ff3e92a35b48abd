"""Merge the small files of each partition into one without changing what reads return.

Per partition: inspect every visible file, merge the usable ones keeping the newest row per key
(per key and status in the results dataset: the newest "ok" row and the newest failed attempt,
so no "ok" row is ever dropped for a failed one), write the merged file atomically, and only
then delete the inputs. Unreadable and foreign files are neither merged nor deleted (see
`xialpha.storage.files`). A crash between writing and deleting leaves rows twice, which the
read rule shows once. The merged file is named after the last input (see `merged_name`), so it
keeps that input's write sequence and its place against files written during the compaction.
Temporary files older than STALE_TEMP_SECONDS (left by killed writers) are deleted. A partition or
file that a symbolic link leads to outside the store is not listed (`Location.data_files`, which
warns of the link), so it is left as it is.

Memory is bounded whatever the partition holds: a first pass reads only the key (and status)
columns of every input to find each key's winning row; a second pass reads the inputs one row
group at a time and writes the winning rows, in write order (file by file, row by row), as row
groups of at most ROW_GROUP_ROWS rows and MERGED_GROUP_BYTES bytes. So 10^6 configurations are
merged holding their keys and one row group, not every row.

Compactions may run beside each other (a `store compact` and a sweep's end): one that finds an
input gone (another compaction merged it) leaves that partition to the other.
"""

from __future__ import annotations

import posixpath
import re
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from xialpha.errors import out_of_files
from xialpha.storage.arrow_schema import Dataset
from xialpha.storage.files import FileSet, Problem, inspect, vanished
from xialpha.storage.location import ROW_GROUP_ROWS, DataFile, Location
from xialpha.storage.reading import FILE_ORDER_COLUMN, newest_per_key
from xialpha.storage.validate import first_line

STALE_TEMP_SECONDS = 24 * 3600
MERGED_GROUP_BYTES = 64 << 20  # a merged row group holds at most this many bytes (wide example bits)
_MERGED_SUFFIX = re.compile(r"-c[0-9a-f]{12}$")
_ROW = "__xialpha_row"


def compact_partitions(
    location: Location, dataset: Dataset, partition: str | None = None
) -> tuple[int, int, list[Problem]]:
    """Compact every partition of `dataset`, or only its directory `partition` ("sweep_id=<id>"):
    (data files before, data files after, files skipped)."""
    root = location.path(dataset.name) if partition is None else location.path(dataset.name, partition)
    files = location.data_files(root)
    partitions: dict[str, list[DataFile]] = {}
    for file in files:
        partitions.setdefault(posixpath.dirname(file.path), []).append(file)
    problems = []
    for directory, inputs in partitions.items():
        if len(inputs) > 1:
            problems += _merge(location, dataset, directory, inputs)
    _delete_stale_temp_files(location, root)
    return len(files), len(location.data_files(root)), problems


def merged_name(inputs: list[DataFile]) -> str:
    """The last input's name stem plus "-c<random>": against any other file it sorts where that input did."""
    stem = _MERGED_SUFFIX.sub("", max(f.name for f in inputs).removesuffix(".parquet"))
    return f"{stem}-c{uuid.uuid4().hex[:12]}.parquet"


def is_merged_name(name: str) -> bool:
    """True for the name of a file a compaction wrote (`merged_name`)."""
    return _MERGED_SUFFIX.search(name.removesuffix(".parquet")) is not None


class _InputFailed(Exception):
    """An input's data failed to read while the merged file was being written (a corrupt page,
    or the file vanished): not a write error, so it is carried out of the write as this."""

    def __init__(self, fragment: ds.ParquetFileFragment, cause: BaseException):
        super().__init__(first_line(cause))
        self.fragment, self.cause = fragment, cause


def _merge(location: Location, dataset: Dataset, directory: str, inputs: list[DataFile]) -> list[Problem]:
    files = inspect(location, dataset, inputs)
    keys = [*dataset.key_columns, *([dataset.status_column] if dataset.status_column else [])]
    while True:
        if vanished(location, directory, [problem.path for problem in files.problems]):
            return []  # another compaction merged files of this partition meanwhile: it is that one's
        if len(files.fragments) < 2:
            return files.problems
        try:
            winners = _winners(files, keys)
            merged = [file for file in inputs if file.path in {fragment.path for fragment in files.fragments}]
            plain = pa.schema([pa.field(field.name, field.type) for field in files.schema])  # type: ignore[union-attr]
            groups = (group.cast(plain) for group in _winning_groups(files, winners))
            location.write_row_groups(directory, plain, groups, merged_name(merged))
        except _InputFailed as failed:
            if out_of_files(failed.cause):  # the machine's limit, not the file's fault: the compaction cannot go on
                raise failed.cause from None
            files.drop(failed.fragment, str(failed))  # vanished (see above), or a corrupt page: merge the others
            continue
        for file in merged:
            location.delete(file.path)
        return files.problems


def _winners(files: FileSet, keys: list[str]) -> list[np.ndarray]:
    """Per usable file (in the order of the fragments of `files`), which of its rows win their key: a boolean
    mask over its rows, from its key columns only."""
    tables = []
    for index, fragment in enumerate(files.fragments):
        try:
            table = fragment.to_table(columns=keys, schema=files.schema)
        except (pa.ArrowException, OSError) as exc:
            raise _InputFailed(fragment, exc) from None
        tables.append(
            table.append_column(FILE_ORDER_COLUMN, pa.array(np.full(table.num_rows, index, np.int32))).append_column(
                _ROW, pa.array(np.arange(table.num_rows, dtype=np.int64))
            )
        )
    winning = newest_per_key(pa.concat_tables(tables), keys)  # the fragments are in write order
    offsets = np.cumsum([0, *(table.num_rows for table in tables)])
    wins = np.zeros(offsets[-1], dtype=bool)
    wins[offsets[winning[FILE_ORDER_COLUMN].to_numpy()] + winning[_ROW].to_numpy()] = True
    return np.split(wins, offsets[1:-1])


def _winning_groups(files: FileSet, winners: list[np.ndarray]) -> Iterator[pa.Table]:
    """The winning rows of every usable file, read one row group at a time, as merged row groups
    of at most ROW_GROUP_ROWS rows and MERGED_GROUP_BYTES bytes."""
    pending: list[pa.Table] = []
    rows = size = 0
    for fragment, mask in zip(files.fragments, winners, strict=True):
        start = 0
        try:
            groups = fragment.split_by_row_group()
        except (pa.ArrowException, OSError) as exc:
            raise _InputFailed(fragment, exc) from None
        for group in groups:
            try:
                table = group.to_table(schema=files.schema)
            except (pa.ArrowException, OSError) as exc:
                raise _InputFailed(fragment, exc) from None
            kept = table.filter(pa.array(mask[start : start + table.num_rows]))
            start += table.num_rows
            for piece in _pieces(kept):
                if pending and (rows + piece.num_rows > ROW_GROUP_ROWS or size + piece.nbytes > MERGED_GROUP_BYTES):
                    yield pa.concat_tables(pending).combine_chunks()
                    pending, rows, size = [], 0, 0
                pending.append(piece)
                rows, size = rows + piece.num_rows, size + piece.nbytes
    if pending:
        yield pa.concat_tables(pending).combine_chunks()


def _pieces(table: pa.Table) -> Iterator[pa.Table]:
    """`table` in slices of at most ROW_GROUP_ROWS rows and about MERGED_GROUP_BYTES bytes."""
    if table.num_rows == 0:
        return
    per_row = max(table.nbytes // table.num_rows, 1)
    step = max(1, min(ROW_GROUP_ROWS, MERGED_GROUP_BYTES // per_row))
    for start in range(0, table.num_rows, step):
        yield table.slice(start, step)


def _delete_stale_temp_files(location: Location, root: str) -> None:
    cutoff = time.time() - STALE_TEMP_SECONDS
    for info in location.temp_files(root):
        if info.mtime is not None and info.mtime.timestamp() < cutoff and not location.outside(info.path):
            location.delete(info.path)
