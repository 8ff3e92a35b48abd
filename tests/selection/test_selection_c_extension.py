"""Issue 36 item 2: a C ladder grows by one C beyond a choice at its C grid's edge (x factor at the
high edge, / factor at the low one), not on a flat estimate, not inside the grid, not past the limit."""

from __future__ import annotations

import pandas as pd
import pytest
from selection_rows import result_row

from xialpha.selection.c_extension import CAP, FLAT, INTERIOR, SETTLED, Step, extension_C, extensions, ladder_steps
from xialpha.selection.objective import Objective
from xialpha.selection.selector import select

# false negatives of 100 positives by C: rising to the largest C, falling from the smallest, peaking
# inside, none found at any C (flat)
CURVES = {
    "up": {0.1: 60, 1.0: 40, 10.0: 20},
    "down": {0.1: 20, 1.0: 40, 10.0: 60},
    "inside": {0.1: 60, 1.0: 30, 10.0: 60},
    "none": {0.1: 100, 1.0: 100, 10.0: 100},
}


@pytest.mark.parametrize(
    "at_edge, flat, limit, expected",
    [("high", False, 16, 20.0), ("low", False, 16, 0.05), (None, False, 16, None), ("high", True, 16, None)]
    + [("high", False, 3, None), ("low", False, 4, 0.05)],
)
def test_one_C_beyond_the_edge_unless_flat_inside_or_at_the_limit(at_edge, flat, limit, expected):
    assert extension_C([0.1, 1.0, 10.0], at_edge, flat, limit, 2.0) == expected


def test_the_sweeps_choices_at_an_edge_get_their_next_C_per_path():
    results = pd.DataFrame(
        [
            result_row(category, C, d_pos=d, d_neg=0, n_bounded_sv=10)
            for category, curve in CURVES.items()
            for C, d in curve.items()
        ]
    )
    chosen = select(results, Objective("f1", estimator="xa"), sweep_id="s1", per_category=True)
    grown = extensions(chosen, results, limit=16, factor=2.0)
    assert {key[0]: C for key, C in grown.items()} == {"up": 20.0, "down": 0.05}
    assert extensions(chosen, results, limit=3, factor=2.0) == {}


def test_a_ladder_stops_inside_on_a_flat_estimate_once_settled_or_at_the_cap_and_says_why():
    curves = {**CURVES, "hard": {0.1: 60, 1.0: 40, 10.0: 20}, "same": {0.1: 20, 1.0: 40, 10.0: 40}}
    rows = []
    for category, curve in curves.items():
        for C, d in curve.items():
            bounded = 0 if category == "hard" and C == 10.0 else 10  # a hard margin at the largest C
            rows.append(result_row(category, C, d_pos=d, d_neg=0, n_bounded_sv=bounded))
    results = pd.DataFrame(rows)
    chosen = select(results, Objective("f1", estimator="xa"), sweep_id="s1", per_category=True)
    frame = chosen
    steps = {key[0]: step for key, step in ladder_steps(frame, results, limit=16, factor=4.0).items()}
    assert steps == {
        "up": Step(40.0, "high"),
        "down": Step(0.025, "low"),
        "inside": Step(None, INTERIOR),
        "none": Step(None, FLAT),
        "hard": Step(None, SETTLED),
        "same": Step(0.025, "low"),
    }
    same = results["category"] == "same"
    results.loc[same] = pd.DataFrame(
        [result_row("same", C, d_pos=d, d_neg=0, n_bounded_sv=10) for C, d in {0.1: 20, 1.0: 20, 10.0: 40}.items()],
        index=results.index[same],
    )  # the low end: the same support vectors and estimate at its two smallest C
    again = select(results, Objective("f1", estimator="xa"), sweep_id="s1", per_category=True)
    steps = ladder_steps(again, results, 16, 4.0)
    assert {key[0]: step for key, step in steps.items()}["same"] == Step(None, SETTLED)
    capped = ladder_steps(frame, results, limit=3, factor=4.0)
    assert {key[0]: step.why for key, step in capped.items()}["up"] == CAP
