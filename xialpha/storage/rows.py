"""Typed rows of every dataset xialpha writes: what a sweep, a selection, a certification and a
drift check store, by field.

A sweep's tasks build `ResultRow`s (a trained configuration at one rho), `FailedRow`s (one that
failed for its data) and `ExampleRow`s (its per-example indicators); the sweep records each run
as a `RunRow`. A saved selection is `SelectionRow`s (one per category, with its `RunnerUp` and
`Significance`), a certification `CertificationRow`s, a drift check `DriftRow`s. `ResultStore`
turns them into columns here (`*_columns`; `selection_frame` for many selection rows at once) and
into Arrow by the schema (`xialpha.storage.schema`), so the code that builds them names no
column; `selection_row` reads a stored selection's columns back into a row. An
`ExampleRow`'s indicators are packed one bit per training example (`pack_bits`, `unpack_bits`).
A row's configuration is named by `config_key`, with which sweeps resume and reads deduplicate.

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
import pyarrow as pa

from xialpha.errors import UserError
from xialpha.storage.schema import (
    CONFIG_COLUMNS,
    DATASETS,
    DRIFT_ESTIMATES,
    LEGACY_N_NOT_SIGNIFICANT,
    LEGACY_NOT_SIGNIFICANT,
    P_VALUES,
    RUNNER_UP,
    SELECTION_ESTIMATES,
    CertificationColumn,
    CertificationScope,
    DriftColumn,
    DriftVerdict,
    ResultStatus,
    SelectionColumn,
    SelectionMode,
    WindowStatus,
    config_values,
)

if TYPE_CHECKING:
    import pandas as pd

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
class RunnerUp:
    """The first runner-up of a selection row: its configuration (config key, preprocessing,
    kernel, C, j), its value of the objective and what it was ranked by."""

    config_key: str
    preprocessing_id: str
    kernel_id: str
    C: float
    j: float
    value: float
    selection_value: float


@dataclass(frozen=True, slots=True)
class Significance:
    """What the significance tests of a choice against its runners-up found: the p-values against
    the first (`p_values`: each of P_VALUES, NaN where that test did not run), whether a test at
    the selection's alpha separates the choice from it (None: no test ran), how many runners-up
    were compared, how many of them a test ran on, how many a test found significantly worse
    (None when none was tested) and, when a runner-up went untested, why (`untested`)."""

    p_values: Mapping[str, float]
    significant: bool | None
    n_runners_up: int
    n_tested: int
    n_significant: int | None
    untested: str | None


@dataclass(frozen=True, slots=True)
class SelectionRow:
    """One category of a saved selection: the objective (metric of estimator at rho; average and
    mode; smooth_c: ranked by values averaged over C neighbours; costs), the significance level,
    the chosen configuration (`config`: its CONFIG_COLUMNS as in results), its value of the
    objective and what it was ranked by (`selection_value`), its estimates (`estimates`: METRICS
    and COUNTS of the selection estimator), its first runner-up (None without one), the tests'
    findings and how many candidates were ranked."""

    selection_id: str
    sweep_id: str
    category: str
    mode: SelectionMode | None  # None where the rows do not say (a frame built without it)
    metric: str
    estimator: str
    rho: float
    average: str | None
    smooth_c: bool | None
    cost_fn: float
    cost_fp: float
    alpha: float
    value: float
    selection_value: float
    config: Mapping[str, object]
    estimates: Mapping[str, float]
    runner_up: RunnerUp | None
    significance: Significance
    n_candidates: int
    xialpha_version: str
    created_at: datetime.datetime


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


def selection_columns(row: SelectionRow) -> dict:
    """{column: value} of a selection row (the one place a selection row becomes columns)."""
    S = SelectionColumn
    runner_up = row.runner_up
    tests = row.significance
    first = dict.fromkeys(RUNNER_UP) if runner_up is None else dict(zip(RUNNER_UP, _runner_up_values(runner_up)))
    return {
        S.SELECTION_ID: row.selection_id,
        S.SWEEP_ID: row.sweep_id,
        S.CATEGORY: row.category,
        S.MODE: row.mode,
        S.METRIC: row.metric,
        S.ESTIMATOR: row.estimator,
        S.RHO: row.rho,
        S.AVERAGE: row.average,
        S.SMOOTH_C: row.smooth_c,
        S.COST_FN: row.cost_fn,
        S.COST_FP: row.cost_fp,
        S.ALPHA: row.alpha,
        S.VALUE: row.value,
        S.SELECTION_VALUE: row.selection_value,
        **{name: row.config.get(name) for name in CONFIG_COLUMNS},
        **{column: row.estimates.get(name) for name, column in SELECTION_ESTIMATES.items()},
        **first,
        **{name: tests.p_values.get(name, float("nan")) for name in P_VALUES},
        S.SIGNIFICANT: tests.significant,
        S.N_RUNNERS_UP: tests.n_runners_up,
        S.N_CANDIDATES: row.n_candidates,
        S.N_RUNNERS_UP_SIGNIFICANT: tests.n_significant,
        S.N_RUNNERS_UP_TESTED: tests.n_tested,
        S.UNTESTED: tests.untested,
        S.XIALPHA_VERSION: row.xialpha_version,
        S.CREATED_AT: row.created_at,
    }


def selection_frame(columns: Mapping[str, object], n: int) -> pd.DataFrame:
    """`n` selection rows given by column (SELECTION_COLUMNS name -> n values; a column not given is
    null) as a DataFrame typed as the store gives them back: the columnar twin of `selection_columns`,
    for a selection of many categories."""
    table = pa.table(
        {
            column.name: _typed_array(columns.get(column.name), n, column.type)
            for column in DATASETS["selections"].row_columns or ()
        }
    )
    return table.to_pandas()


def _typed_array(values: object, n: int, type_: pa.DataType) -> pa.Array:
    """`values` (n of them, or None: all null) as an Arrow array of `type_`; NaN is null outside
    float columns, as `xialpha.storage.validate.typed_table` makes it."""
    if values is None:
        return pa.nulls(n, type_)
    if pa.types.is_timestamp(type_):
        return pa.array(list(values), type_)  # type: ignore[call-overload]
    return pa.array(np.asarray(values), type_, from_pandas=not pa.types.is_floating(type_))


def _runner_up_values(runner_up: RunnerUp) -> tuple:
    return (
        runner_up.config_key,
        runner_up.preprocessing_id,
        runner_up.kernel_id,
        runner_up.C,
        runner_up.j,
        runner_up.value,
        runner_up.selection_value,
    )


def selection_row(columns: Mapping[str, object]) -> SelectionRow:
    """The selection row of a stored selection's `columns` (a mapping: column -> value, as
    `selection_columns` gives them or `stored_selections` reads them back)."""
    S = SelectionColumn
    values = columns
    first = values.get(S.RUNNER_UP_CONFIG_KEY)
    runner_up = None if _missing(first) else RunnerUp(*(values.get(name) for name in RUNNER_UP))  # type: ignore[arg-type]
    significance = Significance(
        p_values={name: _number(values.get(name)) for name in P_VALUES},
        significant=optional_value(values.get(S.SIGNIFICANT)),
        n_runners_up=int(values.get(S.N_RUNNERS_UP) or 0),  # type: ignore[call-overload]
        n_tested=int(values.get(S.N_RUNNERS_UP_TESTED) or 0),  # type: ignore[call-overload]
        n_significant=optional_value(values.get(S.N_RUNNERS_UP_SIGNIFICANT)),
        untested=optional_value(values.get(S.UNTESTED)),
    )
    return SelectionRow(
        selection_id=values[S.SELECTION_ID],  # type: ignore[arg-type]
        sweep_id=values[S.SWEEP_ID],  # type: ignore[arg-type]
        category=values[S.CATEGORY],  # type: ignore[arg-type]
        mode=None if _missing(mode := values.get(S.MODE)) else SelectionMode(str(mode)),
        metric=values.get(S.METRIC),  # type: ignore[arg-type]
        estimator=values.get(S.ESTIMATOR),  # type: ignore[arg-type]
        rho=_number(values.get(S.RHO)),
        average=optional_value(values.get(S.AVERAGE)),
        smooth_c=optional_value(values.get(S.SMOOTH_C)),
        cost_fn=_number(values.get(S.COST_FN)),
        cost_fp=_number(values.get(S.COST_FP)),
        alpha=_number(values.get(S.ALPHA)),
        value=_number(values.get(S.VALUE)),
        selection_value=_number(values.get(S.SELECTION_VALUE)),
        config={name: values.get(name) for name in CONFIG_COLUMNS},
        estimates={name: _number(values.get(column)) for name, column in SELECTION_ESTIMATES.items()},
        runner_up=runner_up,
        significance=significance,
        n_candidates=int(values.get(S.N_CANDIDATES) or 0),  # type: ignore[call-overload]
        xialpha_version=values.get(S.XIALPHA_VERSION),  # type: ignore[arg-type]
        created_at=values.get(S.CREATED_AT),  # type: ignore[arg-type]
    )


def stored_selections(frame: pd.DataFrame) -> pd.DataFrame:
    """Stored selection rows (`frame`, as the store reads them) in this version's columns: rows
    stored before xialpha counted only the tests that ran (LEGACY_NOT_SIGNIFICANT,
    LEGACY_N_NOT_SIGNIFICANT; N_RUNNERS_UP_TESTED null) get SIGNIFICANT and, where their first
    runner-up was tested, the counts shown then (every runner-up tested: N_RUNNERS_UP); the legacy
    columns go."""
    import pandas as pd  # here: `xialpha store ls` reads the rows it lists without pandas

    S = SelectionColumn
    if LEGACY_NOT_SIGNIFICANT not in frame:
        return frame
    frame = frame.copy()
    not_significant = frame.pop(LEGACY_NOT_SIGNIFICANT)
    n_not_significant = pd.to_numeric(frame.pop(LEGACY_N_NOT_SIGNIFICANT), errors="coerce")
    n_runners_up = pd.to_numeric(frame[S.N_RUNNERS_UP], errors="coerce")
    legacy = frame[S.N_RUNNERS_UP_TESTED].isna() if S.N_RUNNERS_UP_TESTED in frame else pd.Series(True, frame.index)
    tested = legacy & not_significant.notna()
    significant = (
        frame[S.SIGNIFICANT].astype(object) if S.SIGNIFICANT in frame else pd.Series(None, frame.index, object)
    )
    frame[S.SIGNIFICANT] = significant.where(~legacy, [None if pd.isna(f) else not bool(f) for f in not_significant])
    for column, old in (
        (S.N_RUNNERS_UP_TESTED, n_runners_up.where(tested, 0)),
        (S.N_RUNNERS_UP_SIGNIFICANT, (n_runners_up - n_not_significant.fillna(0)).where(tested)),
    ):
        current = frame[column] if column in frame else pd.Series(np.nan, frame.index)
        frame[column] = pd.array(current.where(~legacy, old), dtype="Int64")
    return frame


def _missing(value: object) -> bool:
    """None, NaN, pandas' NA and NaT."""
    return value is None or (isinstance(value, float) and np.isnan(value)) or type(value).__name__ in _NA_TYPES


_NA_TYPES = ("NAType", "NaTType")


def optional_value(value: object) -> Any:
    """`value` as a Python value (NumPy scalars unwrapped), None when missing (None, NaN, pandas' NA or NaT)."""
    if _missing(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _number(value: object) -> float:
    return float("nan") if _missing(value) else float(value)  # type: ignore[arg-type]


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
