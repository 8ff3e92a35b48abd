"""Trained models of a selection: one SVM per category and the fitted preprocessings they read.

A `KernelModel` keeps only what prediction needs: the support vectors' features and coefficients
(a weight vector for the linear kernel). `xialpha.jobs.refit` trains them on the cluster,
`xialpha.models.artifact` saves and loads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xialpha.errors import UserError
from xialpha.estimators import LINEAR
from xialpha.features.gram import linear_gram, row_sq_norms
from xialpha.storage.schema import ResultColumn, SelectionColumn


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
    def from_fit(cls, fit, X, kernel) -> KernelModel:
        """The model of an SVMFit trained on the Gram of the rows of X (n, d) under `kernel`."""
        coef = fit.alpha[fit.support] * fit.y[fit.support]
        support_vectors = X[fit.support]
        if kernel.name == LINEAR:
            weights = fit.w if fit.w is not None else np.asarray(support_vectors.T @ coef).ravel()
            return cls(kernel, fit.b, weights=np.asarray(weights, dtype=np.float64))
        return cls(kernel, fit.b, support_vectors=support_vectors, sv_sq_norms=row_sq_norms(support_vectors), coef=coef)

    def decision_function(self, X) -> np.ndarray:
        """Decision values (m,) of the rows of X (m, d)."""
        if self.weights is not None:
            return np.asarray(X @ self.weights).ravel() + self.b
        cross = self.kernel.from_linear(linear_gram(X, self.support_vectors), row_sq_norms(X), self.sv_sq_norms)
        return cross @ self.coef + self.b

    def predict(self, X) -> np.ndarray:
        """Membership (m,) of the rows of X (m, d) as booleans: True where f(x) > 0, in the category."""
        return self.decision_function(X) > 0


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
        return self.decisions(self.features_by_preprocessing(texts, X))

    def features_by_preprocessing(self, texts=None, X=None) -> dict:
        """The (m, d) CSR features of new documents (`texts`, or `X` as is) for each preprocessing
        a model reads, by preprocessing id."""
        ids = dict.fromkeys(item.preprocessing_id for item in self.models)
        return {pp_id: self.features(pp_id, texts, X) for pp_id in ids}

    def decisions(self, features: dict) -> np.ndarray:
        """(m, n_categories) decision values of `features_by_preprocessing`'s features, columns in
        `models` order; > 0: in the category."""
        return np.column_stack([item.model.decision_function(features[item.preprocessing_id]) for item in self.models])


MODEL_COLUMNS = (
    ResultColumn.CATEGORY,
    "label",
    ResultColumn.CONFIG_KEY,
    ResultColumn.PREPROCESSING_ID,
    ResultColumn.KERNEL_ID,
    ResultColumn.KERNEL,
    ResultColumn.GAMMA,
    ResultColumn.DEGREE,
    ResultColumn.COEF0,
    ResultColumn.C,
    ResultColumn.J,
    SelectionColumn.METRIC,
    SelectionColumn.ESTIMATOR,
    ResultColumn.RHO,
    SelectionColumn.VALUE,
)
