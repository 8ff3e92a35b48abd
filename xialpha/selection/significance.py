"""Is the chosen configuration significantly better than a runner-up?

Micro tests pair the per-example outcomes stored in the examples dataset ("counted as an
error" by the selection estimator; correct = not counted) over every category compared (the
s-test and McNemar), and the p-test compares the two shares of correct decisions; macro tests
pair the per-category metric values (oriented so higher is better): S-, T- and T'-tests. A runner-up
is "not significantly different" when no available test has p < alpha.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from xialpha.stats import (
    TestResult,
    binomial_p,
    macro_rank_t_test,
    macro_sign_test,
    macro_t_test,
    mcnemar_arrays,
    mcnemar_test,
    micro_sign_test,
    proportion_arrays,
    proportion_test,
)
from xialpha.storage.schema import P_VALUES

ALPHA = 0.05


@dataclass(frozen=True)
class Comparison:
    """Tests of chosen vs one runner-up; a test is None where its inputs are missing."""

    micro_sign: TestResult | None
    mcnemar: TestResult | None
    macro_sign: TestResult | None
    macro_t: TestResult | None
    proportion: TestResult | None = None
    macro_rank_t: TestResult | None = None

    def p_values(self) -> dict[str, float]:
        """{P_VALUES name: p} (micro sign, McNemar, proportion, macro S, T and T'): NaN where not computed."""
        tests = (self.micro_sign, self.mcnemar, self.proportion, self.macro_sign, self.macro_t, self.macro_rank_t)
        return {name: float("nan") if test is None else test.p_value for name, test in zip(P_VALUES, tests)}

    def not_significant(self, alpha: float = ALPHA) -> bool | None:
        """True when no test rejects at `alpha`; None when no test could be computed."""
        p = [v for v in self.p_values().values() if not np.isnan(v)]
        return None if not p else bool(min(p) >= alpha)


def compare(
    chosen_keys: list[str],
    other_keys: list[str],
    chosen_values: npt.ArrayLike,
    other_values: npt.ArrayLike,
    indicators: Mapping[str, np.ndarray],
    *,
    maximise: bool,
    macro: bool,
) -> Comparison:
    """Compare two systems given per-category config keys and metric values (same order).

    indicators: config key -> (n,) bool "counted as error"; micro tests need both keys of
    every category with equal lengths. macro: whether to run the S-, T- and T'-tests (c >= 2).
    """
    micro = _micro_outcomes(chosen_keys, other_keys, indicators)
    tests: dict[str, TestResult | None] = dict.fromkeys(
        ("micro_sign", "mcnemar", "proportion", "macro_sign", "macro_t", "macro_rank_t")
    )
    if micro is not None:
        a_right, b_right = micro
        tests.update(
            micro_sign=micro_sign_test(a_right, b_right),
            mcnemar=mcnemar_test(a_right, b_right),
            proportion=proportion_test(int(a_right.sum()), len(a_right), int(b_right.sum()), len(b_right)),
        )
    if macro and len(chosen_keys) >= 2:
        sign = 1.0 if maximise else -1.0
        a = sign * np.asarray(chosen_values, dtype=float)
        b = sign * np.asarray(other_values, dtype=float)
        tests.update(macro_sign=macro_sign_test(a, b), macro_t=macro_t_test(a, b), macro_rank_t=macro_rank_t_test(a, b))
    return Comparison(**tests)


def _micro_outcomes(
    chosen_keys: list[str], other_keys: list[str], indicators: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    a_parts, b_parts = [], []
    for a_key, b_key in zip(chosen_keys, other_keys):
        a, b = indicators.get(a_key), indicators.get(b_key)
        if a is None or b is None or len(a) != len(b):
            return None
        a_parts.append(~np.asarray(a, dtype=bool))
        b_parts.append(~np.asarray(b, dtype=bool))
    if not a_parts:
        return None
    return np.concatenate(a_parts), np.concatenate(b_parts)


def micro_p_values(
    chosen_keys: npt.ArrayLike, other_keys: npt.ArrayLike, indicators: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The micro tests of many pairs at once, each pair a chosen configuration and a runner-up of one
    category: {"p_micro_sign", "p_mcnemar", "p_proportion": (pairs,) p-values, NaN where a pair
    lacks a key's indicators or their lengths differ}, equal to `compare`'s of each pair alone.

    The counts come from the stacked indicators of all pairs of one length at a time: per pair the
    decisions only the chosen one gets right, only the runner-up, and each one's correct ones.
    """
    chosen_keys, other_keys = np.asarray(chosen_keys, dtype=object), np.asarray(other_keys, dtype=object)
    pairs = len(chosen_keys)
    length = np.full(pairs, -1)
    only_a, only_b, right_a, right_b = (np.zeros(pairs, dtype=np.int64) for _ in range(4))
    vectors_a = [indicators.get(key) for key in chosen_keys]
    vectors_b = [indicators.get(key) for key in other_keys]
    for i, (a, b) in enumerate(zip(vectors_a, vectors_b)):
        if a is not None and b is not None and len(a) == len(b):
            length[i] = len(a)
    for n in np.unique(length[length > 0]):
        at = np.flatnonzero(length == n)
        errors_a = np.stack([np.asarray(vectors_a[i]) for i in at]).astype(bool, copy=False)
        errors_b = np.stack([np.asarray(vectors_b[i]) for i in at]).astype(bool, copy=False)
        wrong_a, wrong_b = errors_a.sum(axis=1), errors_b.sum(axis=1)
        both_wrong = (errors_a & errors_b).sum(axis=1)
        only_a[at], only_b[at] = wrong_b - both_wrong, wrong_a - both_wrong
        right_a[at], right_b[at] = n - wrong_a, n - wrong_b
    tested = length > 0
    p: dict[str, np.ndarray] = {name: np.full(pairs, np.nan) for name in P_VALUES[:3]}
    discordant = only_a + only_b
    p[P_VALUES[0]][tested] = [
        1.0 if d == 0 else binomial_p(int(k), int(d), "greater") for k, d in zip(only_a[tested], discordant[tested])
    ]
    p[P_VALUES[1]][tested] = mcnemar_arrays(only_a[tested], only_b[tested])[1]
    p[P_VALUES[2]][tested] = proportion_arrays(right_a[tested], length[tested], right_b[tested], length[tested])[1]
    return p
