"""Typed rows of every dataset a sweep, a certification and a drift check write, by field (a
saved selection's are `xialpha.storage.selection_rows`').

A sweep's tasks build `ResultRow`s (a trained configuration at one rho), `FailedRow`s (one that
failed for its data) and `ExampleRow`s (its per-example indicators); the sweep records each run
as a `RunRow`. A certification is `CertificationRow`s, a drift check `DriftRow`s. `ResultStore`
turns them into columns here (`*_columns`) and into Arrow by the schema
(`xialpha.storage.arrow_schema`), so the code that builds them names no column; `drift_row` reads
a stored drift check's columns back into a row. An `ExampleRow`'s indicators are packed one bit
per training example (`pack_bits`, `unpack_bits`). A row's configuration is named by
`config_key`, with which sweeps resume and reads deduplicate.

Frozen, slotted dataclasses: they cross from Dask workers to the driver as they are.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from xialpha.errors import UserError
from xialpha.storage.schema import (
    DRIFT_ESTIMATES,
    CertificationColumn,
    CertificationScope,
    DriftColumn,
    DriftVerdict,
    ResultStatus,
    WindowStatus,
    config_values,
)

if TYPE_CHECKING:
    from xialpha.features.kernels import Kernel
    from xialpha.features.preprocessing import Preprocessing

KEY_HEX_CHARS = 32


@dataclass(frozen=True, slots=True)
class BatchColumns:
    """What every row of one fit batch shares: its sweep and run, the data's fingerprint, and
    one preprocessing x kernel (`configuration`: their results columns, `config_values`)."""

    sweep_id: str
    run_id: str
    data_fingerprint: str
    configuration: Mapping[str, object]

    @classmethod
    def of(
        cls, sweep_id: str, run_id: str, data_fingerprint: str, preprocessing: Preprocessing, kernel: Kernel
    ) -> BatchColumns:
        """The batch columns of an `xialpha.features` Preprocessing and Kernel."""
        return cls(sweep_id, run_id, data_fingerprint, config_values(preprocessing, kernel))


@dataclass(frozen=True, slots=True)
class Training:
    """What one training measured (the same for each rho of its job): training examples n and
    positives n_pos, support vectors (n_sv, n_bounded_sv at their bound C_i), whether the
    solution is stable, R_delta^2, and wall seconds to train and (per rho) to estimate."""

    n: int
    n_pos: int
    n_sv: int
    n_bounded_sv: int
    stable: bool
    r_delta2: float
    fit_seconds: float
    estimate_seconds: float


@dataclass(frozen=True, slots=True)
class ResultRow:
    """A trained configuration at one rho, status "ok": its batch, category, C, j, rho and key,
    its training, and the estimates' columns (`xialpha.storage.schema.result_values` of each
    estimate). worker: the host that trained it; xialpha_version: the writer's."""

    status: ClassVar[ResultStatus] = ResultStatus.OK
    batch: BatchColumns
    category: str
    C: float
    j: float
    rho: float
    config_key: str
    training: Training
    estimates: Mapping[str, object]
    worker: str
    xialpha_version: str


@dataclass(frozen=True, slots=True)
class FailedRow:
    """A configuration at one rho that could not be trained on its data (a `DataFailure`) or
    whose worker was lost, status "failed": why (`error_message`, one line), and the training
    examples and positives it had (0 where the data never reached the fit)."""

    status: ClassVar[ResultStatus] = ResultStatus.FAILED
    batch: BatchColumns
    category: str
    C: float
    j: float
    rho: float
    config_key: str
    error_message: str
    n: int
    n_pos: int
    worker: str | None = None  # None: the host that stores it
    xialpha_version: str | None = None  # None: the storing xialpha's


@dataclass(frozen=True, slots=True)
class ExampleRow:
    """A configuration's per-example "counted as error" indicators of one estimator: `bits`
    packed (`pack_bits`) from n indicators."""

    sweep_id: str
    config_key: str
    category: str
    estimator: str
    n: int
    bits: bytes


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run of a sweep: its spec (TOML text and directory), data fingerprint, categories
    (joined), the command line, when it was recorded and (written again) when it ended. Read
    back (`ResultStore.newest_run`), what its writer did not record is None."""

    sweep_id: str
    run_id: str
    spec_toml: str
    spec_dir: str | None
    data_fingerprint: str
    categories: str
    xialpha_version: str | None
    command: str | None
    created_at: datetime.datetime
    finished_at: datetime.datetime | None = None


@dataclass(frozen=True, slots=True)
class Certification:
    """What every row of one certification of a saved selection shares: its id, the selection it
    certified (of which sweep), the sealed test split (its fingerprint and documents), and how it
    ran: confidence, draws, forced after how many `previous_certifications` of the split, and
    `independent` (no estimate of the sweep was scored on the split)."""

    certification_id: str
    sweep_id: str
    selection_id: str
    test_split: str
    test_fingerprint: str
    n_test: int
    confidence: float
    draws: int
    forced: bool
    previous_certifications: int
    independent: bool


@dataclass(frozen=True, slots=True)
class CertificationRow:
    """One row of a `Certification`: a category's (scope "category", with the config it chose), or
    the micro or macro average's (category "(micro)" / "(macro)"): the test-set counts (None for
    the macro average), METRICS and their one-sided bounds (CERTIFICATION_BOUNDS)."""

    certification: Certification
    category: str
    scope: CertificationScope
    config_key: str | None
    tp: int | None
    fp: int | None
    fn: int | None
    tn: int | None
    metrics: Mapping[str, float]
    bounds: Mapping[str, float]
    xialpha_version: str
    created_at: datetime.datetime


@dataclass(frozen=True, slots=True)
class DriftRow:
    """One window of one config x category of a drift check (Klinkenberg & Joachims 2000): the
    check (its id, key, drift id as `sweep_id`, run and time), the stream (data fingerprint, newest
    batch, batches), the configuration, the window (its size, first batch, whether it is the full
    memory) and its training (status, why it failed, sizes, support vectors, R_delta^2, the
    newest batch's documents and positives, its xi-alpha `estimate`: DRIFT_ESTIMATES), whether it
    is the chosen window, and the group's verdict, repeated on each of its rows."""

    check_id: str
    check_key: str
    sweep_id: str
    run_id: str | None
    checked_at: datetime.datetime
    data_fingerprint: str
    newest_batch: str
    n_batches: int
    category: str
    preprocessing_id: str
    kernel: str
    kernel_id: str
    C: float
    j: float
    rho: float
    window: int
    window_first_batch: str
    full_memory: bool
    status: WindowStatus | None  # None: a row stored without it (the column is not required)
    error_message: str | None
    n: int | None
    n_pos: int | None
    n_sv: int | None
    r_delta2: float | None
    n_newest: int
    n_newest_pos: int
    estimate: Mapping[str, object]
    chosen: bool
    verdict: DriftVerdict
    check_error: str | None
    chosen_window: int | None
    chosen_error: float | None
    full_error: float | None
    full_worse: int | None
    chosen_worse: int | None
    p_value: float | None
    margin_points: float
    alpha: float


def result_columns(row: ResultRow | FailedRow) -> dict:
    """{column: value} of a result row (the one place a result row becomes columns)."""
    batch = row.batch
    columns = {
        "sweep_id": batch.sweep_id,
        "run_id": batch.run_id,
        "data_fingerprint": batch.data_fingerprint,
        **batch.configuration,
        "config_key": row.config_key,
        "status": row.status,
        "category": row.category,
        "C": row.C,
        "j": row.j,
        "rho": row.rho,
    }
    if isinstance(row, FailedRow):
        columns.update(error_message=row.error_message, n=row.n, n_pos=row.n_pos)
    else:
        training = row.training
        columns.update(
            n=training.n,
            n_pos=training.n_pos,
            n_sv=training.n_sv,
            n_bounded_sv=training.n_bounded_sv,
            stable=training.stable,
            r_delta2=training.r_delta2,
            fit_seconds=training.fit_seconds,
            estimate_seconds=training.estimate_seconds,
            **row.estimates,
        )
    provenance = {"worker": row.worker, "xialpha_version": row.xialpha_version}
    return {**columns, **{name: value for name, value in provenance.items() if value is not None}}


def example_columns(row: ExampleRow) -> dict:
    """{column: value} of an example row."""
    return {
        "sweep_id": row.sweep_id,
        "config_key": row.config_key,
        "category": row.category,
        "estimator": row.estimator,
        "n": row.n,
        "bits": row.bits,
    }


def run_columns(row: RunRow) -> dict:
    """{column: value} of a run row (finished_at left out while the run goes on)."""
    columns = {
        "sweep_id": row.sweep_id,
        "run_id": row.run_id,
        "spec_toml": row.spec_toml,
        "spec_dir": row.spec_dir,
        "data_fingerprint": row.data_fingerprint,
        "categories": row.categories,
        "xialpha_version": row.xialpha_version,
        "command": row.command,
        "created_at": row.created_at,
    }
    return columns if row.finished_at is None else {**columns, "finished_at": row.finished_at}


def _missing(value: object) -> bool:
    """None, NaN, pandas' NA and NaT."""
    return value is None or (isinstance(value, float) and np.isnan(value)) or type(value).__name__ in _NA_TYPES


_NA_TYPES = ("NAType", "NaTType")


def optional_value(value: object) -> Any:
    """`value` as a Python value (NumPy scalars unwrapped), None when missing (None, NaN, pandas' NA or NaT)."""
    if _missing(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


def certification_columns(row: CertificationRow) -> dict:
    """{column: value} of a certification row (the one place a certification row becomes columns)."""
    return _columns(row, CertificationColumn) | _columns(row.certification, CertificationColumn)


def drift_columns(row: DriftRow) -> dict:
    """{column: value} of a drift row (the one place a drift row becomes columns)."""
    return _columns(row, DriftColumn)


def drift_row(columns: Mapping[str, object]) -> DriftRow:
    """The drift row of a stored drift check's `columns` (a mapping: column -> value, as
    `drift_columns` gives them or `StoreQueries.drift_check` reads them back)."""
    values: dict[str, Any] = {
        field.name: columns.get(DriftColumn(field.name)) for field in fields(DriftRow) if field.name != "estimate"
    }
    values["verdict"] = DriftVerdict(values["verdict"])
    values["status"] = None if values["status"] is None else WindowStatus(values["status"])
    return DriftRow(**values, estimate={name: columns.get(name) for name in DRIFT_ESTIMATES})


def _columns(row: object, names: type[StrEnum]) -> dict:
    """{column: value} of the fields of `row` that are columns `names` (each checked: a field that
    is no column raises ValueError), and of its mappings of columns (estimates, metrics, bounds)."""
    columns: dict = {}
    for field in fields(row):  # type: ignore[arg-type]
        value = getattr(row, field.name)
        if isinstance(value, Mapping):
            columns.update(value)
        elif not is_dataclass(value):
            columns[names(field.name)] = value
    return columns


# Per-example indicator vectors, compact: one bit per training example, little-endian bit order.


def pack_bits(indicators: npt.ArrayLike) -> bytes:
    """Pack a 1-D boolean vector of length n into ceil(n / 8) bytes.

    Example i is bit (i % 8), least significant first, of byte i // 8; padding bits are 0.
    """
    vector = np.asarray(indicators)
    if vector.ndim != 1 or vector.dtype != np.bool_:
        raise UserError(f"indicators: expected a 1-D boolean array, got shape {vector.shape} dtype {vector.dtype}")
    return np.packbits(vector, bitorder="little").tobytes()


def unpack_bits(data: bytes, n: int) -> np.ndarray:
    """Unpack `pack_bits` output back into a boolean vector of length n."""
    if n < 0 or len(data) != (n + 7) // 8:
        raise UserError(f"bits: {len(data)} bytes cannot hold exactly n={n} indicators (need {(n + 7) // 8})")
    return np.unpackbits(np.frombuffer(data, dtype=np.uint8), count=n, bitorder="little").astype(bool)


def config_key(**fields: object) -> str:
    """Return the first 32 hex chars of sha256 over a canonical JSON of `fields`.

    Key order is irrelevant. Every real number (int, float, numpy scalar; not bool) is
    normalised to a float, so C=1, C=1.0 and C=np.float32(1) agree; -0.0 counts as 0.0.
    Values may be None, bool, str, numbers, and lists/tuples/dicts of those.
    """
    canonical = {name: _canonical(value, name) for name, value in fields.items()}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_HEX_CHARS]


def _canonical(value: object, path: str) -> object:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Real):  # includes numpy integers and floats
        return float(value) + 0.0  # -0.0 + 0.0 == 0.0; json writes floats with repr
    if isinstance(value, (list, tuple)):
        return [_canonical(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): _canonical(v, f"{path}.{k}") for k, v in value.items()}
    raise UserError(
        f"config_key field {path!r}: unsupported type {type(value).__name__} (use str, number, bool, None, list or "
        "dict)"
    )
