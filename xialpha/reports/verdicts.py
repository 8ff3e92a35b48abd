"""A selection's significance said plainly, for the terminal table and the HTML page alike: a
word per category (`verdicts`), the lines under the table that explain them (`legend`), and
(`edge_lines`) which choices lie at their C grid's edge or on a flat estimate."""

from __future__ import annotations

import textwrap

import pandas as pd

from xialpha.printable import printable
from xialpha.reports.formatting import cost_text, number
from xialpha.reports.frames import flags, ties
from xialpha.selection.edges import Edge, EdgeColumn
from xialpha.selection.objective import MAXIMISED
from xialpha.storage.schema import ResultColumn, SelectionColumn

S = SelectionColumn

LINE = 80  # characters: the longest line under a table
EDGE_WORDS = {  # at_edge -> what a line of them says (after the categories it names)
    Edge.HIGH: "chose the grid's largest C: widen the C grid upward",
    Edge.LOW: "chose the grid's smallest C: widen the C grid downward",
}
FLAT_WORDS = "flat, no signal at any C: add documents, not C values"
SETTLED_WORDS = "settled (no bounded SV: a larger C fits the same)"  # at the largest C
BELOW_WORDS = "behind the runner-up's value; won on its C neighbours' average"
UNTESTED_WORDS = "no test ran, so no runner-up is counted significant:"
TIE_WORDS = (  # a tie (`frames.ties`): what decided it (`xialpha.selection.ranking`), what to do
    "tie: same estimate as the runner-up; C neighbours or simplicity decided",
    "  either serves: keep it, or add documents to tell them apart",
)


def verdicts(rows: pd.DataFrame) -> list[str]:
    """Per selection row: "yes" (a test separates the choice from its first runner-up), "no",
    "tie" (`frames.ties`: the same estimate, or ranked equal), "-" (no test ran: no runner-up to
    test against, or no per-example vectors to test with; `untested_lines` says why)."""
    return [
        "tie" if not pd.isna(tie) and tie else "-" if pd.isna(flag) else "yes" if flag else "no"
        for flag, tie in zip(flags(rows[S.SIGNIFICANT]), ties(rows))
    ]


def legend(rows: pd.DataFrame) -> list[str]:
    """What p and "significant" mean (at the selection's alpha), what a tie is and what to do about
    one (TIE_WORDS), what to do when no choice is significant, which choices have a worse own value
    than their runner-up (ranked by the C neighbours' average), a cost's unit and direction, and the
    `edge_lines`: lines of at most LINE characters (a category name longer than a line excepted),
    names `printable`."""
    first = rows.iloc[0]
    words = verdicts(rows)
    lines = [f"p: chance of a gap this large between equal configs; significant: a p < {number(first[S.ALPHA])}"]
    if "tie" in words:
        lines.extend(TIE_WORDS)
    tested = ~flags(rows[S.SIGNIFICANT]).isna()
    if "yes" not in words and tested.any():
        lines.append("no choice is significant: its runners-up do as well; keep it or add documents")
    lines.extend(untested_lines(rows))
    below = _below_runner_up(rows, words)
    if below:
        lines.extend(_naming(below, BELOW_WORDS))
    if first[S.METRIC] == "cost":
        lines.append(cost_text(first[S.COST_FN], first[S.COST_FP]))
    return lines + edge_lines(rows)


def untested_lines(rows: pd.DataFrame) -> list[str]:
    """Per reason some runners-up went untested (`untested`), a line naming the categories ("-" in
    the table: no test ran, so none is counted significant) and the reason, wrapped at LINE."""
    if S.UNTESTED not in rows:
        return []
    reasons = rows[S.UNTESTED]
    lines = []
    for reason in dict.fromkeys(reasons.dropna()):
        named = [str(c) for c in rows.loc[reasons == reason, ResultColumn.CATEGORY]]
        lines.extend(_naming(named, UNTESTED_WORDS))
        lines.extend(textwrap.wrap(printable(str(reason)), LINE, initial_indent="  ", subsequent_indent="  "))
    return lines


def _below_runner_up(rows: pd.DataFrame, words: list[str]) -> list[str]:
    """The categories whose choice, ranked by its average with its C neighbours' (smooth_c), has a
    worse own estimate (`value`) than its first runner-up's, ties apart: the table shows both."""
    first = rows.iloc[0]
    if pd.isna(first.get(S.SMOOTH_C)) or not bool(first[S.SMOOTH_C]):
        return []
    sign = 1.0 if MAXIMISED.get(str(first[S.METRIC]), True) else -1.0
    gap = sign * (pd.to_numeric(rows[S.VALUE]) - pd.to_numeric(rows[S.RUNNER_UP_VALUE]))
    return [str(c) for c, g, word in zip(rows[ResultColumn.CATEGORY], gap, words) if g < 0 and word != "tie"]


def grid_word(row: pd.Series) -> str:
    """Where a choice lies on its C grid, in a table cell: "largest C", "smallest C", "flat" or ""."""
    if not pd.isna(row.get(EdgeColumn.FLAT)) and bool(row.get(EdgeColumn.FLAT)):
        return "flat"
    return {Edge.HIGH: "largest C", Edge.LOW: "smallest C"}.get(row.get(EdgeColumn.AT_EDGE), "")


def edge_lines(rows: pd.DataFrame) -> list[str]:
    """A line naming the categories whose choice is at the C grid's largest C, one for the smallest,
    one for those on a flat estimate and one for those settled at the largest C (a hard margin:
    `xialpha.selection.edges`: columns at_edge, flat, settled; no line for rows without them),
    each naming as many categories as fit in LINE characters (one at least), then "and N more"
    (`_naming`: two lines when one name and the words are too long for one)."""
    if EdgeColumn.AT_EDGE not in rows or EdgeColumn.FLAT not in rows:
        return []
    lines = []
    for edge, words in EDGE_WORDS.items():
        named = rows.loc[rows[EdgeColumn.AT_EDGE].eq(edge).fillna(False).astype(bool), ResultColumn.CATEGORY]
        if len(named):
            lines.extend(_naming([str(c) for c in named], words))
    flat = rows.loc[rows[EdgeColumn.FLAT].fillna(False).astype(bool), ResultColumn.CATEGORY]
    if len(flat):
        lines.extend(_naming([str(c) for c in flat], FLAT_WORDS))
    if EdgeColumn.SETTLED in rows:
        settled = rows.loc[rows[EdgeColumn.SETTLED].fillna(False).astype(bool), ResultColumn.CATEGORY]
        if len(settled):
            lines.extend(_naming([str(c) for c in settled], SETTLED_WORDS))
    return lines


def _naming(categories: list[str], words: str) -> list[str]:
    """ "a, b and 3 more: words", naming as many of `categories` (`printable`: no control character
    reaches a terminal) as keep the line within LINE characters; when even one is too many, the
    words go on a line of their own (a name longer than a line stays on one line with them)."""
    names = [printable(category) for category in categories]
    for shown in range(len(names), 0, -1):
        rest = len(names) - shown
        named = ", ".join(names[:shown]) + (f" and {rest} more" if rest else "")
        line = f"{named}: {words}"
        if len(line) <= LINE:
            return [line]
        if shown == 1:
            return [line] if len(named) + 1 > LINE else [f"{named}:", f"  {words}"]
    return [words]
