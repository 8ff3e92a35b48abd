"""Terminal tables (rich) for selections, certifications and sweep reports."""

from __future__ import annotations

import math

import pandas as pd

from xialpha.selection.records import P_VALUES


def percent(value) -> str:
    """A fraction as a percentage with 2 decimals; "-" when missing."""
    return "-" if _missing(value) else f"{100 * float(value):.2f}"


def number(value, digits: int = 4) -> str:
    """A number in %g style; "-" when missing."""
    return "-" if _missing(value) else f"{float(value):.{digits}g}"


def p_value(value) -> str:
    return "-" if _missing(value) else ("<1e-4" if float(value) < 1e-4 else f"{float(value):.4f}")


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def config_label(row) -> str:
    """pp=<id8> <kernel>[ gamma=..] C=.. j=.. for a selection/results row."""
    kernel = str(row["kernel"])
    for name in ("gamma", "degree", "coef0"):
        if name in row and not _missing(row[name]):
            kernel += f" {name}={number(row[name])}"
    return f"pp={str(row['preprocessing_id'])[:8]} {kernel} C={number(row['C'])} j={number(row['j'])}"


def selection_table(rows: pd.DataFrame):
    """One line per category: chosen config, its value, the first runner-up and the p-values."""
    from rich.table import Table

    first = rows.iloc[0]
    what = f"{first['metric']} of {first['estimator']} (rho={number(first['rho'])})"
    if first["mode"] == "global":
        what += f", {first['average']} average {number(first['selection_value'])}"
    table = Table(title=f"selection {first['selection_id']}: {what}")
    for column in ("category", "chosen config", "value", "F1 %", "error %", "runner-up", "value",
                   "p micro sign", "p McNemar", "p prop.", "p macro S", "p macro T", "p macro T'", "n.s."):
        table.add_column(column, justify="left" if column in ("category", "chosen config", "runner-up") else "right")
    for _, row in rows.iterrows():
        runner = "-" if _missing(row["runner_up_config_key"]) else f"C={number(row['runner_up_C'])} pp={str(row['runner_up_preprocessing_id'])[:8]}"
        flag = "-" if _missing(row["not_significant"]) else ("yes" if row["not_significant"] else "no")
        table.add_row(
            str(row["category"]), config_label(row), number(row["value"]), percent(row["estimate_f1"]),
            percent(row["estimate_error"]), runner, number(row["runner_up_value"]),
            *(p_value(row.get(name)) for name in P_VALUES), flag,
        )
    return table


def certification_table(frame: pd.DataFrame, title: str):
    """Test-set metrics with their one-sided bounds, per category then micro and macro."""
    from rich.table import Table

    table = Table(title=title)
    for column in ("category", "TP", "FP", "FN", "error %", "<= upper", "recall %", ">= lower",
                   "precision %", ">= lower", "F1 %", ">= lower"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for _, row in frame.iterrows():
        counts = ["-" if _missing(row[c]) else str(int(row[c])) for c in ("tp", "fp", "fn")]
        table.add_row(
            str(row["category"]), *counts, percent(row["error"]), percent(row["error_upper"]),
            percent(row["recall"]), percent(row["recall_lower"]), percent(row["precision"]),
            percent(row["precision_lower"]), percent(row["f1"]), percent(row["f1_lower"]),
        )
    return table


def print_table(table) -> None:
    """Print to standard output; when it is not a terminal, wide enough not to squeeze columns."""
    import sys

    from rich.console import Console

    Console(width=None if sys.stdout.isatty() else 240).print(table)
