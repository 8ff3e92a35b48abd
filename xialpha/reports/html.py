"""A self-contained HTML page for a sweep: tables, and the plots of `xialpha.reports.plots`.

Nothing is loaded from elsewhere: no scripts, no fonts, no external URLs; plots are inline SVG
(`xialpha.reports.svg`), each drawing at most MAX_PANELS categories.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd

from xialpha.outputs import write_file
from xialpha.reports.calibration import calibration_summary
from xialpha.reports.columns import ReportColumn
from xialpha.reports.contents import NO_HELD_OUT, Report
from xialpha.reports.formatting import minute, missing, number, objective_text, p_value, percent
from xialpha.reports.frames import tidy_comparison
from xialpha.reports.plots import MAX_PANELS, first_categories
from xialpha.reports.svg import calibration_svg, candidates_svg, curves_svg
from xialpha.reports.verdicts import grid_word, legend, verdicts
from xialpha.storage.schema import SELECTION_ESTIMATES, CertificationColumn, ResultColumn, SelectionColumn, SweepColumn

if TYPE_CHECKING:
    from xialpha.reports.labels import ConfigLabels
    from xialpha.selection.comparison import SelectionComparison
    from xialpha.selection.selected import Selection

S = SelectionColumn
Cert = CertificationColumn

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.text { text-align: left; }
.note { color: #555; font-size: 0.9em; }
.figure svg { margin: 0.2em; vertical-align: top; } .legend { font-size: 0.85em; }
.key { white-space: nowrap; margin-right: 1.2em; } .mark { font-size: 1.2em; }
"""


def render_report(report: Report, refresh: float | None = None) -> str:
    """The whole page of a `xialpha.reports.contents.Report`; refresh: seconds after which a browser
    loads the page again (`xialpha report --watch`), None for a page that stays."""
    return page(f"xialpha sweep {report.sweep_id}", _body(report), refresh)


def page(title: str, body: str, refresh: float | None = None) -> str:
    """A self-contained HTML page of `body` (HTML), titled `title` (text), reloaded by a browser
    every `refresh` seconds when given."""
    meta = "" if refresh is None else f'<meta http-equiv="refresh" content="{max(1, round(refresh))}">\n'
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n{meta}'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def write_page(
    path: str | os.PathLike,
    text: str,
    parameter: str = "html",
    protected: Iterable[tuple[str, str | os.PathLike]] = (),
) -> None:
    """Replace the file at `path` by the page `text` in one rename, so a reader (a browser reloading
    it) never sees half a page; UserError naming `parameter` (html=, --html) when it cannot be written,
    or falls in what the command reads (`protected`: see `xialpha.outputs.write_file`)."""
    write_file(path, lambda stream: stream.write(text), parameter, protected)


def _body(report: Report) -> str:
    labels, what = report.labels, report.what
    parts = [
        f"<h1>xialpha sweep {_e(report.sweep_id)}</h1>",
        _table(None, [[_e(k), _e(v)] for k, v in report.summary.items()], text_columns=2),
        '<h2 id="selection">Selection shown</h2>',
        f'<p class="note">This page shows {_e(report.selection_note)}.</p>',
        _selection_section(report.selection, report.selection_edges, labels),
        *([] if report.comparison is None else [_comparison_section(report.comparison)]),
        '<h2 id="certifications">Certifications</h2>',
        _certifications_section(report),
        f'<h2 id="calibration">Estimates against held-out values ({_e(report.metric)})</h2>',
        _calibration_section(report),
        f'<h2 id="estimators">What each estimator would choose ({_e(report.metric)}, %)</h2>',
        _choices_section(report),
        f"<h2>Estimate vs C ({_e(what)})</h2>",
        '<p class="note">Solid: the estimate; dashed: the held-out value where the sweep computed one; '
        "a star marks the selection's choice (<code>xialpha.plot.curves</code> draws this figure in Python).</p>",
        _curves_section(report, what),
        f"<h2>Best C by the estimate, beside held-out values ({_e(what)}, %)</h2>",
        f'<p class="note">{_e(report.best_note)}</p>',
        _best_section(report.best),
        "<h2>Leave-one-out candidates</h2>",
        '<p class="note">Examples that xi-alpha with rho = 2 flags as possible leave-one-out errors: an exact '
        "leave-one-out needs at most that many retrainings instead of n.</p>",
        _candidates_section(report.candidates),
        "<h2>What the labels stand for</h2>",
        '<p class="note">A configuration is named by the parameters that differ within the sweep; here is every '
        "parameter of each preprocessing and kernel.</p>",
        _table(
            ["label", "parameters"],
            [[_e(r[ReportColumn.LABEL]), _e(r["parameters"])] for _, r in labels.key(report.curves).iterrows()],
            text_columns=2,
        ),
        '<h2 id="provenance">Provenance</h2>',
        _provenance_section(report),
    ]
    return "\n".join(parts)


def _e(value: object) -> str:
    return html.escape(str(value))


def _table(header: list[str] | None, rows: list[list[str]], text_columns: int = 1) -> str:
    """An HTML table of already escaped cells; the first `text_columns` columns align left."""
    head = "" if header is None else "<thead><tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr></thead>"
    lines = []
    for row in rows:
        cells = "".join(
            f'<td class="text">{c}</td>' if i < text_columns else f"<td>{c}</td>" for i, c in enumerate(row)
        )
        lines.append(f"<tr>{cells}</tr>")
    return f"<table>{head}<tbody>{''.join(lines)}</tbody></table>"


def _selection_section(selection: Selection | None, edges: pd.DataFrame | None, labels: ConfigLabels) -> str:
    """The selection shown: its objective, then a row per category of `edges` (its rows with where
    each choice lies on its C grid, `xialpha.selection.edges.with_grid_edges`)."""
    if selection is None or edges is None or edges.empty:
        return ""
    first = selection.rows.iloc[0]
    intro = (
        f'<p class="note">Selection {_e(first[S.SELECTION_ID])}: {_e(first[S.MODE])} choice by '
        f"{_e(objective_text(first[S.METRIC], first[S.ESTIMATOR], first[S.RHO]))}.</p>"
    )
    rows = [
        [
            _e(r[ResultColumn.CATEGORY]),
            _e(labels.of_row(r)),
            number(r[S.VALUE]),
            percent(r[S.ESTIMATE_F1]),
            percent(r[S.ESTIMATE_ERROR]),
            number(r[S.RUNNER_UP_VALUE]),
            _e(p_value(r[S.P_MICRO_SIGN])),
            word,
            _e(grid_word(r)),
        ]
        for (_, r), word in zip(edges.iterrows(), verdicts(edges))
    ]
    header = [
        "category",
        "config",
        "value",
        "F1 %",
        "error %",
        "runner-up value",
        "p (sign test)",
        "significant",
        "on the C grid",
    ]
    notes = "".join(f'<p class="note">{_e(line)}</p>' for line in legend(edges))
    return intro + _table(header, rows, text_columns=2) + notes


def _comparison_section(comparison: SelectionComparison) -> str:
    """The selection shown (A) against another (B), per category (most changed first), then micro
    and macro: what changed, each one's configuration, estimate, held-out F1 and error, the test
    and its two-sided p (`xialpha.selection.comparison`), when the report was asked for it."""
    a, b = comparison.a, comparison.b
    intro = (
        f'<p class="note">A: the selection shown ({_e(a.selection_id)}, sweep {_e(a.sweep_id)}); B: '
        f"{_e(b.selection_id)} (sweep {_e(b.sweep_id)}), as <code>{_e(comparison.command)}</code> shows them.</p>"
    )
    shown = [*comparison.most_changed_first(), *comparison.summaries()]
    rows = [
        [
            _e(r[ResultColumn.CATEGORY]),
            _e(row.changed_text),
            _e(r[ReportColumn.CONFIG_A]),
            _e(r[ReportColumn.CONFIG_B]),
            number(r["estimate_a"]),
            number(r["estimate_b"]),
            percent(r["held_out_f1_a"]),
            percent(r["held_out_f1_b"]),
            percent(r["held_out_error_a"]),
            percent(r["held_out_error_b"]),
            _e(r["test"]),
            _e(p_value(r["p_value"])),
        ]
        for row, (_, r) in zip(shown, tidy_comparison(comparison, shown).iterrows())
    ]
    header = [
        "category",
        "changed",
        "config A",
        "config B",
        "estimate A",
        "estimate B",
        "held-out F1 % A",
        "held-out F1 % B",
        "held-out error % A",
        "held-out error % B",
        "test",
        "p (two-sided)",
    ]
    notes = "".join(f'<p class="note">{_e(line)}</p>' for line in comparison.summary_lines())
    return (
        '<h2 id="comparison">Compared with another selection</h2>'
        + intro
        + _table(header, rows, text_columns=4)
        + notes
    )


def _certifications_section(report: Report) -> str:
    """Each certification of the selection shown: test-set metrics with their one-sided bounds."""
    selection = report.selection
    if selection is None:
        return '<p class="note">No selection, so no certification.</p>'
    selection_id = selection.selection_id
    if report.certifications.empty:
        return (
            f'<p class="note">Selection {_e(selection_id)} was not certified yet: <code>xialpha certify '
            f"--selection {_e(selection_id)} --test-split NAME</code> tests it once on a sealed test split.</p>"
        )
    configs = dict(zip(selection.categories, report.labels.column(selection.rows)))
    estimates = {
        metric: dict(zip(selection.categories, selection.rows[SELECTION_ESTIMATES[metric]]))
        for metric in ("f1", "error")
    }  # the selection's estimate beside each test figure
    parts = []
    for certification_id, rows in report.certifications.groupby(CertificationColumn.CERTIFICATION_ID, sort=False):
        first = rows.iloc[0]
        forced = (
            " <strong>Forced on a test set used before: the bounds are biased (sequential testing).</strong>"
            if bool(first.get(Cert.FORCED))
            else ""
        )
        if not missing(first.get(Cert.INDEPENDENT)) and not bool(first[Cert.INDEPENDENT]):
            forced += (
                " <strong>Not an independent test: the sweep's held-out estimates were scored on this split, so the"
                " bounds hold only if no choice was based on them.</strong>"
            )
        parts.append(
            f'<p class="note">Certification {_e(certification_id)} on split {_e(first[Cert.TEST_SPLIT])} '
            f"({int(first[Cert.N_TEST])} documents), {_e(minute(first[Cert.CREATED_AT]))}: one-sided "
            f'{float(first[Cert.CONFIDENCE]):.0%} bounds; "estimated" is what '
            f"{_e(selection.objective.estimator)} estimated from training.{forced}</p>"
        )
        table = [
            [
                _e(r[Cert.CATEGORY]),
                _e(configs.get(r[Cert.CATEGORY], "")),
                percent(estimates["f1"].get(r[Cert.CATEGORY])),
                percent(r[Cert.F1]),
                percent(r[Cert.F1_LOWER]),
                percent(estimates["error"].get(r[Cert.CATEGORY])),
                percent(r[Cert.ERROR]),
                percent(r[Cert.ERROR_UPPER]),
                percent(r[Cert.RECALL]),
                percent(r[Cert.PRECISION]),
            ]
            for _, r in rows.iterrows()
        ]
        header = [
            "category",
            "config",
            "F1 % estimated",
            "F1 % test",
            "F1 &ge; lower",
            "error % estimated",
            "error % test",
            "error &le; upper",
            "recall %",
            "precision %",
        ]
        parts.append(_table(header, table, text_columns=2))
    return "".join(parts)


def _calibration_section(report: Report) -> str:
    """The calibration plot (one panel per estimator) and its summary table."""
    points = report.calibration
    if points.empty:
        return (
            '<p class="note">The sweep scored no held-out split (<code>[estimators] holdout = true</code> with '
            "<code>corpus.validation_fraction</code> scores one carved from training).</p>"
        )
    summary = calibration_summary(points)
    note = (
        f'<p class="note">One point per category and configuration: x the estimate from the training set, y '
        f"the {_e(report.metric)} on the held-out split. Points on the diagonal are honest; "
        f"{'below' if report.metric != 'error' else 'above'} it the estimate was optimistic. Ringed: the "
        "selection's choices.</p>"
    )
    rows = [
        [
            _e(r[ReportColumn.ESTIMATOR]),
            str(int(r["points"])),
            f"{100 * r['mean_difference']:+.2f}",
            f"{100 * r['mean_abs_difference']:.2f}",
            percent(r["above"]),
        ]
        for _, r in summary.iterrows()
    ]
    header = [
        "estimator",
        "points",
        "mean estimate &minus; held-out (points)",
        "mean |difference|",
        "% of points above held-out",
    ]
    categories = points[ResultColumn.CATEGORY].unique()
    figure = calibration_svg(points, report.selection, report.metric, first_categories(categories))
    return note + _first_note(len(categories), "the points") + figure + _table(header, rows)


def _choices_section(report: Report) -> str:
    """Per category, each estimator's chosen configuration and its held-out value, side by side; a
    column only where it holds a value (no held-out columns for a sweep that scored no held-out split)."""
    choices = report.choices
    if choices.empty:
        return '<p class="note">No estimates to compare.</p>'
    estimators = list(dict.fromkeys(choices[ReportColumn.ESTIMATOR]))
    # one row per category: each estimator's choice (its first, "-" when it chose none) side by side
    chosen = choices.drop_duplicates([ResultColumn.CATEGORY, ReportColumn.ESTIMATOR])
    best = choices.groupby(ResultColumn.CATEGORY, sort=True)[ReportColumn.BEST_HELD_OUT].first()
    labels, held_out = (
        chosen.pivot(index=ResultColumn.CATEGORY, columns=ReportColumn.ESTIMATOR, values=column).reindex(
            index=best.index, columns=estimators
        )
        for column in (ReportColumn.LABEL, ReportColumn.HELD_OUT)
    )
    configured = [name for name in estimators if labels[name].notna().any()]
    scored = [name for name in estimators if held_out[name].notna().any()]
    with_best = bool(best.notna().any())
    header = [
        "category",
        *[f"{_e(name)}: config" for name in configured],
        *[f"{_e(name)}: held-out" for name in scored],
        *(["best held-out"] if with_best else []),
    ]
    rows = [
        [
            _e(category),
            *[_e("-" if missing(labels.at[category, name]) else labels.at[category, name]) for name in configured],
            *[percent(held_out.at[category, name]) for name in scored],
            *([percent(best[category])] if with_best else []),
        ]
        for category in best.index
    ]
    if scored:
        means = choices.groupby(ReportColumn.ESTIMATOR, sort=False)[
            [ReportColumn.HELD_OUT, ReportColumn.BEST_HELD_OUT]
        ].mean()
        rows.append(
            [
                "<strong>mean</strong>",
                *[""] * len(configured),
                *[percent(means[ReportColumn.HELD_OUT].get(n)) for n in scored],
                *([percent(means[ReportColumn.BEST_HELD_OUT].iloc[0])] if with_best else []),
            ]
        )
        note = (
            '<p class="note">The configuration each estimator\'s best estimate picks (ties as in '
            "<code>xialpha select</code>), and its value on the held-out split; the last column is the best "
            "held-out value any configuration reached. The closer an estimator&rsquo;s column is to it, the "
            "better it selects.</p>"
        )
    else:
        note = (
            '<p class="note">The configuration each estimator\'s best estimate picks (ties as in '
            f"<code>xialpha select</code>). No held-out values beside them: the sweep {_e(NO_HELD_OUT)}.</p>"
        )
    return note + _table(header, rows, text_columns=1 + len(configured))


def _provenance_section(report: Report) -> str:
    """Facts, the sweep's runs and their spec texts."""
    parts = [_table(None, [[_e(k), _e(v)] for k, v in report.provenance.items()], text_columns=2)]
    runs = report.runs
    if not runs.empty:
        rows = [
            [
                _e(r[SweepColumn.RUN_ID]),
                _e(minute(r[SweepColumn.CREATED_AT])),
                _e(r[SweepColumn.XIALPHA_VERSION] or "-"),
                _e(r[SweepColumn.COMMAND] or "-"),
                _e(str(r[SweepColumn.DATA_FINGERPRINT] or "-")[:16]),
            ]
            for _, r in runs.iterrows()
        ]
        parts.append(_table(["sweep run", "started", "xialpha", "command", "data fingerprint"], rows, text_columns=5))
        newest = runs.iloc[-1]
        parts.append(
            f"<details><summary>spec of run {_e(newest[SweepColumn.RUN_ID])}</summary>"
            f"<pre>{_e(newest[SweepColumn.SPEC_TOML] or '')}</pre></details>"
        )
    return "".join(parts)


def _best_section(best: pd.DataFrame) -> str:
    rows = [
        [
            _e(r[ResultColumn.CATEGORY]),
            _e(r[ReportColumn.LABEL]),
            number(r[ReportColumn.BEST_C]),
            percent(r[ReportColumn.ESTIMATE]),
            percent(r[ReportColumn.HELD_OUT]),
            percent(r[ReportColumn.BEST_HELD_OUT]),
            _e(grid_word(r)),
        ]
        for r in best.to_dict("records")  # rows as dicts: a Series per row costs seconds at 10^4 groups
    ]
    header = ["category", "config", "best C", "estimate", "held-out at that C", "best held-out", "on the C grid"]
    return _table(header, rows, text_columns=2)


def _candidates_section(candidates: pd.DataFrame) -> str:
    if candidates[ReportColumn.CONFIGS].sum() == 0:
        return '<p class="note">The sweep has no rho = 2 rows (add 2.0 to estimators.rho).</p>'
    rows = [
        [
            _e(r[ResultColumn.CATEGORY]),
            str(int(r[ResultColumn.N])),
            str(int(r[ReportColumn.CONFIGS])),
            number(r[ReportColumn.CANDIDATES_MEAN]),
            number(r[ReportColumn.CANDIDATES_MAX]),
            percent(r[ReportColumn.CANDIDATES_MEAN] / r[ResultColumn.N]),
            number(r[ReportColumn.LOO_RETRAINS_MEAN]),
        ]
        for r in candidates.to_dict("records")
    ]
    header = [
        "category",
        "n",
        "configs",
        "candidates (mean)",
        "candidates (max)",
        "% of n",
        "exact LOO retrains (mean)",
    ]
    shown = candidates[candidates[ResultColumn.CATEGORY].isin(first_categories(candidates[ResultColumn.CATEGORY]))]
    return _table(header, rows) + _first_note(len(candidates), "the bars") + candidates_svg(shown)


def _curves_section(report: Report, what: str) -> str:
    """The estimate-vs-C panels of the first MAX_PANELS categories (by name), and a note if there are more."""
    categories = report.curves[ResultColumn.CATEGORY].unique()
    shown = first_categories(categories)
    return _first_note(
        len(categories), "the panels", "; <code>xialpha.plot.curves(store, categories=[...])</code> draws any others"
    ) + curves_svg(report.curves, report.selection, what, shown)


def _first_note(n_categories: int, what: str, more: str = "") -> str:
    """A note that `what` show only the first MAX_PANELS of `n_categories` categories (nothing if all)."""
    if n_categories <= MAX_PANELS:
        return ""
    return (
        f'<p class="note">{what.capitalize()} show the first {MAX_PANELS} of {n_categories:,} categories by '
        f"name; the tables have all of them{more}.</p>"
    )
