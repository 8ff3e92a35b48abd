"""`xialpha report --html`: a self-contained page, checked as text and in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from xialpha.cli import main
from xialpha.estimators.metrics import Estimate
from xialpha.storage import ResultStore, estimate_values

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CATEGORIES = ("earn", "acq", "<grain&co>")


def result_rows(sweep_id: str = "r1") -> list[dict]:
    """Hand-built results: 3 categories x 2 preprocessings x 4 C x rho 1 and 2, with holdout and LOO."""
    rng = np.random.default_rng(0)
    rows = []
    for category in CATEGORIES:
        for pp in ("pp-aaaa", "pp-bbbb"):
            for C in (0.1, 1.0, 10.0, 100.0):
                d_pos, d_neg = int(rng.integers(5, 40)), int(rng.integers(0, 30))
                for rho in (1.0, 2.0):
                    scale = 1 if rho == 1.0 else 2
                    estimate = Estimate("xa", 1000, 100, min(100, d_pos * scale), d_neg * scale)
                    held = Estimate("holdout", 500, 50, d_pos // 2, d_neg // 2)
                    rows.append({
                        "sweep_id": sweep_id, "run_id": "run1", "status": "ok", "data_fingerprint": "fp",
                        "config_key": f"{category}-{pp}-{C}-{rho}", "category": category, "preprocessing_id": pp,
                        "kernel": "linear", "kernel_id": "lin", "C": C, "j": 1.0, "rho": rho, "n": 1000, "n_pos": 100,
                        "n_sv": int(100 + 10 * C), **estimate_values(estimate), "xa_d": int(estimate.d),
                        **estimate_values(held), "holdout_n": 500, "holdout_n_pos": 50, "loo_retrains": int(estimate.d) - 3,
                    })
    return rows


@pytest.fixture(scope="module")
def report_html(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    store = ResultStore(str(root / "store"))
    store.write_results(result_rows())
    path = root / "report.html"
    assert main(["report", str(root / "store"), "--sweep", "r1", "--html", str(path)]) == 0
    return path


def test_page_is_self_contained_and_shows_every_category(report_html):
    page = report_html.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert page.count('src="data:image/png;base64,') == len(CATEGORIES) + 1  # one plot per category + LOO bars
    assert "&lt;grain&amp;co&gt;" in page and "<grain&co>" not in page  # escaped
    for heading in ("Estimate vs C", "beside held-out values", "Leave-one-out candidates", "Chosen configurations"):
        assert heading in page


def test_held_out_and_candidate_figures_are_the_stored_ones(report_html):
    from xialpha.selection.objective import Objective
    from xialpha.selection.report import best_per_group, estimate_curves, loo_candidates

    import pandas as pd

    results = pd.DataFrame(result_rows())
    best = best_per_group(estimate_curves(results, Objective("f1", estimator="xa")), maximise=True)
    first = best.iloc[0]
    rows = results[(results["category"] == first["category"]) & (results["preprocessing_id"] == first["preprocessing_id"])
                   & (results["rho"] == 1.0)]
    assert first["estimate"] == pytest.approx(rows["xa_f1"].max())
    assert first["best_held_out"] == pytest.approx(rows["holdout_f1"].max())
    candidates = loo_candidates(results).set_index("category")
    rho2 = results[results["rho"] == 2.0].groupby("category")["xa_d"]
    assert candidates["candidates_mean"].to_dict() == pytest.approx(rho2.mean().to_dict())
    assert candidates["loo_retrains_mean"].to_dict() == pytest.approx(results.groupby("category")["loo_retrains"].mean().to_dict())


def _chromium() -> str | None:
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


def render(url: str, screenshot: Path) -> tuple[list[str], list[str]]:
    """Load `url` in headless Chromium; (console errors and page errors, URLs requested)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download needed)")
    binary = _chromium()
    if binary is None:
        pytest.skip("no chromium binary found (apt-get install -y chromium)")
    errors, requests = [], []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(url, wait_until="load")
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return errors, requests


def not_blank(png: Path) -> bool:
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("L"), dtype=float)
    return pixels.std() > 10 and (pixels < 128).mean() > 0.005


@pytest.mark.browser
def test_page_renders_in_headless_chromium_without_console_errors(report_html, tmp_path):
    shot = tmp_path / "report.png"
    errors, requests = render(report_html.as_uri(), shot)
    assert errors == []
    assert requests == [report_html.as_uri()]  # nothing fetched besides the page itself
    assert not_blank(shot)


@pytest.mark.browser
def test_the_browser_check_catches_errors_and_blank_pages(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); undefinedCall();</script></body></html>")
    shot = tmp_path / "broken.png"
    errors, _ = render(broken.as_uri(), shot)
    assert any("boom" in e for e in errors) and any("undefinedCall" in e for e in errors)
    assert not not_blank(shot)
