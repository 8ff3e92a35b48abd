"""The significance tests and confidence bounds against scipy reference values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from xialpha.selection.bounds import (
    Confusion,
    binomial_bounds,
    clopper_pearson_lower,
    clopper_pearson_upper,
    f1_lower_bound,
    macro_bounds,
    point_metrics,
)
from xialpha.selection.significance import compare
from xialpha.stats import (
    macro_rank_t_test,
    macro_sign_test,
    macro_t_test,
    mcnemar_test,
    micro_sign_test,
    proportion_test,
)


def _outcomes(both_right: int, only_a: int, only_b: int, both_wrong: int):
    a = np.array([True] * both_right + [True] * only_a + [False] * only_b + [False] * both_wrong)
    b = np.array([True] * both_right + [False] * only_a + [True] * only_b + [False] * both_wrong)
    return a, b


def test_micro_sign_test_is_one_sided_exact_binomial_on_discordant_decisions():
    a, b = _outcomes(both_right=50, only_a=9, only_b=2, both_wrong=7)
    result = micro_sign_test(a, b)
    assert (result.n, result.statistic) == (11, 9)
    assert result.p_value == pytest.approx(stats.binomtest(9, 11, 0.5, alternative="greater").pvalue)
    # hand value: P(K >= 9 | Bin(11, 1/2)) = (C(11,9) + C(11,10) + C(11,11)) / 2^11
    assert result.p_value == pytest.approx((55 + 11 + 1) / 2048)
    assert micro_sign_test(b, a).p_value == pytest.approx(stats.binomtest(2, 11, 0.5, alternative="greater").pvalue)


def test_sign_tests_without_discordant_pairs_give_no_evidence():
    a, b = _outcomes(10, 0, 0, 3)
    assert micro_sign_test(a, b).p_value == 1.0
    assert mcnemar_test(a, b).p_value == 1.0
    assert macro_sign_test([0.5, 0.7], [0.5, 0.7]).p_value == 1.0


def test_mcnemar_exact_for_few_discordant_pairs_and_chi_square_otherwise():
    a, b = _outcomes(100, 8, 2, 5)
    assert mcnemar_test(a, b).p_value == pytest.approx(stats.binomtest(8, 10, 0.5).pvalue)
    a, b = _outcomes(100, 40, 20, 5)
    chi2 = (abs(40 - 20) - 1) ** 2 / 60
    assert mcnemar_test(a, b).statistic == pytest.approx(chi2)
    assert mcnemar_test(a, b).p_value == pytest.approx(stats.chi2.sf(chi2, 1))
    assert mcnemar_test(a, b).p_value == pytest.approx(mcnemar_test(b, a).p_value)


def test_the_p_values_are_scipy_stats_bit_for_bit():
    """xialpha.stats computes from scipy.special what scipy.stats would (to spare commands its
    import): every binomial count up to 80 trials and some far beyond, one- and two-sided, and
    paired t-tests on raw and ranked scores, and the Clopper-Pearson bounds (Beta quantiles) give
    scipy.stats' values exactly."""
    from xialpha.stats import binomial_p

    counts = [(k, n) for n in range(1, 81) for k in range(n + 1)]
    counts += [(k, n) for n in (99, 250, 1001, 4096, 30_001) for k in np.unique(np.linspace(0, n, 41).astype(int))]
    for k, n in counts:
        for alternative in ("greater", "two-sided"):
            expected = stats.binomtest(int(k), n, 0.5, alternative=alternative).pvalue
            assert binomial_p(int(k), n, alternative) == expected, (k, n, alternative)
    rng = np.random.default_rng(3)
    for size in (2, 3, 5, 12, 40, 300):
        for _ in range(20):
            a = rng.uniform(0.2, 0.9, size)
            b = np.where(rng.random(size) < 0.2, a, a - rng.normal(0.01, 0.05, size))
            reference = stats.ttest_rel(a, b, alternative="greater")
            assert (macro_t_test(a, b).statistic, macro_t_test(a, b).p_value) == (reference.statistic, reference.pvalue)
            ranks = stats.rankdata(np.round(np.concatenate([a, b]) / 1e-12) * 1e-12)
            reference = stats.ttest_rel(ranks[:size], ranks[size:], alternative="greater")
            ranked = macro_rank_t_test(a, b)
            assert (ranked.statistic, ranked.p_value) == (reference.statistic, reference.pvalue)
    for k, n in [(0, 5), (3, 20), (17, 20), (20, 20), (45, 1000), (999, 1000)]:  # Clopper-Pearson's Beta quantiles
        for confidence in (0.9, 0.95, 0.99):
            low = 0.0 if k == 0 else stats.beta.ppf(1 - confidence, k, n - k + 1)
            high = 1.0 if k == n else stats.beta.ppf(confidence, k + 1, n - k)
            assert (clopper_pearson_lower(k, n, confidence), clopper_pearson_upper(k, n, confidence)) == (low, high)


def test_macro_sign_test_counts_categories_where_scores_differ():
    a = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    b = [0.8, 0.8, 0.6, 0.5, 0.4, 0.45]
    result = macro_sign_test(a, b)
    assert (result.n, result.statistic) == (5, 4)
    assert result.p_value == pytest.approx(stats.binomtest(4, 5, 0.5, alternative="greater").pvalue)


def test_macro_t_test_matches_scipy_paired_one_sided():
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 0.9, 10)
    b = a - rng.normal(0.02, 0.03, 10)
    result = macro_t_test(a, b)
    reference = stats.ttest_rel(a, b, alternative="greater")
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert result.n == 10


def test_macro_t_test_degenerate_cases():
    assert np.isnan(macro_t_test([0.5], [0.4]).p_value)
    assert macro_t_test([0.5, 0.6], [0.4, 0.5]).p_value == 0.0
    assert macro_t_test([0.5, 0.6], [0.5, 0.6]).p_value == 1.0
    with pytest.raises(ValueError, match="a_scores, b_scores"):
        macro_t_test([0.5, np.nan], [0.5, 0.6])
    with pytest.raises(ValueError, match="equal length"):
        macro_sign_test([0.5], [0.5, 0.6])


def test_macro_rank_t_test_on_a_hand_ranked_example():
    # pooled 0.5 0.55 0.6 0.7 0.8 0.9 -> ranks 1..6: a = (6, 4, 1), b = (5, 3, 2), d' = (1, 1, -1)
    # mean 1/3, sample sd sqrt(((2/3)^2 * 2 + (4/3)^2) / 2) = 2/sqrt(3), t = (1/3) / ((2/sqrt(3)) / sqrt(3)) = 1/2
    result = macro_rank_t_test([0.9, 0.7, 0.5], [0.8, 0.6, 0.55])
    assert result.name == "T'-test" and result.n == 3
    assert result.statistic == pytest.approx(0.5)
    assert result.p_value == pytest.approx(stats.t.sf(0.5, 2))
    # the plain T-test on the same scores differs: d = (0.1, 0.1, -0.05), mean 0.05,
    # sd sqrt((0.05^2 * 2 + 0.1^2) / 2) = sqrt(0.0075), t = 0.05 / (sqrt(0.0075) / sqrt(3)) = 1
    assert macro_t_test([0.9, 0.7, 0.5], [0.8, 0.6, 0.55]).statistic == pytest.approx(1.0)


def test_macro_rank_t_test_gives_tied_scores_their_mean_rank():
    # pooled 0.5 0.7 0.5 0.6 -> ranks 1.5 4 1.5 3: d' = (0, 1), t = 0.5 / (sqrt(0.5) / sqrt(2)) = 1,
    # one degree of freedom (Cauchy): P(T >= 1) = 1/4
    result = macro_rank_t_test([0.5, 0.7], [0.5 + 1e-15, 0.6])
    assert result.statistic == pytest.approx(1.0)
    assert result.p_value == pytest.approx(0.25)


def test_macro_rank_t_test_matches_scipy_ranks_and_paired_t_and_resists_an_outlier():
    rng = np.random.default_rng(7)
    a = rng.uniform(0.3, 0.9, 12)
    b = a - rng.normal(0.03, 0.05, 12)
    ranks = stats.rankdata(np.concatenate([a, b]))
    reference = stats.ttest_rel(ranks[:12], ranks[12:], alternative="greater")
    result = macro_rank_t_test(a, b)
    assert (result.statistic, result.p_value) == (pytest.approx(reference.statistic), pytest.approx(reference.pvalue))


def test_macro_rank_t_test_is_less_swayed_by_one_outlying_category():
    # A beats B by 0.02 on five categories and loses one by 0.45: the T-test sees mean(d) < 0.
    a = [0.82, 0.72, 0.62, 0.52, 0.42, 0.0]
    b = [0.80, 0.70, 0.60, 0.50, 0.40, 0.45]
    # ranks: a = (12, 10, 8, 6, 3, 1), b = (11, 9, 7, 5, 2, 4), d' = (1, 1, 1, 1, 1, -3): mean 1/3,
    # sd sqrt((5 * (2/3)^2 + (10/3)^2) / 5) = sqrt(8/3), t = (1/3) / (sqrt(8/3) / sqrt(6)) = 1/2
    assert macro_t_test(a, b).statistic < 0
    rank = macro_rank_t_test(a, b)
    assert rank.statistic == pytest.approx(0.5) and rank.p_value == pytest.approx(stats.t.sf(0.5, 5))


def test_macro_rank_t_test_degenerate_cases():
    assert np.isnan(macro_rank_t_test([0.5], [0.4]).p_value)
    assert macro_rank_t_test([0.5, 0.6], [0.5, 0.6]).p_value == 1.0
    with pytest.raises(ValueError, match="a_scores, b_scores"):
        macro_rank_t_test([0.5, np.inf], [0.5, 0.6])


def test_proportion_test_on_hand_computed_examples():
    # equal n (the paper's simplified form): p = 0.85, Z = 0.1 / sqrt(2 * 0.85 * 0.15 / 100)
    z = 0.1 / math.sqrt(2 * 0.85 * 0.15 / 100)
    result = proportion_test(90, 100, 80, 100)
    assert result.name == "p-test" and result.n == 200
    assert result.statistic == pytest.approx(z) and z == pytest.approx(1.98029, abs=1e-5)
    assert result.p_value == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))
    assert result.p_value == pytest.approx(0.023835, abs=1e-6)
    # unequal n: p_a = 0.75, p_b = 0.4, pooled 50/90
    pooled = 50 / 90
    z = 0.35 / math.sqrt(pooled * (1 - pooled) * (1 / 40 + 1 / 50))
    assert proportion_test(30, 40, 20, 50).statistic == pytest.approx(z)
    assert proportion_test(20, 50, 30, 40).p_value == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2)))


def test_proportion_test_degenerate_and_bad_counts():
    assert proportion_test(10, 10, 20, 20).p_value == 1.0
    assert proportion_test(0, 10, 0, 20).p_value == 1.0
    with pytest.raises(ValueError, match="k_b, n_b"):
        proportion_test(1, 10, 5, 4)
    with pytest.raises(ValueError, match="k_a, n_a"):
        proportion_test(0, 0, 1, 4)


def test_compare_runs_the_p_test_on_correct_decisions_and_the_rank_t_test_on_categories():
    a_right, b_right = _outcomes(both_right=70, only_a=20, only_b=10, both_wrong=0)
    split = {"a1": ~a_right[:50], "a2": ~a_right[50:], "b1": ~b_right[:50], "b2": ~b_right[50:]}
    comparison = compare(["a1", "a2"], ["b1", "b2"], [0.2, 0.1], [0.3, 0.05], split, maximise=False, macro=True)
    assert comparison.proportion.p_value == pytest.approx(proportion_test(90, 100, 80, 100).p_value)
    # minimised: oriented scores a = (-0.2, -0.1), b = (-0.3, -0.05): ranks a = (2, 3), b = (1, 4), d' = (1, -1)
    assert comparison.macro_rank_t.statistic == pytest.approx(0.0)
    p = comparison.p_values()
    assert p["p_proportion"] == comparison.proportion.p_value and p["p_macro_rank_t"] == comparison.macro_rank_t.p_value
    per_category = compare(["a1"], ["b1"], [0.2], [0.3], split, maximise=False, macro=False)
    assert per_category.macro_rank_t is None and not np.isnan(per_category.p_values()["p_proportion"])


@pytest.mark.parametrize(("k", "n"), [(0, 20), (3, 20), (17, 20), (20, 20), (1, 1), (45, 1000)])
def test_clopper_pearson_one_sided_bounds_match_scipy(k, n):
    lower = stats.binomtest(k, n, alternative="greater").proportion_ci(0.95, method="exact").low
    upper = stats.binomtest(k, n, alternative="less").proportion_ci(0.95, method="exact").high
    assert clopper_pearson_lower(k, n) == pytest.approx(lower, abs=1e-12)
    assert clopper_pearson_upper(k, n) == pytest.approx(upper, abs=1e-12)


def test_binomial_bounds_bracket_the_point_estimates():
    c = Confusion(tp=40, fp=10, fn=20, tn=930)
    point, bounds = point_metrics(c), binomial_bounds(c)
    assert point == pytest.approx({"error": 0.03, "recall": 40 / 60, "precision": 0.8, "f1": 80 / 110})
    assert bounds["error_upper"] > point["error"]
    assert bounds["recall_lower"] < point["recall"]
    assert bounds["precision_lower"] < point["precision"]
    assert bounds["recall_lower"] == pytest.approx(clopper_pearson_lower(40, 60))


def test_f1_lower_bound_is_below_the_point_estimate_and_zero_without_true_positives():
    c = Confusion(tp=40, fp=10, fn=20, tn=930)
    bound = f1_lower_bound(c, draws=20_000)
    assert 0.6 < bound < point_metrics(c)["f1"]
    assert f1_lower_bound(Confusion(0, 5, 10, 100)) == 0.0
    assert f1_lower_bound(c, draws=20_000, seed=3) == pytest.approx(bound, abs=0.01)
    assert f1_lower_bound(c, confidence=0.99, draws=20_000) < bound


def test_f1_lower_bound_covers_the_true_f1_about_95_percent_of_the_time():
    """400 simulated test sets of 400 documents from a population with known F1."""
    prevalence, recall, fpr, n = 0.1, 0.75, 0.03, 400
    true_f1 = 2 * prevalence * recall / (prevalence * recall + prevalence + (1 - prevalence) * fpr)
    rng = np.random.default_rng(2013)
    covered = 0
    for trial in range(400):
        positive = rng.random(n) < prevalence
        predicted = np.where(positive, rng.random(n) < recall, rng.random(n) < fpr)
        c = Confusion.from_predictions(positive, predicted)
        covered += f1_lower_bound(c, draws=4000, seed=trial) <= true_f1
    assert 0.92 <= covered / 400 <= 0.98


def test_macro_bounds_lie_below_the_macro_averages():
    confusions = [Confusion(40, 10, 20, 930), Confusion(5, 2, 5, 988), Confusion(200, 30, 10, 760)]
    bounds = macro_bounds(confusions, draws=20_000)
    points = [point_metrics(c) for c in confusions]
    for metric in ("recall", "precision", "f1"):
        assert bounds[f"{metric}_lower"] < np.mean([p[metric] for p in points])
    assert bounds["error_upper"] > np.mean([p["error"] for p in points])


def test_confusion_rejects_bad_counts():
    with pytest.raises(ValueError, match="fp: must be a count"):
        Confusion(1, -1, 0, 0)
    with pytest.raises(ValueError, match="empty"):
        Confusion(0, 0, 0, 0)
