"""Issue 36 item 2: a C ladder grows by one C beyond a choice at its C grid's edge (x factor at the
high edge, / factor at the low one), not on a flat estimate, not inside the grid, not past the limit."""

from __future__ import annotations

import pandas as pd
import pytest
from selection_rows import result_row

from xialpha.selection.c_extension import extension_C, extensions
from xialpha.selection.objective import Objective
from xialpha.selection.records import records_frame, selection_records
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
        [result_row(category, C, d_pos=d, d_neg=0) for category, curve in CURVES.items() for C, d in curve.items()]
    )
    chosen = select(results, Objective("f1", estimator="xa"), sweep_id="s1", per_category=True)
    grown = extensions(records_frame(selection_records(chosen, "sel-1")), results, limit=16, factor=2.0)
    assert {key[0]: C for key, C in grown.items()} == {"up": 20.0, "down": 0.05}
    assert extensions(records_frame(selection_records(chosen, "sel-1")), results, limit=3, factor=2.0) == {}
