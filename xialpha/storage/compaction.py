"""Merge the small files of each partition into one without changing what reads return.

Per partition: inspect every visible file, merge the usable ones keeping the newest row per key
(per key and status in the results dataset: the newest "ok" row and the newest failed attempt,
so no "ok" row is ever dropped for a failed one), write the merged file atomically, and only
then delete the inputs. Unreadable and foreign files are neither merged nor deleted (see
`xialpha.storage.files`). A crash between writing and deleting leaves rows twice, which the
read rule shows once. The merged file is named after the last input (see `merged_name`), so it
keeps that input's write sequence and its place against files written during the compaction.
Temporary files older than STALE_TEMP_SECONDS (left by killed writers) are deleted. A partition or
file that a symbolic link leads to outside the store is left as it is (named as a problem).
"""

from __future__ import annotations

import posixpath
import re
import time
import uuid

import pyarrow.compute as pc

from xialpha.storage.files import Problem, inspect
from xialpha.storage.location import DataFile, Location
from xialpha.storage.reading import read_newest
from xialpha.storage.schema import Dataset

STALE_TEMP_SECONDS = 24 * 3600
OUTSIDE = "a link leads outside the store to it: left as it is"
_MERGED_SUFFIX = re.compile(r"-c[0-9a-f]{12}$")


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
        linked = [file for file in inputs if location.outside(file.path)]
        problems += [Problem(file.path, "outside", OUTSIDE) for file in linked]
        if len(inputs) > 1 and not linked:
            problems += _merge(location, dataset, directory, inputs)
    _delete_stale_temp_files(location, root)
    return len(files), len(location.data_files(root)), problems


def merged_name(inputs: list[DataFile]) -> str:
    """The last input's name stem plus "-c<random>": against any other file it sorts where that input did."""
    stem = _MERGED_SUFFIX.sub("", max(f.name for f in inputs).removesuffix(".parquet"))
    return f"{stem}-c{uuid.uuid4().hex[:12]}.parquet"


def _merge(location: Location, dataset: Dataset, directory: str, inputs: list[DataFile]) -> list[Problem]:
    files = inspect(location, dataset, inputs)
    if len(files.fragments) > 1:
        keys = [*dataset.key_columns, *([dataset.status_column] if dataset.status_column else [])]
        table = read_newest(files, keys)
        usable = {fragment.path for fragment in files.fragments}  # without files whose data failed to read
        merged = [file for file in inputs if file.path in usable]
        if len(merged) > 1:
            table = table.take(pc.sort_indices(table, sort_keys=[("created_at", "ascending")]))
            location.write_table(directory, table, merged_name(merged))
            for file in merged:
                location.delete(file.path)
    return files.problems


def _delete_stale_temp_files(location: Location, root: str) -> None:
    cutoff = time.time() - STALE_TEMP_SECONDS
    for info in location.temp_files(root):
        if info.mtime is not None and info.mtime.timestamp() < cutoff and not location.outside(info.path):
            location.delete(info.path)
