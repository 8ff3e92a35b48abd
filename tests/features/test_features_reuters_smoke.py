"""Reuters smoke test of preprocessing + Gram + estimators, the seed's setting (Joachims 2000, Table 1):
category earn, linear SVM, C = 0.5, unit-norm TF-IDF with min_df = 3 fitted on a fixed random half of
the 12,902 ModApte documents; the xi-alpha error (rho = 1) lies near the seed's 2.68 % and above the
error measured on the other half."""

from __future__ import annotations

import numpy as np
import pytest

from xialpha.corpora import load_reuters
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha
from xialpha.features import Preprocessing, linear_gram


@pytest.mark.reuters
def test_earn_xi_alpha_error_brackets_the_holdout_error(reuters_dir):
    corpus = load_reuters(reuters_dir)
    assert len(corpus) == 12_902
    order = np.random.default_rng(20000).permutation(len(corpus))
    train, held_out = corpus.subset(order[:6451]), corpus.subset(order[6451:])
    fitted = Preprocessing(min_df=3, tf="raw", idf="log", norm="l2").fit(train.texts)
    X_train, X_held_out = fitted.transform(train.texts), fitted.transform(held_out.texts)
    G = linear_gram(X_train)
    y = train.y("earn")

    fit = fit_svm(TrainingProblem(y, gram=G), SVMParameters(0.5))
    estimate = xi_alpha(fit.alpha, fit.xi, y, r_delta_squared(gram=G), rho=1.0)
    decision = fit.decision_function(linear_gram(X_held_out, X_train))
    held_out_error = np.mean(np.where(decision > 0, 1, -1) != held_out.y("earn"))

    assert 0.015 <= estimate.error <= 0.040
    assert estimate.error > held_out_error
