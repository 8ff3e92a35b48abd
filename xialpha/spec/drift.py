"""Drift-check specs (TOML, validated like sweep specs) and the split of a corpus into time-ordered batches.

A spec names the corpus, how its documents fall into batches (`[batches] by = "time"` with a
`period` such as "7D" or "1M", or `by = "split"`: the corpus's split labels are batch ids), the
SVM configurations to check, the candidate windows and the drift rule. Every error names the key
path, e.g. `batches.period: ...`; see config/drift.toml.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xialpha.errors import UserError
from xialpha.estimators import DEFAULT_RHO
from xialpha.features.kernels import DEFAULT_GRAM_LIMIT_BYTES
from xialpha.spec.cluster import ClusterSpec, parse_cluster
from xialpha.spec.corpus import parse_corpus
from xialpha.spec.grid import GridSpec, configurations
from xialpha.spec.tables import Table, parse_toml, read_spec_text
from xialpha.storage.sweep_ids import SWEEP_ID_RULE, valid_sweep_id

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus

BATCH_SOURCES = ("time", "split")
_PERIOD = re.compile(r"(\d*)\s*+([hDWMY])")  # of the text stripped: no two runs of blanks to split, no backtracking
MAX_PERIOD_COUNT = 100_000  # bins of at most 100,000 hours, days, weeks, months or years
_MONDAY_OFFSET_DAYS = 3  # 1970-01-01 was a Thursday; weeks start on Mondays


@dataclass(frozen=True)
class Period:
    """A calendar bin width: `count` hours (h), days (D), weeks from Monday (W), months (M) or years (Y).

    Bins are aligned to 1970-01-01 (weeks: to Monday 1969-12-29), so a document's batch never
    changes as the stream grows.
    """

    count: int
    unit: str

    def bins(self, timestamps: np.ndarray) -> np.ndarray:
        """(n,) int64 bin numbers of datetime64 timestamps (no NaT); larger is later."""
        if self.unit in ("M", "Y"):
            months = timestamps.astype("datetime64[M]").astype(np.int64)
            return months // (self.count * (12 if self.unit == "Y" else 1))
        if self.unit == "h":
            return timestamps.astype("datetime64[h]").astype(np.int64) // self.count
        days = timestamps.astype("datetime64[D]").astype(np.int64)
        return (days + _MONDAY_OFFSET_DAYS) // (7 * self.count) if self.unit == "W" else days // self.count

    def label(self, bin_number: int) -> str:
        """The start of a bin as an ISO date prefix: 1987-03-02T06, 1987-03-02, 1987-03 or 1987."""
        if self.unit in ("M", "Y"):
            months = bin_number * self.count * (12 if self.unit == "Y" else 1)
            text = str(np.datetime64(months, "M"))
            return text[:4] if self.unit == "Y" else text
        if self.unit == "h":
            return str(np.datetime64(bin_number * self.count, "h"))[:13]
        days = bin_number * 7 * self.count - _MONDAY_OFFSET_DAYS if self.unit == "W" else bin_number * self.count
        return str(np.datetime64(days, "D"))


@dataclass(frozen=True)
class BatchSpec:
    """How documents become batches: by "time" (binned by `period`) or by "split" label."""

    by: str = "time"
    period: Period | None = None

    def time_period(self) -> Period:
        """`period`, which batches by "time" always have (`_batches` requires it)."""
        if self.period is None:
            raise ValueError('batches by "time" need a period')
        return self.period


@dataclass(frozen=True)
class DriftSpec(GridSpec):
    """A drift check: corpus and batches, configurations (preprocessing x kernel x C x j), windows, rule.

    windows: candidate window sizes in batches (None: every size); the full memory is always a
    candidate. margin_points: percentage points by which the full-memory estimate must exceed the
    chosen window's for DRIFT; alpha: significance level of the paired test on the newest batch.
    """

    batches: BatchSpec
    rho: float
    windows: tuple[int, ...] | None
    margin_points: float
    alpha: float
    cluster: ClusterSpec
    gram_memory_limit: int = DEFAULT_GRAM_LIMIT_BYTES  # bytes of one Gram matrix, at most
    text: str = field(default="", repr=False, compare=False)

    def identity(self) -> dict:
        """Everything that determines a check's results (not where it runs or is stored)."""
        cats = self.corpus.categories
        return {
            "corpus": {
                "loader": self.corpus.loader,
                "args": self.corpus.args,
                "split": self.corpus.train_split,
                "top_k": cats.top_k,
                "names": list(cats.names),
                "min_positives": cats.min_positives,
            },
            "batches": {
                "by": self.batches.by,
                "period": None
                if self.batches.period is None
                else f"{self.batches.period.count}{self.batches.period.unit}",
            },
            "preprocessings": [p.id for p in self.preprocessings],
            "kernels": [k.id for k in self.kernels],
            "C": list(self.C),
            "j": list(self.j),
            "tol": self.tol,
            "rho": self.rho,
            "windows": None if self.windows is None else list(self.windows),
            "margin_points": self.margin_points,
            "alpha": self.alpha,
        }

    def window_sizes(self, n_batches: int) -> list[int]:
        """Candidate window sizes (ascending) when the memory holds `n_batches` batches."""
        sizes = range(1, n_batches) if self.windows is None else [h for h in self.windows if h < n_batches]
        return sorted(set(sizes)) + [n_batches]


def load_drift_spec(path: str | os.PathLike[str]) -> DriftSpec:
    """Read and validate a drift spec file (relative corpus paths are relative to the file)."""
    path = Path(path)
    return parse_drift_spec(read_spec_text(path), source=str(path), base_dir=path.parent, default_id=path.stem)


def parse_drift_spec(
    text: str, source: str = "<spec>", base_dir: Path | None = None, default_id: str = "drift"
) -> DriftSpec:
    """Validate drift spec text; errors name `source` and the key path."""
    root = parse_toml(text, source)
    try:
        spec = _build(root, base_dir or Path.cwd(), default_id, text)
    except UserError as exc:
        raise exc.within(file=source) from None
    return replace(spec, corpus=replace(spec.corpus, source=source))


def parse_period(text: object, field_name: str = "period") -> Period:
    """A Period from "<count><unit>", unit one of h, D, W, M, Y (count defaults to 1), e.g. "7D"."""
    match = _PERIOD.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise UserError(
            f'{field_name}: must be a positive count and a unit h, D, W, M or Y, e.g. "7D" or "1M", got {text!r}'
        )
    digits = match.group(1).lstrip("0") if match.group(1) else "1"
    count = int(digits or 0) if len(digits) <= 12 else MAX_PERIOD_COUNT + 1  # int() refuses 4,300+ digits
    if not 1 <= count <= MAX_PERIOD_COUNT:
        raise UserError(f"{field_name}: the count must be between 1 and {MAX_PERIOD_COUNT:,}, got {text!r}")
    return Period(count, match.group(2))


def _build(root: Table, base_dir: Path, default_id: str, text: str) -> DriftSpec:
    drift = root.table("drift")
    drift_id = drift.str("id", default_id)
    if not valid_sweep_id(drift_id):
        raise UserError(f"drift.id: must be {SWEEP_ID_RULE}, got {drift_id!r}")
    corpus = parse_corpus(root.table("corpus", required=True), base_dir)
    if corpus.test_split is not None:
        raise UserError("corpus.test_split: a drift check has no test split; the newest batch is the test")
    batches = _batches(root.table("batches"))
    if batches.by == "split" and corpus.train_split is not None:
        raise UserError('corpus.train_split: cannot be used with batches.by = "split" (splits are the batches)')
    spec = DriftSpec(
        id=drift_id,
        store=drift.str("store", None),
        corpus=corpus,
        batches=batches,
        **configurations(root, drift),
        rho=drift.float("rho", DEFAULT_RHO, positive=True),
        windows=_windows(drift),
        margin_points=_bounded(drift, "margin", 2.0, 0.0, 100.0),
        alpha=_bounded(drift, "alpha", 0.05, 0.0, 1.0, open_low=True),
        gram_memory_limit=drift.bytes("gram_memory_limit", DEFAULT_GRAM_LIMIT_BYTES),
        cluster=parse_cluster(root.table("cluster"), base_dir),
        text=text,
    )
    drift.done()
    root.done()
    if spec.C_auto:
        raise UserError('svm.C: "auto" is for sweeps; a drift check needs its C values')
    return spec


def _batches(t: Table) -> BatchSpec:
    by = t.choice("by", BATCH_SOURCES, "time")
    period_text = t.str("period", None)
    t.done()
    if by == "time" and period_text is None:
        raise UserError('batches.period: is required with batches.by = "time", e.g. "7D" or "1M"')
    if by == "split" and period_text is not None:
        raise UserError('batches.period: only applies to batches.by = "time"')
    return BatchSpec(by, None if period_text is None else parse_period(period_text, "batches.period"))


def _windows(t: Table) -> tuple[int, ...] | None:
    if isinstance(t.raw.get("windows", "all"), str):
        t.choice("windows", ("all",), "all")
        return None
    sizes = t.float_list("windows", [], positive=True)
    if not all(h == int(h) for h in sizes):
        raise UserError(f'drift.windows: must be "all" or a list of whole numbers of batches, got {t.raw["windows"]!r}')
    return tuple(sorted(int(h) for h in sizes))


def _bounded(t: Table, key: str, default: float, low: float, high: float, open_low: bool = False) -> float:
    value = t.float(key, default)
    if value > high or value < low or (open_low and value == low):
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}]"
        raise UserError(f"drift.{key}: must be in {interval}, got {value!r}")
    return value


@dataclass(frozen=True, eq=False)
class Stream:
    """The memory as time-ordered batches: `corpus` sorted by batch (documents without one dropped).

    batch_ids: (T,) str, oldest first; starts: (T + 1,) int64, batch b is documents
    starts[b]:starts[b + 1] of `corpus`; n_dropped: documents left out (no timestamp).
    """

    corpus: object
    batch_ids: tuple[str, ...]
    starts: np.ndarray
    n_dropped: int = 0

    @property
    def n_batches(self) -> int:
        return len(self.batch_ids)

    def batch_labels(self) -> np.ndarray:
        """(n,) str: the batch id of every document of `corpus`."""
        return np.repeat(np.array(self.batch_ids, dtype=str), np.diff(self.starts))


UNKNOWN_BATCH = np.iinfo(np.int64).max  # the batch key of a document without a time


def split_batches(corpus: Corpus, batches: BatchSpec, train_split: str | None = None) -> Stream:
    """Order `corpus` into batches as `batches` says (after keeping only split `train_split`), in
    this process (a drift check on a cluster computes the same keys part by part)."""
    if train_split is not None:
        if train_split not in corpus.split_names:
            from xialpha.corpora.corpus import no_such_split

            raise UserError(no_such_split(train_split, corpus.split_names), key="corpus.train_split")
        corpus = corpus.split(train_split)
    ranks = split_ranks(corpus.split_names) if batches.by == "split" else None
    keys = batch_keys(corpus, batches, ranks)
    known = keys != UNKNOWN_BATCH
    distinct, counts = np.unique(keys[known], return_counts=True)
    layout = stream_layout(
        dict(zip(distinct.tolist(), counts.tolist())), int((~known).sum()), batches, ranks, corpus.name
    )
    order = np.flatnonzero(known)[np.argsort(keys[known], kind="stable")]
    return Stream(corpus.subset(order), layout.batch_ids, layout.starts, layout.n_dropped)


def batch_keys(corpus: Corpus, batches: BatchSpec, ranks: dict[str, int] | None) -> np.ndarray:
    """(n,) int64: each document's batch key, ordered as the batches are (a time bin of
    `batches.period`, or the rank of its split name in `ranks`); UNKNOWN_BATCH without a time."""
    if batches.by == "time":
        if corpus.timestamps is None:
            raise UserError(
                f'batches.by: "time" needs timestamps, and corpus {corpus.name!r} has none; '
                'use by = "split" or a loader with a time column'
            )
        known = ~np.isnat(corpus.timestamps)
        keys = np.full(len(corpus), UNKNOWN_BATCH)
        keys[known] = batches.time_period().bins(corpus.timestamps[known])
        return keys
    if corpus.splits is None:
        raise UserError(f'batches.by: "split" needs split labels, and corpus {corpus.name!r} has none')
    if ranks is None:
        raise ValueError('batch_keys: batches by "split" need the ranks of the split names')
    return np.array([ranks[s] for s in corpus.splits.tolist()], dtype=np.int64)


def split_ranks(names: Iterable[str]) -> dict[str, int]:
    """{split name: batch rank}, digit runs ordered by value (batch2 before batch10)."""
    return {name: i for i, name in enumerate(sorted(names, key=_natural_key))}


@dataclass(frozen=True)
class StreamLayout:
    """The batches of a stream without its documents: batch_ids (T,), oldest first; starts (T + 1,)
    document offsets; n_dropped documents without a time."""

    batch_ids: tuple[str, ...]
    starts: np.ndarray
    n_dropped: int

    @property
    def n_batches(self) -> int:
        return len(self.batch_ids)


def stream_layout(
    key_counts: dict[int, int], n_dropped: int, batches: BatchSpec, ranks: dict[str, int] | None, name: str
) -> StreamLayout:
    """The layout from {batch key: documents} (UNKNOWN_BATCH left out); UserError when no document
    has a batch or fewer than two batches remain."""
    if not key_counts:
        raise UserError(f"batches.by: no document of corpus {name!r} has a timestamp")
    if len(key_counts) < 2:
        raise UserError(f"batches: the corpus falls into {len(key_counts)} batch; a drift check needs at least 2")
    keys = sorted(key_counts)
    names = {rank: split for split, rank in (ranks or {}).items()}
    labels = tuple(batches.time_period().label(k) if batches.by == "time" else names[k] for k in keys)
    starts = np.concatenate([[0], np.cumsum([key_counts[k] for k in keys])]).astype(np.int64)
    return StreamLayout(labels, starts, n_dropped)


def _natural_key(name: str) -> list:
    """Sort key that orders digit runs by value: batch2 < batch10."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]
