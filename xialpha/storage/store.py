"""`ResultStore`: the store's named queries, answered with pandas DataFrames or plain records.

What xialpha writes and reads, by name (`StoreQueries` lists them with their types): the result
rows of a sweep (`write_examples`, then `write_results`: typed rows of `xialpha.storage.rows`;
`read_results_df`, `done_keys`, `complete_keys`, `read_examples`), its runs (`add_run`, `runs`,
`sweep_ended_at`), saved selections, certifications and drift checks (`add_*`, `selections`,
`certifications`, `drift_checks`, `drift_check`), the summary of every sweep (`sweeps`) and
`compact`; the upkeep of its files (`check`, `quarantine`, paths) is a protocol of its own,
`StoreFiles`, which `StoreQueries` includes. Each method's Args, Returns and Raises are documented
on the protocols in `xialpha.storage.contract`, as Optuna's `BaseStorage` documents its own.
Callers name no dataset, filter or column type: rows go in typed and come out as DataFrames, or
as lists of dicts of Python values (`*_records`, `sweep_counts`: what `xialpha store ls` lists,
read without importing pandas); a query on a dataset nothing was written to yet gives an empty
DataFrame (an empty list).

Callers open a store with `xialpha.storage.opening.open_store` and see `StoreQueries` only.
Underneath, as in Optuna's storages, the store composes its layers rather than being them: the
Arrow-level Parquet datasets (`datasets`: `xialpha.storage.datasets.Datasets`) and the exclusive
claims with their heartbeats (`claims`: `xialpha.storage.claims.FileClaims`, answering the
`Claims` protocol).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from xialpha.storage.claims import FileClaims
from xialpha.storage.contract import StoreQueries
from xialpha.storage.datasets import QUARANTINE, Datasets
from xialpha.storage.files import Problem
from xialpha.storage.rows import (
    CertificationRow,
    DriftRow,
    ExampleRow,
    FailedRow,
    ResultRow,
    RunRow,
    certification_columns,
    drift_columns,
    example_columns,
    optional_value,
    result_columns,
    run_columns,
    unpack_bits,
)
from xialpha.storage.selection_rows import SelectionRow, selection_columns, stored_selections
from xialpha.storage.summary import SweepCounts, counts_frame, summarise
from xialpha.storage.validate import typed_table

if TYPE_CHECKING:
    import pandas as pd  # imported by the queries that give DataFrames: `store ls` does without


class ResultStore(StoreQueries):
    """A store at a local directory or pyarrow/fsspec URI (s3://bucket/prefix, memory://name, ...),
    opened as `xialpha.storage.opening.open_store` says (its defaults: to create and write).
    """

    claims: FileClaims
    quarantine_directory = QUARANTINE

    def __init__(self, uri: str, *, create: bool = True, writable: bool = True):
        self.datasets = Datasets(uri, create=create, writable=writable)
        self.claims = FileClaims(self.datasets)
        self.uri = self.datasets.uri  # without credentials

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"

    # --- results of a sweep ------------------------------------------------------------------

    def write_results(self, rows: Sequence[ResultRow | FailedRow]) -> str:
        """Store the result rows of one sweep as one new file; its path. `created_at`,
        `schema_version` (and for a failed row without them, `worker` and `xialpha_version`) are
        filled here. Nothing is written if any row is invalid."""
        return self.datasets.write_results([result_columns(row) for row in rows])

    def write_examples(self, rows: Sequence[ExampleRow]) -> str:
        """Store the example rows of one sweep as one new file; its path."""
        return self.datasets.write_examples([example_columns(row) for row in rows])

    def read_results_df(
        self, sweep_id: str | None = None, *, columns: Sequence[str] | None = None, include_failed: bool = False
    ) -> pd.DataFrame:
        """Result rows (`columns` of them; default all) as a DataFrame, one per (sweep_id,
        config_key): its newest "ok" row, or with `include_failed` its newest failed row where it
        has no "ok" one (see `Datasets.read_results`)."""
        return self.datasets.read_results(sweep_id, columns=columns, include_failed=include_failed).to_pandas()

    def done_keys(self, sweep_id: str) -> set[str]:
        """Config keys of `sweep_id` whose newest row has status "ok".

        Failed configs do not count as done, so rerunning a sweep retries them.
        """
        table = self.datasets.read_results(sweep_id, columns=["config_key"])
        return set(table["config_key"].to_pylist())

    def complete_keys(self, sweep_id: str) -> set[str]:
        """The done keys (`done_keys`) of `sweep_id` whose per-example vectors are stored too: what
        a resumed sweep skips. A sweep stores a batch's vectors before its results, so a done key
        without vectors is one that a sweep of an older xialpha (results first) left when killed
        between the two writes; the resume recomputes it (see `xialpha.storage.datasets`)."""
        vectors = self.datasets.read("examples", sweep_id=sweep_id, key_columns=("config_key",), columns=["config_key"])
        return self.done_keys(sweep_id) & set(vectors["config_key"].to_pylist() if vectors.num_rows else [])

    def stored_keys(self, sweep_id: str) -> set[str]:
        """Config keys of every stored row of `sweep_id`, ok or failed."""
        table = self.datasets.read_results(sweep_id, columns=["config_key"], include_failed=True)
        return set(table["config_key"].to_pylist())

    def read_examples(
        self, config_keys: Iterable[str], estimator: str = "xa", *, sweep_id: str | None = None
    ) -> dict[str, np.ndarray]:
        """{config_key: boolean vector "counted as error" of length n} for the stored keys.

        Keys without a stored vector are absent from the result. Where a key was stored in
        several sweeps, pass `sweep_id`: without it, which sweep's vector is returned is not
        defined (write order is kept per sweep).
        """
        keys = list(dict.fromkeys(config_keys))
        if not keys:
            return {}
        wanted = pc.field("config_key").isin(keys) & (pc.field("estimator") == estimator)
        table = self.datasets.read(
            "examples",
            wanted,
            sweep_id=sweep_id,
            key_columns=("config_key", "estimator"),
            columns=["config_key", "n", "bits"],
        )
        return {key: unpack_bits(bits, n) for key, n, bits in zip(*(table[c].to_pylist() for c in table.column_names))}

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep with result rows: rows_ok, rows_failed, categories, configs (distinct
        preprocessing x kernel x C x j), first_created_at, last_created_at (UTC); `sweep_counts`
        as a DataFrame, sorted by sweep_id."""
        return counts_frame(self.sweep_counts())

    def sweep_counts(self) -> list[SweepCounts]:
        """The counts of every sweep with result rows (ok or failed), in no particular order.

        A sweep's stored summary answers for it while its files are those it was computed from
        (`sweep_summary`); other sweeps' rows are read whole, every column, as `read_results_df`
        reads them: a file whose data pages a selection could not read is skipped here too, with the
        same warning, never counted from the few columns the counts need."""
        partitions = self.datasets.result_partitions()
        if partitions is None:  # rows outside the sweeps' partitions: read them all
            table = self.datasets.read_results(include_failed=True)
            ids = sorted(str(value) for value in pc.unique(table["sweep_id"]).to_pylist())
            summaries = [summarise(i, table.filter(pc.equal(table["sweep_id"], i))) for i in ids]
        else:
            summaries = [self.sweep_summary(sweep_id) or self._summarise(sweep_id) for sweep_id in partitions]
        return [counts for counts in summaries if counts.stored_keys]

    def sweep_summary(self, sweep_id: str) -> SweepCounts | None:
        """The summary of `sweep_id`'s results stored when its sweep ended or was compacted
        (`xialpha.storage.summary`), while its files are those it was computed from; else None."""
        return self.datasets.sweep_summary(sweep_id)

    def _summarise(self, sweep_id: str) -> SweepCounts:
        """The summary of `sweep_id`'s results computed from its rows, read whole (`sweep_counts`)."""
        return summarise(sweep_id, self.datasets.read_results(sweep_id, include_failed=True))

    def finish_sweep(self, sweep_id: str) -> SweepCounts:
        """What a sweep does when it ends: compact its partitions of the results, the examples and
        the runs into one file each (`compact`: no row lost, an interrupted compaction changes
        nothing), then store the summary of its results; the summary."""
        for dataset in ("results", "examples", "sweeps"):
            self.datasets.compact(dataset, sweep_id)
        return self.datasets.write_sweep_summary(sweep_id)

    def sweep_ids(self) -> list[str]:
        """The ids of the sweeps with result rows (ok or failed), sorted: those of `sweeps`; from
        their stored summaries where every sweep has one (`sweep_summary`), else from one read of
        the key columns."""
        partitions = self.datasets.result_partitions()
        summaries = [self.sweep_summary(sweep_id) for sweep_id in partitions or []]
        if partitions is not None and all(summaries):
            return [counts.sweep_id for counts in summaries if counts is not None and counts.stored_keys]
        table = self.datasets.read_results(columns=["sweep_id"], include_failed=True)
        return sorted(str(value) for value in pc.unique(table["sweep_id"]).to_pylist()) if table.num_rows else []

    # --- runs, selections, certifications, drift checks ---------------------------------------

    def add_run(self, row: RunRow) -> None:
        """Record one run of a sweep (its spec, data, command; again with finished_at when it ends)."""
        self.datasets.append("sweeps", typed_table("sweeps", [run_columns(row)]))

    def runs(self, sweep_id: str | None = None) -> pd.DataFrame:
        """The recorded runs (of `sweep_id`, when given), sorted by run_id."""
        return self._table("sweeps", sweep_id=sweep_id).to_pandas()

    def run_records(self, sweep_id: str | None = None) -> list[dict]:
        """`runs` as dicts of Python values."""
        return self._table("sweeps", sweep_id=sweep_id).to_pylist()

    def recorded_runs(self, sweep_id: str) -> list[RunRow]:
        """The recorded runs of `sweep_id` in `run_records` order; what a run's writer did not record is None."""
        return [
            RunRow(**{name: optional_value(run.get(name)) for name in RunRow.__dataclass_fields__})
            for run in self.run_records(sweep_id)
        ]

    def newest_run(self, sweep_id: str) -> RunRow | None:
        """The newest recorded run of `sweep_id` (by created_at; one without it counts as newest),
        or None when none is recorded."""
        runs = self.recorded_runs(sweep_id)
        if not runs:
            return None
        return runs[max(range(len(runs)), key=lambda i: _recorded_order(runs[i].created_at, i))]

    def sweep_ended_at(self, sweep_id: str) -> pd.Timestamp | None:
        """When the newest recorded run of `sweep_id` ended (UTC); None while it runs, before its
        first run is recorded, and for runs recorded by earlier versions of xialpha, which did not say."""
        import pandas as pd  # here: `xialpha store ls` lists the sweeps without pandas

        runs = self.runs(sweep_id)
        if runs.empty or "finished_at" not in runs.columns:
            return None
        ended = runs.sort_values("created_at", kind="mergesort", na_position="first")["finished_at"].iloc[-1]
        return None if pd.isna(ended) else pd.Timestamp(ended)

    def add_selection(self, rows: Sequence[SelectionRow]) -> None:
        """Store a selection: its rows, one per category (`SELECTION_COLUMNS`), in one write."""
        self.datasets.append("selections", typed_table("selections", [selection_columns(row) for row in rows]))

    def selections(self, *, sweep_id: str | None = None, selection_id: str | None = None) -> pd.DataFrame:
        """The rows of the stored selections (of `sweep_id`, or the one `selection_id`), sorted by
        key, in this version's columns (`stored_selections`)."""
        return stored_selections(self._table("selections", sweep_id=sweep_id, selection_id=selection_id).to_pandas())

    def selection_records(self) -> list[dict]:
        """The rows of every stored selection as dicts of Python values, sorted by key, as they were
        stored (rows of earlier versions in their columns: `selections` gives this version's)."""
        return self._table("selections").to_pylist()

    def add_certification(self, rows: Sequence[CertificationRow]) -> None:
        """Store a certification: its rows per category, micro and macro (`CERTIFICATION_COLUMNS`)."""
        self.datasets.append("certifications", typed_table("certifications", [certification_columns(r) for r in rows]))

    def certifications(self, *, selection_id: str | None = None, test_fingerprint: str | None = None) -> pd.DataFrame:
        """The stored certification rows (of `selection_id`, or on the test set `test_fingerprint`)."""
        return self._table("certifications", selection_id=selection_id, test_fingerprint=test_fingerprint).to_pandas()

    def certification_records(self) -> list[dict]:
        """Every stored certification row as a dict of Python values."""
        return self._table("certifications").to_pylist()

    def add_drift_check(self, rows: Sequence[DriftRow]) -> None:
        """Store a drift check's rows (`DRIFT_COLUMNS`) in one write, so a stored check is complete."""
        self.datasets.append("drift", typed_table("drift", [drift_columns(row) for row in rows]))

    def drift_checks(self) -> pd.DataFrame:
        """Every stored drift row, sorted by check_id."""
        return self._table("drift").to_pandas()

    def drift_records(self) -> list[dict]:
        """`drift_checks` as dicts of Python values."""
        return self._table("drift").to_pylist()

    def drift_check(self, drift_id: str, check_key: str) -> list[dict]:
        """The stored rows of check `check_key` of drift id `drift_id` as dicts of Python values
        (as they were appended), [] when it is not stored."""
        return self.datasets.read("drift", filters=[("check_key", "=", check_key)], sweep_id=drift_id).to_pylist()

    # --- upkeep ------------------------------------------------------------------------------

    def compact(self, dataset: str = "results") -> tuple[int, int]:
        """Merge each partition's files of `dataset` into one (see `Datasets.compact`); (files before,
        after). Compacting the results stores every sweep's summary anew (`finish_sweep`)."""
        files = self.datasets.compact(dataset)
        if dataset == "results":
            for sweep_id in self.datasets.result_partitions() or []:
                self.datasets.write_sweep_summary(sweep_id)
        return files

    def check(self) -> list[Problem]:
        """The data files of every dataset that reads skip: unreadable or foreign (`Datasets.check`)."""
        return self.datasets.check()

    def quarantine(self, problems: Iterable[Problem]) -> list[str]:
        """Move the files of `problems` under `quarantine_directory` (`Datasets.quarantine`); the new paths."""
        return self.datasets.quarantine(problems)

    def outside(self, path: str) -> bool:
        """True when a link leads from `path` in the store to outside it."""
        return self.datasets.outside(path)

    def relative(self, path: str) -> str:
        """`path` relative to the store root, as messages name files."""
        return self.datasets.relative(path)

    def local_directory(self) -> str | None:
        """The store's directory on this machine (what a command must not write its output into),
        None for a store elsewhere (an object store, memory://)."""
        location = self.datasets.location
        return location.root if location.is_local else None

    def _table(self, dataset: str, **equal: str | None) -> pa.Table:
        """Rows of a dataset typed by its rows where each column of `equal` given a value has it."""
        given = [(column, "=", value) for column, value in equal.items() if value is not None]
        return self.datasets.read(dataset, filters=given or None)


def _recorded_order(created_at: datetime.datetime | None, position: int) -> tuple:
    """A run's place in time: by created_at, a run without it last (newest), then by its position
    in the read (of equal times, the later one is newer)."""
    return (created_at is None, created_at or datetime.datetime.min.replace(tzinfo=datetime.UTC), position)
