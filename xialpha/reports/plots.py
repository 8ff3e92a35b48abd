"""The report's plots as matplotlib figures: the HTML page embeds each as an inline base64 PNG
`<img>` (`png`), and `xialpha.plot` returns the same figures to Python.

A figure is made by pyplot under the backend in use (the command line's is Agg; a notebook's
draws a figure a cell returns inline) and taken out of pyplot's list of open figures at once
(`new_figure`): nothing shows it unasked, nothing holds on to it. Category names and other labels
are drawn as plain text: `as_typed` turns matplotlib's mathtext and TeX off, so "$", "_", "%", "&"
or "#" in a name is shown as typed. matplotlib is imported on first use, so the terminal report
never loads it.
"""

from __future__ import annotations

import base64
import contextlib
import io
import math

import numpy as np
import pandas as pd

from xialpha.storage.schema import ResultColumn

CURVE_PANEL = (4.2, 3.0)  # inches (width, height) of one category's panel of `curves_figure`


MAX_PANELS = 24  # a page's figures draw at most this many categories (panels, bars); its tables have all


def new_figure(**options):
    """A matplotlib Figure (options: figsize in inches, dpi) made by pyplot and closed there at once."""
    import matplotlib.pyplot as plt

    fig = plt.figure(**options)
    plt.close(fig)
    return fig


@contextlib.contextmanager
def as_typed():
    """Within: text is drawn as typed (no mathtext, no TeX)."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        yield


def calibration_figure(points: pd.DataFrame, selection: pd.DataFrame | None, metric: str):
    """One panel per estimator: estimate (x) against held-out value (y) per point, the selection's
    choices ringed."""
    estimators = list(dict.fromkeys(points["estimator"]))
    categories = sorted(points[ResultColumn.CATEGORY].unique())
    colors = {category: f"C{i % 10}" for i, category in enumerate(categories)}
    chosen = set() if selection is None else set(selection[ResultColumn.CONFIG_KEY])
    chosen_by = None if selection is None else selection["estimator"].iloc[0]
    fig = new_figure(figsize=(3.4 * len(estimators) + 1.6, 3.6), dpi=90)
    axes = fig.subplots(1, len(estimators), sharex=True, sharey=True, squeeze=False)
    low = 100 * min(points["estimate"].min(), points["held_out"].min())
    low = max(0.0, 10 * np.floor(low / 10) - 5)
    for ax, name in zip(axes[0], estimators):
        rows = points[points["estimator"] == name]
        ax.plot([low, 100], [low, 100], color="0.4", linestyle="--", linewidth=1, label="diagonal (honest)")
        for category, group in rows.groupby(ResultColumn.CATEGORY, sort=True):
            ax.scatter(
                100 * group["estimate"],
                100 * group["held_out"],
                s=14,
                color=colors[category],
                alpha=0.8,
                label=str(category),
            )
        if name == chosen_by:
            picked = rows[rows[ResultColumn.CONFIG_KEY].isin(chosen)]
            ax.scatter(
                100 * picked["estimate"],
                100 * picked["held_out"],
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
    handles = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="center right", fontsize=7)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / fig.get_figwidth(), 1))
    return fig


def first_categories(categories, limit: int = MAX_PANELS) -> list[str]:
    """The first `limit` of `categories` by name: the ones a page draws panels or bars for."""
    return sorted(categories)[:limit]


def curves_figure(curves: pd.DataFrame, selection: pd.DataFrame | None, what: str, categories=None):
    """Estimate (solid) and held-out value (dashed) against C: one panel per category of
    `categories` (default: every category of `curves`; rows of 3, or 4 above 12 categories), a
    line per preprocessing, kernel and j in the same colour in every panel, one legend, a star at
    the selection's choice."""
    from matplotlib import ticker
    from matplotlib.lines import Line2D

    chosen = {} if selection is None else {r[ResultColumn.CATEGORY]: r for _, r in selection.iterrows()}
    categories = sorted(curves[ResultColumn.CATEGORY].unique() if categories is None else categories)
    curves = curves[curves[ResultColumn.CATEGORY].isin(categories)]
    columns = max(1, min(3 if len(categories) <= 12 else 4, len(categories)))
    rows = max(1, math.ceil(len(categories) / columns))
    legend_inches = 0.2 + 0.2 * math.ceil((curves["label"].nunique() + 2) / columns)
    fig = new_figure(figsize=(CURVE_PANEL[0] * columns, CURVE_PANEL[1] * rows + legend_inches), dpi=90)
    axes = fig.subplots(rows, columns, squeeze=False)
    colors = {
        label: f"C{i % 10}"
        for i, label in enumerate(
            dict.fromkeys(
                curves.sort_values(
                    [ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J], kind="mergesort"
                )["label"]
            )
        )
    }
    for index, (ax, category) in enumerate(zip(axes.flat, categories)):
        for _, line in curves[curves[ResultColumn.CATEGORY] == category].groupby(
            [ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J], sort=True
        ):
            color = colors[line["label"].iloc[0]]
            ax.plot(line[ResultColumn.C], line["estimate"], marker="o", color=color)
            if line["held_out"].notna().any():
                ax.plot(line[ResultColumn.C], line["held_out"], linestyle="--", marker=".", color=color)
        if category in chosen:
            ax.plot(
                [chosen[category][ResultColumn.C]],
                [chosen[category]["value"]],
                marker="*",
                markersize=14,
                color="black",
                linestyle="none",
            )
        ax.set_xscale("log")
        # plain tick labels: log axes label with mathtext ("$10^{-1}$"), which is off on this page
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("C")
        if index % columns == 0:
            ax.set_ylabel(what)
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


def candidates_figure(candidates: pd.DataFrame):
    """Per category: xi-alpha's (rho = 2) leave-one-out candidates and the exact LOO retrains, in % of n."""
    fig = new_figure(figsize=(max(4.0, 0.6 * len(candidates) + 2), 3.2), dpi=90)
    ax = fig.subplots()
    x = np.arange(len(candidates))
    ax.bar(
        x, 100 * candidates["candidates_mean"] / candidates[ResultColumn.N], color="C0", label="xi-alpha rho=2 (mean)"
    )
    if candidates["loo_retrains_mean"].notna().any():
        ax.plot(
            x,
            100 * candidates["loo_retrains_mean"] / candidates[ResultColumn.N],
            "o",
            color="C3",
            label="exact LOO retrains",
        )
    ax.set_xticks(x, candidates[ResultColumn.CATEGORY], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% of training examples")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def png(fig) -> str:
    """`fig` as an <img> holding its PNG inline."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}">'
