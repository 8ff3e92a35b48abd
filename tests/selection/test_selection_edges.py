"""Issue 36 item 3: a choice at its C grid's edge is said (the optimum may lie beyond the grid), and
a flat estimate (the same at every C: no signal) is said apart, in select's frames and under its
table; the report's best C per group ranks as the selection does."""

from __future__ import annotations

import pandas as pd
import pytest
from selection_rows import result_row

from xialpha.reports.contents import best_per_group, estimate_curves
from xialpha.reports.frames import tidy_selection
from xialpha.reports.labels import sweep_labels
from xialpha.reports.verdicts import edge_lines, legend
from xialpha.selection.edges import with_grid_edges
from xialpha.selection.objective import Objective
from xialpha.selection.selected import Selection
from xialpha.selection.selector import select

# false negatives of 100 positives by C (no false positives): rising to the largest C, falling
# from the smallest, peaking inside, and none found at any C (F1 = 0 everywhere: flat)
CURVES = {
    "up": {0.1: 60, 1.0: 40, 10.0: 20},
    "down": {0.1: 20, 1.0: 40, 10.0: 60},
    "inside": {0.1: 60, 1.0: 30, 10.0: 20, 100.0: 30, 1000.0: 60},
    "none": {0.1: 100, 1.0: 100, 10.0: 100},
}


def _results() -> pd.DataFrame:
    return pd.DataFrame(
        [result_row(category, C, d_pos=d, d_neg=0) for category, curve in CURVES.items() for C, d in curve.items()]
    )


def _selection(results: pd.DataFrame, per_category: bool = True) -> pd.DataFrame:
    chosen = select(results, Objective("f1", estimator="xa"), sweep_id="s1", per_category=per_category)
    return with_grid_edges(chosen, results).set_index("category")


def test_the_edge_is_named_by_its_side_and_a_flat_estimate_apart():
    frame = _selection(_results())
    assert frame["C"].to_dict() == {"down": 0.1, "inside": 10.0, "none": 0.1, "up": 10.0}
    assert frame["at_edge"].to_dict() == {"down": "low", "inside": None, "none": None, "up": "high"}
    assert frame["flat"].to_dict() == {"down": False, "inside": False, "none": True, "up": False}


def test_a_grid_of_one_C_is_neither_at_an_edge_nor_flat():
    results = pd.DataFrame([result_row("a", 1.0, d_pos=10, d_neg=0)])
    frame = _selection(results)
    assert frame["at_edge"].tolist() == [None] and frame["flat"].tolist() == [False]


def test_the_frames_carry_the_columns_and_the_store_never_gets_them():
    results = _results()
    rows = _selection(results).reset_index()
    tidy = tidy_selection(rows, sweep_labels(results))
    assert list(tidy.columns[:8]) == [
        "config",
        "category",
        "value",
        "selection_value",
        "significant",
        "tie",
        "at_edge",
        "flat",
    ]
    stored = Selection.of_frame(tidy).rows
    assert "at_edge" not in stored and "flat" not in stored and "config" not in stored


def test_one_line_per_kind_names_a_few_categories_then_how_many_more():
    many = pd.DataFrame(
        {
            "category": [f"category-{i:03d}" for i in range(200)],
            "at_edge": [None] * 150 + ["high"] * 45 + ["low"] * 5,
            "flat": [True] * 150 + [False] * 50,
        }
    )
    lines = edge_lines(many)
    assert lines == [
        "category-150 and 44 more: chose the grid's largest C: widen the C grid upward",
        "category-195 and 4 more: chose the grid's smallest C: widen the C grid downward",
        "category-000 and 149 more: flat, no signal at any C: add documents, not C values",
    ]
    short = edge_lines(many.assign(category=[f"c{i:03d}" for i in range(200)]))
    assert short[0] == "c150, c151 and 43 more: chose the grid's largest C: widen the C grid upward"
    assert max(map(len, lines + short)) <= 80
    assert edge_lines(many.assign(at_edge=None, flat=False)) == []
    long_name = pd.DataFrame({"category": ["x" * 90, "y"], "at_edge": ["high", "high"], "flat": [False, False]})
    assert edge_lines(long_name) == ["x" * 90 + " and 1 more: chose the grid's largest C: widen the C grid upward"]


def test_the_legend_ends_with_the_edge_lines():
    rows = _selection(_results()).reset_index()
    lines = legend(rows)
    assert lines[-3:] == [
        "up: chose the grid's largest C: widen the C grid upward",
        "down: chose the grid's smallest C: widen the C grid downward",
        "none: flat, no signal at any C: add documents, not C values",
    ]


@pytest.mark.parametrize("smooth", [True, False])
def test_the_report_best_C_per_group_is_the_selection_choice(smooth):
    """On a plateau reaching the edge (F1 equal at C = 3 and 10) both the selection and the
    report's best C say 3; before, the selection said 10 and the report 3."""
    results = pd.DataFrame(
        [result_row("a", C, d_pos=d, d_neg=0) for C, d in {1.0: 60, 3.0: 20, 10.0: 20}.items()]
        + [result_row("b", C, d_pos=d, d_neg=0) for C, d in {1.0: 10, 3.0: 30, 10.0: 29}.items()]
    )
    objective = Objective("f1", estimator="xa", smooth=smooth)
    chosen = dict(zip(*select(results, objective, sweep_id="s1").rows[["category", "C"]].to_numpy().T))
    best = best_per_group(estimate_curves(results, objective), objective).set_index("category")
    assert best["best_C"].to_dict() == chosen
    assert chosen["a"] == 3.0 and pd.isna(best.loc["a", "at_edge"]) and best.loc["b", "at_edge"] == "low"


def test_an_edge_choice_against_its_own_slope_says_nothing_of_beyond():
    """The smallest C wins by its neighbours' average (F1 0.80, 0.85, 0.31: averages 0.83, 0.65,
    0.58) though its own estimate is below the next C's: the optimum is not suggested below the
    grid. Errors (minimised) are read the other way."""
    slope = pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0) for C, d in {0.5: 33, 5.0: 26, 50.0: 82}.items()])
    frame = _selection(slope)
    assert frame["C"].tolist() == [0.5] and frame["at_edge"].tolist() == [None]
    results = pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0) for C, d in {0.5: 60, 5.0: 20}.items()])
    error = select(results, Objective("error", estimator="xa", smooth=False), sweep_id="s1")
    rows = with_grid_edges(error, results)
    assert rows["C"].tolist() == [5.0] and rows["at_edge"].tolist() == ["high"]


def test_a_choice_at_the_largest_C_with_no_bounded_support_vector_is_not_said_to_need_a_wider_grid():
    """No alpha at its bound: every larger C gives the same solution (a hard margin), so "widen the
    C grid upward" would find nothing; the same choice with bounded SVs is at the edge."""
    rising = {0.1: 60, 1.0: 40, 10.0: 20}
    for bounded, expected in ((0, [None]), (3, ["high"])):
        results = pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0, n_bounded_sv=bounded) for C, d in rising.items()])
        frame = _selection(results)
        assert frame["C"].tolist() == [10.0] and frame["at_edge"].tolist() == expected


def test_a_hard_margin_at_the_largest_C_is_said_to_be_settled():
    """Issue 43.4: such a choice printed no edge line and no note; a `C = "auto"` ladder that
    reaches it says "settled", and so does the selection now (one line, like the edges')."""
    from xialpha.reports.verdicts import edge_lines

    rising = {0.1: 60, 1.0: 40, 10.0: 20}
    for bounded, settled in ((0, True), (3, False)):
        results = pd.DataFrame([result_row("a", C, d_pos=d, d_neg=0, n_bounded_sv=bounded) for C, d in rising.items()])
        frame = _selection(results)
        assert frame["settled"].tolist() == [settled]
        said = "a: settled (no bounded SV: a larger C fits the same)"
        assert (said in edge_lines(frame.reset_index())) is settled, edge_lines(frame.reset_index())
