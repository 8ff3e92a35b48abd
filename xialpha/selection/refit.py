"""Training the selected configurations on all training data: one SVM per category.

Each chosen row names a preprocessing, a kernel, C and j. As in the sweep, the preprocessing
is fitted once on the training texts and its Gram matrix serves every category and kernel
that use it, so the refitted SVM is the one the sweep estimated. A `KernelModel` keeps only
what prediction needs: the support vectors' features and coefficients (a weight vector for
the linear kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators import fit_svm
from xialpha.selection.context import SweepContext


@dataclass(frozen=True, eq=False)
class KernelModel:
    """f(x) = sum_s coef_s K(x, sv_s) + b over s support vectors; f(x) > 0: in the category.

    kernel: a xialpha.features.Kernel. Linear: `weights` (d,) with f(x) = x.w + b. Other
    kernels: `support_vectors` (s, d) CSR, their squared norms (s,) and `coef` (s,) = alpha*y.
    """

    kernel: object
    b: float
    weights: np.ndarray | None = None
    support_vectors: object = None
    sv_sq_norms: np.ndarray | None = None
    coef: np.ndarray | None = None

    @classmethod
    def from_fit(cls, fit, X, kernel) -> "KernelModel":
        """The model of an SVMFit trained on the Gram of the rows of X (n, d) under `kernel`."""
        coef = fit.alpha[fit.support] * fit.y[fit.support]
        support_vectors = X[fit.support]
        if kernel.name == "linear":
            weights = fit.w if fit.w is not None else np.asarray(support_vectors.T @ coef).ravel()
            return cls(kernel, fit.b, weights=np.asarray(weights, dtype=np.float64))
        from xialpha.features import row_sq_norms

        return cls(kernel, fit.b, support_vectors=support_vectors, sv_sq_norms=row_sq_norms(support_vectors), coef=coef)

    def decision_function(self, X) -> np.ndarray:
        """Decision values (m,) of the rows of X (m, d)."""
        if self.weights is not None:
            return np.asarray(X @ self.weights).ravel() + self.b
        from xialpha.features import linear_gram, row_sq_norms

        cross = self.kernel.from_linear(linear_gram(X, self.support_vectors), row_sq_norms(X), self.sv_sq_norms)
        return cross @ self.coef + self.b


@dataclass(frozen=True, eq=False)
class CategoryModel:
    """The model of one category, the preprocessing it reads and its config (JSON-able dict)."""

    category: str
    preprocessing_id: str
    model: KernelModel
    config: dict


@dataclass(frozen=True, eq=False)
class TrainedSelection:
    """Fitted preprocessings by id (None for corpora given as feature vectors) and the models."""

    preprocessings: dict
    models: list[CategoryModel]

    @property
    def categories(self) -> list[str]:
        return [model.category for model in self.models]

    def features(self, preprocessing_id: str, texts=None, X=None):
        """(m, d) CSR features of new documents for one preprocessing: `texts`, or `X` as is."""
        fitted = self.preprocessings[preprocessing_id]
        if fitted is None:
            if X is None:
                raise UserError("input: these models were trained on feature vectors, not texts")
            return X
        if texts is None:
            raise UserError("input: these models need texts, not feature vectors")
        return fitted.transform(texts)

    def decision_values(self, texts=None, X=None) -> np.ndarray:
        """(m, n_categories) decision values, columns in `models` order; > 0: in the category."""
        features = {}
        columns = []
        for item in self.models:
            if item.preprocessing_id not in features:
                features[item.preprocessing_id] = self.features(item.preprocessing_id, texts, X)
            columns.append(item.model.decision_function(features[item.preprocessing_id]))
        return np.column_stack(columns)


MODEL_COLUMNS = ("category", "label", "config_key", "preprocessing_id", "kernel_id", "kernel", "gamma", "degree",
                 "coef0", "C", "j", "metric", "estimator", "rho", "value")


def train_selected(context: SweepContext, chosen: pd.DataFrame) -> TrainedSelection:
    """Fit the preprocessing and the SVM of every chosen row (one row per category). Each model's
    config holds the row's MODEL_COLUMNS (None where absent, e.g. "label", the readable name).

    Linear kernels train on the features (the sweep's linear path: no n x n matrix, so a corpus
    the sweep could handle can be refitted); other kernels share one Gram per preprocessing and kernel.
    """
    preprocessings, models = {}, []
    for pp_id, rows in chosen.groupby("preprocessing_id", sort=False):
        preprocessings[pp_id], X = _training_features(context, pp_id)
        grams = _KernelGrams(X, context.spec.gram_memory_limit)
        for _, row in rows.iterrows():
            kernel = context.kernel(row["kernel_id"])
            y = context.train.y(row["category"])
            data = {"X": X} if kernel.name == "linear" else {"gram": grams.of(kernel), "check_input": False}
            fit = fit_svm(y, float(row["C"]), j=float(row["j"]), tol=context.spec.tol, **data)
            config = {name: _plain(row.get(name)) for name in MODEL_COLUMNS}
            models.append(CategoryModel(row["category"], pp_id, KernelModel.from_fit(fit, X, kernel), config))
    order = {category: i for i, category in enumerate(chosen["category"])}
    return TrainedSelection(preprocessings, sorted(models, key=lambda m: order[m.category]))


def refit_selection(store, chosen: pd.DataFrame, spec_path: str | None = None, parameter: str = "selection=",
                    corpus=None) -> TrainedSelection:
    """`train_selected` for selection rows of one sweep in `store` (its stored spec, or the spec
    file at `spec_path`; `corpus`: the in-memory corpus the sweep was given); UserError naming
    `parameter` when the rows come from several training sets."""
    from xialpha.selection.context import load_context

    fingerprints = chosen["data_fingerprint"].unique()
    if len(fingerprints) != 1:
        raise UserError(f"{parameter}: the chosen configs come from {len(fingerprints)} different training sets")
    context = load_context(store, str(chosen["sweep_id"].iloc[0]), str(fingerprints[0]), spec_path, corpus)
    return train_selected(context, chosen)


class _KernelGrams:
    """Gram matrices (n, n) of the rows of X, one per non-linear kernel, from one linear Gram made
    on first use (within `limit_bytes`: the spec's gram_memory_limit, as in the sweep)."""

    def __init__(self, X, limit_bytes: int):
        self.X, self.limit_bytes, self.grams = X, limit_bytes, {}
        self.linear = self.sq_norms = None  # made together on first use

    def of(self, kernel):
        from xialpha.features import linear_gram, row_sq_norms

        if kernel.id not in self.grams:
            if self.linear is None:
                self.linear = linear_gram(self.X, limit_bytes=self.limit_bytes)
                self.sq_norms = row_sq_norms(self.X)
            self.grams[kernel.id] = kernel.from_linear(self.linear, self.sq_norms)
        return self.grams[kernel.id]


def _training_features(context: SweepContext, preprocessing_id: str):
    train = context.train
    if train.texts is None:
        return None, train.X
    return context.preprocessing(preprocessing_id).fit_transform(train.texts)


def _plain(value):
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value
