"""`ResultStore`: the store's named queries, answered with pandas DataFrames or plain records.

What xialpha writes and reads, by name: the result rows of a sweep (`write_results`,
`read_results_df`, `done_keys`, `read_examples`), its runs (`add_run`, `runs`), saved selections,
certifications and drift checks (`add_*`, `selections`, `certifications`, `drift_checks`), and
the summary of every sweep (`sweeps`). Callers name no dataset, filter or column type: rows go in
as dicts (typed here by `xialpha.storage.schema`) and come out as DataFrames (or, for a drift check,
dicts of Python values). The Parquet datasets underneath (`xialpha.storage.datasets.Datasets`,
which this class extends) are Arrow-level; a query on a dataset nothing was written to yet gives an
empty DataFrame.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from xialpha.storage.bits import unpack_bits
from xialpha.storage.datasets import Datasets
from xialpha.storage.schema import DATASETS
from xialpha.storage.validate import typed_table

TEST_SET_CLAIM = "test-set-{}"  # a certified test set's claim, by its fingerprint


class ResultStore(Datasets):
    """A store at a local directory or pyarrow/fsspec URI (s3://bucket/prefix, memory://name, ...).

    With `create=True` (the default) the store must be writable, and an absent or empty
    directory becomes a new store at the first write (until then it reads as empty); with
    `create=False` the store must exist and may be read-only; `writable=False` opens it to read
    only (an absent store reads as empty, a read-only one is fine).
    """

    # --- results of a sweep ------------------------------------------------------------------

    def read_results_df(self, sweep_id: str | None = None, **options) -> pd.DataFrame:
        """Result rows as a DataFrame, one per (sweep_id, config_key) (options: columns,
        include_failed; see `read_results`)."""
        return self.read_results(sweep_id, **options).to_pandas()

    def done_keys(self, sweep_id: str) -> set[str]:
        """Config keys of `sweep_id` whose newest row has status "ok".

        Failed configs do not count as done, so rerunning a sweep retries them.
        """
        table = self.read_results(sweep_id, columns=["config_key"])
        return set(table["config_key"].to_pylist())

    def read_examples(self, config_keys: Iterable[str], estimator: str = "xa", *,
                      sweep_id: str | None = None) -> dict[str, np.ndarray]:
        """{config_key: boolean vector "counted as error" of length n} for the stored keys.

        Keys without a stored vector are absent from the result. Where a key was stored in
        several sweeps, pass `sweep_id`: without it, which sweep's vector is returned is not
        defined (write order is kept per sweep).
        """
        keys = list(dict.fromkeys(config_keys))
        wanted = pc.field("config_key").isin(keys) & (pc.field("estimator") == estimator)
        table = self._read_newest(DATASETS["examples"], sweep_id, key_columns=("config_key", "estimator"),
                                  columns=["config_key", "n", "bits"], filter=wanted)
        return {key: unpack_bits(bits, n) for key, n, bits in zip(*(table[c].to_pylist() for c in table.column_names))}

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep: rows_ok, rows_failed, categories, configs (distinct preprocessing x
        kernel x C x j), first_created_at, last_created_at."""
        names = ["sweep_id", "status", "category", "preprocessing_id", "kernel_id", "C", "j", "created_at"]
        frame = self.read_results(include_failed=True, columns=names).to_pandas()
        columns = ["sweep_id", "rows_ok", "rows_failed", "categories", "configs", "first_created_at", "last_created_at"]
        if frame.empty:
            return pd.DataFrame(columns=columns)
        frame["config"] = list(zip(frame["preprocessing_id"], frame["kernel_id"], frame["C"], frame["j"]))
        summary = frame.groupby("sweep_id", sort=True).agg(
            rows_ok=("status", lambda s: int((s == "ok").sum())),
            rows_failed=("status", lambda s: int((s == "failed").sum())),
            categories=("category", "nunique"),
            configs=("config", "nunique"),
            first_created_at=("created_at", "min"),
            last_created_at=("created_at", "max"),
        )
        return summary.reset_index()[columns]

    # --- runs, selections, certifications, drift checks ---------------------------------------

    def add_run(self, row: Mapping) -> None:
        """Record one run of a sweep (`xialpha.storage.schema.SWEEP_COLUMNS`: its spec, data, command)."""
        self.append("sweeps", typed_table("sweeps", [row]))

    def runs(self, sweep_id: str | None = None) -> pd.DataFrame:
        """The recorded runs (of `sweep_id`, when given), sorted by run_id."""
        return self._frame("sweeps", sweep_id=sweep_id)

    def sweep_ended_at(self, sweep_id: str) -> pd.Timestamp | None:
        """When the newest recorded run of `sweep_id` ended (UTC); None while it runs, before its
        first run is recorded, and for runs recorded by earlier versions of xialpha, which did not say."""
        runs = self.runs(sweep_id)
        if runs.empty or "finished_at" not in runs.columns:
            return None
        ended = runs.sort_values("created_at", kind="mergesort", na_position="first")["finished_at"].iloc[-1]
        return None if pd.isna(ended) else pd.Timestamp(ended)

    def add_selection(self, rows: Sequence[Mapping]) -> None:
        """Store a selection: its rows, one per category (`SELECTION_COLUMNS`), in one write."""
        self.append("selections", typed_table("selections", rows))

    def selections(self, *, sweep_id: str | None = None, selection_id: str | None = None) -> pd.DataFrame:
        """The rows of the stored selections (of `sweep_id`, or the one `selection_id`), sorted by key."""
        return self._frame("selections", sweep_id=sweep_id, selection_id=selection_id)

    def add_certification(self, rows: Sequence[Mapping]) -> None:
        """Store a certification: its rows per category, micro and macro (`CERTIFICATION_COLUMNS`)."""
        self.append("certifications", typed_table("certifications", rows))

    def certifications(self, *, selection_id: str | None = None, test_fingerprint: str | None = None) -> pd.DataFrame:
        """The stored certification rows (of `selection_id`, or on the test set `test_fingerprint`)."""
        return self._frame("certifications", selection_id=selection_id, test_fingerprint=test_fingerprint)

    def claim_test_set(self, test_fingerprint: str, content: Mapping) -> str | None:
        """Claim the test set `test_fingerprint` for a certification (`content`: its id and what
        resuming it needs); the claim's path, or None when it was claimed before (see
        `Datasets.claim`: of concurrent claims at most one stands)."""
        return self.claim("certifications", TEST_SET_CLAIM.format(test_fingerprint), content)

    def test_set_claim(self, test_fingerprint: str) -> dict | None:
        """The claim of test set `test_fingerprint` (its content; {} when damaged), or None."""
        return self.claimed("certifications", TEST_SET_CLAIM.format(test_fingerprint))

    def beat_test_set(self, test_fingerprint: str, content: Mapping | None) -> None:
        """Write the heartbeat of test set `test_fingerprint`'s claim (None: delete it)."""
        self.beat("certifications", TEST_SET_CLAIM.format(test_fingerprint), content)

    def test_set_beat(self, test_fingerprint: str) -> dict | None:
        """The last heartbeat of test set `test_fingerprint`'s claim, or None."""
        return self.last_beat("certifications", TEST_SET_CLAIM.format(test_fingerprint))

    def add_drift_check(self, rows: Sequence[Mapping]) -> None:
        """Store a drift check's rows (`DRIFT_COLUMNS`) in one write, so a stored check is complete."""
        self.append("drift", typed_table("drift", rows))

    def drift_checks(self) -> pd.DataFrame:
        """Every stored drift row, sorted by check_id."""
        return self._frame("drift")

    def drift_check(self, drift_id: str, check_key: str) -> list[dict]:
        """The stored rows of check `check_key` of drift id `drift_id` as dicts of Python values
        (as they were appended), [] when it is not stored."""
        return self.read("drift", filters=[("check_key", "=", check_key)], sweep_id=drift_id).to_pylist()

    def _frame(self, dataset: str, **equal) -> pd.DataFrame:
        """Rows of a dataset typed by its rows where each column of `equal` given a value has it."""
        given = [(column, "=", value) for column, value in equal.items() if value is not None]
        return self.read(dataset, filters=given or None).to_pandas()
