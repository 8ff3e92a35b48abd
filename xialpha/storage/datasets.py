"""`Datasets`: the store's Parquet datasets underneath `xialpha.storage.store.ResultStore`.

Layout under the store root (hive partitions; `sweep_id` is also a column inside each file):

    _xialpha_store.json                        format marker with the store's schema version
    results/sweep_id=<id>/part-*.parquet       one row per trained configuration
    examples/sweep_id=<id>/part-*.parquet      per-example error indicators per config
    selections|drift|certifications|sweeps/[sweep_id=<id>/]part-*.parquet
    <dataset>/_claims/...                      exclusive claims and heartbeats (`xialpha.storage.claims`)
    _quarantine/<path>                         files moved aside by `quarantine`

Each write adds a new file named with the store's next write sequence and never rewrites one.
A sweep stores each batch as two files: its per-example vectors (examples) first, its results
last. The results are what a read shows and a resume counts as done, so a sweep killed at any
instant (SIGKILL, a lost node) leaves no result row without its vectors: at worst vectors
without their results, which no read asks for and the resume recomputes with the key. A store
written by xialpha before this order (results first) may hold done keys without vectors; the
resume (`ResultStore.complete_keys`) recomputes those too, and every read is as before.
Reads keep one row per key (see `xialpha.storage.reading`): the one written last, except that
in results an "ok" row always wins over failed ones, so a config recomputed with `--force`
replaces its older result only if the recomputation succeeded. Reads skip unreadable and
foreign files (see `xialpha.storage.files`) with one `StoreWarning` naming them.

Every read is of one version of the store (`_snapshot`), whatever compacts or writes beside it:
it lists the files, reads them, and lists them again; if a file it could not read has vanished
meanwhile, or a compaction's output has appeared, a compaction replaced files under it, and it
reads again from the new listing (up to SNAPSHOT_TRIES times, waiting a little longer each
time). A compaction writes its merged file before it deletes the files it merged, and the read
rule gives the same rows from any mix of the two, so the files a read lists and reads whole are
one version. This costs one listing per read, where a compaction that published a manifest and
deleted only after readers of the old version were done would cost a manifest read per read and
reader leases on a store readers may not write (measured in `bench/store.py`).

Opening a store changes nothing: an absent store is created (directory and marker) by its
first write, so a command that fails before writing leaves no store behind.

This is the Arrow level (tables, pyarrow filter expressions or DNF tuples, rows as mappings),
which `xialpha.storage.store.ResultStore` composes (as its `datasets`) to answer its named
queries; tests and tools may use it directly, the rest of xialpha asks `ResultStore` instead.
"""

from __future__ import annotations

import datetime
import os
import posixpath
import socket
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from xialpha.errors import StoreWarning, UserError, one_of, out_of_files
from xialpha.storage import validate
from xialpha.storage.arrow_schema import DATASETS, EXAMPLE_COLUMNS, RESULT_COLUMNS, SCHEMA_VERSION, TIMESTAMP, Dataset
from xialpha.storage.compaction import compact_partitions, is_merged_name
from xialpha.storage.files import (
    PARTITION_PREFIX,
    FileSet,
    FileStamp,
    Problem,
    inspect,
    stamp,
    stamp_and_ranges,
    vanished,
)
from xialpha.storage.jsonfiles import DamagedJson, read_json
from xialpha.storage.location import DataFile, Location, new_file_name
from xialpha.storage.marker import MARKER, create_marker, stored_version
from xialpha.storage.reading import as_expression, read_newest
from xialpha.storage.rows import pack_bits
from xialpha.storage.schema import ESTIMATORS, ResultStatus
from xialpha.storage.summary import (
    RANGED,
    SUMMARY_BYTES,
    SUMMARY_COLUMNS,
    SUMMARY_DEPTH,
    SUMMARY_NAME,
    DamagedSummary,
    StaleSummary,
    SweepCounts,
    counts_of,
    recorded_files,
    summarise,
    summary_text,
)
from xialpha.version import __version__

QUARANTINE = "_quarantine"
SNAPSHOT_TRIES = 10  # reads of one version tried this often while compactions replace files under them
SNAPSHOT_WAIT_S = 0.02  # the wait before the second try, doubled before each next one, at most 1 s
T = TypeVar("T")


class Datasets:
    """A store at a local directory or pyarrow/fsspec URI (s3://bucket/prefix, memory://name, ...).

    With `create=True` (the default) the store must be writable, and an absent or empty
    directory becomes a new store at the first write (until then it reads as empty); with
    `create=False` the store must exist and may be read-only. `writable=False`: the caller
    only reads, an absent store reads as empty, and a read-only one is fine (a dry run).
    """

    def __init__(self, uri: str, *, create: bool = True, writable: bool = True):
        self.location = Location(uri)
        self.uri = self.location.uri  # without credentials
        self._warned: set[str] = set()
        self._inspected: dict[tuple[str, str], tuple[tuple[str, ...], FileSet]] = {}  # see `_files`
        version = stored_version(self.location, create, writable)
        self._absent = version is None  # until the first write creates the store
        self.schema_version = SCHEMA_VERSION if version is None else version

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"

    # --- writing -----------------------------------------------------------------------------

    def write_results(self, rows: Sequence[Mapping] | pa.Table) -> str:
        """Validate result rows of one sweep and store them as one new file; return its path.

        `created_at` (now), `schema_version`, `xialpha_version` and `worker` (this host) are
        filled where absent. Nothing is written if any row is invalid.
        """
        what = "results"
        table = rows if isinstance(rows, pa.Table) else validate.table_from_rows(rows, RESULT_COLUMNS, what)
        defaults = {
            "created_at": datetime.datetime.now(datetime.UTC),
            "schema_version": SCHEMA_VERSION,
            "xialpha_version": __version__,
            "worker": socket.gethostname(),
        }
        table = validate.conform(table, RESULT_COLUMNS, what, defaults)
        sweep_id = validate.check_sweep_ids(table, what)
        validate.require_values(table, "status", [status.value for status in ResultStatus], what)
        row = validate.first_true(
            pc.and_(pc.equal(table["status"], ResultStatus.FAILED), pc.is_null(table["error_message"]))
        )
        if row is not None:
            raise UserError(f"{what} row {row}: status is 'failed' but error_message is null")
        validate.reject_duplicate_keys(table, DATASETS["results"].key_columns, what)
        return self._write("results", table, sweep_id)

    def write_examples(self, rows: Sequence[Mapping]) -> str:
        """Store per-example indicator rows of one sweep as one new file; return its path.

        `bits` may be packed bytes (then `n` is required) or a 1-D boolean array (packed here,
        `n` taken from its length); `created_at` defaults to now.
        """
        what = "examples"
        validate.check_row_list(rows, what)
        table = validate.table_from_rows([_packed(row, index) for index, row in enumerate(rows)], EXAMPLE_COLUMNS, what)
        now = datetime.datetime.now(datetime.UTC)
        table = validate.conform(table, EXAMPLE_COLUMNS, what, {"created_at": now})
        sweep_id = validate.check_sweep_ids(table, what)
        validate.require_values(table, "estimator", ESTIMATORS, what)
        expected_bytes = pc.divide(pc.add(table["n"], 7), 8)
        row = validate.first_true(pc.not_equal(pc.binary_length(table["bits"]), expected_bytes))
        if row is not None:
            raise UserError(
                f"{what} row {row}: bits has {len(table['bits'][row].as_py())} bytes, n={table['n'][row]} needs "
                f"{expected_bytes[row]}"
            )
        validate.reject_duplicate_keys(table, DATASETS["examples"].key_columns, what)
        return self._write("examples", table, sweep_id)

    def append(self, dataset: str, rows: Sequence[Mapping] | pa.Table) -> str:
        """Append rows to a dataset typed by its rows (selections, drift, ...); return the path written.

        Rows need the dataset's id column (non-null, unique in the write); `created_at`
        defaults to now; a `sweep_id` column partitions the files. Column types must agree with
        the files already stored.
        """
        spec = self.dataset(dataset)
        if spec.columns is not None:
            raise UserError(f"dataset {dataset!r}: use write_{dataset}() for it, not append()")
        table = validate.flat_table(rows, dataset)
        if "created_at" not in table.column_names:
            now = datetime.datetime.now(datetime.UTC)
            table = table.append_column("created_at", pa.array([now] * table.num_rows, TIMESTAMP))
        for name in (*spec.key_columns, "created_at"):
            if name not in table.column_names or table[name].null_count:
                raise UserError(f"{dataset}: column {name!r} is missing or null")
        validate.reject_duplicate_keys(table, spec.key_columns, dataset)
        sweep_id = validate.check_sweep_ids(table, dataset) if "sweep_id" in table.column_names else None
        stored = self._snapshot(spec, self.location.path(dataset), lambda files: files.schema)
        if stored is not None:
            try:
                pa.unify_schemas([stored, table.schema], promote_options="permissive")
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise UserError(f"{dataset}: rows do not match the stored column types: {exc}") from None
        return self._write(dataset, table, sweep_id)

    # --- reading -----------------------------------------------------------------------------

    def read_results(
        self,
        sweep_id: str | None = None,
        *,
        filters: object = None,
        columns: Sequence[str] | None = None,
        include_failed: bool = False,
    ) -> pa.Table:
        """Result rows, one per (sweep_id, config_key), sorted by key.

        Per key the newest "ok" row, or the newest failed row if the key has no "ok" row.
        `filters` (a pyarrow Expression or pyarrow.parquet-style DNF tuples) apply after that
        row is chosen; failed rows are dropped unless `include_failed`.
        """
        expression = as_expression(filters)
        spec = DATASETS["results"]
        if expression is None and not include_failed:  # one scan: each key's winner, then the ok ones
            wanted = list(spec.schema().names if columns is None else columns)  # type: ignore[union-attr]
            table = self._read_newest(spec, sweep_id, columns=list(dict.fromkeys([*wanted, "status"])))
            return table.filter(pc.equal(table["status"], ResultStatus.OK)).select(wanted)
        if not include_failed:
            ok = pc.field("status") == ResultStatus.OK
            expression = ok if expression is None else ok & expression
        return self._read_newest(spec, sweep_id, columns=columns, filter=expression)

    def read(
        self,
        dataset: str,
        filters: object = None,
        *,
        sweep_id: str | None = None,
        columns: Sequence[str] | None = None,
        key_columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """Rows of any dataset (`columns` of them; default all), newest per key (the dataset's, or
        `key_columns`), sorted by key; `filters` apply after deduplication."""
        return self._read_newest(
            self.dataset(dataset), sweep_id, key_columns=key_columns, columns=columns, filter=as_expression(filters)
        )

    # --- maintenance -------------------------------------------------------------------------

    def compact(self, dataset: str = "results", sweep_id: str | None = None) -> tuple[int, int]:
        """Merge each partition's files (or only those of `sweep_id`'s partition) into one,
        dropping superseded rows; (files before, after).

        Query results do not change, no "ok" row is dropped for a failed one, and unreadable or
        foreign files, and partitions a link leads to outside the store, are left alone (with a
        warning); see `xialpha.storage.compaction`.
        """
        partition = None if sweep_id is None else f"{PARTITION_PREFIX}{validate.check_sweep_id(sweep_id)}"
        before, after, problems = compact_partitions(self.location, self.dataset(dataset), partition)
        self._warn(problems)
        return before, after

    def result_partitions(self) -> list[str] | None:
        """The sweep ids of the results' partitions holding data files, sorted (from one listing,
        no file opened); None when some data file lies outside a valid `sweep_id=<id>` directory."""
        root = self.location.path("results")
        sweep_ids = set()
        for file in self.location.data_files(root):
            directory = posixpath.basename(posixpath.dirname(file.path))
            sweep_id = directory.removeprefix(PARTITION_PREFIX)
            if posixpath.dirname(posixpath.dirname(file.path)) != root.rstrip("/") or sweep_id == directory:
                return None
            if not validate.valid_sweep_id(sweep_id):
                return None
            sweep_ids.add(sweep_id)
        return sorted(sweep_ids)

    def sweep_summary(self, sweep_id: str) -> SweepCounts | None:
        """The stored summary of `sweep_id`'s results (see `xialpha.storage.summary`), or None when
        there is none, it is stale (its partition's files changed since it was written), or it
        is damaged (a file of it rewritten in place, values not of their types and ranges: then
        with one `StoreWarning` naming it)."""
        directory = self._partition("results", sweep_id)
        path = posixpath.join(directory, SUMMARY_NAME)
        try:
            content = read_json(self.location, path, max_bytes=SUMMARY_BYTES, max_depth=SUMMARY_DEPTH)
            recorded = recorded_files(content)
            listed = self.location.data_files(directory)
            if [file.name for file in listed] != [stamp.name for stamp in recorded]:
                raise StaleSummary("other files than it was computed from")
            ranges = [_unchanged(self.location, file, then) for file, then in zip(listed, recorded, strict=True)]
            return counts_of(content, sweep_id, recorded, _spanning(ranges))  # type: ignore[arg-type]  # a dict: checked
        except (FileNotFoundError, StaleSummary):  # absent, or of other files (a write, a compaction since)
            return None
        except (DamagedJson, DamagedSummary) as exc:
            self._warn_summary(path, str(exc))
            return None
        except OSError as exc:
            if out_of_files(exc):  # the machine's limit, not the summary's fault
                raise
            self._warn_summary(path, f"cannot be read ({exc.strerror or exc})")
            return None

    def write_sweep_summary(self, sweep_id: str) -> SweepCounts:
        """Compute `sweep_id`'s summary from its result rows and store it beside them; the summary.

        The summary stamps the files its rows were read from (one version: `_snapshot`), so a
        file written or replaced meanwhile makes it stale. Nothing is written into a partition a
        link leads to from outside the store, nor for a partition without rows, nor when the
        summary would be over SUMMARY_BYTES (reads then read the rows).
        """
        directory = self._partition("results", sweep_id)
        path = posixpath.join(directory, SUMMARY_NAME)
        spec = DATASETS["results"]

        def summary(files: FileSet) -> tuple[SweepCounts, bytes]:
            stamps = [stamp(self.location, file) for file in files.listed]
            if files.schema is None or not files.fragments:
                return summarise(sweep_id, spec.schema().empty_table().select(SUMMARY_COLUMNS)), b""  # type: ignore[union-attr]
            table = read_newest(files, spec.key_columns, status_column=spec.status_column, columns=SUMMARY_COLUMNS)
            counts = summarise(sweep_id, table)
            return counts, summary_text(counts, stamps)

        counts, text = self._snapshot(spec, directory, summary)
        writable = not self.location.outside(directory) and not self.location.outside(path)
        if counts.stored_keys and len(text) <= SUMMARY_BYTES and writable:
            self.location.write_bytes(path, text)
        return counts

    def _warn_summary(self, path: str, reason: str) -> None:
        """One StoreWarning (per store object) that the summary at `path` is not used, and why."""
        if path in self._warned:
            return
        self._warned.add(path)
        warnings.warn(
            f"store {self.uri}: ignored {self.relative(path)}: {reason}; the rows are read instead",
            StoreWarning,
            stacklevel=4,
        )

    def check(self) -> list[Problem]:
        """The data files of every dataset that reads skip: unreadable or foreign (see `files`).

        Every file is read whole, so this finds corrupt data pages too. A symbolic link leading
        outside the store, whose files reads skip, is a problem of kind "outside" (the link's path).
        """
        problems = self._problems(read_data=True)
        reason = "a symbolic link leads outside the store from it: nothing there is read, moved or rewritten"
        return problems + [Problem(self.location.path(link), "outside", reason) for link in self.location.links_outside]

    def quarantine(self, problems: Iterable[Problem]) -> list[str]:
        """Move the files of `problems` under `_quarantine/` (same relative path); return the new paths.

        Nothing under `_quarantine/` is read, compacted or deleted by xialpha. A file that a link
        leads to outside the store (`outside`) is left where it is.
        """
        moved = []
        for problem in problems:
            if self.outside(problem.path):
                continue
            relative = posixpath.relpath(problem.path, self.location.root)
            target = self.location.path(QUARANTINE, relative)
            if self.location.exists(target):
                stem, extension = os.path.splitext(target)
                target = f"{stem}-{uuid.uuid4().hex[:8]}{extension}"
            self.location.move(problem.path, target)
            moved.append(target)
        return moved

    def outside(self, path: str) -> bool:
        """True when a link leads from `path` in the store to outside it (see `Location.outside`)."""
        return self.location.outside(path)

    def relative(self, path: str) -> str:
        """`path` relative to the store root, as messages name files."""
        return posixpath.relpath(path, self.location.root)

    # --- internals ---------------------------------------------------------------------------

    def _partition(self, dataset: str, sweep_id: str) -> str:
        """The directory of `sweep_id`'s partition of `dataset`."""
        return self.location.path(dataset, f"{PARTITION_PREFIX}{validate.check_sweep_id(sweep_id)}")

    def dataset(self, name: str) -> Dataset:
        """The definition of dataset `name`; UserError when there is none."""
        if name not in DATASETS:
            raise UserError(f"dataset: {one_of(name, DATASETS)}")
        return DATASETS[name]

    def _read_newest(
        self,
        spec: Dataset,
        sweep_id: str | None,
        *,
        key_columns: Sequence[str] | None = None,
        columns: Sequence[str] | None = None,
        filter: pc.Expression | None = None,
    ) -> pa.Table:
        """`reading.read_newest` over one version of one dataset, or of one sweep's partition of it."""
        directory = self.location.path(spec.name)
        if sweep_id is not None:
            directory = f"{directory}/sweep_id={validate.check_sweep_id(sweep_id)}"

        def read(files: FileSet) -> pa.Table:
            if files.schema is None:
                return pa.table({})  # a row-typed dataset nothing was appended to yet has no columns
            return read_newest(
                files, key_columns or spec.key_columns, status_column=spec.status_column, columns=columns, filter=filter
            )

        return self._snapshot(spec, directory, read)

    def _snapshot(self, spec: Dataset, directory: str, read: Callable[[FileSet], T]) -> T:
        """`read` over the usable files of `spec` under `directory` as of one version of the
        store (see the module): retried from a new listing while compactions replace files under
        it; the skipped files it met are then warned about. UserError if the files changed under
        every one of SNAPSHOT_TRIES tries."""
        wait = SNAPSHOT_WAIT_S
        for _ in range(SNAPSHOT_TRIES):
            files = self._files(spec, directory)
            try:
                result = read(files)
            except FileNotFoundError:  # a listed file vanished before it was opened
                if not vanished(self.location, directory, files.names):
                    raise
            else:
                if not self._replaced(directory, files):
                    self._warn(files.problems)  # including files whose data failed to decode
                    return result
            time.sleep(wait)
            wait = min(2 * wait, 1.0)
        raise UserError(
            f"store {self.uri}: {self.relative(directory)} was compacted under each of {SNAPSHOT_TRIES} reads of it "
            "in a row (a `store compact` or a sweep's end looping beside this command?); run it again"
        )

    def _replaced(self, directory: str, files: FileSet) -> bool:
        """True when a compaction replaced files under a read of `files`: one it could not read
        has vanished, or a compaction's output appeared (the listing may have missed the files
        it merged, deleted while it listed). One listing."""
        listed = {file.path for file in self.location.data_files(directory)}
        failed = {problem.path for problem in files.problems}
        return bool(failed - listed) or any(
            is_merged_name(posixpath.basename(path)) for path in listed - set(files.names)
        )

    def _files(self, spec: Dataset, directory: str) -> FileSet:
        """The usable files of `spec` under `directory`. Their footers are inspected again only
        when the listing changed: a store never rewrites a file, so the same listing has the same
        files (a write, compaction or quarantine changes the listing and so inspects again). The
        newest listing of each directory is kept, so a process reading for long (an auto sweep's
        rounds beside compactions) keeps one inspection per directory."""
        listed = self.location.data_files(directory)
        paths = tuple(file.path for file in listed)
        kept = self._inspected.get((spec.name, directory))
        if kept is None or kept[0] != paths:
            kept = self._inspected[(spec.name, directory)] = (paths, inspect(self.location, spec, listed))
        inspected = kept[1]
        return replace(inspected, fragments=list(inspected.fragments), problems=list(inspected.problems))

    def _problems(self, *, read_data: bool) -> list[Problem]:
        """The skipped files of every dataset, but those a compaction replaced while they were read."""
        problems = []
        for spec in DATASETS.values():
            root = self.location.path(spec.name)
            found = inspect(self.location, spec, self.location.data_files(root), read_data=read_data).problems
            gone = vanished(self.location, root, [problem.path for problem in found])
            problems += [problem for problem in found if problem.path not in gone]
        return problems

    def _warn(self, problems: list[Problem]) -> None:
        """One StoreWarning naming the skipped files not named before by this store object.

        The first time a read meets such a file, the footers of the whole store are checked,
        so that one warning names every bad file (stores without one never pay for that).
        """
        if any(p.path not in self._warned for p in problems) and not self._warned:
            problems = [*problems, *self._problems(read_data=False)]
        new = list({p.path: p for p in problems if p.path not in self._warned}.values())
        if not new:
            return
        self._warned.update(p.path for p in new)
        listed = "; ".join(f"{self.relative(p.path)} ({p.kind}: {p.reason})" for p in new)
        warnings.warn(
            f"store {self.uri}: skipped {len(new)} unreadable or foreign file(s): {listed}; "
            f"`xialpha store check {self.uri} --quarantine` moves them aside",
            StoreWarning,
            stacklevel=3,
        )

    def _write(self, dataset: str, table: pa.Table, sweep_id: str | None) -> str:
        """Write `table` as the next file of `dataset` (in its sweep's partition); return its path.

        The write sequence counts per partition for datasets keyed by sweep (results, examples:
        their keys never span partitions), else over the whole dataset.
        """
        root = self.location.path(dataset)
        directory = root if sweep_id is None else f"{root}/sweep_id={sweep_id}"
        scope = directory if "sweep_id" in self.dataset(dataset).key_columns else root
        outside = self.location.existing_ancestor(self.location.root) if self._absent else None
        self.create_if_absent()
        try:
            return self.location.write_table(directory, table, new_file_name(self.location.next_sequence(scope)))
        except BaseException:
            if outside is not None:  # a store whose first write failed is not left behind, not even its marker
                self.location.delete(self.location.path(MARKER))
                self.location.prune(self.location.root, outside)
                self._absent = True
            raise

    def create_if_absent(self) -> None:
        """Create the store (its directory and marker) if it is absent, before a first write."""
        if self._absent:
            create_marker(self.location)
            self._absent = False


def _unchanged(location: Location, file: DataFile, then: FileStamp) -> dict[str, tuple[object, object]]:
    """The ranges of the summarised columns in data `file` (see `summary.RANGED`); DamagedSummary
    unless it is as a summary stamped it (`then`): its size (from the listing), then its bytes."""
    if file.size is not None and file.size != then.size:
        raise DamagedSummary(f"{file.name} is {file.size:,} bytes, not the {then.size:,} it was summarised at")
    now, ranges = stamp_and_ranges(location, file, RANGED)
    if now != then:
        raise DamagedSummary(f"{file.name} changed since it was summarised (its bytes differ)")
    return ranges


def _spanning(ranges: Sequence[Mapping[str, tuple]]) -> dict[str, tuple]:
    """Per column, the range spanning those of every file (a column some file has no range of is left out)."""
    names = set.intersection(*(set(each) for each in ranges)) if ranges else set()
    return {name: (min(each[name][0] for each in ranges), max(each[name][1] for each in ranges)) for name in names}


def _packed(row: Mapping, index: int) -> dict:
    """The row with a boolean `bits` vector packed into bytes and `n` set from its length."""
    bits = row.get("bits") if isinstance(row, Mapping) else None
    if not isinstance(bits, np.ndarray):
        return dict(row)
    if row.get("n") is not None and row["n"] != len(bits):
        raise UserError(f"examples row {index}: n={row['n']} but bits has {len(bits)} indicators")
    return {**row, "bits": pack_bits(bits), "n": len(bits)}
