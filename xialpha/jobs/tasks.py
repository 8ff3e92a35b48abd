"""The functions Dask runs on workers: vectorise, compute Grams, fit and estimate a batch.

They are plain functions of plain objects (no Dask inside), so a test can call them directly
and compare with what the cluster stored.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass

import numpy as np

from xialpha import __version__
from xialpha.estimators import (
    apparent,
    bootstrap,
    fit_svm,
    holdout,
    kfold,
    loo_exact,
    r_delta_squared,
    xi_alpha,
)
from xialpha.jobs.plan import Batch, FitJob
from xialpha.jobs.spec import EstimatorSpec
from xialpha.storage import pack_bits


@dataclass(frozen=True, eq=False)
class Features:
    """One preprocessing variant applied: train (n, d) and test (m, d) CSR matrices and labels.

    y_train / y_test map each category to an int8 vector of -1/+1.
    """

    X_train: object
    X_test: object | None
    y_train: dict
    y_test: dict


@dataclass(frozen=True, eq=False)
class TrainingGram:
    """A kernel's Gram on the training set (n, n), test-vs-train (m, n) or None, and R_delta^2.

    X: the (n, d) training features when the kernel is linear (gram = X X^T), for the cheap
    primal computation of training decision values; None for other kernels.
    """

    gram: np.ndarray
    cross: np.ndarray | None
    r_delta2: float
    y_train: dict
    y_test: dict
    X: object | None = None


def vectorize(corpus, preprocessing, train_split: str | None, test_split: str | None, categories: list[str]) -> Features:
    """Fit the preprocessing on the training documents and transform train and test."""
    train = corpus if train_split is None else corpus.split(train_split)
    test = None if test_split is None else corpus.split(test_split)
    if train.texts is None:
        X_train, X_test = train.X, None if test is None else test.X
    else:
        fitted = preprocessing.fit(train.texts)
        X_train = fitted.transform(train.texts)
        X_test = None if test is None else fitted.transform(test.texts)
    return Features(
        X_train=X_train,
        X_test=X_test,
        y_train={c: train.y(c) for c in categories},
        y_test={} if test is None else {c: test.y(c) for c in categories},
    )


def linear_gram(features: Features, with_test: bool, limit_bytes: int | None) -> TrainingGram:
    """The linear Gram X X^T of the training set (and test-vs-train when with_test)."""
    from xialpha.features import check_gram_fits, linear_gram as gram_of

    n = features.X_train.shape[0]
    m = features.X_test.shape[0] if with_test and features.X_test is not None else 0
    if limit_bytes is not None:
        check_gram_fits(n, n + m, limit_bytes)
    gram = gram_of(features.X_train)
    cross = gram_of(features.X_test, features.X_train) if m else None
    return TrainingGram(gram, cross, r_delta_squared(gram=gram), features.y_train, features.y_test, features.X_train)


def kernel_gram(linear: TrainingGram, features: Features, kernel) -> TrainingGram:
    """Derive a kernel's Grams from the linear ones and the row norms, without new dot products."""
    from xialpha.features import row_sq_norms

    if kernel.name == "linear":
        return linear
    sq_train = row_sq_norms(features.X_train)
    gram = kernel.from_linear(linear.gram, sq_train)
    cross = None
    if linear.cross is not None:
        cross = kernel.from_linear(linear.cross, row_sq_norms(features.X_test), sq_train)
    return TrainingGram(gram, cross, r_delta_squared(gram=gram), linear.y_train, linear.y_test)


def fit_batch(data: TrainingGram, batch: Batch, base: dict, estimators: EstimatorSpec, tol: float) -> tuple[list[dict], list[dict]]:
    """Train every job of the batch on the shared Gram; return (result rows, example rows).

    base: the columns shared by all rows of the batch (sweep, run, preprocessing, kernel, ...).
    A job that fails for a data reason (ValueError, e.g. no positive example) gives rows with
    status "failed" and the message, and the batch goes on.
    """
    rows, examples = [], []
    host = socket.gethostname()
    for job in batch.jobs:
        common = {**base, "category": job.category, "C": job.C, "j": job.j, "worker": host, "xialpha_version": __version__}
        try:
            job_rows, job_examples = _fit_one(data, job, common, estimators, tol)
        except ValueError as exc:
            job_rows = [{**common, "rho": rho, "config_key": key, "status": "failed", "error_message": str(exc),
                         "n": int(data.gram.shape[0]), "n_pos": int((data.y_train[job.category] > 0).sum())}
                        for rho, key in job.keys]
            job_examples = []
        rows.extend(job_rows)
        examples.extend(job_examples)
    return rows, examples


def _fit_one(data: TrainingGram, job: FitJob, common: dict, est: EstimatorSpec, tol: float):
    y = data.y_train[job.category]
    svm_args = {"gram": data.gram, "j": job.j, "tol": tol}
    start = time.perf_counter()
    fit = fit_svm(y, job.C, check_input=False, primal_X=data.X, **svm_args)
    # estimate time: everything but libsvm's training, including the decision values xi needs
    start += fit.fit_seconds
    shared = [apparent(fit)]
    if est.span:
        from xialpha.estimators import span_estimate

        shared.append(span_estimate(fit, data.gram))
    if est.exact_loo:
        shared.append(loo_exact(y, job.C, fit=fit, prune=est.loo_prune, r_delta2=data.r_delta2, **svm_args))
    if est.kfold:
        shared.append(kfold(y, job.C, k=est.kfold, **svm_args))
    if est.bootstrap:
        shared.append(bootstrap(y, job.C, n_boot=est.bootstrap, fit=fit, **svm_args))
    if est.holdout:
        shared.append(holdout(fit, data.y_test[job.category], data.cross))
    per_rho = {}
    for rho, _ in job.keys:
        per_rho[rho] = [xi_alpha(fit.alpha, fit.xi, y, data.r_delta2, rho)]
        if est.xa_ext_depth:
            from xialpha.estimators import xi_alpha_extended

            per_rho[rho].append(xi_alpha_extended(fit, data.gram, data.r_delta2, rho=rho, depth=est.xa_ext_depth))
    estimate_seconds = (time.perf_counter() - start) / len(job.keys)
    training = {"status": "ok", "n": int(y.shape[0]), "n_pos": int((y > 0).sum()), "n_sv": fit.n_sv,
                "n_bounded_sv": fit.n_bounded_sv, "stable": fit.stable, "r_delta2": data.r_delta2,
                "fit_seconds": fit.fit_seconds}
    rows, examples = [], []
    for rho, key in job.keys:
        row = {**common, **training, "rho": rho, "config_key": key, "estimate_seconds": estimate_seconds}
        for estimate in shared + per_rho[rho]:
            row.update(estimate.columns())
            if estimate.retrains and estimate.method == "loo":
                row["loo_retrains"] = estimate.retrains
            if estimate.indicator is not None and estimate.method != "apparent":
                examples.append({"sweep_id": common["sweep_id"], "config_key": key, "category": job.category,
                                 "estimator": estimate.method, "n": int(estimate.indicator.shape[0]),
                                 "bits": pack_bits(estimate.indicator)})
        row["xa_d"] = int(per_rho[rho][0].d)
        if est.kfold:
            row["kfold_k"] = est.kfold
        if est.holdout:
            row["holdout_n"] = int(data.y_test[job.category].shape[0])
            row["holdout_n_pos"] = int((data.y_test[job.category] > 0).sum())
        if est.xa_ext_depth:
            row["xa_ext_depth"] = est.xa_ext_depth
        rows.append(row)
    return rows, examples
