"""The report page's plots (matplotlib), each as an inline base64 PNG `<img>`.

Category names and other labels are drawn as plain text: `as_typed` turns matplotlib's mathtext
and TeX off, so "$", "_", "%", "&" or "#" in a name is shown as typed. matplotlib is imported on
first use, so the terminal report never loads it.
"""

from __future__ import annotations

import base64
import contextlib
import io

import numpy as np
import pandas as pd


def _pyplot():
    """matplotlib.pyplot on the Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextlib.contextmanager
def as_typed():
    """Within: text is drawn as typed (no mathtext, no TeX)."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        yield


def calibration_figure(points: pd.DataFrame, selection: pd.DataFrame | None, metric: str):
    """One panel per estimator: estimate (x) against held-out value (y) per point, the selection's
    choices ringed."""
    plt = _pyplot()
    estimators = list(dict.fromkeys(points["estimator"]))
    categories = sorted(points["category"].unique())
    colors = {category: f"C{i % 10}" for i, category in enumerate(categories)}
    chosen = set() if selection is None else set(selection["config_key"])
    chosen_by = None if selection is None else selection["estimator"].iloc[0]
    fig, axes = plt.subplots(1, len(estimators), figsize=(3.4 * len(estimators) + 1.6, 3.6), dpi=90,
                             sharex=True, sharey=True, squeeze=False)
    low = 100 * min(points["estimate"].min(), points["held_out"].min())
    low = max(0.0, 10 * np.floor(low / 10) - 5)
    for ax, name in zip(axes[0], estimators):
        rows = points[points["estimator"] == name]
        ax.plot([low, 100], [low, 100], color="0.4", linestyle="--", linewidth=1, label="diagonal (honest)")
        for category, group in rows.groupby("category", sort=True):
            ax.scatter(100 * group["estimate"], 100 * group["held_out"], s=14, color=colors[category], alpha=0.8,
                       label=str(category))
        if name == chosen_by:
            picked = rows[rows["config_key"].isin(chosen)]
            ax.scatter(100 * picked["estimate"], 100 * picked["held_out"], s=90, facecolors="none", edgecolors="black",
                       linewidths=1.4, label="selection's choice")
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


def curve_figures(curves: pd.DataFrame, selection: pd.DataFrame | None, what: str):
    """Per category: the estimate (solid) and held-out value (dashed) against C for each
    preprocessing, kernel and j, a star at the selection's choice."""
    plt = _pyplot()
    from matplotlib import ticker

    chosen = {} if selection is None else {r["category"]: r for _, r in selection.iterrows()}
    for category, rows in curves.groupby("category", sort=True):
        fig, ax = plt.subplots(figsize=(5.2, 3.4), dpi=90)
        for index, (_, line) in enumerate(rows.groupby(["preprocessing_id", "kernel_id", "j"], sort=True)):
            color = f"C{index % 10}"
            ax.plot(line["C"], line["estimate"], marker="o", color=color, label=line["label"].iloc[0])
            if line["held_out"].notna().any():
                ax.plot(line["C"], line["held_out"], linestyle="--", marker=".", color=color)
        if category in chosen:
            pick = chosen[category]
            ax.plot([pick["C"]], [pick["value"]], marker="*", markersize=14, color="black", linestyle="none",
                    label="chosen")
        ax.set_xscale("log")
        # plain tick labels: log axes label with mathtext ("$10^{-1}$"), which is off on this page
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("C")
        ax.set_ylabel(what)
        ax.set_title(str(category))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        yield fig
        plt.close(fig)


def candidates_figure(candidates: pd.DataFrame):
    """Per category: xi-alpha's (rho = 2) leave-one-out candidates and the exact LOO retrains, in % of n."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(candidates) + 2), 3.2), dpi=90)
    x = np.arange(len(candidates))
    ax.bar(x, 100 * candidates["candidates_mean"] / candidates["n"], color="C0", label="xi-alpha rho=2 (mean)")
    if candidates["loo_retrains_mean"].notna().any():
        ax.plot(x, 100 * candidates["loo_retrains_mean"] / candidates["n"], "o", color="C3", label="exact LOO retrains")
    ax.set_xticks(x, candidates["category"], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% of training examples")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def png(fig) -> str:
    """`fig` as an <img> holding its PNG inline; the figure is closed."""
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}">'
