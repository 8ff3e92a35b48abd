"""The one definition of what a xialpha store holds: datasets, their columns and key columns.

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
    loo_retrains int64?, holdout_n int64?, holdout_n_pos int64?, kfold_k int32?, xa_ext_depth int32?
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

Estimators: ESTIMATORS names every estimator a results row can hold (the column prefix p), in
the order of `xialpha.estimators.registry`, which also declares each one's own columns;
`estimate_columns(p)` are its estimate columns and `estimate_values(estimate)` fills them from an
`xialpha.estimators.metrics.Estimate` (`result_values` adds its own columns): only this module
turns estimates into columns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeGuard

import pyarrow as pa

from xialpha.estimators import registry

if TYPE_CHECKING:
    from xialpha.estimators.metrics import Estimate
    from xialpha.features.kernels import Kernel
    from xialpha.features.preprocessing import Preprocessing

SCHEMA_VERSION = 1
_SWEEP_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SWEEP_ID_RULE = "1-64 letters, digits, '-', '_' or '.' (not '.' or '..' alone)"


def valid_sweep_id(value: object) -> TypeGuard[str]:
    """Whether `value` may name a sweep (or drift check): SWEEP_ID_RULE, safe as a path part."""
    return isinstance(value, str) and bool(_SWEEP_ID.fullmatch(value)) and value not in (".", "..")


ESTIMATORS = registry.NAMES  # the estimators a results row holds, by column prefix
COUNTS = ("d_pos", "d_neg")  # examples counted as errors among positives / negatives
METRICS = ("error", "recall", "precision", "f1")  # fractions from the counts: xialpha.estimators.metrics
SIZES = ("n", "n_pos")  # the training examples and positives a row's estimates count over


def estimate_column(prefix: str, name: str) -> str:
    """The results column of count or metric `name` (COUNTS, METRICS) of estimator `prefix`: <p>_<name>."""
    return f"{prefix}_{name}"


def estimate_columns(prefix: str) -> tuple[str, ...]:
    """The results columns of estimator `prefix`: <p>_d_pos, <p>_d_neg, <p>_error, ..., <p>_f1."""
    return tuple(estimate_column(prefix, name) for name in (*COUNTS, *METRICS))


def estimate_values(estimate: Estimate | None, prefix: str | None = None) -> dict:
    """{column: value} of an `xialpha.estimators.metrics.Estimate` under `prefix` (default: its method);
    all None when `estimate` is None (not computed; then `prefix` is needed). Fractional counts
    (averaged over resamples) are stored as null."""
    if estimate is None:
        if prefix is None:
            raise ValueError("estimate_values: a prefix is needed when estimate is None")
        return dict.fromkeys(estimate_columns(prefix))
    counts = [int(value) if float(value).is_integer() else None for value in (estimate.d_pos, estimate.d_neg)]
    metrics = estimate.metrics()
    return dict(zip(estimate_columns(prefix or estimate.method), [*counts, *(metrics[name] for name in METRICS)]))


def result_values(estimate: Estimate, settings: Mapping[str, object]) -> dict:
    """{column: value} of an estimate in a results row: `estimate_values` and the columns its
    estimator declares (settings: every [estimators] setting by key)."""
    return {**estimate_values(estimate), **registry.estimator(estimate.method).column_values(estimate, settings)}


def size_columns(prefix: str) -> tuple[str, str]:
    """The results columns of the examples and positives estimator `prefix` counts over: SIZES, or
    the held-out split's (holdout_n, holdout_n_pos) for an estimator that counts there."""
    return registry.estimator(prefix).sizes or SIZES


TIMESTAMP = pa.timestamp("us", tz="UTC")
# column types by name (in `_table`, `_typed` and the registry's ResultColumn)
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


PP_PREFIX = "pp_"  # results columns of preprocessing parameters: pp_<spec key>
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


def _typed(doc: str, *groups: str) -> tuple[Column, ...]:
    """Columns described by `doc`, from groups "<type>: name name ..." (type: str, int, float, bool, time)."""
    return tuple(
        _col(name, _TYPES[kind.strip()], doc)
        for kind, names in (group.split(":") for group in groups)
        for name in names.split()
    )


def config_values(preprocessing: Preprocessing, kernel: Kernel) -> dict:
    """The results columns of a configuration's preprocessing and kernel (an `xialpha.features`
    Preprocessing and Kernel): preprocessing_id, pp_<parameter> per preprocessing parameter, kernel
    (its name), kernel_id and the kernel's parameters (gamma, degree, coef0 where it has them)."""
    return {
        "preprocessing_id": preprocessing.id,
        **{f"{PP_PREFIX}{name}": value for name, value in preprocessing.params().items()},
        "kernel": kernel.name,
        "kernel_id": kernel.id,
        **{name: value for name, value in kernel.params().items() if name != "name"},
    }


class ResultColumn(StrEnum):
    """The names of the results columns that describe a row (not its estimates: `estimate_column`
    names those), for code that reads result rows as frames (selection, reports): each member
    equals its column's name, so `frame[ResultColumn.CATEGORY]` reads the category column."""

    SWEEP_ID = "sweep_id"
    RUN_ID = "run_id"
    CONFIG_KEY = "config_key"
    STATUS = "status"
    ERROR_MESSAGE = "error_message"
    DATA_FINGERPRINT = "data_fingerprint"
    CATEGORY = "category"
    PREPROCESSING_ID = "preprocessing_id"
    KERNEL = "kernel"
    KERNEL_ID = "kernel_id"
    GAMMA = "gamma"
    DEGREE = "degree"
    COEF0 = "coef0"
    C = "C"
    J = "j"
    RHO = "rho"
    N = "n"
    N_POS = "n_pos"
    N_SV = "n_sv"
    N_BOUNDED_SV = "n_bounded_sv"
    STABLE = "stable"
    R_DELTA2 = "r_delta2"
    FIT_SECONDS = "fit_seconds"
    ESTIMATE_SECONDS = "estimate_seconds"
    WORKER = "worker"
    XIALPHA_VERSION = "xialpha_version"
    CREATED_AT = "created_at"
    SCHEMA_VERSION = "schema_version"


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
# The chosen config's estimates in a selection row: estimate_<metric or count> (its selection estimator's).
SELECTION_ESTIMATES = {name: f"estimate_{name}" for name in (*METRICS, *COUNTS)}
# p-values of the chosen config against the first runner-up (xialpha.selection.significance).
P_VALUES = ("p_micro_sign", "p_mcnemar", "p_proportion", "p_macro_sign", "p_macro_t", "p_macro_rank_t")

# Columns that identify or date rows rather than describe them (ids, hashes, versions, times), in
# the order the tidy DataFrames of xialpha.reports.frames show them: last.
ID_COLUMNS = (
    "selection_id",
    "certification_id",
    "sweep_id",
    "run_id",
    "config_key",
    "data_fingerprint",
    "preprocessing_id",
    "kernel_id",
    "runner_up_config_key",
    "runner_up_preprocessing_id",
    "runner_up_kernel_id",
    "test_fingerprint",
    "worker",
    "xialpha_version",
    "schema_version",
    "created_at",
)

# Selections: one row per category (xialpha.selection.records): the objective, the chosen config,
# its estimates (estimate_*: completed metrics and counts of the selection estimator), the first
# runner-up and the p-values against it (NaN where not computed).
SELECTION_COLUMNS: tuple[Column, ...] = (
    *_typed(
        "selection",
        "str: selection_id sweep_id category mode metric estimator",
        "float: rho",
        "str: average",
        "bool: smooth_c",
        "float: cost_fn cost_fp alpha value selection_value",
    ),
    *(_col(name, _RESULT_TYPES[name], f"chosen config: {name}, as in results") for name in CONFIG_COLUMNS),
    *_typed("estimate of the chosen config", "float: " + " ".join(SELECTION_ESTIMATES.values())),
    *_typed(
        "first runner-up",
        "str: runner_up_config_key runner_up_preprocessing_id runner_up_kernel_id",
        "float: runner_up_C runner_up_j runner_up_value runner_up_selection_value",
    ),
    *_typed("p-value, chosen vs first runner-up", "float: " + " ".join(P_VALUES)),
    *_typed("significance", "bool: not_significant", "int: n_runners_up n_runners_up_not_significant n_candidates"),
    *_typed("provenance", "str: xialpha_version", "time: created_at"),
)

# Certifications: one row per category, then "(micro)" and "(macro)" (xialpha.selection.certification).
CERTIFICATION_BOUNDS = ("error_upper", "recall_lower", "precision_lower", "f1_lower")
CERTIFICATION_COLUMNS: tuple[Column, ...] = (
    *_typed(
        "certification",
        "str: certification_id sweep_id selection_id test_split test_fingerprint",
        "int: n_test",
        "str: category scope config_key",
        "int: tp fp fn tn",
    ),
    *_typed(
        "test-set metric or one-sided bound, fraction 0..1", "float: " + " ".join((*METRICS, *CERTIFICATION_BOUNDS))
    ),
    *_typed(
        "certification",
        "float: confidence",
        "int: draws",
        "bool: forced",
        "int: previous_certifications",
        "bool: independent",
        "str: xialpha_version",
        "time: created_at",
    ),
)

# Drift checks: one row per config x category x window (xialpha.jobs.drift); errors are fractions
# 0..1 (NaN where undefined); verdict "drift", "no drift" or "failed", repeated on each row of a group.
DRIFT_COLUMNS: tuple[Column, ...] = (
    *_typed(
        "drift check",
        "str: check_id check_key sweep_id run_id data_fingerprint newest_batch category",
        "str: preprocessing_id kernel kernel_id window_first_batch status error_message verdict check_error",
        "int: n_batches window n n_pos n_sv n_newest n_newest_pos",
        "int: " + " ".join(estimate_columns("xa")[:2]),
        "int: chosen_window full_worse chosen_worse",
        "float: C j rho r_delta2",
        "float: " + " ".join(estimate_columns("xa")[2:]),
        "float: chosen_error full_error p_value margin_points alpha",
        "bool: full_memory chosen",
        "time: checked_at",
    ),
)

# Sweeps: one row per run of a sweep, with the spec it ran (xialpha.jobs.sweep); written again
# with `finished_at` when the run ends (done, failed or interrupted), so a reader knows it ended.
SWEEP_COLUMNS: tuple[Column, ...] = _typed(
    "sweep run",
    "str: sweep_id run_id spec_toml spec_dir data_fingerprint categories xialpha_version command",
    "time: created_at finished_at",
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


OK, FAILED = "ok", "failed"  # the statuses of a results row


@dataclass(frozen=True)
class Dataset:
    """A dataset of the store: its key, fixed columns (if any) and status column (if any).

    Reads return one row per key: the newest, where newest means written last (see
    `xialpha.storage.reading`). With a `status_column`, a row whose status is OK ("ok") wins
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
    "selections": Dataset("selections", ("selection_id", "category"), None, row_columns=SELECTION_COLUMNS),
    "drift": Dataset("drift", ("check_id",), None, row_columns=DRIFT_COLUMNS),
    "certifications": Dataset(
        "certifications", ("certification_id", "category"), None, row_columns=CERTIFICATION_COLUMNS
    ),
    "sweeps": Dataset("sweeps", ("run_id",), None, row_columns=SWEEP_COLUMNS),
}
