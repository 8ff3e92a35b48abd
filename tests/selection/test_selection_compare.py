"""Two saved selections side by side (`xialpha.selection.comparison`, `xialpha.compare`), on a store
of real sweeps with held-out splits (`compared.fill_compared`); every figure is checked against the
store's own rows, read here without the comparison's code."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import xialpha
from xialpha.cli import main
from xialpha.errors import UserError
from xialpha.parameters import ParameterTypeError
from xialpha.reports.frames import tidy_comparison
from xialpha.selection.comparison import MACRO, MCNEMAR, MICRO, NO_TEST, P_TEST, SIGN_TEST, compare_selections
from xialpha.storage.contract import StoreQueries
from xialpha.storage.opening import open_store

PARTS = {"preprocessing": "preprocessing_id", "kernel": "kernel_id", "C": "C", "j": "j"}


@pytest.fixture(scope="module")
def compared(tmp_path_factory, compared_store):
    return compared_store(tmp_path_factory.mktemp("compared"))


@pytest.fixture(scope="module")
def store(compared):
    return open_store(compared.uri, create=False, writable=True)


def by_category(comparison) -> dict:
    return {row.category: row for row in comparison.rows}


def chosen(store: StoreQueries, selection_id: str) -> pd.DataFrame:
    """The selection's rows joined with the results rows of the configurations it chose."""
    rows = store.selections(selection_id=selection_id)
    results = store.read_results_df(str(rows["sweep_id"].iloc[0]))
    held_out = results.set_index("config_key")[["holdout_f1", "holdout_error", "holdout_n", "holdout_n_pos"]]
    held_out = held_out.assign(holdout_d_pos=results.set_index("config_key")["holdout_d_pos"])
    held_out = held_out.assign(holdout_d_neg=results.set_index("config_key")["holdout_d_neg"])
    return rows.join(held_out, on="config_key").set_index("category")


def mcnemar(only_a: int, only_b: int) -> float:
    """McNemar's two-sided p on the documents where one side is right: exact binomial below 25 of
    them, else chi-square with continuity correction (as `xialpha.stats.mcnemar_test` says)."""
    n = only_a + only_b
    if n < 25:
        return 1.0 if n == 0 else stats.binomtest(only_a, n, 0.5).pvalue
    return stats.chi2.sf((abs(only_a - only_b) - 1) ** 2 / n, 1)


def test_a_selection_against_itself_changed_nothing_and_every_p_is_one(compared, store):
    comparison = compare_selections(store, compared.narrow, compared.narrow)
    assert [row.category for row in comparison.rows] == [*sorted(chosen(store, compared.narrow).index), MICRO, MACRO]
    for row in comparison.rows:
        assert row.changed == () and row.p_value == 1.0, row
        assert row.held_out_f1_a == row.held_out_f1_b and row.estimate_a == row.estimate_b
    for row in comparison.categories() + [by_category(comparison)[MICRO]]:
        assert row.test == MCNEMAR and row.only_a_right == 0 and row.only_b_right == 0
    assert comparison.objective_changes == ()
    assert comparison.summary_lines()[0] == "None of the 2 categories in both selections changed configuration."


def test_the_changed_sentence_reads_right_for_every_count():
    """Issue 49.6: "1 of the 6 categories both selections have changed configuration"."""
    from xialpha.selection.comparison import _changed_sentence

    assert _changed_sentence(1, 6) == "1 of the 6 categories in both selections changed configuration"
    assert _changed_sentence(6, 6) == "All 6 categories in both selections changed configuration"
    assert _changed_sentence(0, 1) == "The one category in both selections kept its configuration"
    assert _changed_sentence(1, 1) == "The one category in both selections changed configuration"
    assert _changed_sentence(0, 0) == "No category is in both selections"


def test_two_sweeps_with_different_grids_side_by_side(compared, store):
    comparison = compare_selections(store, compared.narrow, compared.wide)
    a, b = chosen(store, compared.narrow), chosen(store, compared.wide)
    rows = by_category(comparison)
    assert set(rows) == set(a.index) | set(b.index) | {MICRO, MACRO}
    only_b = sorted(set(b.index) - set(a.index))
    assert only_b and all(rows[c].changed == ("only in B",) and rows[c].test == NO_TEST for c in only_b)
    assert all(math.isnan(rows[c].held_out_f1_a) and rows[c].config_key_a is None for c in only_b)
    shared = sorted(set(a.index) & set(b.index))
    assert shared
    right_a, right_b = [], []
    for category in shared:
        row, left, right = rows[category], a.loc[category], b.loc[category]
        assert row.changed == tuple(part for part, column in PARTS.items() if left[column] != right[column])
        assert (row.estimate_a, row.estimate_b) == (left["value"], right["value"])
        assert row.held_out_f1_a == pytest.approx(left["holdout_f1"])
        assert row.held_out_f1_b == pytest.approx(right["holdout_f1"])
        assert row.held_out_error_b == pytest.approx(right["holdout_error"])
        errors_a = store.read_examples([left["config_key"]], "holdout", sweep_id="narrow")[left["config_key"]]
        errors_b = store.read_examples([right["config_key"]], "holdout", sweep_id="wide")[right["config_key"]]
        assert len(errors_a) == left["holdout_n"]
        only_a, only_b_right = int((~errors_a & errors_b).sum()), int((errors_a & ~errors_b).sum())
        assert row.test == MCNEMAR and (row.only_a_right, row.only_b_right) == (only_a, only_b_right)
        assert row.n_tested == left["holdout_n"]
        assert row.p_value == pytest.approx(mcnemar(only_a, only_b_right))
        right_a.append(~errors_a)
        right_b.append(~errors_b)
    assert any(rows[c].changed for c in shared) and any(rows[c].p_value < 0.05 for c in shared)
    micro = rows[MICRO]
    pooled = b.loc[shared, ["holdout_n_pos", "holdout_d_pos", "holdout_d_neg"]].sum()
    tp = pooled["holdout_n_pos"] - pooled["holdout_d_pos"]
    assert micro.held_out_f1_b == pytest.approx(2 * tp / (2 * tp + pooled["holdout_d_pos"] + pooled["holdout_d_neg"]))
    all_a, all_b = np.concatenate(right_a), np.concatenate(right_b)
    assert micro.test == MCNEMAR and micro.n_tested == len(all_a)
    assert (micro.only_a_right, micro.only_b_right) == (int((all_a & ~all_b).sum()), int((~all_a & all_b).sum()))
    macro = rows[MACRO]
    assert macro.held_out_f1_a == pytest.approx(a.loc[shared, "holdout_f1"].mean())
    assert macro.test == SIGN_TEST and macro.n_tested == len(shared)
    # the most changed first: the category in one selection only, then by how many parts changed
    assert [row.category for row in comparison.most_changed_first()][: len(only_b)] == only_b


def test_a_sweep_id_means_its_newest_saved_per_category_selection(compared, store):
    comparison = compare_selections(store, "narrow", "wide")
    assert (comparison.a.selection_id, comparison.b.selection_id) == (compared.narrow, compared.wide)
    assert comparison.a.given == "narrow"
    assert tidy_comparison(comparison).equals(
        tidy_comparison(compare_selections(store, compared.narrow, compared.wide))
    )


def test_selections_made_differently_are_said_to_be(compared, store):
    comparison = compare_selections(store, compared.wide_xa, compared.wide)
    assert comparison.objective_changes == ("estimator xa -> span",)
    assert "estimator xa -> span" in comparison.summary_lines()[1]


def test_other_documents_get_the_unpaired_test_and_the_output_says_why(compared, store):
    comparison = compare_selections(store, compared.narrow, compared.other)
    a, b = chosen(store, compared.narrow), chosen(store, compared.other)
    assert a["data_fingerprint"].iloc[0] != b["data_fingerprint"].iloc[0]
    shared = sorted(set(a.index) & set(b.index))
    assert shared
    for category in shared:
        row = by_category(comparison)[category]
        assert row.test == P_TEST and row.only_a_right is None
        right_a = a.loc[category, "holdout_n"] * (1 - a.loc[category, "holdout_error"])
        right_b = b.loc[category, "holdout_n"] * (1 - b.loc[category, "holdout_error"])
        n_a, n_b = a.loc[category, "holdout_n"], b.loc[category, "holdout_n"]
        pooled = (right_a + right_b) / (n_a + n_b)
        z = (right_a / n_a - right_b / n_b) / math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
        assert row.p_value == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert any("p-test: two-sided" in line and "unpaired" in line for line in comparison.summary_lines())
    # issue 43.6: it said nothing of the documents differing; a comparison on the same documents says nothing
    assert not comparison.same_documents and any(
        "trained on different documents" in line for line in comparison.summary_lines()
    )
    same = compare_selections(store, compared.wide_xa, compared.wide)
    assert same.same_documents and not any("different documents" in line for line in same.summary_lines())


def test_held_out_documents_of_another_fingerprint_are_not_paired_even_when_as_many(compared, tmp_path):
    """The same held-out counts and outcome vectors under another data fingerprint (other
    documents, as many): paired per document they would be equal; they are tested unpaired."""
    root = tmp_path / "store"
    shutil.copytree(compared.uri, root)
    store = open_store(str(root), create=True, writable=True)
    results = store.datasets.read_results("narrow").to_pylist()
    store.datasets.write_results([{**row, "sweep_id": "moved", "data_fingerprint": "other-data"} for row in results])
    examples = store.datasets.read("examples", sweep_id="narrow").to_pylist()
    store.datasets.write_examples([{**row, "sweep_id": "moved"} for row in examples])
    assert main(["select", str(root), "--sweep", "moved", "--save", "--format", "csv"]) == 0
    comparison = compare_selections(store, "narrow", "moved")
    for row in comparison.categories():
        assert row.changed == () and row.test == P_TEST and row.p_value == 1.0 and row.only_a_right is None
    assert by_category(comparison)[MICRO].test == P_TEST


def test_without_held_out_figures_nothing_is_tested(compared, store):
    comparison = compare_selections(store, compared.narrow, compared.blind)
    for row in comparison.rows:
        assert row.test == NO_TEST and math.isnan(row.p_value) and math.isnan(row.held_out_f1_b)
        assert not math.isnan(row.held_out_f1_a)
    assert comparison.tests_used() == ["none: a side has no held-out figures ([estimators] holdout = true scores them)"]


def test_an_unknown_id_is_named_with_what_the_store_holds(compared, store):
    with pytest.raises(UserError) as caught:
        compare_selections(store, "nope", compared.wide)
    assert caught.value.parameters == ("a",)
    assert str(caught.value).startswith(f"a=: no selection or sweep 'nope' in store {store.uri}")
    assert "narrow, other, r1, wide" in str(caught.value) and compared.wide in str(caught.value)
    with pytest.raises(UserError, match=r"^b=: no selection or sweep 'wid' .*; did you mean wide\?"):
        compare_selections(store, compared.wide, "wid")
    with pytest.raises(UserError, match=r"^b=: sweep 'r1' has no saved selection \(`xialpha select --sweep r1"):
        compare_selections(store, "narrow", "r1")


def test_the_python_api_returns_the_comparison_frame(compared):
    frame = xialpha.compare(compared.uri, "narrow", compared.wide)
    comparison = compare_selections(
        open_store(compared.uri, create=False, writable=True), compared.narrow, compared.wide
    )
    pd.testing.assert_frame_equal(frame, tidy_comparison(comparison))
    store = open_store(compared.uri, create=False, writable=True)
    a, b = chosen(store, compared.narrow), chosen(store, compared.wide)
    for _, row in frame.iloc[:-2].iterrows():  # a label per configuration, over both sweeps
        category = row["category"]
        if category in a.index and category in b.index:
            same = all(a.loc[category, column] == b.loc[category, column] for column in PARTS.values())
            assert (row["config_a"] == row["config_b"]) == same and (row["changed"] == "") == same
        else:
            assert "-" in (row["config_a"], row["config_b"])
    assert list(frame["config_a"].iloc[-2:]) == ["", ""]
    with pytest.raises(UserError, match=r"^compare=: the report of sweep 'r1' shows no saved selection to compare"):
        xialpha.report(compared.uri, sweep="r1", compare="narrow")
    with pytest.raises(ParameterTypeError, match=r"^a=: must be a str, got int 1$"):
        xialpha.compare(compared.uri, 1, "wide")  # type: ignore[arg-type]
