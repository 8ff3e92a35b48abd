"""A selection's significance said plainly, for the terminal table and the HTML page alike: a
word per category (`verdicts`) and the lines under the table that explain them (`legend`)."""

from __future__ import annotations

import pandas as pd

from xialpha.reports.formatting import cost_text, number
from xialpha.reports.frames import significant, ties


def verdicts(rows: pd.DataFrame) -> list[str]:
    """Per selection row: "yes" (a test separates the choice from its first runner-up), "no",
    "tie" (`frames.ties`: the same estimate, or ranked equal), "-" (no runner-up to test against)."""
    return ["tie" if not pd.isna(tie) and tie else "-" if pd.isna(flag) else "yes" if flag else "no"
            for flag, tie in zip(significant(rows["not_significant"]), ties(rows))]


def legend(rows: pd.DataFrame) -> list[str]:
    """What p and "significant" mean (at the selection's alpha), what a tie is, what to do when no
    choice is significant, and a cost's unit and direction: a line each, at most 80 characters."""
    first = rows.iloc[0]
    words = verdicts(rows)
    lines = [f"p: chance of a gap this large between equal configs; significant: a p < {number(first['alpha'])}"]
    if "tie" in words:
        lines.append("tie: same estimate as the runner-up; C neighbours or simplicity decided")
    if "yes" not in words:
        lines.append("no choice is significant: its runners-up do as well; keep it or add documents")
    if first["metric"] == "cost":
        lines.append(cost_text(first["cost_fn"], first["cost_fp"]))
    return lines
