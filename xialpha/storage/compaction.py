"""Merge the small files of each partition into one without changing what reads return.

Per partition: read every visible file, keep the newest row per key, write the merged file
atomically, and only then delete the inputs. A crash between the two leaves rows twice, with
equal `created_at`; the newest-wins read rule shows each once. The merged file is named after
the last input (see `merged_name`), so it keeps that input's place in the file-name tie-break
against files written during the compaction. Temporary
files older than STALE_TEMP_SECONDS (left by killed writers) are deleted.
"""

from __future__ import annotations

import posixpath
import re
import time
import uuid

import pyarrow.compute as pc

from xialpha.storage.location import DataFile, Location
from xialpha.storage.reading import read_newest, stored_schema
from xialpha.storage.schema import Dataset

STALE_TEMP_SECONDS = 24 * 3600
_MERGED_SUFFIX = re.compile(r"-c[0-9a-f]{12}$")


def compact_partitions(location: Location, dataset: Dataset) -> tuple[int, int]:
    """Compact every partition of `dataset`; return (data files before, data files after)."""
    root = location.path(dataset.name)
    files = location.data_files(root)
    partitions: dict[str, list[DataFile]] = {}
    for file in files:
        partitions.setdefault(posixpath.dirname(file.path), []).append(file)
    for directory, inputs in partitions.items():
        if len(inputs) > 1:
            _merge(location, dataset, directory, inputs)
    _delete_stale_temp_files(location, root)
    return len(files), len(location.data_files(root))


def merged_name(inputs: list[DataFile]) -> str:
    """The last input's name stem plus "-c<random>": against any other file it sorts where that input did."""
    stem = _MERGED_SUFFIX.sub("", max(f.name for f in inputs).removesuffix(".parquet"))
    return f"{stem}-c{uuid.uuid4().hex[:12]}.parquet"


def _merge(location: Location, dataset: Dataset, directory: str, inputs: list[DataFile]) -> None:
    schema = dataset.schema() or stored_schema(location, inputs)
    table = read_newest(location, inputs, schema, dataset.key_columns)
    table = table.take(pc.sort_indices(table, sort_keys=[("created_at", "ascending")]))
    location.write_table(directory, table, name=merged_name(inputs))
    for file in inputs:
        location.delete(file.path)


def _delete_stale_temp_files(location: Location, root: str) -> None:
    cutoff = time.time() - STALE_TEMP_SECONDS
    for info in location.temp_files(root):
        if info.mtime is not None and info.mtime.timestamp() < cutoff:
            location.delete(info.path)
