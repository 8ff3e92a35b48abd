"""The HTML report's figures as inline SVG: the panels of `xialpha.reports.plots` (the same lines,
points and colours as `xialpha.plot`'s matplotlib figures), drawn as text the browser lays out.

The page drew matplotlib figures as PNGs before. On a 3,200-config store (200 categories) they took
most of `report --html`'s time: laying out and rasterising the tick labels of 24 log-C panels,
and importing matplotlib (bench/startup.py records the command's seconds). Here a figure is a few
hundred SVG elements written in microseconds each, with no library; each figure draws at most
MAX_PANELS categories, so it costs the same whatever the number of categories (the tables beside
it list all). The page stays self-contained: no script, no font, no external URL; every text is
escaped, a long name is cut with its whole text in the element's tooltip.

Geometry is in CSS pixels: a panel is PANEL wide and high, its plot area inside MARGIN.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xialpha.reports.columns import ReportColumn
from xialpha.reports.plots import (
    PALETTE,
    calibration_low,
    category_colors,
    chosen_configs,
    chosen_points,
    line_colors,
    panel_lines,
    zoomed,
)
from xialpha.storage.schema import ResultColumn

if TYPE_CHECKING:
    from xialpha.selection.selected import Selection

PANEL = (300, 220)  # px: width and height of one panel
MARGIN = (48, 12, 26, 38)  # px: left, right, top and bottom of a panel around its plot area
TITLE_CHARACTERS = 40  # a longer panel title is cut (its tooltip has it all)
DASHED = "5 3"  # the dash pattern of held-out lines and the diagonal


@dataclass(frozen=True)
class Axis:
    """A panel's axis from `low` to `high` (data units), logarithmic when `log`."""

    low: float
    high: float
    log: bool = False

    @classmethod
    def spanning(cls, values: Iterable, log: bool = False) -> Axis:
        """An axis over the finite `values`, a little wider (a linear one from a round value below
        them to one above, then 3% more each side, so that no mark sits on the frame)."""
        finite = [float(v) for v in values if np.isfinite(v) and (v > 0 or not log)]
        low, high = (min(finite), max(finite)) if finite else (1.0, 10.0) if log else (0.0, 100.0)
        if high - low <= 1e-9 * max(abs(high), 1.0) and not log:  # one value: an axis around it
            low, high = low - 1.0, high + 1.0
        if log:
            pad = max(math.log10(high / low) * 0.06, 0.05)
            return cls(low / 10**pad, high * 10**pad, log=True)
        step = _nice_step(high - low)
        low, high = math.floor(low / step) * step, math.ceil(high / step) * step
        pad = 0.03 * (high - low)
        return cls(low - pad, high + pad)

    def fraction(self, value: float) -> float:
        """Where `value` lies along the axis: 0 at low, 1 at high."""
        if self.log:
            return math.log10(value / self.low) / math.log10(self.high / self.low)
        return (value - self.low) / (self.high - self.low)

    def ticks(self) -> list[float]:
        """Tick values: powers of 10 on a log axis (with 2 and 5 between when fewer than three fit),
        multiples of a 1-2-5 step on a linear one."""
        if self.log:
            lowest, highest = math.floor(math.log10(self.low)), math.ceil(math.log10(self.high))
            decades = [10.0**e for e in range(lowest, highest + 1)]
            ticks = [t for t in decades if self.low <= t <= self.high]
            if len(ticks) < 3:
                ticks = [m * t for t in decades for m in (1, 2, 5) if self.low <= m * t <= self.high]
            return ticks
        step = _nice_step(self.high - self.low)
        first = math.ceil(self.low / step - 1e-9)
        return [round(k * step, 12) for k in range(first, int(math.floor(self.high / step + 1e-9)) + 1)]


def _nice_step(span: float) -> float:
    """A 1, 2 or 5 times a power of 10 that cuts `span` into 3 to 7 steps."""
    power = 10.0 ** math.floor(math.log10(span / 5))
    return next(m * power for m in (1, 2, 5, 10) if span / (m * power) <= 7)


class Panel:
    """One panel: an x and a y axis, a frame with ticks, grid and labels, and what is drawn in it."""

    def __init__(self, title: str, x: Axis, y: Axis, xlabel: str, ylabel: str, width: int = PANEL[0]):
        self.title, self.x, self.y, self.xlabel, self.ylabel = title, x, y, xlabel, ylabel
        self.width, self.height = width, PANEL[1]
        self.inner = (width - MARGIN[0] - MARGIN[1], PANEL[1] - MARGIN[2] - MARGIN[3])
        self.marks: list[str] = []

    def at(self, x: float, y: float) -> tuple[float, float]:
        """The pixel position of the data point (x, y)."""
        return (
            MARGIN[0] + self.x.fraction(x) * self.inner[0],
            MARGIN[2] + (1 - self.y.fraction(y)) * self.inner[1],
        )

    def line(
        self,
        xs: Sequence[float] | np.ndarray,
        ys: Sequence[float] | np.ndarray,
        color: str,
        dashed: bool = False,
        dot: float = 2.5,
    ) -> None:
        """A line through the finite points (x, y), broken where y is NaN, a dot of radius `dot` on each."""
        style = f' stroke-dasharray="{DASHED}"' if dashed else ""
        run: list[str] = []
        for x, y in [*zip(xs, ys), (math.nan, math.nan)]:
            if np.isfinite(x) and np.isfinite(y):
                run.append("{:.1f},{:.1f}".format(*self.at(x, y)))
                continue
            if len(run) > 1:
                self.marks.append(
                    f'<polyline points="{" ".join(run)}" fill="none" stroke="{color}" stroke-width="1.6"{style}/>'
                )
            run = []
        self.points(xs, ys, color, dot)

    def points(self, xs: Iterable[float], ys: Iterable[float], color: str, radius: float, ring: bool = False) -> None:
        """A dot (or, `ring`, a black ring) of `radius` at each finite point (x, y)."""
        paint = 'fill="none" stroke="#000" stroke-width="1.4"' if ring else f'fill="{color}" fill-opacity="0.85"'
        for x, y in zip(xs, ys):
            if np.isfinite(x) and np.isfinite(y):
                px, py = self.at(x, y)
                self.marks.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{radius}" {paint}/>')

    def star(self, x: float, y: float, radius: float = 8.0) -> None:
        """A black five-pointed star at (x, y): the selection's choice."""
        px, py = self.at(x, y)
        corners = [
            (px + r * math.sin(k * math.pi / 5), py - r * math.cos(k * math.pi / 5))
            for k, r in zip(range(10), [radius, radius * 0.4] * 5)
        ]
        self.marks.append(f'<polygon points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in corners)}" fill="#000"/>')

    def guide(self, x: float) -> None:
        """A dotted vertical line at x across the panel: where the choice lies."""
        (px, top), (_, bottom) = self.at(x, self.y.high), self.at(x, self.y.low)
        self.marks.append(
            f'<line x1="{px:.1f}" y1="{top:.1f}" x2="{px:.1f}" y2="{bottom:.1f}" stroke="#666" stroke-dasharray="2 3"/>'
        )

    def diagonal(self) -> None:
        """The dashed line y = x across the panel."""
        (x0, y0), (x1, y1) = self.at(self.x.low, self.x.low), self.at(self.x.high, self.x.high)
        self.marks.append(
            f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="#666" stroke-dasharray="{DASHED}"/>'
        )

    def bar(self, x: float, width: float, height: float, color: str) -> None:
        """A bar from y = 0 (or the axis' low end) to `height`, `width` data units wide, centred on x."""
        (left, top), (right, bottom) = self.at(x - width / 2, height), self.at(x + width / 2, max(self.y.low, 0.0))
        size = f'width="{right - left:.1f}" height="{bottom - top:.1f}"'
        self.marks.append(f'<rect x="{left:.1f}" y="{top:.1f}" {size} fill="{color}"/>')

    def svg(self, xticks: Sequence[tuple[float, str]] | None = None, slanted: bool = False) -> str:
        """The panel as an <svg> element. xticks: (value, label) of the x ticks (default: the axis'
        own); slanted: x tick labels at 45 degrees (names)."""
        (left, top), (width, height) = (MARGIN[0], MARGIN[2]), self.inner
        right, bottom, middle = left + width, top + height, left + width / 2
        frame = [f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#999"/>']
        for value in self.y.ticks():
            py = self.at(self.x.low, value)[1]
            frame.append(f'<line x1="{left}" y1="{py:.1f}" x2="{right}" y2="{py:.1f}" stroke="#e5e5e5"/>')
            frame.append(f'<text x="{left - 4}" y="{py + 3.5:.1f}" text-anchor="end">{value:g}</text>')
        for value, label in xticks if xticks is not None else [(t, f"{t:g}") for t in self.x.ticks()]:
            px = self.at(value, self.y.low)[0]
            frame.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{bottom + 3}" stroke="#e5e5e5"/>')
            if slanted:
                frame.append(
                    f'<text transform="translate({px + 3:.1f},{bottom + 8}) rotate(-45)" text-anchor="end">'
                    f"{_cut(label, 14)}</text>"
                )
            else:
                frame.append(f'<text x="{px:.1f}" y="{bottom + 14}" text-anchor="middle">{_e(label)}</text>')
        frame += [
            f'<text x="{middle:.1f}" y="{top - 8}" text-anchor="middle" font-size="12">'
            f"{_cut(self.title, TITLE_CHARACTERS)}</text>",
            f'<text x="{middle:.1f}" y="{self.height - 4}" text-anchor="middle">{_e(self.xlabel)}</text>',
            f'<text transform="translate(12,{top + height / 2:.1f}) rotate(-90)" text-anchor="middle">'
            f"{_e(self.ylabel)}</text>",
        ]
        return (  # the marks in a nested <svg> over the plot area, which clips them to it
            f'<svg width="{self.width}" height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
            f'font-family="sans-serif" font-size="10" fill="#222">{"".join(frame)}'
            f'<svg x="{left}" y="{top}" width="{width}" height="{height}" overflow="hidden">'
            f'<g transform="translate({-left},{-top})">{"".join(self.marks)}</g></svg></svg>'
        )


def figure_html(panels: Sequence[str], legend: Sequence[tuple[str, str]]) -> str:
    """A figure of the page: its panels side by side (wrapping), then the legend ((HTML key, label))."""
    keys = "".join(f'<span class="key">{key} {_e(label)}</span>' for key, label in legend)
    return f'<div class="figure">{"".join(panels)}<p class="legend">{keys}</p></div>'


def curves_svg(curves: pd.DataFrame, selection: Selection | None, what: str, categories: Sequence[str]) -> str:
    """Estimate (solid) and held-out value (dashed) in % against C: a panel per category of
    `categories` on a shared C axis, its y axis `zoomed` to its values around the choice, a line
    per preprocessing, kernel and j in the same colour in every panel, a star and a dotted line at
    the selection's choice (`xialpha.reports.plots.curves_figure`'s panels)."""
    shown = curves[curves[ResultColumn.CATEGORY].isin(categories)]
    colors, chosen, lines = line_colors(curves), chosen_points(selection), panel_lines(shown)
    x = Axis.spanning(shown[ResultColumn.C], log=True)
    panels = []
    for category in categories:
        rows = shown[shown[ResultColumn.CATEGORY] == category]
        choice = chosen.get(category)
        values = [*(100 * rows[ReportColumn.ESTIMATE]), *(100 * rows[ReportColumn.HELD_OUT])]
        y = Axis.spanning(zoomed(values, None if choice is None else choice[1]))
        panel = Panel(str(category), x, y, ResultColumn.C, f"{what} (%)")
        if choice is not None:
            panel.guide(choice[0])
        for line in lines.get(category, []):
            color = colors[line[ReportColumn.LABEL].iloc[0]]
            panel.line(line[ResultColumn.C].to_numpy(), 100 * line[ReportColumn.ESTIMATE].to_numpy(), color)
            if line[ReportColumn.HELD_OUT].notna().any():
                panel.line(
                    line[ResultColumn.C].to_numpy(), 100 * line[ReportColumn.HELD_OUT].to_numpy(), color, True, 1.5
                )
        if category in chosen:
            panel.star(*chosen[category])
        panels.append(panel.svg())
    legend = [(_swatch(color), label) for label, color in colors.items()]
    legend.append((_swatch("#555", dashed=True), "held-out value"))
    if chosen:
        legend.append(('<span class="mark">&#9733;</span>', "chosen"))
    return figure_html(panels, legend)


def calibration_svg(points: pd.DataFrame, selection: Selection | None, metric: str, categories: Sequence[str]) -> str:
    """A panel per estimator: the estimate (x) against the held-out value (y) in %, a point per
    configuration of `categories` coloured by category, the selection's choices ringed, and the
    diagonal where an estimate is honest (`xialpha.reports.plots.calibration_figure`'s panels)."""
    shown = points[points[ResultColumn.CATEGORY].isin(categories)]
    colors = category_colors(categories)
    chosen, chosen_by = chosen_configs(selection)
    axis = Axis(calibration_low(points), 100.5)
    panels = []
    for name in dict.fromkeys(points[ReportColumn.ESTIMATOR]):
        panel = Panel(str(name), axis, axis, f"estimated {metric} (%)", f"held-out {metric} (%)", width=PANEL[1] + 20)
        panel.diagonal()
        rows = shown[shown[ReportColumn.ESTIMATOR] == name]
        for category, group in rows.groupby(ResultColumn.CATEGORY, sort=True):
            panel.points(
                100 * group[ReportColumn.ESTIMATE].to_numpy(),
                100 * group[ReportColumn.HELD_OUT].to_numpy(),
                colors[category],
                2.5,
            )
        if name == chosen_by:
            picked = rows[rows[ResultColumn.CONFIG_KEY].isin(chosen)]
            panel.points(
                100 * picked[ReportColumn.ESTIMATE].to_numpy(),
                100 * picked[ReportColumn.HELD_OUT].to_numpy(),
                "",
                5.5,
                ring=True,
            )
        panels.append(panel.svg())
    legend = [(_swatch("#666", dashed=True), "diagonal (honest)")]
    if chosen_by is not None:
        legend.append(('<span class="mark">&#9711;</span>', "selection's choice"))
    legend += [(_dot(color), str(category)) for category, color in colors.items()]
    return figure_html(panels, legend)


def candidates_svg(candidates: pd.DataFrame) -> str:
    """Per category of `candidates`: xi-alpha's (rho = 2) leave-one-out candidates (bars, mean) and
    the exact LOO retrains (dots, mean), in % of n."""
    share = 100 * candidates[ReportColumn.CANDIDATES_MEAN].to_numpy() / candidates[ResultColumn.N].to_numpy()
    retrains = (
        100 * candidates[ReportColumn.LOO_RETRAINS_MEAN].to_numpy(dtype=float) / candidates[ResultColumn.N].to_numpy()
    )
    n = len(candidates)
    panel = Panel(
        "",
        Axis(-0.6, n - 0.4),
        Axis.spanning([0.0, *share, *retrains[np.isfinite(retrains)]]),
        "",
        "% of training examples",
        width=max(PANEL[0], MARGIN[0] + MARGIN[1] + 24 * n),
    )
    panel.height += 50  # room for the names under the bars
    for x, height in enumerate(share):
        panel.bar(x, 0.7, height, PALETTE[0])
    panel.points(np.arange(n, dtype=float), retrains, PALETTE[3], 3.5)
    names = [(float(x), str(name)) for x, name in enumerate(candidates[ResultColumn.CATEGORY])]
    legend = [(_dot(PALETTE[0], square=True), "xi-alpha rho=2 (mean)")]
    if np.isfinite(retrains).any():
        legend.append((_dot(PALETTE[3]), "exact LOO retrains"))
    return figure_html([panel.svg(names, slanted=True)], legend)


def _swatch(color: str, dashed: bool = False) -> str:
    """A short line of `color` for the legend."""
    dash = f' stroke-dasharray="{DASHED}"' if dashed else ""
    return (
        f'<svg width="22" height="8"><line x1="1" y1="4" x2="21" y2="4" stroke="{color}" stroke-width="2"{dash}/></svg>'
    )


def _dot(color: str, square: bool = False) -> str:
    """A dot (or square) of `color` for the legend."""
    shape = (
        f'<rect width="8" height="8" fill="{color}"/>' if square else f'<circle cx="4" cy="4" r="3.5" fill="{color}"/>'
    )
    return f'<svg width="8" height="8">{shape}</svg>'


def _cut(text: str, characters: int) -> str:
    """`text` escaped, cut to `characters` with an ellipsis and its whole text as a tooltip when longer."""
    if len(text) <= characters:
        return _e(text)
    return f"<title>{_e(text)}</title>{_e(text[: characters - 1])}&#8230;"


def _e(text: str) -> str:
    return html.escape(str(text))
