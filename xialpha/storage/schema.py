"""The names of what a xialpha store holds: the columns of each dataset (`ResultColumn`,
`SelectionColumn`, `CertificationColumn`, `DriftColumn`, `SweepColumn`), the values of the columns that hold a
mode (`ResultStatus`, `SelectionMode`, `CertificationScope`, `DriftVerdict`, `WindowStatus`), and
the groups of columns code reads together. Their Arrow types, docs and the datasets' keys are
`xialpha.storage.arrow_schema`'s.

Estimators: ESTIMATORS names every estimator a results row can hold (the column prefix p), in
the order of `xialpha.estimators.registry`, which also declares each one's own columns;
`estimate_columns(p)` are its estimate columns and `estimate_values(estimate)` fills them from an
`xialpha.estimators.metrics.Estimate` (`result_values` adds its own columns): only this module
turns estimates into columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING

from xialpha.estimators import METRICS, registry

if TYPE_CHECKING:
    from xialpha.estimators.metrics import Estimate
    from xialpha.features.kernels import Kernel
    from xialpha.features.preprocessing import Preprocessing

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


PP_PREFIX = "pp_"  # results columns of preprocessing parameters: pp_<spec key>


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


class SelectionColumn(StrEnum):
    """The names of the "selections" columns (one row per category of a saved selection), for code
    that reads selections as frames; the chosen configuration's columns are `arrow_schema.CONFIG_COLUMNS`
    (named as in results), its estimates SELECTION_ESTIMATES, the p-values P_VALUES."""

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
# (`xialpha.storage.selection_rows.stored_selections` reads them as SIGNIFICANT and N_RUNNERS_UP_SIGNIFICANT).
LEGACY_NOT_SIGNIFICANT, LEGACY_N_NOT_SIGNIFICANT = "not_significant", "n_runners_up_not_significant"


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


# the one-sided bounds of a certification row, beside its metrics
CERTIFICATION_BOUNDS = (
    CertificationColumn.ERROR_UPPER,
    CertificationColumn.RECALL_LOWER,
    CertificationColumn.PRECISION_LOWER,
    CertificationColumn.F1_LOWER,
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


DRIFT_ESTIMATES = estimate_columns("xa")  # the chosen window's xi-alpha counts and metrics


class SweepColumn(StrEnum):
    """The names of the "sweeps" columns: one row per run of a sweep, with the spec it ran
    (`xialpha.jobs.sweep`); written again with `finished_at` when the run ends."""

    SWEEP_ID = "sweep_id"
    RUN_ID = "run_id"
    SPEC_TOML = "spec_toml"
    SPEC_DIR = "spec_dir"
    DATA_FINGERPRINT = "data_fingerprint"
    CATEGORIES = "categories"
    XIALPHA_VERSION = "xialpha_version"
    COMMAND = "command"
    CREATED_AT = "created_at"
    FINISHED_AT = "finished_at"


class ResultStatus(StrEnum):
    """The status of a results row: trained, or the config failed on its data (or its worker was lost)."""

    OK = "ok"
    FAILED = "failed"
