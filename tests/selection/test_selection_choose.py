"""Selection logic on hand-built result frames: objectives, ties, micro vs macro, costs, tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from selection_rows import chosen, result_row

from xialpha.errors import UserError
from xialpha.estimators.metrics import Estimate
from xialpha.selection.objective import Objective, metric_values
from xialpha.selection.selector import select


def objective(metric, **kwargs) -> Objective:
    """An objective over the hand-built rows, whose counts are xi-alpha's (estimator "xa"), ranking by
    each row's own value (the rules below; averaging over C neighbours is tested on its own)."""
    return Objective(metric, **{"estimator": "xa", "smooth": False} | kwargs)


def frame(*rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def test_per_category_choice_optimises_the_metric_in_its_direction():
    results = frame(
        result_row("a", 0.1, d_pos=30, d_neg=5),
        result_row("a", 1, d_pos=10, d_neg=20),
        result_row("a", 10, d_pos=20, d_neg=8),
        result_row("b", 0.1, d_pos=2, d_neg=1),
        result_row("b", 1, d_pos=1, d_neg=9),
    )
    by_f1 = select(results, objective("f1"), sweep_id="s1")
    assert chosen(by_f1) == {"a": 1.0, "b": 0.1}
    assert by_f1.rows["value"][0] == pytest.approx(Estimate("xa", 1000, 100, 10, 20).f1)
    assert chosen(select(results, objective("error"), sweep_id="s1")) == {"a": 10.0, "b": 0.1}
    assert chosen(select(results, objective("precision"), sweep_id="s1")) == {"a": 0.1, "b": 0.1}
    assert chosen(select(results, objective("recall"), sweep_id="s1")) == {"a": 1.0, "b": 1.0}
    runners = by_f1.runners_up_of("a")
    assert list(runners["C"]) == [10.0, 0.1]  # the others, best first


def test_ties_go_to_the_smaller_C_then_fewer_support_vectors():
    results = frame(
        result_row("a", 10, 10, 10, n_sv=40),
        result_row("a", 1, 10, 10, n_sv=90),
        result_row("a", 100, 20, 20),
        result_row("b", 1, 5, 5, n_sv=70, pp="pp1"),
        result_row("b", 1, 5, 5, n_sv=30, pp="pp2"),
    )
    selection = select(results, objective("f1"), sweep_id="s1")
    assert chosen(selection)["a"] == 1.0
    assert chosen(selection, "preprocessing_id")["b"] == "pp2"
    # shared configs tie as well: pp1/C=1 and pp2/C=1 have equal macro F1; pp2 has fewer SVs
    shared = frame(
        result_row("a", 1, 10, 10, pp="pp1", n_sv=50),
        result_row("b", 1, 5, 5, pp="pp1", n_sv=50),
        result_row("a", 1, 10, 10, pp="pp2", n_sv=20),
        result_row("b", 1, 5, 5, pp="pp2", n_sv=20),
        result_row("a", 0.5, 40, 40, pp="pp1"),
        result_row("b", 0.5, 40, 40, pp="pp1"),
    )
    selection = select(shared, objective("f1"), sweep_id="s1", per_category=False)
    assert set(selection.rows["preprocessing_id"]) == {"pp2"}


def micro_macro_results() -> pd.DataFrame:
    """Config A is better on the rare category, B on the frequent one (values by hand below)."""
    return frame(
        result_row("big", 1, 30, 30, n_pos=100, pp="A"),
        result_row("rare", 1, 1, 1, n_pos=10, pp="A"),
        result_row("big", 1, 10, 10, n_pos=100, pp="B"),
        result_row("rare", 1, 6, 6, n_pos=10, pp="B"),
    )


def test_global_macro_and_micro_averages_pick_different_configs():
    # F1 = 2TP / (2 n_pos - d_pos + d_neg). A: big 140/200 = 0.70, rare 18/20 = 0.90 -> macro 0.80;
    # B: big 180/200 = 0.90, rare 8/20 = 0.40 -> macro 0.65. Micro pools n_pos = 110:
    # A: TP = 79, F1 = 158/220 = 0.718; B: TP = 94, F1 = 188/220 = 0.855.
    macro = select(micro_macro_results(), objective("f1", average="macro"), sweep_id="s1", per_category=False)
    micro = select(micro_macro_results(), objective("f1", average="micro"), sweep_id="s1", per_category=False)
    assert set(macro.rows["preprocessing_id"]) == {"A"}
    assert macro.rows["selection_value"][0] == pytest.approx(0.80)  # the shared configuration's average
    assert set(micro.rows["preprocessing_id"]) == {"B"}
    assert micro.rows["selection_value"][0] == pytest.approx(188 / 220)
    assert list(micro.runners_up_of("big")["selection_value"]) == [pytest.approx(158 / 220)]
    per_category = select(micro_macro_results(), objective("f1"), sweep_id="s1")
    assert chosen(per_category, "preprocessing_id") == {"big": "B", "rare": "A"}


def test_global_needs_a_config_present_in_every_category():
    results = frame(result_row("a", 1, 10, 10, pp="A"), result_row("b", 1, 5, 5, pp="B"))
    with pytest.raises(UserError, match="per_category=: no configuration .* all 2 categories"):
        select(results, objective("f1"), sweep_id="s1", per_category=False)


def test_cost_selection_weighs_false_negatives_and_false_positives():
    results = frame(result_row("a", 1, d_pos=40, d_neg=5), result_row("a", 10, d_pos=10, d_neg=30))
    fn_expensive = select(results, objective("cost", cost_fn=5, cost_fp=1), sweep_id="s1").rows.iloc[0]
    fp_expensive = select(results, objective("cost", cost_fn=1, cost_fp=5), sweep_id="s1").rows.iloc[0]
    assert fn_expensive["C"] == 10.0 and fn_expensive["value"] == pytest.approx((5 * 10 + 30) / 1000)
    assert fp_expensive["C"] == 1.0 and fp_expensive["value"] == pytest.approx((40 + 5 * 5) / 1000)
    plain = select(results, objective("cost"), sweep_id="s1").rows.iloc[0]
    assert plain["C"] == 10.0 and plain["value"] == pytest.approx(40 / 1000)


def test_undefined_metrics_are_completed_not_dropped():
    counts = pd.DataFrame({"n": [10, 10, 10], "n_pos": [3, 0, 0], "d_pos": [3, 0, 0], "d_neg": [0, 0, 2]})
    assert list(metric_values(counts, "precision")) == [0.0, 1.0, 0.0]
    assert list(metric_values(counts, "recall")) == [0.0, 1.0, 1.0]
    assert list(metric_values(counts, "f1")) == [0.0, 1.0, 0.0]


def test_rho_and_estimator_must_have_results():
    results = frame(result_row("a", 1, 10, 10, rho=1.0), result_row("a", 1, 12, 12, rho=2.0))
    assert select(results, objective("error", rho=2.0), sweep_id="s1").rows["value"][0] == pytest.approx(0.024)
    with pytest.raises(UserError, match=r"rho=: sweep 's1' has no results at rho=0\.5 \(stored: 1, 2\)"):
        select(results, objective("f1", rho=0.5), sweep_id="s1")
    with pytest.raises(UserError, match="estimator=: sweep 's1' computed no 'loo' estimates"):
        select(results, objective("f1", estimator="loo"), sweep_id="s1")
    with pytest.raises(UserError, match="metric=: must be one of"):
        objective("auc")
    with pytest.raises(UserError, match="cost_fn=: must be a number from 0 to 1e"):
        objective("cost", cost_fn=-1)


def test_a_cost_that_would_overflow_is_refused():
    """Issue 48.8: --cost-fn 1e308 wrote Infinity as JSON, and with --global --average micro ended in
    an internal error; the largest cost keeps every sum finite."""
    with pytest.raises(UserError, match=r"cost_fp=: must be a number from 0 to 1e\+12, got 1e\+308"):
        objective("cost", cost_fp=1e308)
    results = frame(result_row("a", 1, 5, 5), result_row("a", 10, 10, 10), result_row("b", 1, 6, 5))
    chosen = select(results, objective("cost", cost_fn=1e12, cost_fp=1e12, average="micro"), sweep_id="s1")
    assert np.isfinite(chosen.rows["value"].to_numpy(float)).all()


def test_runners_up_get_micro_tests_from_the_stored_indicators():
    results = frame(result_row("a", 1, 5, 5), result_row("a", 10, 10, 10), result_row("a", 100, 6, 5))
    keys = results["config_key"]
    rng = np.random.default_rng(0)
    base = rng.random(1000) < 0.005
    indicators = {keys[0]: base.copy(), keys[1]: base.copy(), keys[2]: base.copy()}
    indicators[keys[1]][np.flatnonzero(~base)[:20]] = True  # C=10 errs on 20 more examples
    indicators[keys[2]][np.flatnonzero(~base)[:1]] = True
    requested = []

    def load(config_keys):
        requested.append(list(config_keys))
        return indicators

    selection = select(results, objective("error"), sweep_id="s1", load_indicators=load)
    assert sorted(requested[0]) == sorted(keys)
    close, far = (row for _, row in selection.runners_up_of("a").iterrows())
    assert [close["C"], far["C"]] == [100.0, 10.0]
    assert close["p_micro_sign"] == pytest.approx(0.5) and not close["significant"]  # one discordant example
    assert far["p_micro_sign"] == pytest.approx(0.5**20) and far["significant"]
    assert np.isnan(far["p_macro_t"])
    row = selection.rows.iloc[0]
    assert row["runner_up_C"] == 100.0 and not row["significant"]
    assert (row["n_runners_up"], row["n_runners_up_tested"], row["n_runners_up_significant"]) == (2, 2, 1)
    assert pd.isna(row["untested"])


def test_global_comparisons_pool_micro_and_test_macro():
    rows = []
    categories = [f"c{i}" for i in range(6)]
    for i, category in enumerate(categories):
        rows.append(result_row(category, 1, 5, 5 + i, pp="A"))
        rows.append(result_row(category, 1, 8 + i, 8, pp="B"))
    results = frame(*rows)
    keys = dict(zip(zip(results["category"], results["preprocessing_id"]), results["config_key"]))
    indicators = {}
    for (_category, _pp), key in keys.items():
        row = results[results["config_key"] == key].iloc[0]
        vector = np.zeros(1000, dtype=bool)
        vector[: int(row["xa_d_pos"])] = True  # positives first
        vector[100 : 100 + int(row["xa_d_neg"])] = True
        indicators[key] = vector
    selection = select(
        results, objective("f1"), sweep_id="s1", per_category=False, load_indicators=lambda k: indicators
    )
    assert set(selection.rows["preprocessing_id"]) == {"A"}
    table = selection.rows
    assert list(table["p_macro_sign"]) == [pytest.approx(0.5**6)] * 6  # A higher in all 6 categories
    assert table["p_macro_t"].notna().all()
    # pooled: A errs on 5 positives + (5+i) negatives, B on (8+i) positives + 8 negatives
    only_a_right = sum(3 + i for i in range(6)) + sum(max(3 - i, 0) for i in range(6))
    discordant = sum(abs((8 + i) - 5) + abs(8 - (5 + i)) for i in range(6))
    assert table["p_micro_sign"][0] == pytest.approx(
        stats.binomtest(only_a_right, discordant, alternative="greater").pvalue
    )
    assert list(table["category"]) == categories
    assert table["selection_value"].nunique() == 1 and table["mode"].eq("global").all()
