"""Which data files of a dataset a read may use: readable Parquet files of this dataset's kind.

A file is *unreadable* when it is not a complete Parquet file (truncated, another format, a
corrupt page), and *foreign* when it holds another kind of rows: a column the dataset does not
have or of another type, a missing key or required column, another dataset's marker in its
metadata, rows of another sweep than its `sweep_id=` directory, or a name claiming a write
sequence no write reaches. Reads skip both kinds with one warning naming them; compaction never
merges them; `xialpha store check` lists them and `--quarantine` moves them aside. A file that
cannot be opened because the process is out of file descriptors is none of these: that error
stops the read (`errors.out_of_files`). A file that vanished after it was listed (a compaction
replaced it) is neither: `vanished` tells those apart, and reads list the files again.

`stamp` is what a sweep's summary records of each data file to tell it unchanged later.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from xialpha.errors import out_of_files
from xialpha.storage.arrow_schema import Dataset
from xialpha.storage.location import MAX_SEQUENCE, DataFile, Location, file_sequence
from xialpha.storage.validate import first_line

PARTITION_PREFIX = "sweep_id="


@dataclass(frozen=True)
class Problem:
    """A data file reads skip: its path, "unreadable" or "foreign", and why (one line)."""

    path: str
    kind: str
    reason: str


@dataclass
class FileSet:
    """The usable files of one dataset (in write order), their common schema and the skipped ones."""

    location: Location
    fragments: list[ds.ParquetFileFragment]
    names: dict[str, str]  # path -> base name, the write-order tie-break
    schema: pa.Schema | None  # None: a dataset typed by its rows that has no usable file
    problems: list[Problem] = field(default_factory=list)
    listed: list[DataFile] = field(default_factory=list)  # every file inspected, usable or not

    def drop(self, fragment: ds.ParquetFileFragment, reason: str) -> None:
        """Stop using a file whose data turned out unreadable while scanning it."""
        self.fragments = [f for f in self.fragments if f.path != fragment.path]
        self.problems.append(Problem(fragment.path, "unreadable", reason))


def inspect(location: Location, dataset: Dataset, files: list[DataFile], *, read_data: bool = False) -> FileSet:
    """Open each file's footer, keep the usable ones and name the others as problems.

    With `read_data` every file is also decoded whole, which finds corrupt data pages too
    (reads find those when they scan the file, and then skip it).
    """
    file_format = ds.ParquetFileFormat()
    fixed = dataset.schema()
    schema = fixed
    fragments, problems = [], []
    for file in files:  # oldest first: for row-typed datasets the first files fixed the column types
        fragment = file_format.make_fragment(file.path, filesystem=location.filesystem)
        try:
            reason = _foreign_reason(dataset, fragment.physical_schema, file) or _partition_reason(fragment, file.path)
            if reason is None and fixed is None:
                schema, reason = _unified(schema, fragment.physical_schema)
            if read_data:
                fragment.to_table()
        except (pa.ArrowException, OSError) as exc:
            if out_of_files(exc):  # the machine's limit, not the file's fault: the read cannot go on
                raise
            problems.append(Problem(file.path, "unreadable", _without_path(first_line(exc), file.path)))
            continue
        if reason is not None:
            problems.append(Problem(file.path, "foreign", reason))
            continue
        fragments.append(fragment)
    if fixed is None and schema is not None:  # columns all null so far read as string
        schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in schema])
    return FileSet(location, fragments, {f.path: f.name for f in files}, schema, problems, list(files))


def vanished(location: Location, directory: str, paths: Iterable[str]) -> set[str]:
    """Those of `paths` (of data files under `directory`) that are no longer listed there: a
    compaction replaced them (or a quarantine moved them) since they were listed."""
    wanted = set(paths)
    if not wanted:
        return set()
    return wanted - {file.path for file in location.data_files(directory)}


@dataclass(frozen=True)
class FileStamp:
    """What tells a data file unchanged: its name, size in bytes, rows (by its footer; 0 when it
    has none) and the SHA-256 of all its bytes, so that a flipped byte in a data page tells as
    much as a file rewritten with other rows (a footer's digest tells only the latter)."""

    name: str
    size: int
    rows: int
    sha256: str


_FOOTER_BYTES = 256 << 20  # a footer longer than this is no footer xialpha wrote: none is read
_DIGEST_BYTES = 8 << 20  # a file's bytes are digested this many at a time


def stamp(location: Location, file: DataFile) -> FileStamp:
    """The stamp of data `file` (all its bytes read once); FileNotFoundError when it vanished."""
    return stamp_and_ranges(location, file, ())[0]


def stamp_and_ranges(
    location: Location, file: DataFile, columns: Iterable[str]
) -> tuple[FileStamp, dict[str, tuple[object, object]]]:
    """The stamp of data `file`, and the (least, greatest) value of each of `columns` it holds by
    its footer's statistics (a column without them in some row group is left out)."""
    with location.filesystem.open_input_file(file.path) as source:
        size = source.size()
        digest = hashlib.sha256()
        for start in range(0, size, _DIGEST_BYTES):
            digest.update(source.read_at(min(_DIGEST_BYTES, size - start), start))
        trailer = source.read_at(min(8, size), size - min(8, size))
        length = int.from_bytes(trailer[:4], "little") if len(trailer) == 8 and trailer[4:] == b"PAR1" else None
        footer = length is not None and length + 8 <= size and length <= _FOOTER_BYTES
        try:
            metadata = pq.ParquetFile(source).metadata if footer else None
        except (pa.ArrowException, OSError) as exc:
            if isinstance(exc, FileNotFoundError) or out_of_files(exc):
                raise
            metadata = None
    ranges = {} if metadata is None else _ranges(metadata, columns)
    return FileStamp(file.name, size, 0 if metadata is None else metadata.num_rows, digest.hexdigest()), ranges


def _ranges(metadata: pq.FileMetaData, columns: Iterable[str]) -> dict[str, tuple[object, object]]:
    names = metadata.schema.names
    ranges = {}
    for name in columns:
        if name not in names:
            continue
        statistics = [
            metadata.row_group(g).column(names.index(name)).statistics for g in range(metadata.num_row_groups)
        ]
        if statistics and all(s is not None and s.has_min_max for s in statistics):
            ranges[name] = (min(s.min for s in statistics), max(s.max for s in statistics))
    return ranges


def _foreign_reason(dataset: Dataset, physical: pa.Schema, file: DataFile) -> str | None:
    marker = (physical.metadata or {}).get(b"xialpha.dataset")
    if marker is not None and marker.decode("utf-8", "replace") != dataset.name:
        return f"rows of dataset {marker.decode('utf-8', 'replace')!r}, not {dataset.name!r}"
    if file_sequence(file.name) > MAX_SEQUENCE:
        return f"its name claims write sequence {file_sequence(file.name)}, beyond any write"
    names = set(physical.names)
    if dataset.columns is None:
        missing = [name for name in (*dataset.key_columns, "created_at") if name not in names]
        return f"no column(s) {', '.join(map(repr, missing))}" if missing else None
    columns = {c.name: c for c in dataset.columns}
    unknown = [name for name in physical.names if name not in columns]
    if unknown:
        return f"column(s) {', '.join(map(repr, unknown[:5]))} not in the {dataset.name} schema"
    missing = [c.name for c in dataset.columns if c.required and c.name not in names]
    if missing:
        return f"no required column(s) {', '.join(map(repr, missing[:5]))}"
    for field_ in physical:
        expected = columns[field_.name].type
        if not field_.type.equals(expected) and not pa.types.is_null(field_.type):
            return f"column {field_.name!r} is {field_.type}, not {expected}"
    return None


def _unified(schema: pa.Schema | None, physical: pa.Schema) -> tuple[pa.Schema | None, str | None]:
    """(schema holding both, None), or (schema unchanged, why the file's types conflict)."""
    plain = pa.schema(list(physical))  # without the file's metadata
    if schema is None:
        return plain, None
    try:
        return pa.unify_schemas([schema, plain], promote_options="permissive"), None
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        return schema, f"column types disagree with the files stored before it: {first_line(exc)}"


def _partition_reason(fragment: ds.ParquetFileFragment, path: str) -> str | None:
    """Why the rows do not belong to the file's sweep_id=<id> directory, from the footer statistics."""
    directory = posixpath.basename(posixpath.dirname(path))
    if not directory.startswith(PARTITION_PREFIX) or "sweep_id" not in fragment.physical_schema.names:
        return None
    expected = directory.removeprefix(PARTITION_PREFIX)
    metadata = fragment.metadata
    index = fragment.physical_schema.get_field_index("sweep_id")
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(index).statistics
        if stats is None or not stats.has_min_max or stats.null_count:
            return _partition_by_values(fragment, expected)
        if stats.min != expected or stats.max != expected:
            other = stats.max if stats.min == expected else stats.min
            return f"rows of sweep {other!r} in directory {directory}"
    return None


def _partition_by_values(fragment: ds.ParquetFileFragment, expected: str) -> str | None:
    values = set(fragment.to_table(columns=["sweep_id"])["sweep_id"].to_pylist())
    others = sorted(map(repr, values - {expected}))
    return f"rows of sweep {others[0]} in directory {PARTITION_PREFIX}{expected}" if others else None


def _without_path(message: str, path: str) -> str:
    """pyarrow's message without the "Could not open Parquet input source '<path>': " prefix."""
    return message.split(f"'{path}': ", 1)[-1]
