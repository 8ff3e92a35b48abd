"""The stored layout of every dataset of a xialpha store: each column's Arrow type, whether writers
must fill it and what it means (`Column`), the Arrow schemas, and each dataset's key (`DATASETS`).
The columns' names, and the values of the columns that hold a mode, are `xialpha.storage.schema`'s.

SCHEMA_VERSION 1. Every column is stored as a standard Parquet type that pyarrow, pandas and
DuckDB read alike: strings, booleans, int32/int64, float64, binary and timestamp[us, tz=UTC].
All Arrow fields are nullable; `Column.required` says which ones a writer must fill.

Results dataset (one row per trained configuration, partitioned `results/sweep_id=<id>/`):

identity
    sweep_id            str    the sweep (letters, digits, ``-_.``; 1-64 chars)
    run_id              str    one invocation of the sweep (a rerun gets a new run_id)
    config_key          str    `config_key(...)` of everything that determines the result
    status              str    "ok" or "failed"
    error_message       str?   why a failed config failed (required when status == "failed")
    data_fingerprint    str    fingerprint of the training documents and labels
    category            str    the category trained one-vs-rest
preprocessing (all nullable except preprocessing_id)
    preprocessing_id    str    stable id of the preprocessing settings
    pp_lowercase bool, pp_token_pattern str, pp_stop_words str, pp_stemming str,
    pp_min_df float64, pp_max_df float64 (document counts >= 1 or fractions < 1),
    pp_tf str, pp_idf str, pp_norm str
kernel
    kernel str ("linear", "rbf", ...), kernel_id str, gamma float64?, degree int32?, coef0 float64?
parameters
    C float64 (soft-margin cost), j float64 (cost factor of positive errors), rho float64 (xi-alpha rho)
training
    n int64 (training examples), n_pos int64 (positives), n_sv int64?, n_bounded_sv int64?
    (alpha_i == C_i), stable bool? (solver converged), r_delta2 float64? (R_delta^2),
    fit_seconds float64?, estimate_seconds float64?
estimates, for each registered estimator p (`xialpha.estimators.registry`, in its order)
    p_d_pos int64?    positive examples counted as errors (false negatives)
    p_d_neg int64?    negative examples counted as errors (false positives)
    p_error, p_recall, p_precision, p_f1 float64?   fractions in [0, 1]; NaN = undefined
    then each estimator's own columns, in registry order: xa_d int64? (d = d_pos + d_neg),
    loo_retrains int64?, holdout_n int64?, holdout_n_pos int64?, kfold_k int32?,
    span_d_pos_low, span_d_pos_high, span_d_neg_low, span_d_neg_high int64? (a configuration whose
    span estimate was decided by bounds, [estimators] span_prune: the range of its counts, its span
    estimate columns null; null on every other row), xa_ext_depth int32?
provenance
    worker str (host that trained), xialpha_version str, created_at timestamp[us, UTC],
    schema_version int32 (the writer's SCHEMA_VERSION)

Examples dataset (one row per config and estimator, partitioned like results): per-example
"counted as error" indicators for paired significance tests. `bits` is `np.packbits(v,
bitorder="little")`: example i is bit (i % 8), least significant first, of byte i // 8; the
padding bits of the last byte are 0.

Selections, certifications, drift and sweeps (the spec of each run): their columns are
SELECTION_COLUMNS, CERTIFICATION_COLUMNS, DRIFT_COLUMNS and SWEEP_COLUMNS below, which
`xialpha.storage.validate.typed_table` conforms xialpha's rows to; the store itself types these datasets
by the rows appended (`ResultStore.append`), keyed by their id columns and partitioned by
sweep_id.

Estimators: each registered estimator's estimate columns (`xialpha.storage.schema.estimate_columns`)
and its own columns (declared in `xialpha.estimators.registry`) follow the results columns above,
in the registry's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from xialpha.estimators import registry
from xialpha.storage.schema import (
    CERTIFICATION_BOUNDS,
    DRIFT_ESTIMATES,
    ESTIMATORS,
    P_VALUES,
    PP_PREFIX,
    RUNNER_UP,
    SELECTION_ESTIMATES,
    CertificationColumn,
    DriftColumn,
    SelectionColumn,
    SweepColumn,
)

SCHEMA_VERSION = 1

TIMESTAMP = pa.timestamp("us", tz="UTC")
# column types by name (in `_table`, `_columns` and the registry's ExtraColumn)
_TYPES = {
    "str": pa.string(),
    "bool": pa.bool_(),
    "int": pa.int64(),
    "int32": pa.int32(),
    "float": pa.float64(),
    "binary": pa.binary(),
    "time": TIMESTAMP,
}


@dataclass(frozen=True)
class Column:
    """One stored column: its Arrow type, whether writers must fill it, and what it means."""

    name: str
    type: pa.DataType
    required: bool
    doc: str


def _col(name: str, type_: pa.DataType, doc: str, *, required: bool = False) -> Column:
    return Column(name, type_, required, doc)


def _estimate_column_defs(prefix: str) -> list[Column]:
    return [
        _col(f"{prefix}_d_pos", pa.int64(), f"{prefix}: positive examples counted as errors (false negatives)"),
        _col(f"{prefix}_d_neg", pa.int64(), f"{prefix}: negative examples counted as errors (false positives)"),
        _col(f"{prefix}_error", pa.float64(), f"{prefix}: estimated error rate, fraction 0..1"),
        _col(f"{prefix}_recall", pa.float64(), f"{prefix}: estimated recall, fraction 0..1; NaN if undefined"),
        _col(f"{prefix}_precision", pa.float64(), f"{prefix}: estimated precision, fraction 0..1; NaN if undefined"),
        _col(f"{prefix}_f1", pa.float64(), f"{prefix}: estimated F1, fraction 0..1; NaN if undefined"),
    ]


# The preprocessing parameters a results row holds (as pp_<parameter>): type and meaning.
PREPROCESSING = {
    "lowercase": (pa.bool_(), "lowercase the text"),
    "token_pattern": (pa.string(), "token regular expression"),
    "stop_words": (pa.string(), "stop word list name"),
    "stemming": (pa.string(), "stemmer name"),
    "min_df": (pa.float64(), "min document frequency (count >= 1 or fraction < 1)"),
    "max_df": (pa.float64(), "max document frequency (count >= 1 or fraction <= 1)"),
    "tf": (pa.string(), "term frequency weighting"),
    "idf": (pa.string(), "inverse document frequency weighting"),
    "norm": (pa.string(), "vector normalisation"),
}


def _table(text: str) -> tuple[Column, ...]:
    """Columns from lines "name type doc": type one of _TYPES, with "!" when writers must fill it."""
    columns = []
    for line in text.strip().splitlines():
        name, kind, doc = line.split(maxsplit=2)
        columns.append(_col(name, _TYPES[kind.rstrip("!")], doc, required=kind.endswith("!")))
    return tuple(columns)


RESULT_COLUMNS: tuple[Column, ...] = (
    *_table("""
        sweep_id            str!    sweep id (letters, digits, -_.; 1-64 chars)
        run_id              str!    one invocation of the sweep
        config_key          str!    config_key() of everything that determines the result
        status              str!    "ok" or "failed"
        error_message       str     why the config failed; required when status is failed
        data_fingerprint    str!    fingerprint of the training documents and labels
        category            str!    category trained one-vs-rest
        preprocessing_id    str!    stable id of the preprocessing settings"""),
    *[_col(f"{PP_PREFIX}{name}", type_, f"preprocessing: {doc}") for name, (type_, doc) in PREPROCESSING.items()],
    *_table("""
        kernel              str!    kernel name ("linear", "rbf", "poly", ...)
        kernel_id           str!    stable id of kernel and kernel parameters
        gamma               float   kernel gamma (rbf, poly)
        degree              int32   polynomial kernel degree
        coef0               float   polynomial kernel coef0
        C                   float!  soft-margin cost C
        j                   float!  cost factor: positive training errors cost j times more
        rho                 float!  rho of the xi-alpha estimator
        n                   int!    training examples
        n_pos               int!    positive training examples
        n_sv                int     support vectors (alpha_i > 0)
        n_bounded_sv        int     bounded support vectors (alpha_i at its upper bound)
        stable              bool    an unbounded SV exists (0 < alpha_i < C_i): the seed's stability condition
        r_delta2            float   R_delta^2: max K(x,x) - min K(x,x') bound used by xi-alpha
        fit_seconds         float   wall seconds spent training
        estimate_seconds    float   wall seconds spent computing the estimates"""),
    *[column for prefix in ESTIMATORS for column in _estimate_column_defs(prefix)],
    *[_col(c.name, _TYPES[c.type], c.doc) for estimator in registry.ESTIMATORS for c in estimator.columns],
    *_table("""
        worker              str!    host that trained the config (default: this host)
        xialpha_version     str!    xialpha version of the writer (default: this one)
        created_at          time!   when the row was produced, UTC (default: write time)
        schema_version      int32!  SCHEMA_VERSION of the writer (default: this one)"""),
)

EXAMPLE_COLUMNS: tuple[Column, ...] = _table("""
    sweep_id      str!     sweep id, as in results
    config_key    str!     config_key of the results row
    category      str!     category trained one-vs-rest
    estimator     str!     estimator prefix from ESTIMATORS
    n             int!     length of the indicator vector (training examples)
    bits          binary!  np.packbits(counted_as_error, bitorder='little')
    created_at    time!    when the row was produced, UTC (default: write time)""")


_RESULT_TYPES = {c.name: c.type for c in RESULT_COLUMNS}
# The results columns a selection copies for its chosen config (enough to rebuild and label it).
CONFIG_COLUMNS = (
    "config_key",
    "data_fingerprint",
    "preprocessing_id",
    *(f"{PP_PREFIX}{name}" for name in PREPROCESSING),
    "kernel",
    "kernel_id",
    "gamma",
    "degree",
    "coef0",
    "C",
    "j",
    "n",
    "n_pos",
    "n_sv",
    "n_bounded_sv",
    "stable",
    "r_delta2",
)


def _columns(doc: str, type_: str, names: tuple[str, ...]) -> tuple[Column, ...]:
    return tuple(_col(str(name), _TYPES[type_], doc) for name in names)


S = SelectionColumn
# Selections: one row per category (xialpha.selection): the objective, the chosen config, its
# estimates (estimate_*: completed metrics and counts of the selection estimator), the first
# runner-up and the p-values against it (NaN where not computed), and what the tests found:
# `significant` (a test at `alpha` separates the choice from its first runner-up; null when no
# test ran), how many runners-up were compared, tested and found significantly worse (null when
# none was tested), and `untested`: why no test ran (null when every runner-up was tested).
SELECTION_COLUMNS: tuple[Column, ...] = (
    *_columns("selection", "str", (S.SELECTION_ID, S.SWEEP_ID, S.CATEGORY, S.MODE, S.METRIC, S.ESTIMATOR)),
    *_columns("selection", "float", (S.RHO,)),
    *_columns("selection", "str", (S.AVERAGE,)),
    *_columns("selection", "bool", (S.SMOOTH_C,)),
    *_columns("selection", "float", (S.COST_FN, S.COST_FP, S.ALPHA, S.VALUE, S.SELECTION_VALUE)),
    *(_col(name, _RESULT_TYPES[name], f"chosen config: {name}, as in results") for name in CONFIG_COLUMNS),
    *_columns("estimate of the chosen config", "float", tuple(SELECTION_ESTIMATES.values())),
    *_columns("first runner-up", "str", tuple(RUNNER_UP)[:3]),
    *_columns("first runner-up", "float", tuple(RUNNER_UP)[3:]),
    *_columns("p-value, chosen vs first runner-up", "float", P_VALUES),
    *_columns("significance", "bool", (S.SIGNIFICANT,)),
    *_columns(
        "significance",
        "int",
        (S.N_RUNNERS_UP, S.N_CANDIDATES, S.N_RUNNERS_UP_SIGNIFICANT, S.N_RUNNERS_UP_TESTED),
    ),
    *_columns("significance", "str", (S.UNTESTED,)),
    *_columns("provenance", "str", (S.XIALPHA_VERSION,)),
    *_columns("provenance", "time", (S.CREATED_AT,)),
)


Cert = CertificationColumn
# Certifications: one row per category, then "(micro)" and "(macro)" (xialpha.selection.certification).
CERTIFICATION_COLUMNS: tuple[Column, ...] = (
    *_columns("certification", "str", (Cert.CERTIFICATION_ID, Cert.SWEEP_ID, Cert.SELECTION_ID, Cert.TEST_SPLIT)),
    *_columns("certification", "str", (Cert.TEST_FINGERPRINT,)),
    *_columns("certification", "int", (Cert.N_TEST,)),
    *_columns("certification", "str", (Cert.CATEGORY, Cert.SCOPE, Cert.CONFIG_KEY)),
    *_columns("certification", "int", (Cert.TP, Cert.FP, Cert.FN, Cert.TN)),
    *_columns(
        "test-set metric or one-sided bound, fraction 0..1",
        "float",
        (Cert.ERROR, Cert.RECALL, Cert.PRECISION, Cert.F1, *CERTIFICATION_BOUNDS),
    ),
    *_columns("certification", "float", (Cert.CONFIDENCE,)),
    *_columns("certification", "int", (Cert.DRAWS,)),
    *_columns("certification", "bool", (Cert.FORCED,)),
    *_columns("certification", "int", (Cert.PREVIOUS_CERTIFICATIONS,)),
    *_columns("certification", "bool", (Cert.INDEPENDENT,)),
    *_columns("certification", "str", (Cert.XIALPHA_VERSION,)),
    *_columns("certification", "time", (Cert.CREATED_AT,)),
)


D = DriftColumn
# Drift checks: one row per config x category x window (xialpha.jobs.drift_check); errors are fractions
# 0..1 (NaN where undefined); verdict a DriftVerdict, repeated on each row of a group.
DRIFT_COLUMNS: tuple[Column, ...] = (
    *_columns(
        "drift check",
        "str",
        (D.CHECK_ID, D.CHECK_KEY, D.SWEEP_ID, D.RUN_ID, D.DATA_FINGERPRINT, D.NEWEST_BATCH, D.CATEGORY),
    ),
    *_columns(
        "drift check",
        "str",
        (D.PREPROCESSING_ID, D.KERNEL, D.KERNEL_ID, D.WINDOW_FIRST_BATCH, D.STATUS, D.ERROR_MESSAGE),
    ),
    *_columns("drift check", "str", (D.VERDICT, D.CHECK_ERROR)),
    *_columns("drift check", "int", (D.N_BATCHES, D.WINDOW, D.N, D.N_POS, D.N_SV, D.N_NEWEST, D.N_NEWEST_POS)),
    *_columns("drift check", "int", DRIFT_ESTIMATES[:2]),
    *_columns("drift check", "int", (D.CHOSEN_WINDOW, D.FULL_WORSE, D.CHOSEN_WORSE)),
    *_columns("drift check", "float", (D.C, D.J, D.RHO, D.R_DELTA2)),
    *_columns("drift check", "float", DRIFT_ESTIMATES[2:]),
    *_columns("drift check", "float", (D.CHOSEN_ERROR, D.FULL_ERROR, D.P_VALUE, D.MARGIN_POINTS, D.ALPHA)),
    *_columns("drift check", "bool", (D.FULL_MEMORY, D.CHOSEN)),
    *_columns("drift check", "time", (D.CHECKED_AT,)),
)

# Sweeps: one row per run of a sweep, with the spec it ran (xialpha.jobs.sweep); written again
# with `finished_at` when the run ends (done, failed or interrupted), so a reader knows it ended.
W = SweepColumn
SWEEP_COLUMNS: tuple[Column, ...] = (
    *_columns(
        "sweep run",
        "str",
        (W.SWEEP_ID, W.RUN_ID, W.SPEC_TOML, W.SPEC_DIR, W.DATA_FINGERPRINT, W.CATEGORIES, W.XIALPHA_VERSION, W.COMMAND),
    ),
    *_columns("sweep run", "time", (W.CREATED_AT, W.FINISHED_AT)),
)


def _schema(columns: tuple[Column, ...], dataset: str) -> pa.Schema:
    metadata = {"xialpha.dataset": dataset, "xialpha.schema_version": str(SCHEMA_VERSION)}
    return pa.schema([pa.field(c.name, c.type, metadata={"doc": c.doc}) for c in columns], metadata=metadata)


def results_schema() -> pa.Schema:
    """The Arrow schema of the results dataset (field metadata "doc" describes each column)."""
    return _schema(RESULT_COLUMNS, "results")


def examples_schema() -> pa.Schema:
    """The Arrow schema of the per-example indicator dataset."""
    return _schema(EXAMPLE_COLUMNS, "examples")


@dataclass(frozen=True)
class Dataset:
    """A dataset of the store: its key, fixed columns (if any) and status column (if any).

    Reads return one row per key: the newest, where newest means written last (see
    `xialpha.storage.reading`). With a `status_column`, a row whose status is `ResultStatus.OK` wins
    over every row of its key that is not OK, however new: a failed attempt never hides a result.
    """

    name: str
    key_columns: tuple[str, ...]
    columns: tuple[Column, ...] | None  # None: typed by the rows appended
    status_column: str | None = None
    # the columns xialpha's own rows have (`typed_table` conforms them) where `columns` is None
    row_columns: tuple[Column, ...] | None = None

    def schema(self) -> pa.Schema | None:
        return None if self.columns is None else _schema(self.columns, self.name)


DATASETS: dict[str, Dataset] = {
    "results": Dataset("results", ("sweep_id", "config_key"), RESULT_COLUMNS, status_column="status"),
    "examples": Dataset("examples", ("sweep_id", "config_key", "estimator"), EXAMPLE_COLUMNS),
    "selections": Dataset("selections", (S.SELECTION_ID, S.CATEGORY), None, row_columns=SELECTION_COLUMNS),
    "drift": Dataset("drift", ("check_id",), None, row_columns=DRIFT_COLUMNS),
    "certifications": Dataset(
        "certifications", (Cert.CERTIFICATION_ID, Cert.CATEGORY), None, row_columns=CERTIFICATION_COLUMNS
    ),
    "sweeps": Dataset("sweeps", ("run_id",), None, row_columns=SWEEP_COLUMNS),
}
