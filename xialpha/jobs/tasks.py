"""The functions Dask runs on workers: stack a preprocessing's feature blocks, prepare training
data, fit and estimate a batch (reading and vectorising the corpus's parts: `xialpha.jobs.data`).

Linear kernels train on the sparse features themselves (`linear_data`: no Gram); other kernels
train on a Gram matrix derived from the linear one (`linear_gram`, `kernel_gram`).

They are plain functions of plain objects (no Dask inside), so a test can call them directly
and compare with what the cluster stored.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from xialpha.errors import DataFailure
from xialpha.estimators import LINEAR
from xialpha.estimators.c_ladder import starting_C
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.registry import HELD_OUT, estimator
from xialpha.estimators.scoring import OneFitEstimates, kernel_blocks, one_fit_estimates
from xialpha.estimators.span import SpanBounds, span_bounds, span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared
from xialpha.features.blocks import FeatureBlock, features_in_one_piece, stack
from xialpha.features.gram import check_gram_fits, row_sq_norms
from xialpha.features.gram import linear_gram as gram_of  # this module's linear_gram is a task
from xialpha.planning.plan import Batch, FitJob
from xialpha.selection.contenders import needed, protected
from xialpha.selection.selector import RUNNERS_UP
from xialpha.spec.sweep import EstimatorSpec
from xialpha.storage.rows import BatchColumns, ExampleRow, FailedRow, ResultRow, Training, pack_bits
from xialpha.storage.schema import estimate_values, result_values
from xialpha.version import __version__

if TYPE_CHECKING:
    import scipy.sparse as sp

    from xialpha.corpora.corpus import Corpus
    from xialpha.estimators.svm import SVMFit
    from xialpha.features.kernels import Kernel
    from xialpha.features.preprocessing import Preprocessing

    PathEnds = dict[tuple[str, float], dict[float, SVMFit]]  # {(category, j): {C: fit}}: a batch's C path ends


@dataclass(frozen=True, eq=False)
class TrainingData:
    """What the fits of one (preprocessing, kernel) train on, and R_delta^2 of its training set.

    The linear path (gram is None): X (n, d) and X_test (m, d) CSR features, f(x) = x . w + b.
    The kernel path: gram (n, n) and cross (m, n) test-vs-train kernel values (None without
    holdout). y_train / y_test map each category to an int8 vector of -1/+1.
    """

    r_delta2: float
    y_train: dict[str, np.ndarray]
    y_test: dict[str, np.ndarray]
    X: sp.csr_matrix | None = None
    X_test: sp.csr_matrix | None = None
    gram: np.ndarray | None = None
    cross: np.ndarray | None = None

    @property
    def n(self) -> int:
        if self.gram is not None:
            return int(self.gram.shape[0])
        assert self.X is not None  # the linear path (no Gram) has its features
        return int(self.X.shape[0])

    def problem(self, y: np.ndarray, weights: np.ndarray | None = None) -> TrainingProblem:
        """The training problem of labels `y` (n,) (and example `weights`) on this data: the
        features on the linear path, else the Gram."""
        data = {"X": self.X} if self.gram is None else {"gram": self.gram}
        return TrainingProblem(y, weights=weights, **data)

    def test_data(self) -> sp.csr_matrix | np.ndarray | None:
        """What `SVMFit.decision_function` takes for the test split: X_test or the cross-Gram."""
        return self.X_test if self.gram is None else self.cross

    def train_rows(self, begin: int, end: int) -> sp.csr_matrix | np.ndarray:
        """What `SVMFit.decision_function` takes for training examples begin..end-1."""
        if self.gram is not None:
            return self.gram[begin:end]
        assert self.X is not None  # the linear path (no Gram) has its features
        return self.X[begin:end]

    def window_r_delta2(self, begin: int, end: int) -> float:
        """R_delta^2 of training examples begin..end-1 alone (a drift window)."""
        if self.gram is None:
            assert self.X is not None  # the linear path (no Gram) has its features
            return r_delta_squared(X=self.X[begin:end])
        block = self.gram[begin:end, begin:end]  # a view: no copy
        return float(np.max(np.diagonal(block)) - np.min(block))


def vectorize(
    corpus: Corpus,
    preprocessing: Preprocessing | None,
    train_split: str | None,
    test_split: str | None,
    categories: list[str],
) -> FeatureBlock:
    """In one process: the features the graph computes part by part (the preprocessing fitted on
    the training documents; the training and held-out rows and targets of `categories`)."""
    return features_in_one_piece(corpus, preprocessing, train_split, test_split, categories)[1]


def stack_blocks(blocks: list[FeatureBlock]) -> FeatureBlock:
    """A preprocessing's feature blocks of every part, stacked in corpus order (on the worker that
    fits on them: `xialpha.jobs.graph` places this task there)."""
    return stack(blocks)


def linear_data(features: FeatureBlock) -> TrainingData:
    """The linear path's training data: the features themselves, R_delta^2 in O(nnz)."""
    _check_vocabulary(features.X_train)
    y_train, y_test = features.targets()
    return TrainingData(
        r_delta_squared(X=features.X_train), y_train, y_test, X=features.X_train, X_test=features.X_test
    )


def linear_gram(features: FeatureBlock, with_test: bool, limit_bytes: int | None) -> TrainingData:
    """The linear Gram X X^T of the training set (and test-vs-train when with_test), from which
    non-linear kernels' Grams are derived."""

    _check_vocabulary(features.X_train)
    n = features.X_train.shape[0]
    m = features.X_test.shape[0] if with_test and features.X_test is not None else 0
    if limit_bytes is not None:
        check_gram_fits(n, n + m, limit_bytes)
    gram = gram_of(features.X_train, limit_bytes=limit_bytes)
    cross = gram_of(features.X_test, features.X_train, limit_bytes=limit_bytes) if m else None
    y_train, y_test = features.targets()
    return TrainingData(r_delta_squared(gram=gram), y_train, y_test, gram=gram, cross=cross)


def kernel_gram(linear: TrainingData, features: FeatureBlock, kernel: Kernel) -> TrainingData:
    """Derive a kernel's Grams from the linear ones and the row norms, without new dot products."""
    assert linear.gram is not None  # `linear_gram`'s data: the kernel path's
    sq_train = row_sq_norms(features.X_train)
    gram = kernel.from_linear(linear.gram, sq_train)
    cross = None
    if linear.cross is not None:
        cross = kernel.from_linear(linear.cross, row_sq_norms(features.X_test), sq_train)
    return TrainingData(r_delta_squared(gram=gram), linear.y_train, linear.y_test, gram=gram, cross=cross)


def training_data(features: FeatureBlock, kernel: Kernel, with_test: bool, limit_bytes: int | None) -> TrainingData:
    """In one process, what the graph computes in shared steps: the training data of `kernel` on `features`."""
    if kernel.name == LINEAR:
        return linear_data(features)
    return kernel_gram(linear_gram(features, with_test, limit_bytes), features, kernel)


def _check_vocabulary(X: sp.csr_matrix) -> None:
    """DataFailure when preprocessing left no term, or no term in any training document."""
    if X.shape[1] == 0 or X.nnz == 0:
        raise DataFailure(
            "features: the vocabulary is empty after preprocessing (no term passes min_df/max_df "
            "and the stop-word list); lower min_df or check the corpus"
        )


def starting_Cs(data: TrainingData, paths: list[tuple[str, float]], fallback: float) -> dict[tuple[str, float], float]:
    """{(category, j): the starting C of its auto ladder (`c_ladder.starting_C`)} on the training data
    (its features, or its Gram on the kernel path); `fallback` where the data give none (one class:
    its fits then fail and say why, as a grid's would)."""
    starts = {}
    for category, j in paths:
        y = data.y_train[category]
        try:
            starts[category, j] = (
                starting_C(data.X, y, j) if data.gram is None else starting_C(None, y, j, gram=data.gram)
            )
        except ValueError:
            starts[category, j] = fallback
    return starts


def fit_batch(
    data: TrainingData, batch: Batch, columns: BatchColumns, estimators: EstimatorSpec, tol: float
) -> tuple[list[ResultRow | FailedRow], list[ExampleRow]]:
    """Train every job of the batch on the shared data; return (result rows, example rows).

    columns: what all rows of the batch share (sweep, run, data, preprocessing, kernel).
    On the linear path a job starts from the previous job's solution when both have the same
    category and j (the plan orders such a C path by ascending C). A job whose data fails an
    input check (`DataFailure`: no positive example, k-fold with too few examples, ...) gives rows
    with status "failed" and the message, and the batch goes on; any other exception is a bug
    and fails the task (and the sweep).
    """
    rows, examples, _ = fit_batch_keeping_ends(data, batch, columns, estimators, tol)
    return rows, examples


def fit_batch_keeping_ends(
    data: TrainingData,
    batch: Batch,
    columns: BatchColumns,
    estimators: EstimatorSpec,
    tol: float,
    warm_ends: Sequence[PathEnds] = (),
) -> tuple[list[ResultRow | FailedRow], list[ExampleRow], PathEnds]:
    """`fit_batch`, and the ends of its C paths: {(category, j): {C: fit}} for the smallest and largest
    C fitted of each (without the features, which the worker holds anyway), so a later round of an
    auto sweep can warm-start its next C from the nearest one. warm_ends: such ends of earlier
    batches; on the linear path a job that is the first of its path in the batch starts from the fit
    of the nearest C among them (none: cold).

    With [estimators] span_prune naming a metric (or "any") on a batch of one whole C path
    (`Batch.whole_path`), span's exact calls are made only for the configurations a selection by it
    may need (`settle_spans`); the others' rows store the interval of their cheap calls."""
    host = socket.gethostname()
    metrics = protected(str(estimators["span_prune"])) if estimators["span"] and batch.whole_path else ()
    previous: tuple[tuple[str, float], SVMFit] | None = None
    fits: PathEnds = {}
    done: list[_Fitted | list[FailedRow]] = []
    for job in batch.jobs:
        path = (job.category, job.j)
        warm = previous[1] if previous and data.gram is None and previous[0] == path else None
        if warm is None and data.gram is None:
            warm = _nearest(warm_ends, path, job.C, data)
        try:
            fitted = _fit_one(data, job, estimators, tol, warm, bounded=bool(metrics))
            previous = (path, fitted.fit)
            fits.setdefault(path, {})[job.C] = fitted.fit
            done.append(fitted)
        except DataFailure as exc:
            done.append(failed_rows(columns, job, str(exc), data.n, int((data.y_train[job.category] > 0).sum()), host))
            previous = None
    if metrics:
        settle_spans([fitted for fitted in done if isinstance(fitted, _Fitted)], metrics)
    rows: list[ResultRow | FailedRow] = []
    examples: list[ExampleRow] = []
    for outcome in done:
        if isinstance(outcome, _Fitted):
            job_rows, job_examples = outcome.rows(columns, estimators, data.r_delta2, host)
            rows.extend(job_rows)
            examples.extend(job_examples)
        else:
            rows.extend(outcome)
    ends = {path: {C: by_C[C] for C in (min(by_C), max(by_C))} for path, by_C in fits.items()}
    return rows, examples, ends


def _nearest(warm_ends: Sequence[PathEnds], path: tuple[str, float], C: float, data: TrainingData) -> SVMFit | None:
    """The fit of `path` at the C nearest `C` (in log C) among `warm_ends`, on `data`'s features; None if none."""
    fits = {fitted: fit for ends in warm_ends for fitted, fit in ends.get(path, {}).items()}
    if not fits:
        return None
    nearest = min(fits, key=lambda fitted: abs(np.log(fitted / C)))
    fit = fits[nearest]
    return fit if fit.X is data.X else None  # a fit on other features (another worker's copy) is not reused


def failed_rows(
    columns: BatchColumns, job: FitJob, message: str, n: int, n_pos: int, worker: str | None = None
) -> list[FailedRow]:
    """The rows of a job that failed, one per rho, with `message`, n and n_pos (0 where the data
    never reached the fit); worker: the host it failed on (None: the host that stores it)."""
    return [
        FailedRow(
            columns,
            job.category,
            job.C,
            job.j,
            rho,
            key,
            message,
            n,
            n_pos,
            worker,
            None if worker is None else __version__,
        )
        for rho, key in job.keys
    ]


@dataclass(eq=False)
class _Fitted:
    """One job's fit and its estimates, before its rows are made: span apart when it was bounded
    (span: its `SpanBounds` until `settle_spans` makes the exact calls, then its `Estimate`);
    estimate_seconds: everything but the solver's training so far (summed over the job's rows)."""

    job: FitJob
    fit: SVMFit
    problem: TrainingProblem
    estimates: OneFitEstimates
    estimate_seconds: float
    span: Estimate | SpanBounds | None = None

    def make_span_exact(self) -> None:
        """Replace the bounds by span's exact estimate (its seconds added to estimate_seconds)."""
        start = time.perf_counter()
        self.span = span_estimate(self.fit, kernel_blocks(self.problem))
        self.estimate_seconds += time.perf_counter() - start

    def rows(
        self, columns: BatchColumns, est: EstimatorSpec, r_delta2: float, host: str
    ) -> tuple[list[ResultRow], list[ExampleRow]]:
        """The job's result rows (one per rho) and the per-example rows of its selectable estimates;
        a bounded span fills its interval columns, never its estimate columns or an example row."""
        fit, job, y = self.fit, self.job, self.problem.y
        training = Training(
            n=int(y.shape[0]),
            n_pos=int((y > 0).sum()),
            n_sv=fit.n_sv,
            n_bounded_sv=fit.n_bounded_sv,
            stable=fit.stable,
            r_delta2=r_delta2,
            fit_seconds=fit.fit_seconds,
            estimate_seconds=self.estimate_seconds / len(job.keys),
        )
        apart: tuple[Estimate, ...] = (self.span,) if isinstance(self.span, Estimate) else ()
        rows, examples = [], []
        for rho, key in job.keys:
            values: dict = {}
            for estimate in self.estimates.at(rho) + apart:
                values.update(result_values(estimate, est.values))
                if estimate.indicator is not None and estimator(estimate.method).selectable:
                    examples.append(
                        ExampleRow(
                            columns.sweep_id,
                            key,
                            job.category,
                            estimate.method,
                            int(estimate.indicator.shape[0]),
                            pack_bits(estimate.indicator),
                        )
                    )
            if isinstance(self.span, SpanBounds):
                values.update(estimate_values(None, "span"))
                values.update(estimator("span").column_values(self.span, est.values))
            rows.append(ResultRow(columns, job.category, job.C, job.j, rho, key, training, values, host, __version__))
        return rows, examples


def settle_spans(path: list[_Fitted], metrics: tuple[str, ...]) -> None:
    """Make span's exact calls for the fits of one C path (ascending C, each with its `SpanBounds`)
    that a selection by `metrics` may need (`xialpha.selection.contenders.needed`, with the choice and
    RUNNERS_UP runners-up), until none is left whose interval could still change a choice; fits whose bounds are
    already exact get their estimate at the cost of those bounds."""
    for fitted in path:
        if fitted.span.exact:  # type: ignore[union-attr]  # each fit of the path has its SpanBounds here
            fitted.make_span_exact()
    while path:
        low = np.array([_counts(fitted.span, "low") for fitted in path])
        high = np.array([_counts(fitted.span, "high") for fitted in path])
        first = path[0].span  # its SpanBounds, or its Estimate once exact: never None here
        wanted = needed(first.n, first.n_pos, low, high, 1 + RUNNERS_UP, metrics)  # type: ignore[union-attr]
        todo = [fitted for fitted, want in zip(path, wanted) if want and isinstance(fitted.span, SpanBounds)]
        if not todo:
            return
        for fitted in todo:
            fitted.make_span_exact()


def _counts(span: Estimate | SpanBounds | None, side: str) -> tuple[float, float]:
    """(d_pos, d_neg) of an exact estimate, or the `side` ("low", "high") of a `SpanBounds`."""
    assert span is not None  # a bounded fit's span: its bounds, or its estimate once exact
    if isinstance(span, SpanBounds):
        return getattr(span, f"d_pos_{side}"), getattr(span, f"d_neg_{side}")
    return span.d_pos, span.d_neg


def _fit_one(
    data: TrainingData, job: FitJob, est: EstimatorSpec, tol: float, warm: SVMFit | None, *, bounded: bool
) -> _Fitted:
    """Train `job` (warm-started from `warm`) and compute its estimates; bounded: span's only as
    `span_bounds` (`settle_spans` decides which become exact)."""
    y = data.y_train[job.category]
    start = time.perf_counter()
    problem, parameters = data.problem(y), SVMParameters(job.C, j=job.j, tol=tol)
    fit = fit_svm(problem, parameters, check_input=False, warm_start=warm)
    # estimate time: everything but the solver's training, including the decision values xi needs
    start += fit.fit_seconds
    held_out = (data.y_test[job.category], data.test_data()) if est.needs(HELD_OUT) else None
    settings = {**est.values, "span": False} if bounded else est.values
    estimates = one_fit_estimates(
        fit, problem, parameters, data.r_delta2, rhos=[rho for rho, _ in job.keys], held_out=held_out, **settings
    )
    span = span_bounds(fit, kernel_blocks(problem)) if bounded else None
    return _Fitted(job, fit, problem, estimates, time.perf_counter() - start, span)
