"""The select table's bound: without --all it shows the categories with the most positives."""

import pandas as pd

from xialpha.commands.select import SHOWN, shown_rows


def test_shown_rows_keeps_the_categories_with_most_positives_in_their_order():
    rows = pd.DataFrame({"category": [f"c{i:03d}" for i in range(SHOWN + 10)], "n_pos": list(range(SHOWN + 10))[::-1]})
    rows.loc[SHOWN + 5, "n_pos"] = 10_000  # a large category late in the order is kept, where it was
    shown = shown_rows(rows)
    assert len(shown) == SHOWN
    assert list(shown["category"]) == sorted(shown["category"])
    assert f"c{SHOWN + 5:03d}" in set(shown["category"])
    assert set(shown["category"]) == set(rows.nlargest(SHOWN, "n_pos")["category"])


def test_shown_rows_is_every_row_up_to_the_bound():
    rows = pd.DataFrame({"category": ["a", "b"], "n_pos": [1, 2]})
    assert shown_rows(rows) is rows
