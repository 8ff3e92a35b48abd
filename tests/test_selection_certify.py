"""Certification rows: per-category, micro and macro values and bounds; the sealed-test-set rule."""

from __future__ import annotations

import pytest

from xialpha.errors import UserError
from xialpha.selection.bounds import Confusion, clopper_pearson_lower, clopper_pearson_upper, f1_lower_bound
from xialpha.selection.certification import certification_frame, certification_table, check_sealed

COUNTS = {"a": Confusion(tp=40, fp=10, fn=20, tn=930), "b": Confusion(tp=0, fp=3, fn=0, tn=997),
          "c": Confusion(tp=90, fp=5, fn=5, tn=900)}


def frame():
    return certification_frame(COUNTS, {"a": "ka", "b": "kb", "c": "kc"}, draws=4000).set_index("category")


def test_per_category_values_and_bounds():
    rows = frame()
    a = rows.loc["a"]
    assert (a["tp"], a["fp"], a["fn"], a["tn"]) == (40, 10, 20, 930)
    assert a["recall"] == pytest.approx(40 / 60) and a["precision"] == pytest.approx(0.8)
    assert a["error_upper"] == pytest.approx(clopper_pearson_upper(30, 1000))
    assert a["recall_lower"] == pytest.approx(clopper_pearson_lower(40, 60))
    assert a["precision_lower"] == pytest.approx(clopper_pearson_lower(40, 50))
    assert a["f1_lower"] == pytest.approx(f1_lower_bound(COUNTS["a"], draws=4000))
    assert rows.loc["b", "f1_lower"] == 0.0  # no true positive


def test_micro_pools_counts_and_macro_averages_completed_values():
    rows = frame()
    micro = rows.loc["(micro)"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (130, 18, 25)
    assert micro["f1"] == pytest.approx(260 / (260 + 18 + 25))
    macro = rows.loc["(macro)"]
    # "b" has no positives: recall 1 (nothing to find), precision 0 (3 false alarms), F1 0 (2TP / (FP + FN) = 0)
    assert macro["recall"] == pytest.approx((40 / 60 + 1.0 + 90 / 95) / 3)
    assert macro["precision"] == pytest.approx((0.8 + 0.0 + 90 / 95) / 3)
    assert macro["f1"] == pytest.approx((80 / 110 + 0.0 + 180 / 190) / 3)
    assert macro["f1_lower"] < macro["f1"] and macro["error_upper"] > macro["error"]
    table = certification_table(frame().reset_index(), {"certification_id": "cert-x", "test_fingerprint": "fp"})
    assert table.num_rows == 5 and table.column("tp").null_count == 1  # the macro row has no counts


def test_a_test_set_is_certified_once_unless_forced():
    assert check_sealed([], force=False) is None
    with pytest.raises(UserError, match="already used for certification cert-1; .* or --force"):
        check_sealed(["cert-1"], force=False)
    warning = check_sealed(["cert-1", "cert-2"], force=True)
    assert "2 certification(s)" in warning and "sequential testing" in warning
