"""Significance tests between two classifiers (Yang & Liu 1999, section 5; McNemar): what selections
(`xialpha.selection.significance`) and drift checks (`xialpha.concept_drift.windows`) test with.

Micro level, on per-decision outcomes (one decision per document and category):
    s-test    micro sign test: n decisions on which A and B differ, k of them where A is right;
              under H0 k ~ Bin(n, 1/2); one-sided P(K >= k) for "A better than B".
    McNemar   the same discordant counts, two-sided: exact binomial when n < MCNEMAR_EXACT_BELOW,
              else chi-square with continuity correction (|b - c| - 1)^2 / (b + c), 1 dof.
    p-test    proportions test on p_a = k_a / n_a, p_b = k_b / n_b (e.g. the shares
              of correct decisions): pooled p = (k_a + k_b) / (n_a + n_b),
              Z = (p_a - p_b) / sqrt(p (1 - p) (1/n_a + 1/n_b)), one-sided P(N(0,1) >= Z).
Macro level, on paired per-category scores (e.g. F1):
    S-test    macro sign test: n categories where the scores differ, k where A's is higher.
    T-test    paired t-test on d_i = a_i - b_i, H1: mean(d) > 0, t with n - 1 dof.
    T'-test   the T-test after rank transformation: the 2n scores of both systems are pooled and
              replaced by their ranks (1 = lowest; tied scores share their mean rank), then the
              T-test on the paired ranks. Less sensitive to outliers than the T-test, more to
              differences than the S-test.

The paper approximates the binomial by a normal for n > 12 and t by a normal for n >= 40; we
use the exact binomial and t distributions throughout (the approximations were for tables).
The p-test is the paper's normal approximation as written. A p-value of 1.0 means no evidence
(no discordant decisions, no differing categories, no differing proportions).

The p-values are those of `scipy.stats` (`binomtest`, `ttest_rel`, `chi2.sf`, `norm.sf`), bit for
bit (tests/selection/test_selection_stats.py), computed from the distribution functions of
`scipy.special` that scipy.stats itself calls: importing scipy.stats costs a reading command
seconds of start-up, and scipy.special is imported only when a test is computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MCNEMAR_EXACT_BELOW = 25
SCORE_ATOL = 1e-12


@dataclass(frozen=True)
class TestResult:
    """A test's p-value, its statistic and the number of informative pairs n.

    For sign tests `statistic` is k (pairs favouring A); for McNemar the chi-square value
    (or k when exact); for the t-tests the t statistic; for the p-test Z. p_value is NaN when
    undefined.
    """

    name: str
    statistic: float
    p_value: float
    n: int


def _paired(a, b, name_a: str, name_b: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=dtype)
    b = np.asarray(b, dtype=dtype)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"{name_a}, {name_b}: must be 1-d arrays of equal length, got {a.shape} and {b.shape}")
    return a, b


def _sign_test(name: str, k: int, n: int) -> TestResult:
    p = 1.0 if n == 0 else _binomial_p(k, n, "greater")
    return TestResult(name, float(k), p, n)


@lru_cache(maxsize=65536)
def _binomial_p(k: int, n: int, alternative: str) -> float:
    """The exact binomial test's p-value of k successes in n trials at 1/2 (remembered: a
    selection tests many pairs with the same counts): "greater" P(K >= k), or "two-sided" the
    probability of the outcomes no likelier than k (relative tolerance 1e-7), as
    `scipy.stats.binomtest` computes them."""
    if alternative == "greater":
        return _binomial_sf(k - 1, n)
    if 2 * k == n:
        return 1.0
    likelihood = _binomial_pmf(k, n) * (1 + 1e-7)
    if 2 * k < n:  # the far tail: the outcomes above the mode at most as likely as k
        beyond = n - _last_at_most(lambda x: -_binomial_pmf(x, n), -likelihood, (n + 1) // 2, n)
        beyond += int(likelihood == _binomial_pmf(n - beyond, n))
        return min(1.0, _binomial_cdf(k, n) + _binomial_sf(n - beyond, n))
    below = _last_at_most(lambda x: _binomial_pmf(x, n), likelihood, 0, n // 2) + 1
    return min(1.0, _binomial_cdf(below - 1, n) + _binomial_sf(k - 1, n))


def _last_at_most(increasing, bound: float, low: int, high: int) -> int:
    """The i in [low - 1, high] with increasing(i) <= bound < increasing(i + 1), by bisection
    (`increasing` is a function of the integers low..high that does not decrease)."""
    while low < high:
        middle = low + (high - low) // 2
        value = increasing(middle)
        if value < bound:
            low = middle + 1
        elif value > bound:
            high = middle - 1
        else:
            return middle
    return low if increasing(low) <= bound else low - 1


def _binomial_pmf(k: int, n: int) -> float:
    """P(K = k) for K ~ Bin(n, 1/2)."""
    from scipy.special._ufuncs import _binom_pmf  # what scipy.stats.binom.pmf computes with

    return float(np.clip(_binom_pmf(k, n, 0.5), 0.0, 1.0)) if 0 <= k <= n else 0.0


def _binomial_cdf(k: int, n: int) -> float:
    """P(K <= k) for K ~ Bin(n, 1/2)."""
    from scipy.special._ufuncs import _binom_cdf  # what scipy.stats.binom.cdf computes with

    if k < 0:
        return 0.0
    return float(np.clip(_binom_cdf(k, n, 0.5), 0.0, 1.0)) if k < n else 1.0


def _binomial_sf(k: int, n: int) -> float:
    """P(K > k) for K ~ Bin(n, 1/2)."""
    from scipy.special._ufuncs import _binom_sf  # what scipy.stats.binom.sf computes with

    if k < 0:
        return 1.0
    return float(np.clip(_binom_sf(k, n, 0.5), 0.0, 1.0)) if k < n else 0.0


def micro_sign_test(a_correct, b_correct) -> TestResult:
    """s-test: is A right more often than B on the decisions where they differ?

    a_correct, b_correct: (m,) bool, decision i of A / B is correct (pooled over categories).
    """
    a, b = _paired(a_correct, b_correct, "a_correct", "b_correct", bool)
    return _sign_test("s-test", int((a & ~b).sum()), int((a != b).sum()))


def mcnemar_test(a_correct, b_correct) -> TestResult:
    """Two-sided McNemar test of equal error rates on paired decisions (bool arrays (m,))."""
    a, b = _paired(a_correct, b_correct, "a_correct", "b_correct", bool)
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    n = only_a + only_b
    if n == 0:
        return TestResult("mcnemar", 0.0, 1.0, 0)
    if n < MCNEMAR_EXACT_BELOW:
        return TestResult("mcnemar", float(only_a), _binomial_p(only_a, n, "two-sided"), n)
    from scipy.special import chdtrc

    chi2 = (abs(only_a - only_b) - 1.0) ** 2 / n
    return TestResult("mcnemar", chi2, float(chdtrc(1, chi2)), n)  # stats.chi2.sf(chi2, 1), without its checks


def macro_sign_test(a_scores, b_scores) -> TestResult:
    """S-test: does A score higher than B on more categories? Scores (c,), NaN-free."""
    a, b = _paired(a_scores, b_scores, "a_scores", "b_scores", np.float64)
    _check_finite(a, b)
    differ = ~np.isclose(a, b, rtol=0.0, atol=SCORE_ATOL)
    return _sign_test("S-test", int((differ & (a > b)).sum()), int(differ.sum()))


def macro_t_test(a_scores, b_scores) -> TestResult:
    """T-test: paired t-test of mean(a - b) > 0 over categories. Scores (c,), NaN-free.

    Needs c >= 2 (else p is NaN). Zero variance (all d_i equal): p = 0 when d_i > 0, else 1.
    """
    a, b = _paired(a_scores, b_scores, "a_scores", "b_scores", np.float64)
    _check_finite(a, b)
    return _t_test("T-test", a, b)


def macro_rank_t_test(a_scores, b_scores) -> TestResult:
    """T'-test: the T-test on ranks of the 2c pooled scores (ties: mean rank). Scores (c,), NaN-free.

    Scores closer than SCORE_ATOL count as tied. `statistic` is t on the ranks; c >= 2 as for the T-test.
    """
    a, b = _paired(a_scores, b_scores, "a_scores", "b_scores", np.float64)
    _check_finite(a, b)
    pooled = np.concatenate([a, b])
    ranks = _mean_ranks(np.round(pooled / SCORE_ATOL) * SCORE_ATOL)
    return _t_test("T'-test", ranks[: a.shape[0]], ranks[a.shape[0] :])


def _mean_ranks(values: np.ndarray) -> np.ndarray:
    """The ranks (m,) float64 of values (m,): 1 for the lowest, tied values sharing their mean
    rank (`scipy.stats.rankdata`'s "average" method)."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first position of each value
    ends = np.r_[starts[1:], values.shape[0]]  # one past its last
    ranks = np.empty(values.shape[0], dtype=np.float64)
    ranks[order] = np.repeat(0.5 * (starts + 1 + ends), ends - starts)
    return ranks


def _t_test(name: str, a: np.ndarray, b: np.ndarray) -> TestResult:
    n = a.shape[0]
    d = a - b
    if n < 2:
        return TestResult(name, float("nan"), float("nan"), n)
    if np.allclose(d, d[0], rtol=0.0, atol=SCORE_ATOL):
        t = float(np.sign(d[0]) * np.inf) if abs(d[0]) > SCORE_ATOL else 0.0
        return TestResult(name, t, 0.0 if t > 0 else 1.0, n)
    from scipy.special import stdtr

    # as scipy.stats.ttest_rel(a, b, alternative="greater") computes them
    mean = np.mean(d)
    variance = np.mean((d - mean) ** 2) * (np.float64(n) / np.float64(n - 1))
    statistic = mean / np.sqrt(variance / np.float64(n))
    return TestResult(name, float(statistic), float(stdtr(np.float64(n - 1), -statistic)), n)


def proportion_test(k_a: int, n_a: int, k_b: int, n_b: int) -> TestResult:
    """p-test: is A's proportion k_a / n_a higher than B's k_b / n_b? One-sided normal Z test.

    k_*: successes (e.g. correct decisions), n_*: trials (> 0). `statistic` is Z and `n` is
    n_a + n_b. Equal proportions of 0 or 1 (pooled variance 0) give Z = 0 and p = 1.
    """
    for name, k, n in (("a", k_a, n_a), ("b", k_b, n_b)):
        if not (0 < n and 0 <= k <= n):
            raise ValueError(f"k_{name}, n_{name}: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    pooled = (k_a + k_b) / (n_a + n_b)
    variance = pooled * (1.0 - pooled) * (1.0 / n_a + 1.0 / n_b)
    if variance <= 0.0:
        return TestResult("p-test", 0.0, 1.0, n_a + n_b)
    from scipy.special import ndtr

    z = (k_a / n_a - k_b / n_b) / np.sqrt(variance)
    return TestResult("p-test", float(z), float(ndtr(-z)), n_a + n_b)  # stats.norm.sf(z), without its checks


def _check_finite(a: np.ndarray, b: np.ndarray) -> None:
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a_scores, b_scores: contain NaN or inf; complete undefined metrics first")
