"""`xialpha report --html`: a self-contained page, checked as text and in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from extras import needs
from store_rows import CATEGORIES, certify_by_hand, result_rows, saved_selections

from xialpha.cli import main
from xialpha.storage.opening import open_store

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="module")
def report_store(tmp_path_factory) -> Path:
    """A store with hand-built results, two saved selections (per category, then --global) and a
    certification of the per-category one."""
    root = tmp_path_factory.mktemp("report")
    store = open_store(str(root / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    store.datasets.append(
        "sweeps",
        [
            {
                "sweep_id": "r1",
                "run_id": "run1",
                "spec_toml": "[sweep]\nid = 'r1'\n",
                "data_fingerprint": "fp",
                "xialpha_version": "0.1.0",
                "command": "xialpha sweep r1.toml",
            }
        ],
    )
    assert main(["select", store.uri, "--estimator", "xa", "--save"]) == 0
    certify_by_hand(store, saved_selections(store))
    assert main(["select", store.uri, "--estimator", "xa", "--global", "--save"]) == 0
    return root / "store"


@pytest.fixture(scope="module")
def report_html(report_store) -> Path:
    path = report_store.parent / "report.html"
    assert main(["report", str(report_store), "--sweep", "r1", "--html", str(path)]) == 0
    return path


def test_page_is_self_contained_and_shows_every_category(report_html):
    page = report_html.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page and "<script" not in page and "<img" not in page
    # estimate vs C (a panel per category: test_the_page_draws_the_panels_python_draws), the LOO bars and
    # the calibration plot, as inline SVG
    assert page.count('<div class="figure">') == 3
    assert "&lt;grain&amp;co&gt;" in page and "<grain&co>" not in page  # escaped
    for heading in (
        "Estimate vs C",
        "beside held-out values",
        "Leave-one-out candidates",
        "Selection shown",
        "Certifications",
        "Estimates against held-out values",
        "What each estimator would choose",
        "Provenance",
    ):
        assert heading in page


def test_the_page_shows_the_newest_per_category_selection_and_its_certification(report_html, report_store):
    page = report_html.read_text(encoding="utf-8")
    selections = saved_selections(open_store(str(report_store), create=True, writable=True))
    per_category = selections.loc[selections["mode"] == "category", "selection_id"].iloc[0]
    shared = selections.loc[selections["mode"] == "global", "selection_id"].iloc[0]
    assert f"selection {per_category} (the newest per-category selection of the sweep" in page
    assert shared not in page  # the newer --global selection is not what the page shows by default
    assert "Certification cert-hand on split test (500 documents)" in page
    assert "xialpha sweep r1.toml" in page and "run1" in page  # provenance: the sweep's command and run


def test_selection_chooses_another_selection_and_an_unknown_one_lists_the_saved(report_store, tmp_path, capsys):
    store = open_store(str(report_store), create=True, writable=True)
    shared = saved_selections(store).query("mode == 'global'")["selection_id"].iloc[0]
    path = tmp_path / "global.html"
    assert main(["report", str(report_store), "--selection", shared, "--html", str(path)]) == 0
    page = path.read_text(encoding="utf-8")
    assert f"selection {shared} (chosen with --selection" in page
    assert "was not certified yet" in page and "cert-hand" not in page
    capsys.readouterr()
    assert main(["report", str(report_store), "--selection", "sel-nope"]) == 2
    err = capsys.readouterr().err
    assert "no selection 'sel-nope'" in err and shared in err and "select --save" in err


def test_calibration_points_and_estimator_choices_are_the_stored_values():
    import pandas as pd

    from xialpha.reports.calibration import calibration_points, calibration_summary, estimator_choices
    from xialpha.reports.labels import sweep_labels

    results = pd.DataFrame(result_rows())
    points = calibration_points(results, "f1", 1.0)
    at_rho1 = results[results["rho"] == 1.0]
    assert list(points["estimator"].unique()) == ["xa"]  # the only estimator the hand-built rows have
    assert points["estimate"].to_numpy() == pytest.approx(at_rho1["xa_f1"].to_numpy())
    assert points["held_out"].to_numpy() == pytest.approx(at_rho1["holdout_f1"].to_numpy())
    summary = calibration_summary(points).iloc[0]
    assert summary["mean_difference"] == pytest.approx((at_rho1["xa_f1"] - at_rho1["holdout_f1"]).mean())
    choices = estimator_choices(results, "f1", 1.0, sweep_labels(results)).set_index("category")
    for category, rows in at_rho1.groupby("category"):
        rows = rows.sort_values(
            ["preprocessing_id", "C"]
        ).copy()  # as `xialpha select` ranks: F1 averaged over C neighbours
        rows["smooth"] = rows.groupby("preprocessing_id")["xa_f1"].transform(
            lambda f1: (
                (f1 + f1.shift(1).fillna(0) + f1.shift(-1).fillna(0)) / (1 + f1.shift(1).notna() + f1.shift(-1).notna())
            )
        )
        best = rows.sort_values(["smooth", "C"], ascending=[False, True]).iloc[0]
        assert choices.loc[category, "held_out"] == pytest.approx(best["holdout_f1"])
        assert choices.loc[category, "best_held_out"] == pytest.approx(rows["holdout_f1"].max())


def test_held_out_and_candidate_figures_are_the_stored_ones(report_html):
    import pandas as pd

    from xialpha.reports.contents import best_per_group, estimate_curves, loo_candidates
    from xialpha.selection.objective import Objective

    results = pd.DataFrame(result_rows())
    alone = Objective("f1", estimator="xa", smooth=False)  # the best C by its own estimate
    best = best_per_group(estimate_curves(results, alone), alone)
    first = best.iloc[0]
    rows = results[
        (results["category"] == first["category"])
        & (results["preprocessing_id"] == first["preprocessing_id"])
        & (results["rho"] == 1.0)
    ]
    assert first["estimate"] == pytest.approx(rows["xa_f1"].max())
    assert first["best_held_out"] == pytest.approx(rows["holdout_f1"].max())
    candidates = loo_candidates(results).set_index("category")
    rho2 = results[results["rho"] == 2.0].groupby("category")["xa_d"]
    assert candidates["candidates_mean"].to_dict() == pytest.approx(rho2.mean().to_dict())
    assert candidates["loo_retrains_mean"].to_dict() == pytest.approx(
        results.groupby("category")["loo_retrains"].mean().to_dict()
    )


def _page_figures(page: str) -> list[str]:
    """The page's figures (their SVG and legend), in the order of the page."""
    return [part.split("</div>")[0] for part in page.split('<div class="figure">')[1:]]


def _titles(figure: str) -> list[str]:
    import html
    import re

    return [html.unescape(title) for title in re.findall(r'font-size="12">(.*?)</text>', figure)]


def test_the_page_draws_the_panels_python_draws(report_store, report_html):
    """The page's SVG figures and `xialpha.plot`'s matplotlib figures show the same panels: a
    panel per category (curves) and per estimator (calibration), the same stars, values in %."""
    import html

    import xialpha

    curves = xialpha.plot.curves(report_store, sweep="r1")
    calibration = xialpha.plot.calibration(report_store, sweep="r1")
    titles = [ax.get_title() for ax in curves.axes if ax.get_visible()]
    assert titles == sorted(CATEGORIES)  # a panel per category, names as typed
    assert [ax.get_title() for ax in calibration.axes] == ["xa"]  # a panel per estimator with estimates
    assert any(line.get_marker() == "*" for ax in curves.axes for line in ax.lines)  # the selection's choices
    # issue 34g: in % like every table: the y axis label says so and the values are 0-100, not 0-1
    shown = [ax for ax in curves.axes if ax.get_visible()]
    assert shown[0].get_ylabel().endswith("(%)")
    drawn = np.concatenate([line.get_ydata() for ax in shown for line in ax.lines])
    assert np.nanmax(drawn) > 1.5 and np.nanmax(drawn) <= 100
    calibration_svg, curves_svg, _ = _page_figures(report_html.read_text(encoding="utf-8"))
    assert _titles(curves_svg) == titles and _titles(calibration_svg) == ["xa"]
    stars = sum(line.get_marker() == "*" for ax in shown for line in ax.lines)
    assert curves_svg.count("<polygon") == stars > 0
    for category in CATEGORIES:  # the legend names what the colours stand for, escaped
        assert html.escape(category) in calibration_svg


def test_plotting_leaves_the_callers_matplotlib_backend_alone(report_store, tmp_path):
    """A notebook's inline backend stays in charge: xialpha neither switches it nor leaves figures open for it."""
    import matplotlib
    import matplotlib.pyplot as plt

    import xialpha

    before = matplotlib.get_backend()
    plt.switch_backend("svg")
    try:
        xialpha.plot.curves(report_store, sweep="r1")
        xialpha.report(report_store, sweep="r1", html=tmp_path / "page.html")
        assert matplotlib.get_backend() == "svg" and plt.get_fignums() == []
    finally:
        plt.switch_backend(before)


def test_calibration_without_a_held_out_split_says_how_to_get_one(tmp_path):
    import xialpha
    from xialpha.errors import UserError

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(
        [{k: v for k, v in row.items() if not k.startswith("holdout")} for row in result_rows()]
    )
    with pytest.raises(UserError, match=r"^sweep=: sweep 'r1' scored no held-out split .*holdout = true"):
        xialpha.plot.calibration(store.uri)


def _chromium() -> str | None:
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


def render(url: str, screenshot: Path, inspect=None) -> tuple[list[str], list[str]]:
    """Load `url` in headless Chromium; (console errors and page errors, URLs requested).
    `inspect(page)`, when given, is called on the loaded page (a playwright Page)."""
    sync_api = needs("playwright.sync_api")  # no browser download needed
    binary = _chromium()
    if binary is None:
        pytest.skip("no chromium binary found (apt-get install -y chromium)")
    errors, requests = [], []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=binary,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(url, wait_until="load")
            page.screenshot(path=str(screenshot), full_page=True)
            if inspect is not None:
                inspect(page)
        finally:
            browser.close()
    return errors, requests


def not_blank(png: Path) -> bool:
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("L"), dtype=float)
    return pixels.std() > 10 and (pixels < 128).mean() > 0.005


def rendered_sections(page) -> dict:
    """What the browser shows of the report's sections: heading texts, and for the selection,
    certification, calibration and estimator sections the text (and images) up to the next heading."""
    return page.evaluate("""() => {
        const out = {headings: [...document.querySelectorAll('h2')].map(h => h.innerText)};
        for (const id of ['selection', 'certifications', 'calibration', 'estimators', 'provenance']) {
            const h = document.getElementById(id);
            let text = '', images = [], node = h ? h.nextElementSibling : null;
            while (node && node.tagName !== 'H2') {
                text += node.innerText + '\\n';
                images.push(...node.querySelectorAll('div.figure > svg'));
                node = node.nextElementSibling;
            }
            const box = h ? h.getBoundingClientRect() : null;
            out[id] = {text, visible: !!box && box.height > 0,
                       images: images.map(i => [i.getBoundingClientRect().width, i.getBoundingClientRect().height,
                                                i.querySelectorAll('circle').length])};
        }
        return out;
    }""")


@pytest.mark.browser
def test_page_renders_in_headless_chromium_without_console_errors(report_html, report_store, tmp_path):
    shot = tmp_path / "report.png"
    seen = {}
    errors, requests = render(report_html.as_uri(), shot, lambda page: seen.update(rendered_sections(page)))
    assert errors == []
    assert requests == [report_html.as_uri()]  # nothing fetched besides the page itself
    assert not_blank(shot)
    selection_id = (
        saved_selections(open_store(str(report_store), create=True, writable=True))
        .query("mode == 'category'")["selection_id"]
        .iloc[0]
    )
    for section in ("selection", "certifications", "calibration", "estimators", "provenance"):
        assert seen[section]["visible"], section
    assert selection_id in seen["selection"]["text"] and "earn" in seen["selection"]["text"]
    assert "cert-hand" in seen["certifications"]["text"] and "(micro)" in seen["certifications"]["text"]
    (plot,) = seen["calibration"]["images"]  # one panel: one estimator
    assert plot[0] > 200 and plot[1] > 200 and plot[2] > 3  # laid out, its points drawn
    assert "xa" in seen["calibration"]["text"] and "best held-out" in seen["estimators"]["text"]


@pytest.mark.browser
def test_the_browser_check_catches_errors_and_blank_pages(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!DOCTYPE html><html><body><script>console.error('boom'); undefinedCall();</script></body></html>"
    )
    shot = tmp_path / "broken.png"
    errors, _ = render(broken.as_uri(), shot)
    assert any("boom" in e for e in errors) and any("undefinedCall" in e for e in errors)
    assert not not_blank(shot)


def test_a_sweep_of_many_categories_gets_a_page_of_bounded_size(tmp_path, monkeypatch):
    """400 categories: the figures draw the first 24 (by name) and say so, the tables keep all.
    Before, the curves had a panel per category and the LOO bars 0.6 inch per category: 2,000
    categories took ~4 minutes and 32 MB."""
    import store_rows

    names = tuple(f"cat{i:03d}" for i in range(400))
    monkeypatch.setattr(store_rows, "CATEGORIES", names)
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    path = tmp_path / "many.html"
    assert main(["report", store.uri, "--estimator", "xa", "--rho", "2", "--html", str(path)]) == 0
    page = path.read_text(encoding="utf-8")
    # the panels, the calibration points and the LOO bars
    assert page.count("show the first 24 of 400 categories by name") == 3
    assert page.count("<svg") < 200  # the panels and legend keys of 24 categories, not of 400
    assert all(f'<td class="text">{name}</td>' in page for name in (names[0], names[199], names[-1]))  # tables: all
    assert len(page) < 2_000_000, len(page)


def test_python_curves_draw_the_categories_asked_for(report_store):
    import xialpha.plot
    from xialpha.errors import UserError

    figure = xialpha.plot.curves(report_store, sweep="r1", estimator="xa", categories=["acq"])
    assert [ax.get_title() for ax in figure.axes if ax.get_visible()] == ["acq"]
    with pytest.raises(UserError, match="categories=: not categories of the sweep: 'nope'"):
        xialpha.plot.curves(report_store, sweep="r1", estimator="xa", categories=["nope"])


def test_a_figure_shows_hostile_and_long_names_as_text_and_its_axes_span_the_values():
    import html

    import pandas as pd

    from xialpha.reports.svg import Axis, curves_svg

    long = "<script>alert('x')</script> " + "a very long category name " * 3
    curves = pd.DataFrame(
        {
            "category": [long] * 3,
            "preprocessing_id": ["pp"] * 3,
            "kernel_id": ["lin"] * 3,
            "j": [1.0] * 3,
            "C": [0.1, 1.0, 10.0],
            "label": ["min_df=1"] * 3,
            "estimate": [0.5, np.nan, 0.75],  # an undefined estimate breaks the line, it is not drawn at 0
            "held_out": [np.nan] * 3,
        }
    )
    figure = curves_svg(curves, None, "f1", [long])
    assert "<script" not in figure and "&lt;script&gt;" in figure
    assert f"<title>{html.escape(long)}</title>" in figure  # the whole name as a tooltip of the cut title
    assert figure.count("<circle") == 2 and "<polyline" not in figure  # two points, no segment across the gap
    axis = Axis.spanning([0.5, 75.0])
    assert axis.low < 0.5 and axis.high > 75.0 and axis.ticks() == [0.0, 20.0, 40.0, 60.0, 80.0]
    assert Axis.spanning([0.01, 30.0], log=True).ticks() == [0.01, 0.1, 1.0, 10.0]
