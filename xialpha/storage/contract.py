"""The contract of a result store: `StoreQueries`, its named queries with their Args, Returns and
Raises (as Optuna's `BaseStorage` documents its own), and `StoreFiles`, the upkeep of its files,
which `StoreQueries` includes. `xialpha.storage.store.ResultStore` answers it; callers type their
store as `StoreQueries`, so a backend answering it serves every command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from xialpha.storage.claims import Claims
from xialpha.storage.files import Problem
from xialpha.storage.rows import CertificationRow, DriftRow, ExampleRow, FailedRow, ResultRow, RunRow
from xialpha.storage.selection_rows import SelectionRow
from xialpha.storage.summary import SweepCounts

if TYPE_CHECKING:
    import pandas as pd  # imported by the queries that give DataFrames: `store ls` does without


class StoreFiles(Protocol):
    """The upkeep of a store's files: finding the data files that reads skip, moving them aside,
    and naming paths as messages show them (`xialpha store check`, and a command that must not
    write into a local store). A backend without files answers with none: `check` finds nothing.

    Paths are full paths as the store's filesystem names them (what `Problem.path` holds).
    """

    quarantine_directory: str
    """The folder, relative to the store's root, that `quarantine` moves files into; no read
    looks there."""

    def check(self) -> list[Problem]:
        """Find the data files of every dataset that reads skip.

        Every file is read whole, so corrupt data pages are found too. Nothing is changed.

        Returns:
            One `Problem` per skipped file: its path, its kind ("unreadable": truncated, not
            Parquet, corrupt; "foreign": another schema, another sweep's rows) and why, in one
            line; [] when every file is read.

        Raises:
            UserError: A file the store would open is not a regular file (`NotRegularFile`).
        """
        ...

    def quarantine(self, problems: Iterable[Problem]) -> list[str]:
        """Move the files of `problems` under `quarantine_directory`, at the same path below it
        (a name taken there gets a suffix), so that reads no longer skip them with a warning.
        Nothing there is read, compacted or deleted by xialpha.

        Args:
            problems: What `check` found. A file reached through a link that leads outside the
                store is not moved (`outside`); the link is left for the user to remove.

        Returns:
            The new paths of the files moved, in the order of `problems`.

        Raises:
            UserError: A file could not be moved (named with both paths).
        """
        ...

    def outside(self, path: str) -> bool:
        """Whether a link leads from `path` (in the store) to outside the store.

        Args:
            path: A path in the store, as `check` gives it.

        Returns:
            True when `path` resolves through a symbolic link to a place outside the store's
            root (local stores only: other filesystems have no links). Nothing that moves,
            rewrites or deletes files touches such a path.
        """
        ...

    def relative(self, path: str) -> str:
        """Name `path` as messages name a store's files.

        Args:
            path: A path in the store.

        Returns:
            `path` relative to the store's root (credentials never shown).
        """
        ...

    def local_directory(self) -> str | None:
        """The store's directory on this machine: what a command must not write its output into
        (a report page beside the data it shows would become part of the store).

        Returns:
            The directory's path, or None for a store elsewhere (an object store, memory://).
        """
        ...


class StoreQueries(StoreFiles, Protocol):
    """The contract of a result store: its named queries, what each takes and gives and when it
    fails, plus the upkeep of its files (`StoreFiles`). `ResultStore` answers it;
    `xialpha.storage.opening.open_store` opens one.

    Rows go in typed (`xialpha.storage.rows`) and come out as DataFrames in the schema's columns
    (`xialpha.storage.schema`), as dicts of Python values (`*_records`, read without pandas) or as
    typed rows (`recorded_runs`, `sweep_counts`). A query of a dataset nothing was written to
    gives an empty DataFrame or list. Each write is one new file, written whole or not at all:
    a failed write leaves nothing behind and every file stored before it is kept. Each read is of
    one version of the store while another process writes or compacts beside it, and skips
    unreadable or foreign files with one `StoreWarning` naming them (`check` lists them).

    Raised by every method that touches the store, besides those each names: UserError naming
    the store when it cannot be reached (an object store that does not answer within its time
    limit) and when a file it would open is not a regular file (`NotRegularFile`); UserError when
    a read finds the files it reads replaced by compactions on each of its tries in a row.
    Writes raise StoreWriteError when the filesystem fails (disk full, I/O error, permission
    lost) and UserError for a path too long to write.
    """

    uri: str
    """The store's location as given, without credentials: what messages show."""

    claims: Claims
    """The store's exclusive claims of test sets, with their heartbeats (`Claims`)."""

    def write_results(self, rows: Sequence[ResultRow | FailedRow]) -> str:
        """Store the result rows of one sweep, ok or failed, as one new file.

        A config key written again is answered by its newest row, except that a failed row never
        hides an "ok" one (`read_results_df`). `created_at`, `schema_version` (and for a failed
        row without them, `worker` and `xialpha_version`) are filled in here.

        Args:
            rows: One row per config key, all of one sweep.

        Returns:
            The path of the new file.

        Raises:
            UserError: A row is invalid (named by its index and column: a value out of its
                type, a required value missing, a key twice, rows of several sweeps, a failed
                row without its error message, an invalid `sweep_id`), or there are no rows.
                Nothing is written.
        """
        ...

    def write_examples(self, rows: Sequence[ExampleRow]) -> str:
        """Store the per-example rows of one sweep (which test examples each estimate counts as
        an error) as one new file.

        Args:
            rows: One row per (config key, estimator), all of one sweep.

        Returns:
            The path of the new file.

        Raises:
            UserError: A row is invalid (its bits do not hold exactly n examples, a key twice,
                rows of several sweeps), or there are no rows. Nothing is written.
        """
        ...

    def read_results_df(
        self, sweep_id: str | None = None, *, columns: Sequence[str] | None = None, include_failed: bool = False
    ) -> pd.DataFrame:
        """Read the result rows, one per (sweep_id, config_key): its newest "ok" row.

        Args:
            sweep_id: Only this sweep's rows; None for every sweep's.
            columns: The result columns to read (`ResultColumn`); None for all.
            include_failed: Also a key's newest failed row where it has no "ok" one.

        Returns:
            A DataFrame of the rows in the results' columns; empty when none is stored.

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def done_keys(self, sweep_id: str) -> set[str]:
        """The config keys of `sweep_id` with an "ok" row: what a resumed sweep does not fit again
        (a failed key is not done, so a rerun retries it).

        Args:
            sweep_id: The sweep.

        Returns:
            The keys; empty when the sweep has none.

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def complete_keys(self, sweep_id: str) -> set[str]:
        """The done keys (`done_keys`) of `sweep_id` whose per-example vectors are stored too: what a
        resumed sweep skips. A sweep stores a batch's vectors before its results, so a done key
        without vectors is one an older xialpha (results first) left when killed between the two
        writes; the resume recomputes it.

        Args:
            sweep_id: The sweep.

        Returns:
            The keys; empty when the sweep has none.

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def stored_keys(self, sweep_id: str) -> set[str]:
        """The config keys of every stored row of `sweep_id`, ok or failed.

        Args:
            sweep_id: The sweep.

        Returns:
            The keys; empty when the sweep has none.

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def read_examples(
        self, config_keys: Iterable[str], estimator: str = "xa", *, sweep_id: str | None = None
    ) -> dict[str, np.ndarray]:
        """Read which test examples an estimator counted as errors, per config key.

        Args:
            config_keys: The keys wanted.
            estimator: The estimator whose vectors are read (the registry's id, "xa" by default).
            sweep_id: The sweep the keys were stored by. Without it, for a key stored by several
                sweeps, which sweep's vector is given is not defined.

        Returns:
            {config_key: boolean vector (n,), True where the example counts as an error} for the
            keys with a stored vector; the others are absent.

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def sweeps(self) -> pd.DataFrame:
        """Summarise every sweep with result rows.

        Returns:
            One row per sweep, sorted by sweep_id: rows_ok, rows_failed, categories, configs
            (distinct preprocessing x kernel x C x j), first_created_at and last_created_at
            (UTC): `sweep_counts` as a DataFrame.
        """
        ...

    def sweep_counts(self) -> list[SweepCounts]:
        """Count the rows of every sweep with result rows (ok or failed), read without pandas.

        A sweep's stored summary answers for it while its files are the ones it was computed
        from (`sweep_summary`); other sweeps' rows are read.

        Returns:
            One `SweepCounts` per sweep, in no particular order.
        """
        ...

    def sweep_summary(self, sweep_id: str) -> SweepCounts | None:
        """The summary of `sweep_id`'s results stored when the sweep ended or was compacted.

        Args:
            sweep_id: The sweep.

        Returns:
            The stored summary while the sweep's files are those it was computed from; None
            when none is stored, it is stale (the files changed since), or it is damaged (then
            with one `StoreWarning` naming it).

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def finish_sweep(self, sweep_id: str) -> SweepCounts:
        """End a sweep: compact its partitions of the results, the examples and the runs into one
        file each (no row lost; an interrupted compaction changes nothing), then store the
        summary of its results.

        Args:
            sweep_id: The sweep that ended.

        Returns:
            The summary stored.

        Raises:
            UserError: `sweep_id` is not a valid sweep id.
        """
        ...

    def sweep_ids(self) -> list[str]:
        """The ids of the sweeps with result rows (ok or failed): those `sweeps` lists, from their
        stored summaries where every sweep has one, else from one read of the key columns.

        Returns:
            The ids, sorted.
        """
        ...

    def add_run(self, row: RunRow) -> None:
        """Record one run of a sweep: its spec, data and command (and once more, with
        finished_at, when it ends).

        Args:
            row: The run.

        Raises:
            UserError: The row is invalid (named by its column). Nothing is written.
        """
        ...

    def runs(self, sweep_id: str | None = None) -> pd.DataFrame:
        """Read the recorded runs.

        Args:
            sweep_id: Only this sweep's runs; None for every sweep's.

        Returns:
            A DataFrame of the runs in the runs' columns, sorted by run_id.
        """
        ...

    def run_records(self, sweep_id: str | None = None) -> list[dict]:
        """Read the recorded runs without pandas.

        Args:
            sweep_id: Only this sweep's runs; None for every sweep's.

        Returns:
            `runs` as dicts of Python values.
        """
        ...

    def recorded_runs(self, sweep_id: str) -> list[RunRow]:
        """Read the recorded runs of one sweep as typed rows.

        Args:
            sweep_id: The sweep.

        Returns:
            Its runs in `run_records` order; what a run's writer did not record is None.
        """
        ...

    def newest_run(self, sweep_id: str) -> RunRow | None:
        """The newest recorded run of one sweep, by created_at (a run without it counts as the
        newest; of equal times, the one read later).

        Args:
            sweep_id: The sweep.

        Returns:
            The run, or None when none is recorded.
        """
        ...

    def sweep_ended_at(self, sweep_id: str) -> pd.Timestamp | None:
        """When the newest recorded run of a sweep ended.

        Args:
            sweep_id: The sweep.

        Returns:
            The time (UTC); None while the run goes on, before a first run is recorded, and for
            runs recorded by versions of xialpha that did not say.
        """
        ...

    def add_selection(self, rows: Sequence[SelectionRow]) -> None:
        """Store a selection in one write, so that a stored selection is complete.

        Args:
            rows: Its rows, one per category (`SelectionColumn`).

        Raises:
            UserError: A row is invalid (named by its index and column), or there are no rows.
                Nothing is written.
        """
        ...

    def selections(self, *, sweep_id: str | None = None, selection_id: str | None = None) -> pd.DataFrame:
        """Read the stored selections in this version's columns (rows stored by earlier versions
        are brought to them).

        Args:
            sweep_id: Only the selections made from this sweep.
            selection_id: Only this selection.

        Returns:
            A DataFrame of their rows, sorted by key; empty when none is stored.
        """
        ...

    def selection_records(self) -> list[dict]:
        """Read every stored selection without pandas, as it was stored.

        Returns:
            Their rows as dicts of Python values, sorted by key (rows of earlier versions in
            their own columns: `selections` gives this version's).
        """
        ...

    def add_certification(self, rows: Sequence[CertificationRow]) -> None:
        """Store a certification in one write: its rows per category, micro and macro.

        Args:
            rows: The rows (`CertificationColumn`).

        Raises:
            UserError: A row is invalid (named by its index and column), or there are no rows.
                Nothing is written.
        """
        ...

    def certifications(self, *, selection_id: str | None = None, test_fingerprint: str | None = None) -> pd.DataFrame:
        """Read the stored certification rows.

        Args:
            selection_id: Only the certifications of this selection.
            test_fingerprint: Only the certifications on the test set of this fingerprint.

        Returns:
            A DataFrame of the rows; empty when none is stored.
        """
        ...

    def certification_records(self) -> list[dict]:
        """Read every stored certification row without pandas.

        Returns:
            The rows as dicts of Python values.
        """
        ...

    def add_drift_check(self, rows: Sequence[DriftRow]) -> None:
        """Store a drift check in one write, so that a stored check is complete.

        Args:
            rows: Its rows (`DriftColumn`).

        Raises:
            UserError: A row is invalid (named by its index and column), or there are no rows.
                Nothing is written.
        """
        ...

    def drift_checks(self) -> pd.DataFrame:
        """Read every stored drift row.

        Returns:
            A DataFrame of the rows, sorted by check_id; empty when none is stored.
        """
        ...

    def drift_records(self) -> list[dict]:
        """Read every stored drift row without pandas.

        Returns:
            `drift_checks` as dicts of Python values.
        """
        ...

    def drift_check(self, drift_id: str, check_key: str) -> list[dict]:
        """Read one stored drift check: what a resumed drift run does not compute again.

        Args:
            drift_id: The drift run's id (its partition, as a sweep id is).
            check_key: The check's key within it.

        Returns:
            Its rows as dicts of Python values, as they were stored; [] when it is not stored.

        Raises:
            UserError: `drift_id` is not a valid sweep id.
        """
        ...

    def compact(self, dataset: str = "results") -> tuple[int, int]:
        """Merge each partition's files of a dataset into one file, dropping superseded rows.

        Query answers do not change, and no "ok" row is dropped for a failed one. The merged file
        is written before what it merged is deleted, so an interrupted compaction changes nothing
        and reads beside it stay on one version. Unreadable or foreign files, and partitions a
        link leads to outside the store, are left alone (with a warning). Compacting the results
        stores every sweep's summary anew (`finish_sweep`).

        Args:
            dataset: The dataset's name (`DATASETS`): "results", "examples", "selections",
                "certifications", "drift" or "sweeps".

        Returns:
            (files before, files after).

        Raises:
            UserError: `dataset` names no dataset.
        """
        ...
