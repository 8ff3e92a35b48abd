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
estimates, for each prefix p in ESTIMATORS
    p_d_pos int64?    positive examples counted as errors (false negatives)
    p_d_neg int64?    negative examples counted as errors (false positives)
    p_error, p_recall, p_precision, p_f1 float64?   fractions in [0, 1]; NaN = undefined
    plus xa_d int64? (d = d_pos + d_neg), loo_retrains int64?, kfold_k int32?, holdout_n int64?,
    holdout_n_pos int64?, xa_ext_depth int32?
provenance
    worker str (host that trained), xialpha_version str, created_at timestamp[us, UTC],
    schema_version int32 (the writer's SCHEMA_VERSION)

Examples dataset (one row per config and estimator, partitioned like results): per-example
"counted as error" indicators for paired significance tests. `bits` is `np.packbits(v,
bitorder="little")`: example i is bit (i % 8), least significant first, of byte i // 8; the
padding bits of the last byte are 0.

Selections, certifications, drift and sweeps (the spec of each run): their columns are
SELECTION_COLUMNS, CERTIFICATION_COLUMNS, DRIFT_COLUMNS and SWEEP_COLUMNS below, which
`xialpha.storage.typed_table` conforms xialpha's rows to; the store itself types these datasets
by the rows appended (`ResultStore.append`), keyed by their id columns and partitioned by
sweep_id.

Estimators: ESTIMATORS names every estimator a results row can hold (the column prefix p);
`estimate_columns(p)` are its columns and `estimate_values(estimate)` fills them from an
`xialpha.estimators.Estimate`: only this module turns estimates into columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

SCHEMA_VERSION = 1
_SWEEP_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SWEEP_ID_RULE = "1-64 letters, digits, '-', '_' or '.' (not '.' or '..' alone)"


def valid_sweep_id(value: object) -> bool:
    """Whether `value` may name a sweep (or drift check): SWEEP_ID_RULE, safe as a path part."""
    return isinstance(value, str) and bool(_SWEEP_ID.fullmatch(value)) and value not in (".", "..")

# The estimators a results row holds, by column prefix, and what each is (see xialpha.estimators).
ESTIMATOR_DOCS = {  # in the order of the results columns
    "xa": "xi-alpha (Joachims 2000) at the row's rho",
    "apparent": "training errors of the fit itself",
    "loo": "exact leave-one-out",
    "holdout": "errors on the test split",
    "kfold": "k-fold cross-validation",
    "bootstrap": ".632 bootstrap",
    "span": "span estimate of the leave-one-out margin (Vapnik & Chapelle)",
    "xa_ext": "SVMlight's extended xi-alpha, with a search depth",
}
ESTIMATORS = tuple(ESTIMATOR_DOCS)
# Estimators a sweep or selection may choose by ("apparent" is stored, never chosen by).
SELECTABLE = tuple(name for name in ESTIMATORS if name != "apparent")
COUNTS = ("d_pos", "d_neg")  # examples counted as errors among positives / negatives
METRICS = ("error", "recall", "precision", "f1")  # fractions from the counts: xialpha.estimators.metrics


def estimate_columns(prefix: str) -> tuple[str, ...]:
    """The results columns of estimator `prefix`: <p>_d_pos, <p>_d_neg, <p>_error, ..., <p>_f1."""
    return tuple(f"{prefix}_{name}" for name in (*COUNTS, *METRICS))


def estimate_values(estimate, prefix: str | None = None) -> dict:
    """{column: value} of an `xialpha.estimators.Estimate` under `prefix` (default: its method);
    all None when `estimate` is None (not computed; then `prefix` is needed). Fractional counts
    (averaged over resamples) are stored as null."""
    if estimate is None:
        return dict.fromkeys(estimate_columns(prefix))
    counts = [int(value) if float(value).is_integer() else None for value in (estimate.d_pos, estimate.d_neg)]
    metrics = estimate.metrics()
    return dict(zip(estimate_columns(prefix or estimate.method), [*counts, *(metrics[name] for name in METRICS)]))


TIMESTAMP = pa.timestamp("us", tz="UTC")


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


RESULT_COLUMNS: tuple[Column, ...] = (
    _col("sweep_id", pa.string(), "sweep id (letters, digits, -_.; 1-64 chars)", required=True),
    _col("run_id", pa.string(), "one invocation of the sweep", required=True),
    _col("config_key", pa.string(), "config_key() of everything that determines the result", required=True),
    _col("status", pa.string(), '"ok" or "failed"', required=True),
    _col("error_message", pa.string(), "why the config failed; required when status is failed"),
    _col("data_fingerprint", pa.string(), "fingerprint of the training documents and labels", required=True),
    _col("category", pa.string(), "category trained one-vs-rest", required=True),
    _col("preprocessing_id", pa.string(), "stable id of the preprocessing settings", required=True),
    _col("pp_lowercase", pa.bool_(), "preprocessing: lowercase the text"),
    _col("pp_token_pattern", pa.string(), "preprocessing: token regular expression"),
    _col("pp_stop_words", pa.string(), "preprocessing: stop word list name"),
    _col("pp_stemming", pa.string(), "preprocessing: stemmer name"),
    _col("pp_min_df", pa.float64(), "preprocessing: min document frequency (count >= 1 or fraction < 1)"),
    _col("pp_max_df", pa.float64(), "preprocessing: max document frequency (count >= 1 or fraction <= 1)"),
    _col("pp_tf", pa.string(), "preprocessing: term frequency weighting"),
    _col("pp_idf", pa.string(), "preprocessing: inverse document frequency weighting"),
    _col("pp_norm", pa.string(), "preprocessing: vector normalisation"),
    _col("kernel", pa.string(), 'kernel name ("linear", "rbf", "poly", ...)', required=True),
    _col("kernel_id", pa.string(), "stable id of kernel and kernel parameters", required=True),
    _col("gamma", pa.float64(), "kernel gamma (rbf, poly)"),
    _col("degree", pa.int32(), "polynomial kernel degree"),
    _col("coef0", pa.float64(), "polynomial kernel coef0"),
    _col("C", pa.float64(), "soft-margin cost C", required=True),
    _col("j", pa.float64(), "cost factor: positive training errors cost j times more", required=True),
    _col("rho", pa.float64(), "rho of the xi-alpha estimator", required=True),
    _col("n", pa.int64(), "training examples", required=True),
    _col("n_pos", pa.int64(), "positive training examples", required=True),
    _col("n_sv", pa.int64(), "support vectors (alpha_i > 0)"),
    _col("n_bounded_sv", pa.int64(), "bounded support vectors (alpha_i at its upper bound)"),
    _col("stable", pa.bool_(), "at least one unbounded support vector (0 < alpha_i < C_i): the seed's stability condition"),
    _col("r_delta2", pa.float64(), "R_delta^2: max K(x,x) - min K(x,x') bound used by xi-alpha"),
    _col("fit_seconds", pa.float64(), "wall seconds spent training"),
    _col("estimate_seconds", pa.float64(), "wall seconds spent computing the estimates"),
    *[column for prefix in ESTIMATORS for column in _estimate_column_defs(prefix)],
    _col("xa_d", pa.int64(), "xi-alpha: examples counted as leave-one-out errors (d_pos + d_neg)"),
    _col("loo_retrains", pa.int64(), "exact leave-one-out: retrainings actually run"),
    _col("kfold_k", pa.int32(), "k of the k-fold estimate"),
    _col("holdout_n", pa.int64(), "held-out examples"),
    _col("holdout_n_pos", pa.int64(), "held-out positive examples"),
    _col("xa_ext_depth", pa.int32(), "search depth of the extended xi-alpha estimator"),
    _col("worker", pa.string(), "host that trained the config (default: this host)", required=True),
    _col("xialpha_version", pa.string(), "xialpha version of the writer (default: this one)", required=True),
    _col("created_at", TIMESTAMP, "when the row was produced, UTC (default: write time)", required=True),
    _col("schema_version", pa.int32(), "SCHEMA_VERSION of the writer (default: this one)", required=True),
)

EXAMPLE_COLUMNS: tuple[Column, ...] = (
    _col("sweep_id", pa.string(), "sweep id, as in results", required=True),
    _col("config_key", pa.string(), "config_key of the results row", required=True),
    _col("category", pa.string(), "category trained one-vs-rest", required=True),
    _col("estimator", pa.string(), "estimator prefix from ESTIMATORS", required=True),
    _col("n", pa.int64(), "length of the indicator vector (training examples)", required=True),
    _col("bits", pa.binary(), "np.packbits(counted_as_error, bitorder='little')", required=True),
    _col("created_at", TIMESTAMP, "when the row was produced, UTC (default: write time)", required=True),
)


def _typed(doc: str, *groups: str) -> tuple[Column, ...]:
    """Columns described by `doc`, from groups "<type>: name name ..." (type: str, int, float, bool, time)."""
    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "time": TIMESTAMP}
    return tuple(_col(name, types[kind.strip()], doc)
                 for kind, names in (group.split(":") for group in groups) for name in names.split())


_RESULT_TYPES = {c.name: c.type for c in RESULT_COLUMNS}
# The results columns a selection copies for its chosen config (enough to rebuild and label it).
CONFIG_COLUMNS = (
    "config_key", "data_fingerprint", "preprocessing_id", "pp_lowercase", "pp_token_pattern", "pp_stop_words",
    "pp_stemming", "pp_min_df", "pp_max_df", "pp_tf", "pp_idf", "pp_norm", "kernel", "kernel_id", "gamma",
    "degree", "coef0", "C", "j", "n", "n_pos", "n_sv", "n_bounded_sv", "stable", "r_delta2",
)
# p-values of the chosen config against the first runner-up (xialpha.selection.significance).
P_VALUES = ("p_micro_sign", "p_mcnemar", "p_proportion", "p_macro_sign", "p_macro_t", "p_macro_rank_t")

# Selections: one row per category (xialpha.selection.records): the objective, the chosen config,
# its estimates (estimate_*: completed metrics and counts of the selection estimator), the first
# runner-up and the p-values against it (NaN where not computed).
SELECTION_COLUMNS: tuple[Column, ...] = (
    *_typed("selection", "str: selection_id sweep_id category mode metric estimator", "float: rho",
            "str: average", "bool: smooth_c", "float: cost_fn cost_fp alpha value selection_value"),
    *(_col(name, _RESULT_TYPES[name], f"chosen config: {name}, as in results") for name in CONFIG_COLUMNS),
    *_typed("estimate of the chosen config", "float: " + " ".join(f"estimate_{m}" for m in (*METRICS, *COUNTS))),
    *_typed("first runner-up", "str: runner_up_config_key runner_up_preprocessing_id runner_up_kernel_id",
            "float: runner_up_C runner_up_j runner_up_value runner_up_selection_value"),
    *_typed("p-value, chosen vs first runner-up", "float: " + " ".join(P_VALUES)),
    *_typed("significance", "bool: not_significant", "int: n_runners_up n_runners_up_not_significant n_candidates"),
    *_typed("provenance", "str: xialpha_version", "time: created_at"),
)

# Certifications: one row per category, then "(micro)" and "(macro)" (xialpha.selection.certification).
CERTIFICATION_BOUNDS = ("error_upper", "recall_lower", "precision_lower", "f1_lower")
CERTIFICATION_COLUMNS: tuple[Column, ...] = (
    *_typed("certification", "str: certification_id sweep_id selection_id test_split test_fingerprint",
            "int: n_test", "str: category scope config_key", "int: tp fp fn tn"),
    *_typed("test-set metric or one-sided bound, fraction 0..1", "float: " + " ".join((*METRICS, *CERTIFICATION_BOUNDS))),
    *_typed("certification", "float: confidence", "int: draws", "bool: forced", "int: previous_certifications",
            "str: xialpha_version", "time: created_at"),
)

# Drift checks: one row per config x category x window (xialpha.jobs.drift); errors are fractions
# 0..1 (NaN where undefined); verdict "drift", "no drift" or "failed", repeated on each row of a group.
DRIFT_COLUMNS: tuple[Column, ...] = (
    *_typed("drift check", "str: check_id check_key sweep_id run_id data_fingerprint newest_batch category",
            "str: preprocessing_id kernel kernel_id window_first_batch status error_message verdict check_error",
            "int: n_batches window n n_pos n_sv n_newest n_newest_pos", "int: " + " ".join(estimate_columns("xa")[:2]),
            "int: chosen_window full_worse chosen_worse", "float: C j rho r_delta2",
            "float: " + " ".join(estimate_columns("xa")[2:]),
            "float: chosen_error full_error p_value margin_points alpha", "bool: full_memory chosen",
            "time: checked_at"),
)

# Sweeps: one row per run of a sweep, with the spec it ran (xialpha.jobs.sweep).
SWEEP_COLUMNS: tuple[Column, ...] = _typed(
    "sweep run", "str: sweep_id run_id spec_toml spec_dir data_fingerprint categories xialpha_version command",
    "time: created_at")


def _schema(columns: tuple[Column, ...], dataset: str) -> pa.Schema:
    metadata = {"xialpha.dataset": dataset, "xialpha.schema_version": str(SCHEMA_VERSION)}
    return pa.schema([pa.field(c.name, c.type, metadata={"doc": c.doc}) for c in columns], metadata=metadata)


def results_schema() -> pa.Schema:
    """The Arrow schema of the results dataset (field metadata "doc" describes each column)."""
    return _schema(RESULT_COLUMNS, "results")


def examples_schema() -> pa.Schema:
    """The Arrow schema of the per-example indicator dataset."""
    return _schema(EXAMPLE_COLUMNS, "examples")


OK = "ok"


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
    "certifications": Dataset("certifications", ("certification_id", "category"), None,
                              row_columns=CERTIFICATION_COLUMNS),
    "sweeps": Dataset("sweeps", ("run_id",), None, row_columns=SWEEP_COLUMNS),
}
