"""Training the selected configurations on all training data: one SVM per category.

Each chosen row names a preprocessing, a kernel, C and j; the preprocessing is fitted once on
the training texts and shared by the categories that chose it. The SVM is trained on the
feature vectors with the named kernel (scikit-learn's SVC keeps its support vectors), which
gives the same solution as the sweep's training on the precomputed Gram.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators import fit_svm
from xialpha.selection.context import SweepContext


@dataclass(frozen=True, eq=False)
class CategoryModel:
    """A trained one-vs-rest SVM: `svc` has classes [-1, +1]; decision > 0 means the category."""

    category: str
    preprocessing_id: str
    svc: object
    config: dict


@dataclass(frozen=True, eq=False)
class TrainedSelection:
    """Fitted preprocessings by id (None for corpora given as feature vectors) and the models."""

    preprocessings: dict
    models: list[CategoryModel]

    def features(self, preprocessing_id: str, texts=None, X=None):
        """(m, d) CSR features of new documents for one preprocessing: `texts`, or `X` as is."""
        fitted = self.preprocessings[preprocessing_id]
        if fitted is None:
            if X is None:
                raise UserError("input: these models were trained on feature vectors, not texts; give vectors")
            return X
        if texts is None:
            raise UserError("input: these models need texts")
        return fitted.transform(texts)

    def decision_values(self, texts=None, X=None) -> np.ndarray:
        """(m, n_categories) decision values, columns in `models` order; > 0: in the category."""
        cache = {}
        columns = []
        for model in self.models:
            if model.preprocessing_id not in cache:
                cache[model.preprocessing_id] = self.features(model.preprocessing_id, texts, X)
            columns.append(model.svc.decision_function(cache[model.preprocessing_id]))
        return np.column_stack(columns) if columns else np.empty((0, 0))

    @property
    def categories(self) -> list[str]:
        return [model.category for model in self.models]


MODEL_COLUMNS = ("category", "config_key", "preprocessing_id", "kernel_id", "kernel", "gamma", "degree", "coef0",
                 "C", "j", "metric", "estimator", "rho", "value")


def train_selected(context: SweepContext, chosen: pd.DataFrame) -> TrainedSelection:
    """Fit the preprocessing and the SVM of every chosen row (one row per category)."""
    preprocessings, features, models = {}, {}, []
    for _, row in chosen.iterrows():
        pp_id = row["preprocessing_id"]
        if pp_id not in features:
            preprocessings[pp_id], features[pp_id] = _training_features(context, pp_id)
        kernel = context.kernel(row["kernel_id"])
        params = {name: value for name, value in kernel.svc_kwargs().items() if name != "kernel"}
        y = context.train.y(row["category"])
        fit = fit_svm(y, float(row["C"]), X=features[pp_id], kernel=kernel.name, kernel_params=params,
                      j=float(row["j"]), tol=context.spec.tol)
        config = {name: _plain(row.get(name)) for name in MODEL_COLUMNS}
        models.append(CategoryModel(row["category"], pp_id, fit.model, config))
    return TrainedSelection(preprocessings, models)


def _training_features(context: SweepContext, preprocessing_id: str):
    train = context.train
    if train.texts is None:
        return None, train.X
    fitted, X = context.preprocessing(preprocessing_id).fit_transform(train.texts)
    return fitted, X


def _plain(value):
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value
