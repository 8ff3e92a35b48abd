"""Numbers, fractions, p-values and times as report text, for the terminal and the HTML page alike."""

from __future__ import annotations

import math

import pandas as pd


def missing(value) -> bool:
    """None, pandas' NA or a float NaN."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def percent(value) -> str:
    """A fraction as a percentage with 2 decimals; "-" when missing."""
    return "-" if missing(value) else f"{100 * float(value):.2f}"


def number(value, digits: int = 4) -> str:
    """A number in %g style; "-" when missing."""
    return "-" if missing(value) else f"{float(value):.{digits}g}"


def minute(value, zone: str = " UTC") -> str:
    """A time to the minute ("2026-11-23 11:15 UTC"); "-" when missing."""
    return "-" if missing(value) or pd.isna(value) else pd.Timestamp(value).strftime("%Y-%m-%d %H:%M") + zone


def p_value(value) -> str:
    """A p-value with 4 decimals ("<1e-4" below that); "-" when missing."""
    return "-" if missing(value) else ("<1e-4" if float(value) < 1e-4 else f"{float(value):.4f}")
