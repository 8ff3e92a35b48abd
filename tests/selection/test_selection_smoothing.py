"""Selections rank by each estimate averaged with its C neighbours' (issue 24's pre-registered default)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from selection_rows import chosen, result_row

from xialpha.errors import UserError
from xialpha.selection.objective import Objective
from xialpha.selection.selector import select
from xialpha.selection.smoothing import smoothed_over_c


def test_each_value_is_averaged_with_the_next_smaller_and_larger_C_of_its_group():
    groups = ["a", "a", "a", "a", "b", "b"]
    C = [10.0, 0.1, 1.0, 100.0, 1.0, 5.0]
    values = [0.3, 0.6, 0.9, np.nan, 0.2, 0.4]
    # a, ordered by C: 0.1 -> 0.6, 1 -> 0.9, 10 -> 0.3, 100 -> NaN (left out of its neighbours' means, stays NaN)
    # b has two C only: its values are ranked as they are (averaged, both would be 0.3: a tie)
    expected = [(0.9 + 0.3) / 2, (0.6 + 0.9) / 2, (0.6 + 0.9 + 0.3) / 3, np.nan, 0.2, 0.4]
    np.testing.assert_allclose(smoothed_over_c(groups, C, values), expected)
    assert smoothed_over_c(["x"], [1.0], [0.7]) == pytest.approx([0.7])  # alone: itself


D_POS = {0.01: 89, 0.1: 10, 1.0: 67, 10.0: 25, 100.0: 21, 1000.0: 45}  # false negatives of 100 positives, by C
F1 = {C: 2 * (100 - d) / (200 - d) for C, d in D_POS.items()}  # no false positives


def _spike_and_plateau() -> pd.DataFrame:
    """One category, one preprocessing: F1 (xi-alpha's counts) peaks alone at C = 0.1 (0.947, between
    0.198 and 0.496), while C = 100 (0.883) sits between 0.857 and 0.710."""
    return pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0) for C, d in D_POS.items()])


def test_the_default_selection_prefers_a_plateau_to_an_isolated_peak():
    results = _spike_and_plateau()
    smoothed = select(results, Objective("f1", estimator="xa"), sweep_id="s1")
    alone = select(results, Objective("f1", estimator="xa", smooth=False), sweep_id="s1")
    assert chosen(alone) == {"a": 0.1} and chosen(smoothed) == {"a": 100.0}
    plateau = np.mean([F1[10.0], F1[100.0], F1[1000.0]])
    row = smoothed.rows.iloc[0]
    assert row["smooth_c"] and row["value"] == pytest.approx(F1[100.0])
    assert row["selection_value"] == pytest.approx(plateau)
    assert row["runner_up_C"] == 1000.0 and row["runner_up_selection_value"] == pytest.approx(
        (F1[100.0] + F1[1000.0]) / 2
    )
    assert not alone.rows["smooth_c"][0]


def test_global_selections_average_the_shared_configurations_over_C_too():
    other = _spike_and_plateau().assign(category="b", config_key=lambda f: "b-" + f["config_key"])
    selection = select(
        pd.concat([_spike_and_plateau(), other]), Objective("f1", estimator="xa"), sweep_id="s1", per_category=False
    )
    assert set(selection.rows["C"]) == {100.0}
    assert selection.rows["selection_value"][0] == pytest.approx(np.mean([F1[10.0], F1[100.0], F1[1000.0]]))


def test_smooth_must_be_a_boolean():
    with pytest.raises(UserError, match="smooth=: must be True or False"):
        Objective("f1", smooth="yes")


def test_a_plateau_shares_its_best_average_so_its_smallest_C_wins_even_at_the_grid_edge():
    """Issue 36: span's F1 equal at C = 3 and C = 10 (the largest) chose 10, whose average has one
    neighbour only (the plateau), while 3's took in the lower value at C = 1."""
    np.testing.assert_allclose(smoothed_over_c(["a"] * 3, [1.0, 3.0, 10.0], [0.5, 0.8, 0.8]), [0.65, 0.8, 0.8])
    errors = smoothed_over_c(["a"] * 3, [1.0, 3.0, 10.0], [0.5, 0.2, 0.2], maximise=False)
    np.testing.assert_allclose(errors, [0.35, 0.2, 0.2])
    inside = smoothed_over_c(["a"] * 4, [1.0, 3.0, 10.0, 30.0], [0.5, 0.8, 0.8, 0.6])
    assert inside[1] == inside[2] == pytest.approx((0.8 + 0.8 + 0.6) / 3)
    apart = smoothed_over_c(["a"] * 4, [1.0, 3.0, 10.0, 30.0], [0.8, 0.5, 0.8, 0.8])  # not adjacent: no plateau
    assert apart[0] == pytest.approx(0.65) and apart[2] == apart[3] == pytest.approx(0.8)
    results = pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0) for C, d in {1.0: 60, 3.0: 20, 10.0: 20}.items()])
    assert chosen(select(results, Objective("f1", estimator="xa"), sweep_id="s1")) == {"a": 3.0}
    costs = select(results, Objective("error", estimator="xa"), sweep_id="s1")
    assert chosen(costs) == {"a": 3.0}


def test_a_grid_of_two_C_is_ranked_by_its_estimates_not_tied_by_their_common_mean():
    """Issue 36: averaged, both points of a 2-C grid get the same mean, so the smaller C always won."""
    np.testing.assert_allclose(smoothed_over_c(["a", "a"], [1.0, 10.0], [0.5, 0.8]), [0.5, 0.8])
    two_estimated = smoothed_over_c(["a"] * 3, [1.0, 3.0, 10.0], [0.5, np.nan, 0.8])  # one C not estimated
    np.testing.assert_allclose(two_estimated, [0.5, np.nan, 0.8])
    results = pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0) for C, d in {1.0: 60, 10.0: 20}.items()])
    assert chosen(select(results, Objective("f1", estimator="xa"), sweep_id="s1")) == {"a": 10.0}
