"""The summary of one sweep's stored results, kept beside its rows so that listing the store and
checking a sweep's completeness need not read every row. It is a cache, never the truth.

`results/sweep_id=<id>/_summary.json` (hidden from Parquet readers by its "_" prefix) holds what
`summarise` computes from the sweep's result rows as reads return them (newest per key, ok or
failed): the counts `xialpha store ls` shows, the grid (the distinct categories,
preprocessings, kernels, C, j and rho) and the number and SHA-256 digest of the stored config
keys (`keys_digest`). It also stamps each data file of the partition it was computed from
(`xialpha.storage.files.FileStamp`: name, size, rows, SHA-256 of its bytes), and is used only
while the partition holds exactly those files, unchanged:

- other files there (a write, compaction or quarantine since): *stale*, not used, silently, as a
  summary written by an earlier version of xialpha (`StaleSummary`);
- a file of the same name with another size or other bytes (rewritten in place, restored from
  an older copy, a byte of a data page flipped), or values not of their types, ranges and
  relations (negative or non-integer counts, "inf", dates that do not parse, another sweep's id,
  counts the files' rows cannot hold): *damaged*, not used, with a warning (`DamagedSummary`).

Either way the rows are read. So a listing (`xialpha store ls`) shows what reads return: a file
whose pages a read cannot decode is not listed from its summary either. The digest of every byte
costs a read of the files per listing (measured in `bench/store.py`), where a digest of the
footer alone let a damaged page through; on an object store that read is a download.

What a summary cannot do is vouch for rows against someone who can write the store: a rewritten
file re-stamped into the summary (with its digest recomputed) passes every check. So the summary
answers listings only (`store ls`, `ResultStore.sweeps`); what stores a decision, a selection saved
only when its sweep is complete, reads the stored keys from the rows (see
`xialpha.planning.experiment.missing_rows`).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from xialpha.storage.files import FileStamp
from xialpha.storage.schema import ResultStatus

if TYPE_CHECKING:
    import pandas as pd

SUMMARY_NAME = "_summary.json"
SUMMARY_FORMAT = "xialpha-sweep-summary-3"
# named the files only (1), stamped their footers only (2): not used, not warned about
OLDER_FORMATS = ("xialpha-sweep-summary-1", "xialpha-sweep-summary-2")
SUMMARY_COLUMNS = ["status", "config_key", "category", "preprocessing_id", "kernel_id", "C", "j", "rho", "created_at"]
SUMMARY_BYTES = 64 << 20  # the grid of 10^6 categories with names of 60 characters: a larger one is not read
SUMMARY_DEPTH = 3  # {"grid": {"C": [...]}} and {"files": [{...}]}
GRID_TEXT = ("category", "preprocessing_id", "kernel_id")
GRID_NUMBERS = ("C", "j", "rho")
RANGED = ("C", "j", "rho", "created_at")  # columns whose values a summary states, checked against the footers'
MAX_COUNT = 10**15  # beyond any store
_DIGEST = re.compile(r"[0-9a-f]{64}")
_STAMP_FIELDS = {f.name: f.type for f in fields(FileStamp)}


class StaleSummary(Exception):
    """A summary of other files than the partition holds now, or of an earlier format: not used."""


class DamagedSummary(Exception):
    """A summary whose files changed in place, or whose values are not of their types and ranges
    (the reason, one line): not used, and warned about."""


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
    grid = {
        name: sorted(value for value in pc.unique(table[name]).to_pylist() if value is not None)
        for name in ("category", "preprocessing_id", "kernel_id", "C", "j", "rho")
    }
    configs = table.group_by(["preprocessing_id", "kernel_id", "C", "j"]).aggregate([]).num_rows
    created = pc.min_max(table["created_at"]).as_py() if table.num_rows else {"min": None, "max": None}
    return SweepCounts(
        sweep_id=sweep_id,
        rows_ok=_equal(table["status"], ResultStatus.OK),
        rows_failed=_equal(table["status"], ResultStatus.FAILED),
        categories=pc.count_distinct(table["category"], mode="only_valid").as_py(),
        configs=configs,
        first_created_at=None if created["min"] is None else created["min"].isoformat(),
        last_created_at=None if created["max"] is None else created["max"].isoformat(),
        grid=grid,
        stored_keys=table.num_rows,
        stored_keys_digest=keys_digest(table["config_key"].to_pylist()),
    )


def _equal(column: pa.ChunkedArray, value: str) -> int:
    """How many values of `column` are `value`."""
    return pc.sum(pc.equal(column, value)).as_py() or 0


def summary_text(counts: SweepCounts, files: Sequence[FileStamp]) -> bytes:
    """The summary file's content: `counts` and the stamps of the data files it was computed from."""
    stamps = [asdict(stamp) for stamp in sorted(files, key=lambda stamp: stamp.name)]
    return json.dumps({"format": SUMMARY_FORMAT, "files": stamps, **asdict(counts)}, indent=1).encode()


def recorded_files(content: object) -> list[FileStamp]:
    """The stamps of the files a summary (its parsed JSON `content`) was computed from, sorted
    by name; StaleSummary for an earlier format, DamagedSummary for anything else amiss."""
    if not isinstance(content, dict):
        raise DamagedSummary(f"a JSON {type(content).__name__}, not an object")
    if content.get("format") in OLDER_FORMATS:
        raise StaleSummary("written by an earlier version of xialpha")
    if content.get("format") != SUMMARY_FORMAT:
        raise DamagedSummary(f"format {_shown(content.get('format'))}, not {SUMMARY_FORMAT!r}")
    files = content.get("files")
    if not isinstance(files, list) or not files:
        raise DamagedSummary("'files' is not a list of the files it summarises")
    stamps = []
    for entry in files:
        if not isinstance(entry, dict) or set(entry) != set(_STAMP_FIELDS):
            raise DamagedSummary(f"an entry of 'files' is not {{{', '.join(_STAMP_FIELDS)}}}")
        valid = (
            isinstance(entry["name"], str)
            and _count(entry["size"])
            and _count(entry["rows"])
            and isinstance(entry["sha256"], str)
            and _DIGEST.fullmatch(entry["sha256"])
        )
        if not valid:
            raise DamagedSummary(f"the file entry {_shown(entry.get('name'))} holds values of the wrong type")
        stamps.append(FileStamp(**entry))
    names = [stamp.name for stamp in stamps]
    if names != sorted(set(names)):
        raise DamagedSummary("'files' names a file twice, or out of order")
    return stamps


def counts_of(
    content: dict, sweep_id: str, files: Sequence[FileStamp], ranges: Mapping[str, tuple] | None = None
) -> SweepCounts:
    """The counts of a summary (its parsed JSON `content`, whose `files` are `files`) of sweep
    `sweep_id`; DamagedSummary naming the first value that is not of its type and range, or not
    in the relations every summary holds (among its counts, its grid, the rows of its files and
    the least and greatest value of the `RANGED` columns in them, `ranges`, by their footers)."""
    values = {name: value for name, value in content.items() if name not in ("format", "files")}
    expected = [f.name for f in fields(SweepCounts)]
    if sorted(values) != sorted(expected):
        extra, missing = sorted(set(values) - set(expected)), sorted(set(expected) - set(values))
        raise DamagedSummary(
            f"fields {_shown(extra)} are not a summary's" if extra else f"no field(s) {', '.join(missing)}"
        )
    if values["sweep_id"] != sweep_id:
        raise DamagedSummary(f"of sweep {_shown(values['sweep_id'])}, in the partition of {sweep_id!r}")
    for name in ("rows_ok", "rows_failed", "categories", "configs", "stored_keys"):
        if not _count(values[name]):
            raise DamagedSummary(f"{name} {_shown(values[name])} is not a count")
    rows = sum(stamp.rows for stamp in files)
    _relations(values, rows, len(files))
    grid = values["grid"]
    if not isinstance(grid, dict) or sorted(grid) != sorted((*GRID_TEXT, *GRID_NUMBERS)):
        raise DamagedSummary(f"grid is not {{{', '.join((*GRID_TEXT, *GRID_NUMBERS))}}}")
    for name, entries in grid.items():
        kind = str if name in GRID_TEXT else float
        if not isinstance(entries, list) or not all(_of_kind(entry, kind) for entry in entries):
            raise DamagedSummary(f"grid {name} is not a list of {'texts' if kind is str else 'finite numbers'}")
        if entries != sorted(set(entries)) or not 1 <= len(entries) <= values["stored_keys"]:
            raise DamagedSummary(f"grid {name} holds {len(entries)} values, not in order, or more than its rows")
    if len(grid["category"]) != values["categories"]:
        raise DamagedSummary(f"categories {values['categories']} but the grid holds {len(grid['category'])}")
    sizes = [len(grid[name]) for name in ("preprocessing_id", "kernel_id", "C", "j")]
    if not max(sizes) <= values["configs"] <= math.prod(sizes):
        raise DamagedSummary(f"configs {values['configs']} is not what a grid of {' x '.join(map(str, sizes))} holds")
    first, last = (_timestamp(values, name) for name in ("first_created_at", "last_created_at"))
    if first > last:
        raise DamagedSummary("first_created_at is after last_created_at")
    stated = {name: (grid[name][0], grid[name][-1]) for name in GRID_NUMBERS} | {"created_at": (first, last)}
    for name, (least, greatest) in (ranges or {}).items():
        low, high = stated[name]
        if low < least or high > greatest:
            raise DamagedSummary(f"{name} from {low} to {high}, but its files hold {name} from {least} to {greatest}")
    if not isinstance(values["stored_keys_digest"], str) or not _DIGEST.fullmatch(values["stored_keys_digest"]):
        raise DamagedSummary("stored_keys_digest is not a SHA-256 digest")
    return SweepCounts(**values)


def _relations(values: dict, rows: int, files: int) -> None:
    """DamagedSummary unless the counts hold together: the stored keys are the ok and failed
    rows (at least one: no summary is written of none), no more than the `rows` of its `files`
    (one file, a compacted or single write, holds at most an ok and a failed row per key), and
    at least one category and config, no more than the keys."""
    keys = values["stored_keys"]
    if values["rows_ok"] + values["rows_failed"] != keys:
        raise DamagedSummary(f"rows_ok {values['rows_ok']} + rows_failed {values['rows_failed']} != stored_keys {keys}")
    if not 1 <= keys <= rows or (files == 1 and rows > 2 * keys):
        raise DamagedSummary(f"stored_keys {keys}, but its files hold {rows} rows")
    for name in ("categories", "configs"):
        if not 1 <= values[name] <= keys:
            raise DamagedSummary(f"{name} {values[name]} is not between 1 and stored_keys {keys}")


def _timestamp(values: dict, name: str) -> datetime.datetime:
    value = values[name]
    try:
        stamp = datetime.datetime.fromisoformat(value) if isinstance(value, str) and len(value) <= 64 else None
    except ValueError:
        stamp = None
    if stamp is None or stamp.tzinfo is None or stamp.utcoffset() != datetime.timedelta(0):
        raise DamagedSummary(f"{name} {_shown(value)} is not a UTC time in ISO 8601")
    return stamp


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_COUNT


def _of_kind(value: object, kind: type) -> bool:
    if kind is str:
        return isinstance(value, str)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: object) -> str:
    """`value` as a message may show it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def counts_frame(summaries: Sequence[SweepCounts]) -> pd.DataFrame:
    """One row per sweep (as `ResultStore.sweeps` gives them), sorted by sweep_id."""
    import pandas as pd  # here: `xialpha store ls` lists the counts without pandas

    columns = ["sweep_id", "rows_ok", "rows_failed", "categories", "configs", "first_created_at", "last_created_at"]
    rows = [{name: getattr(counts, name) for name in columns} for counts in sorted(summaries, key=_by_id)]
    frame = pd.DataFrame(rows, columns=columns)
    for name in ("first_created_at", "last_created_at"):
        frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
    return frame


def _by_id(counts: SweepCounts) -> str:
    return counts.sweep_id
