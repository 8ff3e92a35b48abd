"""Numbers, fractions, p-values and times as report text, for the terminal and the HTML page alike."""

from __future__ import annotations

import datetime
import math
from typing import Any, SupportsFloat

from xialpha.estimators import registry


def missing(value: object) -> bool:
    """None, pandas' NA or NaT, or a float NaN (told without importing pandas)."""
    return (
        value is None
        or type(value).__name__ in ("NAType", "NaTType")
        or (isinstance(value, float) and math.isnan(value))
    )


def percent(value: SupportsFloat | None) -> str:
    """A fraction as a percentage with 2 decimals; "-" when missing."""
    return "-" if value is None or missing(value) else f"{100 * float(value):.2f}"


def number(value: SupportsFloat | None, digits: int = 4) -> str:
    """A number in %g style; "-" when missing."""
    return "-" if value is None or missing(value) else f"{float(value):.{digits}g}"


def minute(value: Any, zone: str = " UTC") -> str:
    """A time to the minute ("2026-11-23 11:15 UTC"); "-" when missing. `value`: a datetime (pandas'
    Timestamp is one), or what pandas reads as a time (Any: whatever `pd.Timestamp` takes)."""
    if missing(value):
        return "-"
    if not isinstance(value, datetime.datetime):
        import pandas as pd  # here: the times `xialpha store ls` shows are datetimes

        if pd.isna(value):
            return "-"
        value = pd.Timestamp(value)
    return value.strftime("%Y-%m-%d %H:%M") + zone


def p_value(value: SupportsFloat | None) -> str:
    """A p-value with 4 decimals ("<1e-4" below that); "-" when missing."""
    return "-" if value is None or missing(value) else ("<1e-4" if float(value) < 1e-4 else f"{float(value):.4f}")


def objective_text(metric: str, estimator: str, rho: SupportsFloat | None) -> str:
    """What was estimated, e.g. "f1 of span"; the xi-alpha rho only for an estimator computed per
    rho ("error of xa (rho=2)"): the others do not depend on it."""
    entry = registry.BY_NAME.get(estimator)
    rho_text = f" (rho={number(rho)})" if (entry is None or entry.per_rho) and not missing(rho) else ""
    return f"{metric} of {estimator}{rho_text}"


def cost_text(cost_fn: SupportsFloat, cost_fp: SupportsFloat) -> str:
    """The cost metric's unit and direction: "cost = (5 x misses + 1 x false alarms) per document;
    lower is better"."""
    return f"cost = ({number(cost_fn)} x misses + {number(cost_fp)} x false alarms) per document; lower is better"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """A count with its noun: "1 file", "2 files", "0 files" (`nouns`: an irregular plural, "categories")."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
