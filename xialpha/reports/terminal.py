"""Terminal tables (rich) for selections, certifications and sweep reports, and the same rows
as CSV or JSON for scripts.

A table shows by default the columns that fit an 80-column terminal (configurations by their
labels, `xialpha.reports.labels`); `wide=True` shows all of them. Every value is shown and no word
is cut: a table too wide for the terminal wraps text at its spaces, headers over two lines and
category names inside their cells (`fitted_widths`); ids and times are kept on one line, and a
table that cannot fit so (a name half the line wide) is printed as a block per row (`print_table`).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xialpha.printable import printable
from xialpha.reports.columns import ReportColumn
from xialpha.reports.formatting import minute, missing, number, objective_text, p_value, percent
from xialpha.reports.records import write_rows
from xialpha.storage.schema import (
    P_VALUES,
    SELECTION_ESTIMATES,
    CertificationColumn,
    DriftColumn,
    ResultColumn,
    SelectionColumn,
    SelectionMode,
)

if TYPE_CHECKING:  # pandas, the comparison frames and the verdicts: imported by the tables that need them
    import pandas as pd
    from rich.console import JustifyMethod
    from rich.table import Table
    from rich.text import Text

    from xialpha.reports.labels import ConfigLabels
    from xialpha.selection.comparison import CategoryComparison, SelectionComparison

S = SelectionColumn
CONFUSION = (CertificationColumn.TP, CertificationColumn.FP, CertificationColumn.FN, CertificationColumn.TN)

P_VALUE_HEADERS = dict(
    zip(
        P_VALUES,
        (
            "p micro sign test",
            "p McNemar",
            "p proportions",
            "p macro sign test",
            "p macro t-test",
            "p macro rank t-test",
        ),
    )
)
NOT_INDEPENDENT = "* not an independent test: the sweep's held-out estimates used this split"
FORCED = "! forced on a test set used before: the bounds are biased (sequential testing)"  # as the HTML says
WIDE_WIDTH = 240  # characters per line of --wide tables written to a file or pipe
UNBOUNDED = 10_000  # characters: the width a table is measured at to learn what it needs unfolded


@dataclass(frozen=True)
class TableColumn:
    """A table column: its header, its cell text from a row, left-aligned text or right-aligned
    numbers, whether only --wide shows it, whether it holds what users copy whole (ids, times:
    `identifier`, kept on one line, never wrapped) and whether it holds names (category names:
    `name`, kept on one line while the table fits, else wrapped inside their cell after a "." "-"
    "_" "/" or ":", `fitted_widths`)."""

    header: str
    cell: Callable[[pd.Series], str]
    text: bool = False
    wide: bool = False
    identifier: bool = False
    name: bool = False


CATEGORY = TableColumn("category", lambda r: str(r[ResultColumn.CATEGORY]), text=True, name=True)
GAP = 2  # characters between the columns of a compact table (none at its edges)
# How a table too wide for the terminal is narrowed, in this order until one fits: (compact, the stages of
# `fitted_widths`). Rows on one line first (number headers on three lines, or a compact table with headers on
# two); then text wrapped at spaces; then compact, text and names wrapped inside their cells, headers as needed.
FITTING = (
    (False, ("headers3",)),
    (True, ()),
    (False, ("headers3", "words")),
    (True, ("words", "parts", "headers")),
)
_BREAK = re.compile(r"(?<=[ ./:_=\-])")  # a word too long for its cell wraps after these characters


@dataclass(frozen=True)
class TerminalTable:
    """A table's title, caption, columns and cells (`printable` strings), printed at its natural
    widths when they fit the terminal (`natural`), else narrowed to fit (`fitted`), else a block
    per row (`print_table`)."""

    title: str | None
    columns: list[TableColumn]
    cells: list[list[str]]
    options: dict

    def natural(self) -> Table:
        """A rich Table of every cell on one line, number headers wrapped at spaces to their numbers' width."""
        return self._rich(None)

    def fitted(self, width: int) -> Table | None:
        """A rich Table at most `width` characters wide, the first of FITTING that fits (columns
        narrowed by `fitted_widths`); None when none does (`print_table` then prints a block per row)."""
        n = len(self.columns)
        for compact, stages in FITTING:
            room = width - (GAP * (n - 1) if compact else 3 * n + 1)
            widths = fitted_widths(self.columns, self.cells, room, width, stages)
            if widths is not None:
                return self._rich(widths, compact)
        return None

    def _header(self, i: int, width: int | None) -> str:
        """TableColumn i's header wrapped at spaces to `width`; None: text's on one line, a number's at its
        numbers' width (8 at least, and two lines at most)."""
        column = self.columns[i]
        if width is None:
            if column.text:
                return column.header
            longest = _longest(row[i] for row in self.cells)
            width = max(longest, 8, _lines_width(column.header, 2))
        return textwrap.fill(column.header, width=width, break_long_words=False)

    def _rich(self, widths: list[int] | None, compact: bool = False) -> Table:
        """A rich Table of the cells: at their natural widths (`widths` None; rich wraps text at spaces if
        it must), else at `widths` (text and names wrapped by `_cell_lines`), GAP apart when `compact`."""
        from rich import box
        from rich.table import Table
        from rich.text import Text

        options = dict(self.options)
        options.setdefault("min_width", min(len(self.title or ""), 80))  # a title wider than the columns: one line
        if compact:
            options.update(show_edge=False, pad_edge=False, collapse_padding=True)
        title = None if self.title is None else cell_text(self.title)
        table = Table(title=title, box=box.SIMPLE_HEAD, **options)
        for i, column in enumerate(self.columns):
            header = self._header(i, None if widths is None else widths[i])
            justify: JustifyMethod = "left" if column.text else "right"
            longest = _longest(row[i] for row in self.cells)
            if widths is not None:
                table.add_column(Text(header), justify=justify, width=widths[i], no_wrap=True)
            elif column.identifier or column.name:  # as wide as its longest cell, never folded
                table.add_column(
                    Text(header), justify=justify, no_wrap=True, min_width=max(longest, _longest_word(header))
                )
            else:  # wrapped at spaces, never narrower than a word: no word is cut
                words = max((_longest_word(row[i]) for row in self.cells), default=0)
                table.add_column(
                    Text(header), justify=justify, overflow="fold", min_width=max(words, _longest_word(header))
                )
        for row in self.cells:
            texts = [
                "\n".join(_cell_lines(cell, widths[i])) if widths is not None and column.text else cell
                for i, (column, cell) in enumerate(zip(self.columns, row))
            ]
            table.add_row(*map(Text, texts))
        return table


def fitted_widths(
    columns: list[TableColumn], cells: list[list[str]], room: int, line: int, stages: Sequence[str]
) -> list[int] | None:
    """TableColumn widths whose sum is at most `room` (characters for cells), from the natural ones
    (a line per row, number headers on two lines at most), each column narrowed only as far as it
    must, by `stages` in their order: "headers3" (number headers to three lines), "headers" (number
    headers to their longest word), "words"
    (text, such as configurations, to its longest word), "parts" (text and names wrapped inside
    their cells, to their longest part between spaces and break characters: `_cell_lines`; names
    stay whole when one to wrap is half the `line` or more: a block per row keeps it whole). Ids,
    times and numbers are never narrowed below their longest cell. None when the columns at their
    narrowest do not fit."""
    natural: list[int] = []
    floors: list[dict[str, int]] = []  # per column, the width each stage lets it narrow to
    for i, column in enumerate(columns):
        values = [row[i] for row in cells]
        longest = _longest(values)
        header_word = _longest_word(column.header)
        parts = max(header_word, max((len(part.rstrip()) for v in values for part in _BREAK.split(v)), default=0))
        if column.name:
            natural.append(max(longest, len(column.header)))
            floors.append({"parts": parts if 2 * longest < line else natural[-1]})  # else a block keeps it whole
        elif column.identifier:
            natural.append(max(longest, header_word))
            floors.append({})
        elif column.text:
            natural.append(max(longest, len(column.header)))
            floors.append(
                {"words": max(header_word, max((_longest_word(v) for v in values), default=0)), "parts": parts}
            )
        else:  # a number: its cells whole, its header on two lines, then on as many as it has words
            two_lines = max(longest, 8, _lines_width(column.header, 2))
            natural.append(max(longest, _longest(textwrap.wrap(column.header, two_lines))))
            floors.append(
                {"headers3": max(longest, _lines_width(column.header, 3)), "headers": max(longest, header_word)}
            )
    widths = list(natural)
    for done in range(len(stages) + 1):
        least = [
            min([width, *(floor[stage] for stage in stages[:done] if stage in floor)])
            for width, floor in zip(natural, floors)
        ]
        widths = _narrowed(widths, least, room)
        if sum(widths) <= room:
            return widths
    return None


def _lines_width(header: str, lines: int) -> int:
    """The narrowest width at which `header` wraps at its spaces into at most `lines` lines."""
    return (
        next(w for w in range(_longest_word(header), len(header) + 1) if len(textwrap.wrap(header, w)) <= lines)
        if header
        else 0
    )


def _narrowed(widths: list[int], floors: list[int], room: int) -> list[int]:
    """`widths` narrowed a character at a time, the column furthest above its floor first, until they
    fit `room` or every column is at its floor."""
    widths = list(widths)
    while sum(widths) > room:
        slack, i = max((w - f, i) for i, (w, f) in enumerate(zip(widths, floors)))
        if slack <= 0:
            break
        widths[i] -= 1
    return widths


def _cell_lines(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters: wrapped at its spaces, and a word longer than
    the line after its "." "-" "_" "/" ":" "=" (a part longer than the line is cut at the width:
    `fitted_widths` makes none such)."""
    lines: list[str] = []
    for line in textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]:
        if len(line) <= width:
            lines.append(line)
            continue
        lines.append("")
        for part in _BREAK.split(line):
            if lines[-1] and len(lines[-1]) + len(part) > width:
                lines.append("")
            while len(part) > width:
                lines[-1], part = part[:width], part[width:]
                lines.append("")
            lines[-1] += part
    return lines


def rich_table(
    title: str | None,
    columns: list[TableColumn],
    frame: pd.DataFrame | Sequence[Mapping[str, Any]],
    wide: bool = False,
    **options: object,
) -> TerminalTable:
    """The rows of `frame` (a DataFrame, or rows as mappings: `xialpha store ls` prints its listings
    without pandas) as a TerminalTable with `columns` (all of them when `wide`, else the default ones)."""
    shown = [c for c in columns if wide or not c.wide]
    cells = [[printable(column.cell(row)) for column in shown] for row in _rows(frame)]
    return TerminalTable(title, shown, cells, options)


def _longest(texts: Iterable[str]) -> int:
    return max((len(text) for text in texts), default=0)


def _rows(frame: pd.DataFrame | Sequence[Mapping[str, Any]]) -> Sequence:
    """The rows of `frame`: its mappings, or a DataFrame's rows as Series (named by their index)."""
    return [row for _, row in frame.iterrows()] if hasattr(frame, "iterrows") else frame


def _longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


def cell_text(value: object) -> Text:
    """`value` as a rich Text of its `printable` string: shown as it is, never read as markup or emoji."""
    from rich.text import Text

    return Text(printable(str(value)))


def selection_table(rows: pd.DataFrame, labels: ConfigLabels, wide: bool = False) -> TerminalTable:
    """One line per category: the chosen config (its label from `labels`, a ConfigLabels), its
    value, the first runner-up, the p-value and whether the choice is significantly better than
    the runner-up ("tie": ranked equal; all p-values and estimates with `wide`)."""
    from xialpha.reports.verdicts import verdicts

    rows = rows.reset_index(drop=True)
    first = rows.iloc[0]
    what = objective_text(first[S.METRIC], first[S.ESTIMATOR], first[S.RHO])
    if not missing(first.get(S.SMOOTH_C)) and bool(first[S.SMOOTH_C]):
        what += ", averaged over C neighbours"
    if first[S.MODE] == SelectionMode.GLOBAL:
        what += f", {first[S.AVERAGE]} average {number(first[S.SELECTION_VALUE])}"
    words = dict(zip(rows.index, verdicts(rows)))

    def p_cell(name: str) -> Callable[[pd.Series], str]:
        return lambda r: p_value(r.get(name))

    columns = [
        CATEGORY,
        TableColumn("config", labels.of_row, text=True),
        TableColumn("value", lambda r: number(r[S.VALUE])),
        TableColumn("F1 %", lambda r: percent(r[SELECTION_ESTIMATES["f1"]]), wide=True),
        TableColumn("error %", lambda r: percent(r[SELECTION_ESTIMATES["error"]]), wide=True),
        TableColumn("runner-up config", lambda r: labels.of_row(r, "runner_up_"), text=True, wide=True),
        TableColumn("runner-up", lambda r: number(r[S.RUNNER_UP_VALUE])),
        *[TableColumn(P_VALUE_HEADERS[name], p_cell(name), wide=name != P_VALUES[0]) for name in P_VALUES],
        TableColumn("significant", lambda r: words[r.name], text=True),
    ]
    return rich_table(f"selection {first[S.SELECTION_ID]}: {what}", columns, rows, wide)


def comparison_table(
    comparison: SelectionComparison, rows: list[CategoryComparison], wide: bool = False
) -> TerminalTable:
    """One line per category of a `xialpha.selection.comparison.SelectionComparison` (`rows`: its
    CategoryComparison rows to show, the summaries last): what changed, the configuration each
    selection chose, their held-out F1 and the two-sided p-value (estimates, held-out errors, the
    test and its counts with `wide`)."""
    from xialpha.reports.frames import tidy_comparison

    def count(name: str) -> Callable[[pd.Series], str]:
        return lambda r: "-" if missing(r[name]) else str(int(r[name]))

    columns = [
        CATEGORY,
        TableColumn("changed", lambda r: str(r["changed_text"]), text=True),
        TableColumn("config A", lambda r: str(r[ReportColumn.CONFIG_A]), text=True),
        TableColumn("config B", lambda r: str(r[ReportColumn.CONFIG_B]), text=True),
        TableColumn("estimate A", lambda r: number(r["estimate_a"]), wide=True),
        TableColumn("estimate B", lambda r: number(r["estimate_b"]), wide=True),
        TableColumn("held-out F1 % A", lambda r: percent(r["held_out_f1_a"])),
        TableColumn("held-out F1 % B", lambda r: percent(r["held_out_f1_b"])),
        TableColumn("held-out error % A", lambda r: percent(r["held_out_error_a"]), wide=True),
        TableColumn("held-out error % B", lambda r: percent(r["held_out_error_b"]), wide=True),
        TableColumn("test", lambda r: str(r["test"]), text=True, wide=True),
        TableColumn("tested", count("n_tested"), wide=True),
        TableColumn("only A right", count("only_a_right"), wide=True),
        TableColumn("only B right", count("only_b_right"), wide=True),
        TableColumn("p", lambda r: p_value(r["p_value"])),
    ]
    frame = tidy_comparison(comparison, rows).assign(changed_text=[row.changed_text for row in rows])
    a, b = comparison.a, comparison.b
    title = f"A {a.selection_id} (sweep {a.sweep_id}) against B {b.selection_id} (sweep {b.sweep_id})"
    return rich_table(title, columns, frame, wide)


def certification_table(
    frame: pd.DataFrame, title: str, configs: dict, wide: bool = False, **options: object
) -> TerminalTable:
    """Test-set metrics with their one-sided bounds, per category then micro and macro; configs:
    category -> label. Counts, recall and precision with `wide`."""

    def counts(name: str) -> Callable[[pd.Series], str]:
        return lambda r: "-" if missing(r[name]) else str(int(r[name]))

    columns = [
        CATEGORY,
        TableColumn("config", lambda r: configs.get(r[ResultColumn.CATEGORY], ""), text=True),
        *[
            TableColumn(name.upper(), counts(name), wide=True)
            for name in (CertificationColumn.TP, CertificationColumn.FP, CertificationColumn.FN)
        ],
        TableColumn("F1 %", lambda r: percent(r[CertificationColumn.F1])),
        TableColumn(">= lower", lambda r: percent(r[CertificationColumn.F1_LOWER])),
        TableColumn("error %", lambda r: percent(r[CertificationColumn.ERROR])),
        TableColumn("<= upper", lambda r: percent(r[CertificationColumn.ERROR_UPPER])),
        TableColumn("recall %", lambda r: percent(r[CertificationColumn.RECALL]), wide=True),
        TableColumn(">= lower", lambda r: percent(r[CertificationColumn.RECALL_LOWER]), wide=True),
        TableColumn("precision %", lambda r: percent(r[CertificationColumn.PRECISION]), wide=True),
        TableColumn(">= lower", lambda r: percent(r[CertificationColumn.PRECISION_LOWER]), wide=True),
    ]
    return rich_table(title, columns, frame, wide, **options)


def inventory_table(kind: str, rows: Sequence[Mapping[str, Any]], wide: bool = False) -> TerminalTable:
    """A listing of `xialpha.reports.inventory` (sweeps, selections, certifications or drift
    checks) with their ids; times to the minute, in UTC. A certification's split is marked "*"
    when the sweep's held-out estimates used it (NOT_INDEPENDENT) and "!" when it was forced on a
    split certified before (FORCED), each mark explained under the table."""

    def text(name: str) -> Callable[[Mapping[str, Any]], str]:
        return lambda r: "-" if missing(r.get(name)) else str(r[name])

    def when(name: str) -> Callable[[Mapping[str, Any]], str]:
        return lambda r: minute(r[name], zone="")

    def reused(row: Mapping[str, Any]) -> bool:  # a certification on the split the sweep's held-out estimates used
        independent = row.get(CertificationColumn.INDEPENDENT)
        return kind == "certifications" and not missing(independent) and not bool(independent)

    def forced(row: Mapping[str, Any]) -> bool:  # a certification forced on a split certified before
        return (
            kind == "certifications"
            and not missing(row.get(CertificationColumn.FORCED))
            and bool(row[CertificationColumn.FORCED])
        )

    columns = {
        "sweeps": [
            TableColumn("sweep", text(ResultColumn.SWEEP_ID), text=True, identifier=True),
            TableColumn("runs", text("runs")),
            TableColumn("categories", text("categories")),
            TableColumn("configs", text("configs")),
            TableColumn("rows ok", text("rows_ok")),
            TableColumn("failed", text("rows_failed")),
            TableColumn("missing", text("rows_missing"), wide=True),
            TableColumn("last run (UTC)", when("last_created_at"), identifier=True),
        ],
        "selections": [
            TableColumn("selection", text(S.SELECTION_ID), text=True, identifier=True),
            TableColumn("sweep", text(S.SWEEP_ID), text=True, identifier=True),
            TableColumn("mode", text(S.MODE), text=True),
            TableColumn("by", text("objective"), text=True),
            TableColumn("categories", text("categories"), wide=True),
            TableColumn("created (UTC)", when(ResultColumn.CREATED_AT), wide=True, identifier=True),
        ],
        "certifications": [
            TableColumn("certification", text(CertificationColumn.CERTIFICATION_ID), text=True, identifier=True),
            TableColumn("selection", text(CertificationColumn.SELECTION_ID), text=True, identifier=True),
            TableColumn(
                "split",
                lambda r: (
                    str(r[CertificationColumn.TEST_SPLIT]) + ("*" if reused(r) else "") + ("!" if forced(r) else "")
                ),
                text=True,
            ),
            TableColumn("n", text(CertificationColumn.N_TEST), wide=True),
            TableColumn("micro F1 %", lambda r: percent(r["micro_f1"])),
            TableColumn("created (UTC)", when(ResultColumn.CREATED_AT), wide=True, identifier=True),
        ],
        "drift": [
            TableColumn("drift run", text(ResultColumn.RUN_ID), text=True, identifier=True),
            TableColumn("drift id", text(ResultColumn.SWEEP_ID), text=True, identifier=True),
            TableColumn("newest batch", text(DriftColumn.NEWEST_BATCH), text=True),
            TableColumn("verdicts", text("verdicts"), text=True),
            TableColumn("checked (UTC)", when(ResultColumn.CREATED_AT), wide=True, identifier=True),
        ],
    }[kind]
    notes = [note for note, marked in ((NOT_INDEPENDENT, reused), (FORCED, forced)) if any(map(marked, rows))]
    return rich_table(kind, columns, rows, wide, caption="\n".join(notes) or None)


def calibration_table(points: pd.DataFrame, metric: str) -> TerminalTable:
    """Per estimator, how its estimates compare with held-out values (`calibration_summary`)."""
    from xialpha.reports.calibration import calibration_summary  # here: it needs scipy.stats, `store ls` does not

    columns = [
        TableColumn("estimator", lambda r: str(r[ReportColumn.ESTIMATOR]), text=True),
        TableColumn("points", lambda r: str(r["points"])),
        TableColumn("mean diff.", lambda r: f"{100 * r['mean_difference']:+.2f}"),
        TableColumn("mean |diff.|", lambda r: f"{100 * r['mean_abs_difference']:.2f}"),
        TableColumn("% above", lambda r: percent(r["above"])),
    ]
    return rich_table(
        f"{metric} estimate minus held-out value, in points of % (per config)", columns, calibration_summary(points)
    )


def key_table(key: pd.DataFrame) -> TerminalTable:
    """What each label of a table stands for: every parameter of its preprocessing or kernel."""
    columns = [
        TableColumn("label", lambda r: str(r[ReportColumn.LABEL]), text=True),
        TableColumn("parameters", lambda r: str(r["parameters"]), text=True),
    ]
    return rich_table("what the labels stand for", columns, key)


def print_table(table: TerminalTable | Table, wide: bool = False) -> None:
    """Print to standard output at the terminal's width ($COLUMNS, else 80 when it is not a
    terminal); a --wide table written to a file or pipe gets WIDE_WIDTH characters. A
    TerminalTable wider than that is narrowed to fit (`TerminalTable.fitted`: text and names
    wrapped inside their cells, headers over two lines, no value dropped, no word cut); a --wide
    one, and one that cannot be narrowed so, is printed long instead (`long_tables`: a block per
    row). Other rich Tables (key-value facts) are printed long when their columns at their
    narrowest do not fit."""
    from rich.console import Console
    from rich.measure import Measurement

    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    console = Console(width=WIDE_WIDTH if wide and piped else None)
    if isinstance(table, TerminalTable):
        natural = table.natural()
        needs = Measurement.get(console, console.options.update_width(UNBOUNDED), natural)
        fitted = natural if needs.maximum <= console.width else None if wide else table.fitted(console.width)
        if fitted is None:
            console.print(*[part for part in (natural.title, *long_tables(natural), natural.caption) if part])
            return
        console.print(fitted)
        return
    needs = Measurement.get(console, console.options.update_width(UNBOUNDED), table)
    if needs.minimum > console.width:
        console.print(*[part for part in (table.title, *long_tables(table), table.caption) if part])
        return
    console.print(table)


def long_tables(table: Table) -> list[Table]:
    """A rich Table as one two-column table per row (header, value), titled by its first column's
    header and cell ("category cat00")."""
    from rich import box
    from rich.table import Table

    headers = [" ".join(str(column.header).split()) for column in table.columns]
    columns = [list(column.cells) for column in table.columns]
    blocks = []
    for i in range(table.row_count):
        title = f"{headers[0]} {columns[0][i]}"  # one line however narrow: the block is at least as wide
        block = Table(title=title, box=box.SIMPLE, show_header=False, title_justify="left", min_width=len(title))
        block.add_column(justify="left")
        block.add_column(justify="left", overflow="fold")
        for header, cells in zip(headers[1:], columns[1:]):
            block.add_row(header, str(cells[i]))
        blocks.append(block)
    return blocks


def write_records(frame: pd.DataFrame, fmt: str) -> None:
    """`frame` on standard output as CSV (a header line) or JSON (a list of objects; NaN as null,
    times in ISO 8601), every column and every digit (`xialpha.reports.records.write_rows`)."""
    write_rows([str(name) for name in frame.columns], frame.astype(object).to_dict("records"), fmt)
