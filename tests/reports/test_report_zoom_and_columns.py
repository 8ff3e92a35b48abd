"""Issue 49.7: the HTML report shows an estimator's columns only where they hold values (before,
a sweep without a held-out split showed four columns of "-" under "What each estimator would
choose"), and its estimate-vs-C panels zoom to the values around the choice, which they mark
(before, a 0-100 axis flattened the plateau at 80-97 where the choice is made)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from store_rows import result_rows

from xialpha.cli import main
from xialpha.reports import plots, svg
from xialpha.selection.selected import Selection
from xialpha.storage.opening import open_store

ESTIMATES = [0.02, 0.40, 0.86, 0.93, 0.95, 0.94]  # F1 at C 0.01 .. 1000: the plateau is 86-95


def _curves() -> pd.DataFrame:
    n = len(ESTIMATES)
    return pd.DataFrame(
        {
            "category": ["sci.space"] * n,
            "preprocessing_id": ["pp"] * n,
            "kernel_id": ["lin"] * n,
            "j": [1.0] * n,
            "C": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0],
            "label": ["min_df=1"] * n,
            "estimate": ESTIMATES,
            "held_out": [np.nan] * n,
        }
    )


def test_the_choices_table_leaves_out_columns_without_values(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([{k: v for k, v in r.items() if not k.startswith("holdout")} for r in result_rows()])
    assert main(["select", store.uri, "--estimator", "xa", "--save"]) == 0
    assert main(["report", store.uri, "--html", str(tmp_path / "page.html")]) == 0
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    start = page.index("What each estimator would choose")
    section = page[start : page.index("<h2", start)]
    assert "held-out</th>" not in section and "<td>-</td>" not in section, section
    assert "xa: config</th>" in section and "scored no held-out split" in section


def test_curves_panels_zoom_to_the_plateau_and_mark_the_choice():
    chosen = {"selection_id": ["s"], "sweep_id": ["w"], "category": ["sci.space"], "C": [100.0], "value": [0.95]}
    selection = Selection(pd.DataFrame(chosen))
    figure = svg.curves_svg(_curves(), selection, "f1", ["sci.space"])
    ticks = [float(t) for t in re.findall(r'text-anchor="end">([-\d.]+)</text>', figure)]
    assert ticks and min(ticks) >= 75 - 1e-9 and max(ticks) >= 95, ticks  # not 0-100: 75 .. 95 or so
    assert 'stroke-dasharray="2 3"' in figure and "<polygon" in figure  # the choice: a dotted line and a star
    assert plots.zoomed([2.0, 40.0, 86.0, 95.0], 95.0) == (75.0, 95.0)
    assert plots.zoomed([2.0, 40.0], None) == (2.0, 40.0) and plots.zoomed([], None) == (0.0, 100.0)
    low, high = plots.curves_figure(_curves(), selection, "f1").axes[0].get_ylim()  # matplotlib's too
    assert 70 < low < 80 and 95 < high < 100
