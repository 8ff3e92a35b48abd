"""Hand-computed xi-alpha counts and metrics (seed Definitions 1-5) and every zero-denominator case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xialpha.estimators import METRICS
from xialpha.estimators.metrics import Estimate, weighted_average
from xialpha.estimators.xi_alpha import xi_alpha, xi_alpha_indicator

# Five examples, R_delta^2 = 1. rho * alpha_i * R^2 + xi_i for rho = 1 and rho = 2:
#   i  y   alpha  xi    rho=1  rho=2
#   0  +1  0      0     0      0
#   1  +1  0.5    0     0.5    1.0   (exactly on the threshold: counted, the rule is >=)
#   2  -1  0.25   0     0.25   0.5
#   3  -1  1.0    0.25  1.25   2.25
#   4  +1  0.125  1.5   1.625  1.75  (a training error)
Y = np.array([1, 1, -1, -1, 1])
ALPHA = np.array([0.0, 0.5, 0.25, 1.0, 0.125])
XI = np.array([0.0, 0.0, 0.0, 0.25, 1.5])


def test_indicator_rho_1_and_2_by_hand():
    assert xi_alpha_indicator(ALPHA, XI, 1.0, rho=1.0).tolist() == [False, False, False, True, True]
    assert xi_alpha_indicator(ALPHA, XI, 1.0, rho=2.0).tolist() == [False, True, False, True, True]


def test_indicator_scales_with_r_delta2():
    # R^2 = 4, rho = 1: 0, 2, 1, 4.25, 2 -> examples 1, 2 (exactly 1), 3, 4.
    assert xi_alpha_indicator(ALPHA, XI, 4.0).tolist() == [False, True, True, True, True]
    # R^2 = 0.5, rho = 2 equals R^2 = 1, rho = 1.
    assert xi_alpha_indicator(ALPHA, XI, 0.5, rho=2.0).tolist() == xi_alpha_indicator(ALPHA, XI, 1.0).tolist()


def test_estimate_rho_1_by_hand():
    # d_pos = 1 (example 4), d_neg = 1 (example 3); n = 5, n_pos = 3, TP = 2.
    est = xi_alpha(ALPHA, XI, Y, 1.0, rho=1.0)
    assert (est.method, est.n, est.n_pos, est.d_pos, est.d_neg, est.d) == ("xa", 5, 3, 1, 1, 2)
    assert est.error == pytest.approx(2 / 5)
    assert est.recall == pytest.approx(2 / 3)  # 1 - 1/3
    assert est.precision == pytest.approx(2 / 3)  # 2 / (2 + 1)
    assert est.f1 == pytest.approx(2 / 3)  # 2*2 / (6 - 1 + 1)
    assert est.retrains == 0


def test_estimate_rho_2_by_hand():
    # d_pos = 2 (examples 1, 4), d_neg = 1 (example 3); TP = 1.
    est = xi_alpha(ALPHA, XI, Y, 1.0, rho=2.0)
    assert (est.d_pos, est.d_neg) == (2, 1)
    assert est.metrics() == pytest.approx({"error": 3 / 5, "recall": 1 / 3, "precision": 1 / 2, "f1": 2 / 5})
    # F1 is the harmonic mean of precision and recall.
    assert est.f1 == pytest.approx(2 * est.precision * est.recall / (est.precision + est.recall))
    assert est.indicator.tolist() == [False, True, False, True, True]


def test_no_estimated_errors_gives_perfect_metrics():
    est = xi_alpha(np.zeros(4), np.zeros(4), [1, -1, 1, -1], 1.0)
    assert est.metrics() == {"error": 0.0, "recall": 1.0, "precision": 1.0, "f1": 1.0}


def test_no_predicted_positives_precision_is_nan_recall_and_f1_zero():
    # Every positive is a possible error and no negative is: TP = 0 and TP + d_neg = 0.
    est = xi_alpha([0.0, 0.0, 0.0], [1.0, 2.0, 0.0], [1, 1, -1], 1.0)
    assert (est.d_pos, est.d_neg) == (2, 0)
    assert math.isnan(est.precision)
    assert est.recall == 0.0
    assert est.f1 == 0.0  # 0 / (2*2 - 2 + 0), defined
    assert est.error == pytest.approx(2 / 3)


def test_all_errors_precision_zero_not_nan():
    est = xi_alpha([0.0, 0.0], [1.0, 1.0], [1, -1], 1.0)
    assert (est.d_pos, est.d_neg) == (1, 1)
    assert est.metrics() == {"error": 1.0, "recall": 0.0, "precision": 0.0, "f1": 0.0}


def test_no_positives_recall_nan_and_f1_nan_without_negative_errors():
    est = Estimate("xa", n=3, n_pos=0, d_pos=0, d_neg=0)
    assert est.error == 0.0
    assert math.isnan(est.recall) and math.isnan(est.precision) and math.isnan(est.f1)


def test_no_positives_with_negative_errors_precision_and_f1_zero():
    est = Estimate.from_indicator("xa", np.array([-1, -1, -1]), np.array([True, False, False]))
    assert (est.n_pos, est.d_pos, est.d_neg) == (0, 0, 1)
    assert math.isnan(est.recall)
    assert est.precision == 0.0  # 0 / (0 + 1)
    assert est.f1 == 0.0  # 0 / (0 - 0 + 1)


def test_empty_estimate_error_is_nan():
    est = Estimate("xa", n=0, n_pos=0, d_pos=0, d_neg=0)
    assert all(math.isnan(v) for v in est.metrics().values())
    assert tuple(est.metrics()) == METRICS


def test_stored_columns_integer_and_fractional_counts():
    from xialpha.storage.schema import METRICS as STORED_METRICS
    from xialpha.storage.schema import estimate_values

    assert STORED_METRICS == METRICS  # the store's column registry and the metrics estimators compute
    cols = estimate_values(xi_alpha(ALPHA, XI, Y, 1.0, rho=2.0))
    assert cols["xa_d_pos"] == 2 and cols["xa_d_neg"] == 1
    assert cols["xa_precision"] == pytest.approx(0.5)
    assert set(cols) == {f"xa_{k}" for k in ("d_pos", "d_neg", *METRICS)}
    frac = estimate_values(Estimate("bootstrap", n=4, n_pos=2, d_pos=0.5, d_neg=1.0), "bs")
    assert frac["bs_d_pos"] is None  # a fractional count is not an integer count
    assert frac["bs_d_neg"] == 1
    assert frac["bs_recall"] == pytest.approx(0.75)
    assert estimate_values(None, "span") == dict.fromkeys(
        ("span_d_pos", "span_d_neg", "span_error", "span_recall", "span_precision", "span_f1")
    )


def test_weighted_average_by_hand():
    a = Estimate("a", n=10, n_pos=4, d_pos=2, d_neg=0)
    b = Estimate("b", n=10, n_pos=4, d_pos=0, d_neg=5)
    avg = weighted_average([a, b], [0.25, 0.75], "mix")
    assert (avg.method, avg.n, avg.n_pos) == ("mix", 10, 4)
    assert avg.d_pos == pytest.approx(0.5) and avg.d_neg == pytest.approx(3.75)
    assert avg.error == pytest.approx(0.425)


def test_xi_alpha_accepts_lists_and_float_labels():
    est = xi_alpha(ALPHA.tolist(), XI.tolist(), [1.0, 1.0, -1.0, -1.0, 1.0], 1.0)
    assert (est.d_pos, est.d_neg) == (1, 1)
