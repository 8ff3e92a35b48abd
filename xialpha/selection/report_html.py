"""A self-contained HTML page for a sweep: tables and matplotlib plots as inline base64 PNGs.

Nothing is loaded from elsewhere: no scripts, no fonts, no external URLs. Category names and
other labels are drawn as plain text: matplotlib's mathtext and TeX are off, so "$", "_", "%",
"&" or "#" in a name is shown as typed.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np
import pandas as pd

from xialpha.selection.display import number, percent

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.text { text-align: left; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; } .plots img { border: 1px solid #ddd; }
.note { color: #555; font-size: 0.9em; }
"""


def render_report(sweep_id: str, summary: dict, curves: pd.DataFrame, best: pd.DataFrame,
                  candidates: pd.DataFrame, selection: pd.DataFrame | None, what: str, labels) -> str:
    """The whole page. summary: label -> value facts about the sweep; what: e.g. "F1 of xa (rho=1)";
    labels: the sweep's ConfigLabels, explained in a table at the end."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        body = _body(sweep_id, summary, curves, best, candidates, selection, what, labels)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>xialpha sweep {_e(sweep_id)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _body(sweep_id: str, summary: dict, curves: pd.DataFrame, best: pd.DataFrame,
          candidates: pd.DataFrame, selection: pd.DataFrame | None, what: str, labels) -> str:
    parts = [
        f"<h1>xialpha sweep {_e(sweep_id)}</h1>",
        _table(None, [[_e(k), _e(v)] for k, v in summary.items()], text_columns=2),
        "<h2>Chosen configurations</h2>",
        _selection_section(selection, labels),
        f"<h2>Estimate vs C ({_e(what)})</h2>",
        '<p class="note">Solid: the estimate; dashed: the held-out value where the sweep computed one; '
        "a star marks the stored selection's choice.</p>",
        '<div class="plots">' + "".join(_img(fig) for fig in _curve_figures(curves, selection, what)) + "</div>",
        f"<h2>Best C by the estimate, beside held-out values ({_e(what)}, %)</h2>",
        _best_section(best),
        "<h2>Leave-one-out candidates</h2>",
        '<p class="note">Examples that xi-alpha with rho = 2 flags as possible leave-one-out errors: an exact '
        "leave-one-out needs at most that many retrainings instead of n.</p>",
        _candidates_section(candidates),
        "<h2>What the labels stand for</h2>",
        '<p class="note">A configuration is named by the parameters that differ within the sweep; here is every '
        "parameter of each preprocessing and kernel.</p>",
        _table(["label", "parameters"], [[_e(r["label"]), _e(r["parameters"])] for _, r in labels.key(curves).iterrows()], text_columns=2),
    ]
    return "\n".join(parts)


def _e(value) -> str:
    return html.escape(str(value))


def _table(header: list[str] | None, rows: list[list[str]], text_columns: int = 1) -> str:
    """An HTML table of already escaped cells; the first `text_columns` columns align left."""
    head = "" if header is None else "<thead><tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr></thead>"
    lines = []
    for row in rows:
        cells = "".join(f'<td class="text">{c}</td>' if i < text_columns else f"<td>{c}</td>" for i, c in enumerate(row))
        lines.append(f"<tr>{cells}</tr>")
    return f"<table>{head}<tbody>{''.join(lines)}</tbody></table>"


def _selection_section(selection: pd.DataFrame | None, labels) -> str:
    if selection is None or selection.empty:
        return '<p class="note">No selection stored for this sweep yet (run <code>xialpha select</code>).</p>'
    first = selection.iloc[0]
    intro = (f'<p class="note">Selection {_e(first["selection_id"])}: {_e(first["mode"])} choice by '
             f'{_e(first["metric"])} of {_e(first["estimator"])} (rho={number(first["rho"])}).</p>')
    rows = [[_e(r["category"]), _e(labels.of_row(r)), number(r["value"]), percent(r["estimate_f1"]),
             percent(r["estimate_error"]), number(r["runner_up_value"]), number(r["p_micro_sign"]),
             "-" if pd.isna(r["not_significant"]) else ("yes" if r["not_significant"] else "no")]
            for _, r in selection.iterrows()]
    header = ["category", "config", "value", "F1 %", "error %", "runner-up value", "p (sign test)", "not significant"]
    return intro + _table(header, rows, text_columns=2)


def _best_section(best: pd.DataFrame) -> str:
    rows = [[_e(r["category"]), _e(r["label"]), number(r["best_C"]), percent(r["estimate"]), percent(r["held_out"]),
             percent(r["best_held_out"])] for _, r in best.iterrows()]
    header = ["category", "config", "best C", "estimate", "held-out at that C", "best held-out"]
    return _table(header, rows, text_columns=2)


def _candidates_section(candidates: pd.DataFrame) -> str:
    if candidates["configs"].sum() == 0:
        return '<p class="note">The sweep has no rho = 2 rows (add 2.0 to estimators.rho).</p>'
    rows = [[_e(r["category"]), str(int(r["n"])), str(int(r["configs"])), number(r["candidates_mean"]),
             number(r["candidates_max"]), percent(r["candidates_mean"] / r["n"]), number(r["loo_retrains_mean"])]
            for _, r in candidates.iterrows()]
    header = ["category", "n", "configs", "candidates (mean)", "candidates (max)", "% of n", "exact LOO retrains (mean)"]
    return _table(header, rows) + _img(_candidates_figure(candidates))


def _curve_figures(curves: pd.DataFrame, selection: pd.DataFrame | None, what: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
        ax.set_xlabel("C")
        ax.set_ylabel(what)
        ax.set_title(str(category))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        yield fig
        plt.close(fig)


def _candidates_figure(candidates: pd.DataFrame):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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


def _img(fig) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}">'
