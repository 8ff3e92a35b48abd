"""Terminal tables (rich) for selections, certifications and sweep reports, and the same rows
as CSV or JSON for scripts.

A table shows by default the columns that fit an 80-column terminal (configurations by their
labels, `xialpha.reports.labels`); `wide=True` shows all of them.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from xialpha.printable import printable
from xialpha.reports.formatting import minute, missing, number, objective_text, p_value, percent
from xialpha.reports.verdicts import verdicts
from xialpha.storage.schema import P_VALUES, SELECTION_ESTIMATES, ResultColumn

P_VALUE_HEADERS = dict(zip(P_VALUES, ("p micro sign", "p McNemar", "p prop.", "p macro S", "p macro T", "p macro T'")))
WIDE_WIDTH = 240  # characters per line of --wide tables written to a file or pipe
UNBOUNDED = 10_000  # characters: the width a table is measured at to learn what it needs unfolded


@dataclass(frozen=True)
class Column:
    """A table column: its header, its cell text from a row, left-aligned text or right-aligned
    numbers, and whether only --wide shows it."""

    header: str
    cell: Callable[[pd.Series], str]
    text: bool = False
    wide: bool = False


def rich_table(title: str | None, columns: list[Column], frame: pd.DataFrame, wide: bool = False, **options):
    """A rich Table of `frame`'s rows with `columns` (all of them when `wide`, else the default ones)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    shown = [c for c in columns if wide or not c.wide]
    cells = [[printable(column.cell(row)) for column in shown] for _, row in frame.iterrows()]
    options.setdefault("min_width", min(len(title or ""), 80))  # a title wider than the columns stays one line
    table = Table(title=None if title is None else cell_text(title), box=box.SIMPLE_HEAD, **options)
    for i, column in enumerate(shown):
        header = column.header
        if not column.text:  # a number's header wraps at spaces to the width of its numbers
            longest = max((len(row[i]) for row in cells), default=0)
            header = textwrap.fill(header, width=max(longest, 8, *(len(word) for word in header.split())))
        table.add_column(Text(header), justify="left" if column.text else "right", overflow="fold")
    for row in cells:
        table.add_row(*map(Text, row))
    return table


def cell_text(value: object):
    """`value` as a rich Text of its `printable` string: shown as it is, never read as markup or emoji."""
    from rich.text import Text

    return Text(printable(str(value)))


def selection_table(rows: pd.DataFrame, labels, wide: bool = False):
    """One line per category: the chosen config (its label from `labels`, a ConfigLabels), its
    value, the first runner-up, the p-value and whether the choice is significantly better than
    the runner-up ("tie": ranked equal; all p-values and estimates with `wide`)."""
    rows = rows.reset_index(drop=True)
    first = rows.iloc[0]
    what = objective_text(first["metric"], first["estimator"], first[ResultColumn.RHO])
    if not missing(first.get("smooth_c")) and bool(first["smooth_c"]):
        what += ", averaged over C neighbours"
    if first["mode"] == "global":
        what += f", {first['average']} average {number(first['selection_value'])}"
    words = dict(zip(rows.index, verdicts(rows)))
    columns = [
        Column("category", lambda r: str(r[ResultColumn.CATEGORY]), text=True),
        Column("config", labels.of_row, text=True),
        Column("value", lambda r: number(r["value"])),
        Column("F1 %", lambda r: percent(r[SELECTION_ESTIMATES["f1"]]), wide=True),
        Column("error %", lambda r: percent(r[SELECTION_ESTIMATES["error"]]), wide=True),
        Column("runner-up config", lambda r: labels.of_row(r, "runner_up_"), text=True, wide=True),
        Column("runner-up", lambda r: number(r["runner_up_value"])),
        *[
            Column(P_VALUE_HEADERS[name], lambda r, name=name: p_value(r.get(name)), wide=name != P_VALUES[0])
            for name in P_VALUES
        ],
        Column("significant", lambda r: words[r.name], text=True),
    ]
    return rich_table(f"selection {first['selection_id']}: {what}", columns, rows, wide)


def certification_table(frame: pd.DataFrame, title: str, configs: dict, wide: bool = False, **options):
    """Test-set metrics with their one-sided bounds, per category then micro and macro; configs:
    category -> label. Counts, recall and precision with `wide`."""

    def counts(name):
        return lambda r: "-" if missing(r[name]) else str(int(r[name]))

    columns = [
        Column("category", lambda r: str(r[ResultColumn.CATEGORY]), text=True),
        Column("config", lambda r: configs.get(r[ResultColumn.CATEGORY], ""), text=True),
        *[Column(name.upper(), counts(name), wide=True) for name in ("tp", "fp", "fn")],
        Column("F1 %", lambda r: percent(r["f1"])),
        Column(">= lower", lambda r: percent(r["f1_lower"])),
        Column("error %", lambda r: percent(r["error"])),
        Column("<= upper", lambda r: percent(r["error_upper"])),
        Column("recall %", lambda r: percent(r["recall"]), wide=True),
        Column(">= lower", lambda r: percent(r["recall_lower"]), wide=True),
        Column("precision %", lambda r: percent(r["precision"]), wide=True),
        Column(">= lower", lambda r: percent(r["precision_lower"]), wide=True),
    ]
    return rich_table(title, columns, frame, wide, **options)


def inventory_table(kind: str, frame: pd.DataFrame, wide: bool = False):
    """A listing of `xialpha.reports.inventory` (sweeps, selections, certifications or drift
    checks) with their ids; times to the minute, in UTC."""

    def text(name):
        return lambda r: "-" if missing(r[name]) else str(r[name])

    def when(name):
        return lambda r: minute(r[name], zone="")

    columns = {
        "sweeps": [
            Column("sweep", text(ResultColumn.SWEEP_ID), text=True),
            Column("runs", text("runs")),
            Column("categories", text("categories")),
            Column("configs", text("configs")),
            Column("rows ok", text("rows_ok")),
            Column("failed", text("rows_failed")),
            Column("last run (UTC)", when("last_created_at")),
        ],
        "selections": [
            Column("selection", text("selection_id"), text=True),
            Column("sweep", text(ResultColumn.SWEEP_ID), text=True),
            Column("mode", text("mode"), text=True),
            Column("by", text("objective"), text=True),
            Column("categories", text("categories"), wide=True),
            Column("created (UTC)", when(ResultColumn.CREATED_AT), wide=True),
        ],
        "certifications": [
            Column("certification", text("certification_id"), text=True),
            Column("selection", text("selection_id"), text=True),
            Column("split", text("test_split"), text=True),
            Column("n", text("n_test"), wide=True),
            Column("micro F1 %", lambda r: percent(r["micro_f1"])),
            Column("created (UTC)", when(ResultColumn.CREATED_AT), wide=True),
        ],
        "drift": [
            Column("drift run", text(ResultColumn.RUN_ID), text=True),
            Column("drift id", text(ResultColumn.SWEEP_ID), text=True),
            Column("newest batch", text("newest_batch"), text=True),
            Column("verdicts", text("verdicts"), text=True),
            Column("checked (UTC)", when(ResultColumn.CREATED_AT), wide=True),
        ],
    }[kind]
    return rich_table(kind, columns, frame, wide)


def calibration_table(points: pd.DataFrame, metric: str):
    """Per estimator, how its estimates compare with held-out values (`calibration_summary`)."""
    from xialpha.reports.calibration import calibration_summary  # here: it needs scipy.stats, `store ls` does not

    columns = [
        Column("estimator", lambda r: str(r["estimator"]), text=True),
        Column("points", lambda r: str(r["points"])),
        Column("mean diff.", lambda r: f"{100 * r['mean_difference']:+.2f}"),
        Column("mean |diff.|", lambda r: f"{100 * r['mean_abs_difference']:.2f}"),
        Column("% above", lambda r: percent(r["above"])),
    ]
    return rich_table(
        f"{metric} estimate minus held-out value, in points of % (per config)", columns, calibration_summary(points)
    )


def key_table(key: pd.DataFrame):
    """What each label of a table stands for: every parameter of its preprocessing or kernel."""
    columns = [
        Column("label", lambda r: str(r["label"]), text=True),
        Column("parameters", lambda r: str(r["parameters"]), text=True),
    ]
    return rich_table("what the labels stand for", columns, key)


def print_table(table, wide: bool = False) -> None:
    """Print to standard output at the terminal's width ($COLUMNS, else 80 when it is not a
    terminal); a --wide table written to a file or pipe gets WIDE_WIDTH characters. A --wide
    table wider than that is printed long instead (`long_tables`: a block per row), so no cell is
    folded into fragments."""
    from rich.console import Console
    from rich.measure import Measurement

    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    console = Console(width=WIDE_WIDTH if wide and piped else None)
    if wide and Measurement.get(console, console.options.update_width(UNBOUNDED), table).maximum > console.width:
        console.print(*[part for part in (table.title, *long_tables(table), table.caption) if part])
        return
    console.print(table)


def long_tables(table) -> list:
    """A rich Table as one two-column table per row (header, value), titled by its first column's
    header and cell ("category cat00")."""
    from rich import box
    from rich.table import Table

    headers = [" ".join(str(column.header).split()) for column in table.columns]
    columns = [list(column.cells) for column in table.columns]
    blocks = []
    for i in range(table.row_count):
        block = Table(title=f"{headers[0]} {columns[0][i]}", box=box.SIMPLE, show_header=False, title_justify="left")
        block.add_column(justify="left")
        block.add_column(justify="left", overflow="fold")
        for header, cells in zip(headers[1:], columns[1:]):
            block.add_row(header, str(cells[i]))
        blocks.append(block)
    return blocks


def write_records(frame: pd.DataFrame, fmt: str) -> None:
    """`frame` on standard output as CSV (a header line) or JSON (a list of objects; NaN as null,
    times in ISO 8601), every column and every digit."""
    if fmt == "csv":
        frame.to_csv(sys.stdout, index=False)
        return
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    sys.stdout.write(json.dumps(records, ensure_ascii=False, default=_json_value) + "\n")


def _json_value(value):
    """Times as ISO 8601, NumPy scalars as Python values."""
    return value.isoformat() if hasattr(value, "isoformat") else value.item() if hasattr(value, "item") else str(value)
