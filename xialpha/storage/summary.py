"""The summary of one sweep's stored results, kept beside its rows so that listing the store and
checking a sweep's completeness need not read every row.

`results/sweep_id=<id>/_summary.json` (hidden from Parquet readers by its "_" prefix) holds what
`summarise` computes from the sweep's result rows as reads return them (newest per key, ok or
failed): the counts `xialpha store ls` shows, the grid (the distinct categories,
preprocessings, kernels, C, j and rho) and the number and SHA-256 digest of the stored config
keys (`keys_digest`). It also names the data files of the partition it was computed from: it
is used only while the partition holds exactly those files, so any later write, compaction or
quarantine makes readers fall back to the rows (as they do for stores written before summaries).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

SUMMARY_NAME = "_summary.json"
SUMMARY_FORMAT = "xialpha-sweep-summary-1"
SUMMARY_COLUMNS = ["status", "config_key", "category", "preprocessing_id", "kernel_id", "C", "j", "rho", "created_at"]


@dataclass(frozen=True)
class SweepCounts:
    """One sweep's stored results: rows by outcome, distinct categories and configs
    (preprocessing x kernel x C x j), the first and last row's `created_at` (UTC, ISO 8601, None
    without rows), the grid's distinct values, and the stored config keys (count, digest)."""

    sweep_id: str
    rows_ok: int
    rows_failed: int
    categories: int
    configs: int
    first_created_at: str | None
    last_created_at: str | None
    grid: dict[str, list]
    stored_keys: int
    stored_keys_digest: str

    def holds_exactly(self, keys: set[str]) -> bool:
        """True when the stored config keys (ok or failed) are exactly `keys`."""
        return len(keys) == self.stored_keys and keys_digest(keys) == self.stored_keys_digest


def keys_digest(keys: Iterable[str]) -> str:
    """SHA-256 (hex) of the distinct keys sorted, one per line: equal for equal sets."""
    return hashlib.sha256("\n".join(sorted(set(keys))).encode("utf-8")).hexdigest()


def summarise(sweep_id: str, table: pa.Table) -> SweepCounts:
    """The summary of one sweep from its result rows as reads return them (`SUMMARY_COLUMNS`,
    one row per config key, ok or failed)."""
    frame = table.select(SUMMARY_COLUMNS).to_pandas()
    created = frame["created_at"]
    grid = {
        name: sorted(value for value in pc.unique(table[name]).to_pylist() if value is not None)
        for name in ("category", "preprocessing_id", "kernel_id", "C", "j", "rho")
    }
    configs = frame.drop_duplicates(["preprocessing_id", "kernel_id", "C", "j"]) if len(frame) else frame
    return SweepCounts(
        sweep_id=sweep_id,
        rows_ok=int((frame["status"] == "ok").sum()),
        rows_failed=int((frame["status"] == "failed").sum()),
        categories=int(frame["category"].nunique()),
        configs=len(configs),
        first_created_at=_iso(created.min()) if len(frame) else None,
        last_created_at=_iso(created.max()) if len(frame) else None,
        grid=grid,
        stored_keys=len(frame),
        stored_keys_digest=keys_digest(frame["config_key"]),
    )


def summary_text(counts: SweepCounts, files: Sequence[str]) -> bytes:
    """The summary file's content: `counts` and the names of the data files it was computed from."""
    return json.dumps({"format": SUMMARY_FORMAT, "files": sorted(files), **asdict(counts)}, indent=1).encode()


def parse_summary(text: str, sweep_id: str, files: Sequence[str]) -> SweepCounts | None:
    """The summary in `text` when it is of this format and sweep and was computed from exactly
    the data files `files`; None otherwise (the caller then reads the rows)."""
    try:
        content = json.loads(text)
        if content.pop("format") != SUMMARY_FORMAT or content.pop("files") != sorted(files):
            return None
        counts = SweepCounts(**content)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return counts if counts.sweep_id == sweep_id else None


def counts_frame(summaries: Sequence[SweepCounts]) -> pd.DataFrame:
    """One row per sweep (as `ResultStore.sweeps` gives them), sorted by sweep_id."""
    columns = ["sweep_id", "rows_ok", "rows_failed", "categories", "configs", "first_created_at", "last_created_at"]
    rows = [{name: getattr(counts, name) for name in columns} for counts in sorted(summaries, key=_by_id)]
    frame = pd.DataFrame(rows, columns=columns)
    for name in ("first_created_at", "last_created_at"):
        frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
    return frame


def _by_id(counts: SweepCounts) -> str:
    return counts.sweep_id


def _iso(value: pd.Timestamp) -> str:
    return pd.Timestamp(value).isoformat()
