"""Two saved selections side by side, per category: what `xialpha compare A B` and `xialpha.compare` show.

A and B are each a saved selection's id, or a sweep's id (then its newest saved per-category
selection, else its newest --global one): `resolve_side`. Per category (`CategoryComparison`):
the configuration each chose (its config key; `xialpha.reports.frames.tidy_comparison` labels
them), what differs between them (`changed`: preprocessing, kernel, C, j; or the category is in one
selection only), each selection's estimate (`value`: its metric by its estimator), each chosen
configuration's held-out F1 and error where its sweep scored the held-out split
(`[estimators] holdout = true`), and a two-sided test of "A and B are equally often right on the
held-out documents":

    McNemar   the held-out documents are the same for both (equal data fingerprints, which cover
              the held-out split, and per-document outcomes stored for both configurations):
              `xialpha.stats.mcnemar_test` on the documents, exact binomial below
              MCNEMAR_EXACT_BELOW disagreements, else chi-square with continuity correction;
    p-test    held-out counts on both sides but the documents are not known to be the same (the
              fingerprints differ: other data, a drifted stream) or their outcomes are not stored:
              the two shares of correct decisions, unpaired (`xialpha.stats.proportion_test`, made
              two-sided); conservative where the documents are in fact shared;
    none      a side has no held-out figures.

Then "(micro)": counts pooled over the categories both selections have (McNemar on every
decision when each category's documents are shared, else the p-test), and "(macro)": the means
over those categories, with a two-sided sign test (`xialpha.stats.macro_sign_test`) on the
categories whose held-out F1 differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from xialpha.errors import UserError, did_you_mean
from xialpha.selection.objective import Objective, estimator_counts, metric_values
from xialpha.selection.records import newest_selection, read_selection
from xialpha.selection.selected import Selection
from xialpha.stats import MCNEMAR_EXACT_BELOW, TestResult, macro_sign_test, mcnemar_test, proportion_test
from xialpha.storage.contract import StoreQueries
from xialpha.storage.schema import COUNTS, SELECTION_ESTIMATES, SIZES, ResultColumn, SelectionColumn, SelectionMode

HELD_OUT = "holdout"  # the estimator that scores the held-out split
MICRO, MACRO = "(micro)", "(macro)"  # the category of the summary rows, as certifications name them
ONLY_IN = "only in {side}"  # `changed` of a category one selection lacks
# The parts of a configuration `changed` names, and the selection column each is read from.
PARTS = {
    "preprocessing": ResultColumn.PREPROCESSING_ID,
    "kernel": ResultColumn.KERNEL_ID,
    "C": ResultColumn.C,
    "j": ResultColumn.J,
}
# The objective's fields, as `Objective.of_selection` reads them, and how a selection was made.
S = SelectionColumn
OBJECTIVE = (S.MODE, S.METRIC, S.ESTIMATOR, S.RHO, S.SMOOTH_C, S.AVERAGE, S.COST_FN, S.COST_FP)
MCNEMAR, P_TEST, SIGN_TEST, NO_TEST = "McNemar", "p-test", "sign test", "none"
TESTS = {  # what each test is, and why it was the one run: a line each under the table
    MCNEMAR: "McNemar: two-sided, on the held-out documents both were scored on (the same data "
    f"fingerprint), exact below {MCNEMAR_EXACT_BELOW} disagreements",
    P_TEST: "p-test: two-sided, of the shares of correct held-out decisions, unpaired: the "
    "documents are not known to be the same (data fingerprints differ, or outcomes not stored)",
    SIGN_TEST: "sign test: two-sided, over the categories whose held-out F1 differs",
    NO_TEST: "none: a side has no held-out figures ([estimators] holdout = true scores them)",
}


@dataclass(frozen=True, eq=False)
class Side:
    """One side of a comparison: what the user named (`given`), the saved selection it means
    (`read_selection`), the "ok" results rows of the configurations it chose, and their held-out
    outcomes where stored (`errors`: config key -> (m,) bool "counted as an error", one per
    held-out document)."""

    given: str
    selection: Selection
    results: pd.DataFrame
    errors: dict[str, np.ndarray]

    @property
    def selection_id(self) -> str:
        return self.selection.selection_id

    @property
    def sweep_id(self) -> str:
        return self.selection.sweep_id

    @property
    def rows(self) -> pd.DataFrame:
        """The selection's rows, one per category."""
        return self.selection.rows


@dataclass(frozen=True)
class CategoryComparison:
    """One category (or MICRO, MACRO) of A against B. Fractions 0..1, NaN where a side has none.

    changed: the parts of the configuration that differ (PARTS' names), or ONLY_IN a side; ()
    when A and B chose the same. estimate_*: the selection's value (its metric by its estimator).
    held_out_*: the chosen configuration's on the held-out split. test: MCNEMAR, P_TEST, SIGN_TEST
    or NO_TEST (TESTS says why); p_value: two-sided (NaN: no test); n_tested: the held-out
    decisions tested (categories for the sign test); only_a_right / only_b_right: the decisions
    (categories) where one side is right (higher) and the other not, where the test pairs them.
    """

    category: str
    changed: tuple[str, ...]
    estimate_a: float
    estimate_b: float
    held_out_f1_a: float
    held_out_f1_b: float
    held_out_error_a: float
    held_out_error_b: float
    test: str
    p_value: float
    n_tested: int | None
    only_a_right: int | None
    only_b_right: int | None
    config_key_a: str | None
    config_key_b: str | None

    @property
    def changed_text(self) -> str:
        """`changed` as a table shows it: "C, kernel"; "-" when nothing changed; "" on MICRO and MACRO."""
        return ", ".join(self.changed) or ("" if self.category in (MICRO, MACRO) else "-")


@dataclass(frozen=True, eq=False)
class SelectionComparison:
    """A against B: per category (sorted by name), then MICRO and MACRO (`rows`); how the two
    selections' objectives differ (`objective_changes`: "estimator span -> xa"; their estimates
    measure different things when it is not empty)."""

    a: Side
    b: Side
    rows: list[CategoryComparison]
    objective_changes: tuple[str, ...]

    @property
    def command(self) -> str:
        """The command that shows this comparison."""
        return f"xialpha compare {self.a.selection_id} {self.b.selection_id}"

    def categories(self) -> list[CategoryComparison]:
        """The per-category rows, without MICRO and MACRO."""
        return [row for row in self.rows if row.category not in (MICRO, MACRO)]

    def summaries(self) -> list[CategoryComparison]:
        """The MICRO and MACRO rows."""
        return [row for row in self.rows if row.category in (MICRO, MACRO)]

    def most_changed_first(self) -> list[CategoryComparison]:
        """The per-category rows, those in one selection only first, then by how many parts of the
        configuration changed, then by p-value (smallest first; untested last), then by name."""

        def rank(row: CategoryComparison) -> tuple:
            only = bool(row.changed) and row.changed[0] not in PARTS
            return (not only, -len(row.changed), 2.0 if np.isnan(row.p_value) else row.p_value, row.category)

        return sorted(self.categories(), key=rank)

    def summary_lines(self) -> list[str]:
        """Sentences under a table of the comparison: how many categories changed configuration,
        how the selections were made differently (if they were), whether their sweeps were trained
        on different documents, and the TESTS lines of the tests run."""
        both = [row for row in self.categories() if not row.changed or row.changed[0] in PARTS]
        changed = sum(bool(row.changed) for row in both)
        line = _changed_sentence(changed, len(both))
        alone = len(self.categories()) - len(both)
        lines = [line + (f"; {alone} {'is' if alone == 1 else 'are'} in one selection only." if alone else ".")]
        if self.objective_changes:
            lines.append(
                f"The selections were made differently ({'; '.join(self.objective_changes)}): their "
                "estimates measure different things; compare the held-out figures."
            )
        if not self.same_documents:
            lines.append(
                "A and B were trained on different documents (their data fingerprints differ): their figures "
                "are not on the same documents, and no test pairs them document by document."
            )
        return lines + [f"p: {line}" for line in self.tests_used()]

    @property
    def same_documents(self) -> bool:
        """Whether both selections were made from sweeps of the same data (equal data fingerprints)."""
        fingerprints = [set(side.rows[ResultColumn.DATA_FINGERPRINT].dropna()) for side in (self.a, self.b)]
        return fingerprints[0] == fingerprints[1]

    def tests_used(self) -> list[str]:
        """The TESTS lines of the tests the rows ran, in TESTS' order."""
        used = {row.test for row in self.rows}
        return [line for test, line in TESTS.items() if test in used]


def _changed_sentence(changed: int, shared: int) -> str:
    """How many of the `shared` categories (in both selections) changed configuration, as a
    sentence without its full stop: "1 of the 6 categories in both selections changed configuration"."""
    if shared == 0:
        return "No category is in both selections"
    if shared == 1:
        return f"The one category in both selections {'changed' if changed else 'kept its'} configuration"
    count = "None of the" if changed == 0 else "All" if changed == shared else f"{changed} of the"
    return f"{count} {shared} categories in both selections changed configuration"


def compare_selections(
    store: StoreQueries, a: str, b: str, parameters: tuple[str, str] = ("a", "b")
) -> SelectionComparison:
    """A against B (each a selection id or a sweep id: `resolve_side`), as the module docstring
    says; `parameters`: what errors about A and B name them."""
    side_a = resolve_side(store, a, parameters[0])
    side_b = resolve_side(store, b, parameters[1])
    first_a, first_b = side_a.rows.iloc[0], side_b.rows.iloc[0]
    by_a = side_a.rows.set_index(ResultColumn.CATEGORY)
    by_b = side_b.rows.set_index(ResultColumn.CATEGORY)
    rows, paired = [], []
    for category in sorted(set(by_a.index) | set(by_b.index)):
        row_a = by_a.loc[category] if category in by_a.index else None
        row_b = by_b.loc[category] if category in by_b.index else None
        compared, outcomes = _category(category, side_a, side_b, row_a, row_b)
        rows.append(compared)
        if row_a is not None and row_b is not None:
            paired.append(outcomes)
    shared = sorted(set(by_a.index) & set(by_b.index))
    both = [row for row in rows if row.category in shared]
    rows.append(_micro(side_a, side_b, shared, paired, first_a, first_b))
    rows.append(_macro(both))
    return SelectionComparison(side_a, side_b, rows, _objective_changes(first_a, first_b))


def resolve_side(store: StoreQueries, given: str, parameter: str) -> Side:
    """The saved selection `given` names: a selection id, or a sweep id (its newest saved
    per-category selection, else its newest --global one). UserError about `parameter` naming
    what the store holds when it is neither, or when the sweep has no saved selection."""
    if not isinstance(given, str) or not given:
        raise UserError(f"give a selection id or a sweep id, got {given!r}", parameter=parameter)
    sweep_ids = store.sweep_ids()
    if not store.selections(selection_id=given).empty:
        selection = read_selection(store, given)
    elif given in sweep_ids:
        found = newest_selection(store, given)
        newest = found if found is not None else newest_selection(store, given, SelectionMode.GLOBAL)
        if newest is None:
            raise UserError(
                f"sweep {given!r} has no saved selection (`xialpha select --sweep {given} --save` stores one)",
                parameter=parameter,
            )
        selection = newest
    else:
        stored = store.selections()
        selections = [] if stored.empty else sorted(set(stored[S.SELECTION_ID]), reverse=True)
        raise UserError(
            f"no selection or sweep {given!r} in store {store.uri}"
            f"{did_you_mean(given, [*sweep_ids, *selections], listing='sweeps, then selections newest first')}",
            parameter=parameter,
        )
    results = store.read_results_df(selection.sweep_id)
    keys = list(selection.rows[S.CONFIG_KEY])
    chosen = results[results[ResultColumn.CONFIG_KEY].isin(keys)] if len(results) else results
    errors = store.read_examples(keys, HELD_OUT, sweep_id=selection.sweep_id)
    return Side(given, selection, chosen.reset_index(drop=True), errors)


def _category(
    category: str,
    side_a: Side,
    side_b: Side,
    row_a: pd.Series | None,
    row_b: pd.Series | None,
) -> tuple[CategoryComparison, tuple[np.ndarray, np.ndarray] | None]:
    """The CategoryComparison of one category and, when the test paired documents, the
    per-document "correct" outcomes of A and B (for the micro test)."""
    held_a, held_b = _held_out(side_a, row_a), _held_out(side_b, row_b)
    if row_a is None or row_b is None:
        changed: tuple[str, ...] = (ONLY_IN.format(side="A" if row_b is None else "B"),)
    else:
        changed = tuple(name for name, column in PARTS.items() if not _same(row_a[column], row_b[column]))
    outcomes = None
    if row_a is not None and row_b is not None:
        outcomes = _shared_outcomes(side_a, side_b, row_a, row_b)
    held_out = _held_out_fields(held_a, held_b, outcomes)
    compared = CategoryComparison(
        category=category,
        changed=changed,
        estimate_a=_value(row_a),
        estimate_b=_value(row_b),
        **held_out,
        config_key_a=None if row_a is None else str(row_a[ResultColumn.CONFIG_KEY]),
        config_key_b=None if row_b is None else str(row_b[ResultColumn.CONFIG_KEY]),
    )
    return compared, outcomes if held_out["test"] == MCNEMAR else None


def _micro(
    side_a: Side,
    side_b: Side,
    shared: list[str],
    paired: list[tuple[np.ndarray, np.ndarray] | None],
    first_a: pd.Series,
    first_b: pd.Series,
) -> CategoryComparison:
    """MICRO over the categories both selections have: estimates and held-out figures of the
    pooled counts; McNemar on every decision when every category's documents were paired."""
    rows_a = side_a.rows[side_a.rows[ResultColumn.CATEGORY].isin(shared)]
    rows_b = side_b.rows[side_b.rows[ResultColumn.CATEGORY].isin(shared)]
    held_a = _pooled(_held_out_counts(side_a, rows_a))
    held_b = _pooled(_held_out_counts(side_b, rows_b))
    outcomes = None
    if paired and all(pair is not None for pair in paired):
        pairs = [pair for pair in paired if pair is not None]
        outcomes = (np.concatenate([a for a, _ in pairs]), np.concatenate([b for _, b in pairs]))
    return CategoryComparison(
        category=MICRO,
        changed=(),
        estimate_a=_pooled_estimate(rows_a, first_a),
        estimate_b=_pooled_estimate(rows_b, first_b),
        **_held_out_fields(held_a, held_b, outcomes),
        config_key_a=None,
        config_key_b=None,
    )


def _macro(rows: list[CategoryComparison]) -> CategoryComparison:
    """MACRO: the means over the categories both selections have, and a two-sided sign test over
    those whose held-out F1 differs (NO_TEST unless both sides have every held-out F1)."""
    f1_a = np.array([row.held_out_f1_a for row in rows], dtype=float)
    f1_b = np.array([row.held_out_f1_b for row in rows], dtype=float)
    result = None
    if len(rows) and np.all(np.isfinite(f1_a)) and np.all(np.isfinite(f1_b)):
        result = _two_sided(macro_sign_test(f1_a, f1_b), macro_sign_test(f1_b, f1_a))

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else float("nan")

    return CategoryComparison(
        category=MACRO,
        changed=(),
        estimate_a=mean([row.estimate_a for row in rows]),
        estimate_b=mean([row.estimate_b for row in rows]),
        held_out_f1_a=mean(list(f1_a)),
        held_out_f1_b=mean(list(f1_b)),
        held_out_error_a=mean([row.held_out_error_a for row in rows]),
        held_out_error_b=mean([row.held_out_error_b for row in rows]),
        test=NO_TEST if result is None else SIGN_TEST,
        p_value=float("nan") if result is None else result.p_value,
        n_tested=None if result is None else result.n,
        only_a_right=None if result is None else int(result.statistic),
        only_b_right=None if result is None else result.n - int(result.statistic),
        config_key_a=None,
        config_key_b=None,
    )


def _held_out(side: Side, row: pd.Series | None) -> pd.Series | None:
    """The held-out counts (n, n_pos, d_pos, d_neg) of the configuration `row` chose; None when
    there is no row or its sweep did not score the held-out split."""
    if row is None:
        return None
    counts = _held_out_counts(side, row.to_frame().T)
    return None if counts.empty else counts.iloc[0]


def _held_out_counts(side: Side, rows: pd.DataFrame) -> pd.DataFrame:
    """The held-out counts of the configurations selection `rows` chose, one row each where the
    sweep scored them (others left out)."""
    results = side.results.set_index(ResultColumn.CONFIG_KEY) if len(side.results) else None
    if results is None:
        return pd.DataFrame(columns=[*SIZES, *COUNTS])
    keys = [key for key in rows[ResultColumn.CONFIG_KEY] if key in results.index]
    counts = estimator_counts(results.loc[keys], HELD_OUT)
    return counts.dropna().reset_index(drop=True)


def _pooled(counts: pd.DataFrame) -> pd.Series | None:
    return None if counts.empty else counts.sum()


def _metric(counts: pd.Series | None, metric: str) -> float:
    """The completed `metric` of held-out counts; NaN without them."""
    if counts is None:
        return float("nan")
    return float(metric_values(counts.to_frame().T.astype(float), metric)[0])


def _shared_outcomes(
    side_a: Side, side_b: Side, row_a: pd.Series, row_b: pd.Series
) -> tuple[np.ndarray, np.ndarray] | None:
    """Per held-out document, whether A's and B's configurations decided it correctly, (m,) bool
    each; None when the documents are not known to be the same (data fingerprints differ) or an
    outcome vector is not stored."""
    if not _same(row_a[ResultColumn.DATA_FINGERPRINT], row_b[ResultColumn.DATA_FINGERPRINT]):
        return None
    errors_a = side_a.errors.get(str(row_a[ResultColumn.CONFIG_KEY]))
    errors_b = side_b.errors.get(str(row_b[ResultColumn.CONFIG_KEY]))
    if errors_a is None or errors_b is None or len(errors_a) != len(errors_b):
        return None
    return ~np.asarray(errors_a, dtype=bool), ~np.asarray(errors_b, dtype=bool)


def _held_out_fields(
    held_a: pd.Series | None, held_b: pd.Series | None, outcomes: tuple[np.ndarray, np.ndarray] | None
) -> dict:
    """The held-out fields of a CategoryComparison (held_out_* to only_b_right) from each side's
    held-out counts (None: none) and the paired per-document outcomes (None: not paired)."""
    test, result, discordant = _held_out_test(held_a, held_b, outcomes)
    return {
        "held_out_f1_a": _metric(held_a, "f1"),
        "held_out_f1_b": _metric(held_b, "f1"),
        "held_out_error_a": _metric(held_a, "error"),
        "held_out_error_b": _metric(held_b, "error"),
        "test": test,
        "p_value": float("nan") if result is None else result.p_value,
        "n_tested": None if result is None else _decisions(held_a, outcomes),
        "only_a_right": None if discordant is None else discordant[0],
        "only_b_right": None if discordant is None else discordant[1],
    }


def _held_out_test(
    held_a: pd.Series | None, held_b: pd.Series | None, outcomes: tuple[np.ndarray, np.ndarray] | None
) -> tuple[str, TestResult | None, tuple[int, int] | None]:
    """(test name, its result, (only A right, only B right) where paired) on the held-out split."""
    if held_a is None or held_b is None:
        return NO_TEST, None, None
    if outcomes is not None:
        right_a, right_b = outcomes
        discordant = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
        return MCNEMAR, mcnemar_test(right_a, right_b), discordant
    correct_a, n_a = _correct(held_a)
    correct_b, n_b = _correct(held_b)
    if n_a == 0 or n_b == 0:
        return NO_TEST, None, None
    one_way = proportion_test(correct_a, n_a, correct_b, n_b)
    return P_TEST, _two_sided(one_way, proportion_test(correct_b, n_b, correct_a, n_a)), None


def _two_sided(one_way: TestResult, other_way: TestResult) -> TestResult:
    """A two-sided test from the two one-sided ones ("A better", "B better"): twice the smaller p, at most 1."""
    return TestResult(
        one_way.name, one_way.statistic, min(1.0, 2.0 * min(one_way.p_value, other_way.p_value)), one_way.n
    )


def _correct(counts: pd.Series) -> tuple[int, int]:
    """(correct decisions, decisions) of held-out counts."""
    n = int(counts[ResultColumn.N])
    return n - int(counts["d_pos"]) - int(counts["d_neg"]), n


def _decisions(held: pd.Series | None, outcomes: tuple[np.ndarray, np.ndarray] | None) -> int | None:
    """The held-out decisions a test compared: the paired documents, else A's held-out documents."""
    if outcomes is not None:
        return len(outcomes[0])
    return None if held is None else int(held[ResultColumn.N])


def _value(row: pd.Series | None) -> float:
    return float("nan") if row is None else float(row[S.VALUE])


def _pooled_estimate(rows: pd.DataFrame, first: pd.Series) -> float:
    """The selection's metric of its estimator's counts pooled over `rows` (a micro average)."""
    if rows.empty:
        return float("nan")
    counts = pd.DataFrame(
        {
            ResultColumn.N: rows[ResultColumn.N].astype(float),
            ResultColumn.N_POS: rows[ResultColumn.N_POS].astype(float),
            **{name: rows[SELECTION_ESTIMATES[name]].astype(float) for name in COUNTS},
        }
    )
    return float(Objective.of_selection(first).values(counts.sum().to_frame().T)[0])


def _objective_changes(first_a: pd.Series, first_b: pd.Series) -> tuple[str, ...]:
    """Each OBJECTIVE field in which the two selections differ, as "name A -> B"."""
    return tuple(
        f"{name} {_text(first_a.get(name))} -> {_text(first_b.get(name))}"
        for name in OBJECTIVE
        if not _same(first_a.get(name), first_b.get(name))
    )


def _same(a: object, b: object) -> bool:
    """Equal values, two missing ones counting as equal."""
    if pd.isna(a) and pd.isna(b):
        return True
    return bool(a == b)


def _text(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:g}" if isinstance(value, float) else str(value)
