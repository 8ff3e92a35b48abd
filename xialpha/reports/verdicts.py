"""A selection's significance said plainly, for the terminal table and the HTML page alike: a
word per category (`verdicts`), the lines under the table that explain them (`legend`), and
(`edge_lines`) which choices lie at their C grid's edge or on a flat estimate."""

from __future__ import annotations

import pandas as pd

from xialpha.reports.formatting import cost_text, number
from xialpha.reports.frames import significant, ties
from xialpha.storage.schema import ResultColumn

LINE = 80  # characters: the longest line under a table
EDGE_WORDS = {  # at_edge -> what a line of them says (after the categories it names)
    "high": "chose the grid's largest C: widen the C grid upward",
    "low": "chose the grid's smallest C: widen the C grid downward",
}
FLAT_WORDS = "flat, no signal at any C: add documents, not C values"


def verdicts(rows: pd.DataFrame) -> list[str]:
    """Per selection row: "yes" (a test separates the choice from its first runner-up), "no",
    "tie" (`frames.ties`: the same estimate, or ranked equal), "-" (no runner-up to test against)."""
    return [
        "tie" if not pd.isna(tie) and tie else "-" if pd.isna(flag) else "yes" if flag else "no"
        for flag, tie in zip(significant(rows["not_significant"]), ties(rows))
    ]


def legend(rows: pd.DataFrame) -> list[str]:
    """What p and "significant" mean (at the selection's alpha), what a tie is, what to do when no
    choice is significant, a cost's unit and direction, and the `edge_lines`: a line each, at
    most LINE characters (a category name longer than a line excepted)."""
    first = rows.iloc[0]
    words = verdicts(rows)
    lines = [f"p: chance of a gap this large between equal configs; significant: a p < {number(first['alpha'])}"]
    if "tie" in words:
        lines.append("tie: same estimate as the runner-up; C neighbours or simplicity decided")
    if "yes" not in words:
        lines.append("no choice is significant: its runners-up do as well; keep it or add documents")
    if first["metric"] == "cost":
        lines.append(cost_text(first["cost_fn"], first["cost_fp"]))
    return lines + edge_lines(rows)


def grid_word(row) -> str:
    """Where a choice lies on its C grid, in a table cell: "largest C", "smallest C", "flat" or ""."""
    if not pd.isna(row.get("flat")) and bool(row.get("flat")):
        return "flat"
    return {"high": "largest C", "low": "smallest C"}.get(row.get("at_edge"), "")


def edge_lines(rows: pd.DataFrame) -> list[str]:
    """A line naming the categories whose choice is at the C grid's largest C, one for the smallest
    and one for those on a flat estimate (`xialpha.selection.edges`: columns at_edge, flat; no
    line for rows without them), each naming as many categories as fit in LINE characters (one at
    least), then "and N more"."""
    if "at_edge" not in rows or "flat" not in rows:
        return []
    lines = []
    for edge, words in EDGE_WORDS.items():
        named = rows.loc[rows["at_edge"].eq(edge).fillna(False).astype(bool), ResultColumn.CATEGORY]
        if len(named):
            lines.append(_naming([str(c) for c in named], words))
    flat = rows.loc[rows["flat"].fillna(False).astype(bool), ResultColumn.CATEGORY]
    if len(flat):
        lines.append(_naming([str(c) for c in flat], FLAT_WORDS))
    return lines


def _naming(categories: list[str], words: str) -> str:
    """ "a, b and 3 more: words", naming as many of `categories` as keep the line within LINE characters."""
    for shown in range(len(categories), 0, -1):
        rest = len(categories) - shown
        names = ", ".join(categories[:shown]) + (f" and {rest} more" if rest else "")
        line = f"{names}: {words}"
        if len(line) <= LINE or shown == 1:
            return line
    return words
