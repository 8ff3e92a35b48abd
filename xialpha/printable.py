"""User text made safe to show: on a terminal (control characters) and in a spreadsheet (formulas).

Labels, category names, ids and messages come from corpora, specs, artefacts and stores that
xialpha does not trust. `printable` is what every terminal line and table cell shows of them:
control characters (ESC, the C1 set, DEL, line breaks...) as visible escapes, so no escape
sequence reaches the terminal and a cell stays one line. Rich markup in them is never
interpreted: tables take their cells as rich `Text` (`xialpha.reports.terminal.cell_text`).
`spreadsheet_safe` neutralises a CSV text cell that a spreadsheet would run as a formula.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def printable(text: str) -> str:
    """`text` with each control character as its escape (`\\x1b`, `\\n`, `\\u2028`), else unchanged."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def spreadsheet_safe(cell: str) -> str:
    """A CSV text cell a spreadsheet shows as text: one starting with = + - @ tab or CR gets a
    leading apostrophe (OWASP's CSV injection advice); other cells are unchanged."""
    return f"'{cell}" if cell.startswith(_FORMULA_START) else cell
