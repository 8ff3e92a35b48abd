"""The report's plots: what each panel shows (the lines, points and colours, shared by both
drawings), and the matplotlib figures `xialpha.plot` returns to Python. The HTML page draws the
same panels as inline SVG (`xialpha.reports.svg`), without matplotlib.

A figure is made by pyplot under the backend in use (a notebook's draws a figure a cell returns
inline) and taken out of pyplot's list of open figures at once (`new_figure`): nothing shows it
unasked, nothing holds on to it. Category names and other labels are drawn as plain text:
`as_typed` turns matplotlib's mathtext and TeX off, so "$", "_", "%", "&" or "#" in a name is
shown as typed. matplotlib is imported on first use: no command imports it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from xialpha.reports.columns import ReportColumn
from xialpha.storage.schema import ResultColumn

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

    from xialpha.selection.selected import Selection

CURVE_PANEL = (4.2, 3.0)  # inches (width, height) of one category's panel of `curves_figure`
MAX_PANELS = 24  # a page's figures draw at most this many categories (panels, bars, points); its tables have all
# matplotlib's default colours ("C0".."C9", tab10): the lines of a configuration, the points of a category
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
LINES = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J)  # one line of a curves panel
ZOOM = 20.0  # points of %: a curves panel's y axis reaches at most this far above and below the choice


def line_colors(curves: pd.DataFrame) -> dict[str, str]:
    """{configuration label: colour} of the curves' lines, the same in every panel (PALETTE in the
    order of preprocessing, kernel and j, cycling)."""
    ordered = curves.sort_values(list(LINES), kind="mergesort")[ReportColumn.LABEL]
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(dict.fromkeys(ordered))}


def panel_lines(curves: pd.DataFrame) -> dict:
    """{category: the rows of each line of its panel}: one frame per preprocessing, kernel and j,
    sorted so, each by C as `curves` is ordered."""
    panels: dict = {}
    for (category, *_), line in curves.groupby([ResultColumn.CATEGORY, *LINES], sort=True):
        panels.setdefault(category, []).append(line)
    return panels


def chosen_points(selection: Selection | None) -> dict[str, tuple[float, float]]:
    """{category: (C, value in %)} of the selection's choices: the star of a curves panel."""
    if selection is None:
        return {}
    return {
        row.category: (float(cast(float, row.config[ResultColumn.C])), 100 * row.value)  # C: a number
        for row in selection.typed_rows()
    }


def chosen_configs(selection: Selection | None) -> tuple[set[str], str | None]:
    """(the config_keys of the selection's choices, the estimator it chose by): the rings of a
    calibration panel, drawn on that estimator's panel; (empty, None) without a selection."""
    if selection is None:
        return set(), None
    return set(selection.config_keys().values()), selection.objective.estimator


def zoomed(values: Iterable[float], chosen: float | None = None) -> tuple[float, float]:
    """The range (%) of a curves panel's y axis: its finite `values` (estimates and held-out values
    in %), within ZOOM points of the `chosen` value where there is one, so that the plateau where
    the choice is made fills the panel (the low values of far-off C leave it at its edge, and a
    0-100 axis would flatten it); (0, 100) without values."""
    finite = [float(v) for v in values if np.isfinite(v)]
    if not finite:
        return 0.0, 100.0
    low, high = min(finite), max(finite)
    if chosen is not None and np.isfinite(chosen):
        low, high = min(max(low, chosen - ZOOM), chosen), max(min(high, chosen + ZOOM), chosen)
    return low, high


def category_colors(categories: Iterable[str]) -> dict:
    """{category: colour} of a calibration panel's points (PALETTE by name, cycling)."""
    return {category: PALETTE[i % len(PALETTE)] for i, category in enumerate(sorted(categories))}


def calibration_low(points: pd.DataFrame) -> float:
    """The low end (%) of a calibration panel's axes: below the lowest estimate or held-out value,
    on a multiple of 10 less 5, at least 0; both axes end at 100."""
    low = 100 * min(points[ReportColumn.ESTIMATE].min(), points[ReportColumn.HELD_OUT].min())
    return max(0.0, 10 * np.floor(low / 10) - 5)


def new_figure(*, figsize: tuple[float, float], dpi: float) -> Figure:
    """A matplotlib Figure (figsize in inches, dpi) made by pyplot and closed there at once."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=figsize, dpi=dpi)
    plt.close(fig)
    return fig


@contextlib.contextmanager
def as_typed() -> Iterator[None]:
    """Within: text is drawn as typed (no mathtext, no TeX)."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        yield


def calibration_figure(points: pd.DataFrame, selection: Selection | None, metric: str) -> Figure:
    """One panel per estimator: estimate (x) against held-out value (y) per point, the selection's
    choices ringed."""
    estimators = list(dict.fromkeys(points[ReportColumn.ESTIMATOR]))
    colors = category_colors(points[ResultColumn.CATEGORY].unique())
    chosen, chosen_by = chosen_configs(selection)
    fig = new_figure(figsize=(3.4 * len(estimators) + 1.6, 3.6), dpi=90)
    axes = fig.subplots(1, len(estimators), sharex=True, sharey=True, squeeze=False)
    low = calibration_low(points)
    for ax, name in zip(axes[0], estimators):
        rows = points[points[ReportColumn.ESTIMATOR] == name]
        ax.plot([low, 100], [low, 100], color="0.4", linestyle="--", linewidth=1, label="diagonal (honest)")
        for category, group in rows.groupby(ResultColumn.CATEGORY, sort=True):
            ax.scatter(
                100 * group[ReportColumn.ESTIMATE],
                100 * group[ReportColumn.HELD_OUT],
                s=14,
                color=colors[category],
                alpha=0.8,
                label=str(category),
            )
        if name == chosen_by:
            picked = rows[rows[ResultColumn.CONFIG_KEY].isin(chosen)]
            ax.scatter(
                100 * picked[ReportColumn.ESTIMATE],
                100 * picked[ReportColumn.HELD_OUT],
                s=90,
                facecolors="none",
                edgecolors="black",
                linewidths=1.4,
                label="selection's choice",
            )
        ax.set_title(name)
        ax.set_xlim(low, 100.5)
        ax.set_ylim(low, 100.5)
        ax.set_aspect("equal")
        ax.set_xlabel(f"estimated {metric} (%)")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel(f"held-out {metric} (%)")
    handles: dict[str, Artist] = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="center right", fontsize=7)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / fig.get_figwidth(), 1))
    return fig


def first_categories(categories: Iterable[str], limit: int = MAX_PANELS) -> list[str]:
    """The first `limit` of `categories` by name: the ones a page draws panels or bars for."""
    return sorted(categories)[:limit]


def curves_figure(
    curves: pd.DataFrame, selection: Selection | None, what: str, categories: Iterable[str] | None = None
) -> Figure:
    """Estimate (solid) and held-out value (dashed) in % (as the tables show them) against C: one
    panel per category of `categories` (default: every category of `curves`; rows of 3, or 4 above
    12 categories), a line per preprocessing, kernel and j in the same colour in every panel, one
    legend, a star and a dotted line at the selection's choice, each panel's y axis `zoomed` to its values."""
    from matplotlib import ticker
    from matplotlib.lines import Line2D

    chosen = chosen_points(selection)
    categories = sorted(curves[ResultColumn.CATEGORY].unique() if categories is None else categories)
    curves = curves[curves[ResultColumn.CATEGORY].isin(categories)]
    columns = max(1, min(3 if len(categories) <= 12 else 4, len(categories)))
    rows = max(1, math.ceil(len(categories) / columns))
    legend_inches = 0.2 + 0.2 * math.ceil((curves[ReportColumn.LABEL].nunique() + 2) / columns)
    fig = new_figure(figsize=(CURVE_PANEL[0] * columns, CURVE_PANEL[1] * rows + legend_inches), dpi=90)
    axes = fig.subplots(rows, columns, squeeze=False)
    colors, lines = line_colors(curves), panel_lines(curves)
    for index, (ax, category) in enumerate(zip(axes.flat, categories)):
        for line in lines.get(category, []):
            color = colors[line[ReportColumn.LABEL].iloc[0]]
            ax.plot(line[ResultColumn.C], 100 * line[ReportColumn.ESTIMATE], marker="o", color=color)
            if line[ReportColumn.HELD_OUT].notna().any():
                ax.plot(
                    line[ResultColumn.C], 100 * line[ReportColumn.HELD_OUT], linestyle="--", marker=".", color=color
                )
        panel = curves[curves[ResultColumn.CATEGORY] == category]
        C, value = chosen.get(category, (None, None))
        if C is not None:
            ax.plot([C], [value], marker="*", markersize=14, color="black", linestyle="none")
            ax.axvline(C, color="0.4", linestyle=":", linewidth=1)
        low, high = zoomed([*(100 * panel[ReportColumn.ESTIMATE]), *(100 * panel[ReportColumn.HELD_OUT])], value)
        pad = max(0.05 * (high - low), 0.5)
        ax.set_ylim(low - pad, high + pad)
        ax.set_xscale("log")
        # plain tick labels: log axes label with mathtext ("$10^{-1}$"), which is off on this page
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("C")
        if index % columns == 0:
            ax.set_ylabel(f"{what} (%)")
        ax.set_title(str(category))
        ax.grid(True, alpha=0.3)
    for ax in axes.flat[len(categories) :]:
        ax.set_visible(False)
    handles = [Line2D([], [], color=color, marker="o", label=label) for label, color in colors.items()]
    handles.append(Line2D([], [], color="0.3", linestyle="--", marker=".", label="held-out value"))
    if chosen:
        handles.append(Line2D([], [], color="black", marker="*", markersize=12, linestyle="none", label="chosen"))
    fig.legend(handles=handles, loc="lower center", ncol=columns, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, legend_inches / fig.get_figheight(), 1, 1))
    return fig
