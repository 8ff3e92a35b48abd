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

Estimators: ESTIMATORS names every estimator a results row can hold (the column prefix p), in
the order of `xialpha.estimators.registry`, which also declares each one's own columns;
`estimate_columns(p)` are its estimate columns and `estimate_values(estimate)` fills them from an
`xialpha.estimators.metrics.Estimate` (`result_values` adds its own columns): only this module
turns estimates into columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import pyarrow as pa

from xialpha.estimators import METRICS, registry

if TYPE_CHECKING:
    from xialpha.estimators.metrics import Estimate
    from xialpha.features.kernels import Kernel
    from xialpha.features.preprocessing import Preprocessing

SCHEMA_VERSION = 1
ESTIMATORS = registry.NAMES  # the estimators a results row holds, by column prefix
COUNTS = ("d_pos", "d_neg")  # examples counted as errors among positives / negatives
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
# column types by name (in `_table`, `_typed` and the registry's ExtraColumn)
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


class SelectionColumn(StrEnum):
    """The names of the "selections" columns (one row per category of a saved selection), for code
    that reads selections as frames; the chosen configuration's columns are CONFIG_COLUMNS (named as
    in results), its estimates SELECTION_ESTIMATES, the p-values P_VALUES."""

    SELECTION_ID = "selection_id"
    SWEEP_ID = "sweep_id"
    CATEGORY = "category"
    MODE = "mode"
    METRIC = "metric"
    ESTIMATOR = "estimator"
    RHO = "rho"
    AVERAGE = "average"
    SMOOTH_C = "smooth_c"
    COST_FN = "cost_fn"
    COST_FP = "cost_fp"
    ALPHA = "alpha"
    VALUE = "value"
    SELECTION_VALUE = "selection_value"
    CONFIG_KEY = "config_key"
    ESTIMATE_ERROR = "estimate_error"
    ESTIMATE_RECALL = "estimate_recall"
    ESTIMATE_PRECISION = "estimate_precision"
    ESTIMATE_F1 = "estimate_f1"
    ESTIMATE_D_POS = "estimate_d_pos"
    ESTIMATE_D_NEG = "estimate_d_neg"
    RUNNER_UP_CONFIG_KEY = "runner_up_config_key"
    RUNNER_UP_PREPROCESSING_ID = "runner_up_preprocessing_id"
    RUNNER_UP_KERNEL_ID = "runner_up_kernel_id"
    RUNNER_UP_C = "runner_up_C"
    RUNNER_UP_J = "runner_up_j"
    RUNNER_UP_VALUE = "runner_up_value"
    RUNNER_UP_SELECTION_VALUE = "runner_up_selection_value"
    P_MICRO_SIGN = "p_micro_sign"
    P_MCNEMAR = "p_mcnemar"
    P_PROPORTION = "p_proportion"
    P_MACRO_SIGN = "p_macro_sign"
    P_MACRO_T = "p_macro_t"
    P_MACRO_RANK_T = "p_macro_rank_t"
    SIGNIFICANT = "significant"
    N_RUNNERS_UP = "n_runners_up"
    N_CANDIDATES = "n_candidates"
    N_RUNNERS_UP_SIGNIFICANT = "n_runners_up_significant"
    N_RUNNERS_UP_TESTED = "n_runners_up_tested"
    UNTESTED = "untested"
    XIALPHA_VERSION = "xialpha_version"
    CREATED_AT = "created_at"


class SelectionMode(StrEnum):
    """How a selection chose: one configuration per category, or one shared by all (--global)."""

    CATEGORY = "category"
    GLOBAL = "global"


# The chosen config's estimates in a selection row: estimate_<metric or count> (its selection estimator's).
SELECTION_ESTIMATES = {
    "error": SelectionColumn.ESTIMATE_ERROR,
    "recall": SelectionColumn.ESTIMATE_RECALL,
    "precision": SelectionColumn.ESTIMATE_PRECISION,
    "f1": SelectionColumn.ESTIMATE_F1,
    "d_pos": SelectionColumn.ESTIMATE_D_POS,
    "d_neg": SelectionColumn.ESTIMATE_D_NEG,
}
# p-values of the chosen config against the first runner-up (xialpha.selection.significance).
P_VALUES = (
    SelectionColumn.P_MICRO_SIGN,
    SelectionColumn.P_MCNEMAR,
    SelectionColumn.P_PROPORTION,
    SelectionColumn.P_MACRO_SIGN,
    SelectionColumn.P_MACRO_T,
    SelectionColumn.P_MACRO_RANK_T,
)
# The first runner-up's columns of a selection row: the results column each copies.
RUNNER_UP = {
    SelectionColumn.RUNNER_UP_CONFIG_KEY: ResultColumn.CONFIG_KEY,
    SelectionColumn.RUNNER_UP_PREPROCESSING_ID: ResultColumn.PREPROCESSING_ID,
    SelectionColumn.RUNNER_UP_KERNEL_ID: ResultColumn.KERNEL_ID,
    SelectionColumn.RUNNER_UP_C: ResultColumn.C,
    SelectionColumn.RUNNER_UP_J: ResultColumn.J,
    SelectionColumn.RUNNER_UP_VALUE: SelectionColumn.VALUE,
    SelectionColumn.RUNNER_UP_SELECTION_VALUE: SelectionColumn.SELECTION_VALUE,
}
# Columns of selection rows stored before xialpha counted only the significance tests that ran
# (`xialpha.storage.rows.selection_frame` reads them as SIGNIFICANT and N_RUNNERS_UP_SIGNIFICANT).
LEGACY_NOT_SIGNIFICANT, LEGACY_N_NOT_SIGNIFICANT = "not_significant", "n_runners_up_not_significant"


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


class CertificationColumn(StrEnum):
    """The names of the "certifications" columns: one row per category, then "(micro)" and
    "(macro)" (`scope`), of one certification of a saved selection on a sealed test split."""

    CERTIFICATION_ID = "certification_id"
    SWEEP_ID = "sweep_id"
    SELECTION_ID = "selection_id"
    TEST_SPLIT = "test_split"
    TEST_FINGERPRINT = "test_fingerprint"
    N_TEST = "n_test"
    CATEGORY = "category"
    SCOPE = "scope"
    CONFIG_KEY = "config_key"
    TP = "tp"
    FP = "fp"
    FN = "fn"
    TN = "tn"
    ERROR = "error"
    RECALL = "recall"
    PRECISION = "precision"
    F1 = "f1"
    ERROR_UPPER = "error_upper"
    RECALL_LOWER = "recall_lower"
    PRECISION_LOWER = "precision_lower"
    F1_LOWER = "f1_lower"
    CONFIDENCE = "confidence"
    DRAWS = "draws"
    FORCED = "forced"
    PREVIOUS_CERTIFICATIONS = "previous_certifications"
    INDEPENDENT = "independent"
    XIALPHA_VERSION = "xialpha_version"
    CREATED_AT = "created_at"


class CertificationScope(StrEnum):
    """What a certification row is of: one category, or the micro or macro average."""

    CATEGORY = "category"
    MICRO = "micro"
    MACRO = "macro"


R = CertificationColumn
# Certifications: one row per category, then "(micro)" and "(macro)" (xialpha.selection.certification).
CERTIFICATION_BOUNDS = (R.ERROR_UPPER, R.RECALL_LOWER, R.PRECISION_LOWER, R.F1_LOWER)
CERTIFICATION_COLUMNS: tuple[Column, ...] = (
    *_columns("certification", "str", (R.CERTIFICATION_ID, R.SWEEP_ID, R.SELECTION_ID, R.TEST_SPLIT)),
    *_columns("certification", "str", (R.TEST_FINGERPRINT,)),
    *_columns("certification", "int", (R.N_TEST,)),
    *_columns("certification", "str", (R.CATEGORY, R.SCOPE, R.CONFIG_KEY)),
    *_columns("certification", "int", (R.TP, R.FP, R.FN, R.TN)),
    *_columns(
        "test-set metric or one-sided bound, fraction 0..1",
        "float",
        (R.ERROR, R.RECALL, R.PRECISION, R.F1, *CERTIFICATION_BOUNDS),
    ),
    *_columns("certification", "float", (R.CONFIDENCE,)),
    *_columns("certification", "int", (R.DRAWS,)),
    *_columns("certification", "bool", (R.FORCED,)),
    *_columns("certification", "int", (R.PREVIOUS_CERTIFICATIONS,)),
    *_columns("certification", "bool", (R.INDEPENDENT,)),
    *_columns("certification", "str", (R.XIALPHA_VERSION,)),
    *_columns("certification", "time", (R.CREATED_AT,)),
)


# Columns that identify or date rows rather than describe them (ids, hashes, versions, times), in
# the order the tidy DataFrames of xialpha.reports.frames show them: last.
ID_COLUMNS = (
    SelectionColumn.SELECTION_ID,
    CertificationColumn.CERTIFICATION_ID,
    ResultColumn.SWEEP_ID,
    ResultColumn.RUN_ID,
    ResultColumn.CONFIG_KEY,
    ResultColumn.DATA_FINGERPRINT,
    ResultColumn.PREPROCESSING_ID,
    ResultColumn.KERNEL_ID,
    SelectionColumn.RUNNER_UP_CONFIG_KEY,
    SelectionColumn.RUNNER_UP_PREPROCESSING_ID,
    SelectionColumn.RUNNER_UP_KERNEL_ID,
    CertificationColumn.TEST_FINGERPRINT,
    ResultColumn.WORKER,
    ResultColumn.XIALPHA_VERSION,
    ResultColumn.SCHEMA_VERSION,
    ResultColumn.CREATED_AT,
)


class DriftColumn(StrEnum):
    """The names of the "drift" columns: one row per config x category x window of a drift check
    (`xialpha.concept_drift`), the check's verdict repeated on each row of a group; the window's
    xi-alpha estimates are the results' xa_* columns (`estimate_columns("xa")`)."""

    CHECK_ID = "check_id"
    CHECK_KEY = "check_key"
    SWEEP_ID = "sweep_id"
    RUN_ID = "run_id"
    DATA_FINGERPRINT = "data_fingerprint"
    NEWEST_BATCH = "newest_batch"
    CATEGORY = "category"
    PREPROCESSING_ID = "preprocessing_id"
    KERNEL = "kernel"
    KERNEL_ID = "kernel_id"
    WINDOW_FIRST_BATCH = "window_first_batch"
    STATUS = "status"
    ERROR_MESSAGE = "error_message"
    VERDICT = "verdict"
    CHECK_ERROR = "check_error"
    N_BATCHES = "n_batches"
    WINDOW = "window"
    N = "n"
    N_POS = "n_pos"
    N_SV = "n_sv"
    N_NEWEST = "n_newest"
    N_NEWEST_POS = "n_newest_pos"
    CHOSEN_WINDOW = "chosen_window"
    FULL_WORSE = "full_worse"
    CHOSEN_WORSE = "chosen_worse"
    C = "C"
    J = "j"
    RHO = "rho"
    R_DELTA2 = "r_delta2"
    CHOSEN_ERROR = "chosen_error"
    FULL_ERROR = "full_error"
    P_VALUE = "p_value"
    MARGIN_POINTS = "margin_points"
    ALPHA = "alpha"
    FULL_MEMORY = "full_memory"
    CHOSEN = "chosen"
    CHECKED_AT = "checked_at"


class DriftVerdict(StrEnum):
    """What a drift check found for one config x category: drift, no drift, or the check failed."""

    DRIFT = "drift"
    NO_DRIFT = "no drift"
    FAILED = "failed"


class WindowStatus(StrEnum):
    """A drift window's fit (the drift rows' status): fitted, skipped (one class only) or failed."""

    OK = "ok"
    SKIPPED = "skipped"
    FAILED = "failed"


D = DriftColumn
DRIFT_ESTIMATES = estimate_columns("xa")  # the chosen window's xi-alpha counts and metrics
# Drift checks: one row per config x category x window (xialpha.jobs.drift); errors are fractions
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


class ResultStatus(StrEnum):
    """The status of a results row: trained, or the config failed on its data (or its worker was lost)."""

    OK = "ok"
    FAILED = "failed"


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
        "certifications", (R.CERTIFICATION_ID, R.CATEGORY), None, row_columns=CERTIFICATION_COLUMNS
    ),
    "sweeps": Dataset("sweeps", ("run_id",), None, row_columns=SWEEP_COLUMNS),
}
