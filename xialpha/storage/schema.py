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

Selections, drift, certifications and sweeps (the spec of each run): typed by the rows appended,
keyed by one id column and partitioned by sweep_id when they have that column.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

SCHEMA_VERSION = 1

ESTIMATORS = ("xa", "apparent", "loo", "holdout", "kfold", "bootstrap", "span", "xa_ext")

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


def _estimate_columns(prefix: str) -> list[Column]:
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
    *[column for prefix in ESTIMATORS for column in _estimate_columns(prefix)],
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

    def schema(self) -> pa.Schema | None:
        return None if self.columns is None else _schema(self.columns, self.name)


DATASETS: dict[str, Dataset] = {
    "results": Dataset("results", ("sweep_id", "config_key"), RESULT_COLUMNS, status_column="status"),
    "examples": Dataset("examples", ("sweep_id", "config_key", "estimator"), EXAMPLE_COLUMNS),
    "selections": Dataset("selections", ("selection_id", "category"), None),  # a row per category
    "drift": Dataset("drift", ("check_id",), None),
    "certifications": Dataset("certifications", ("certification_id", "category"), None),
    "sweeps": Dataset("sweeps", ("run_id",), None),  # one row per sweep run: its spec text
}
