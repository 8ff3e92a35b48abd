"""`xialpha compare A B` and `xialpha report --compare ID` on a store of real sweeps
(`compared.fill_compared`), and the drift check's pointer to `xialpha compare`."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from types import SimpleNamespace

import pandas as pd
import pytest

from xialpha.cli import main
from xialpha.commands import compare as compare_command
from xialpha.commands.drift import _selection_of_these_categories
from xialpha.concept_drift.outcome import DriftReport
from xialpha.reports.frames import tidy_comparison
from xialpha.selection.comparison import MACRO, MICRO, compare_selections
from xialpha.storage.opening import open_store
from xialpha.storage.rows import DriftRow, drift_row
from xialpha.storage.schema import DriftColumn, DriftVerdict


@pytest.fixture(scope="module")
def compared(tmp_path_factory, compared_store):
    return compared_store(tmp_path_factory.mktemp("compared"))


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def expected(compared, a, b):
    return compare_selections(open_store(compared.uri, create=False, writable=True), a, b)


def test_the_table_shows_the_most_changed_first_within_80_columns(compared, capsys):
    code, out, err = run_cli(capsys, "compare", "narrow", "wide", "--store", compared.uri)
    assert code == 0 and err == ""
    assert max(len(line) for line in out.splitlines()) <= 80
    lines = out.splitlines()
    body = [line.split()[0] for line in lines if line.startswith(("  cat0", "  (m"))]
    comparison = expected(compared, compared.narrow, compared.wide)
    assert body == [row.category for row in comparison.most_changed_first()] + [MICRO, MACRO]
    assert "only in B" in out and "categories shown" not in out
    changed = sum(bool(row.changed) for row in comparison.categories() if row.changed != ("only in B",))
    count = {0: "None of the", 2: "All"}.get(changed, f"{changed} of the")
    assert f"{count} 2 categories in both selections changed configuration; 1 is in one" in out
    assert "p: McNemar: two-sided, on the held-out documents" in out
    assert "--wide shows the estimates" in out


def test_the_table_is_bounded_and_says_how_to_see_every_category(compared, capsys, monkeypatch):
    monkeypatch.setattr(compare_command, "SHOWN", 1)
    code, out, _ = run_cli(capsys, "compare", compared.narrow, compared.wide, "--store", compared.uri)
    first = expected(compared, compared.narrow, compared.wide).most_changed_first()
    shown = [line.split()[0] for line in out.splitlines() if line.startswith("  cat0")]
    assert code == 0 and shown == [first[0].category]
    assert "1 of 3 categories shown (the most changed first); --all shows every one" in " ".join(out.split())
    code, out, _ = run_cli(capsys, "compare", compared.narrow, compared.wide, "--store", compared.uri, "--all")
    assert len([line for line in out.splitlines() if line.startswith("  cat0")]) == 3
    assert "categories shown" not in out


def test_csv_and_json_write_every_row_and_column(compared, capsys):
    frame = tidy_comparison(expected(compared, compared.narrow, compared.wide))
    code, out, err = run_cli(capsys, "compare", "narrow", "wide", "--store", compared.uri, "--format", "csv")
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == list(frame.columns)
    assert [r["category"] for r in rows] == list(frame["category"])
    assert [r["changed"] for r in rows] == list(frame["changed"])
    assert [float(r["p_value"] or "nan") for r in rows] == pytest.approx(list(frame["p_value"]), nan_ok=True)
    assert [r["n_tested"] for r in rows] == ["" if pd.isna(n) else str(n) for n in frame["n_tested"]]  # whole numbers
    code, out, _ = run_cli(capsys, "compare", "narrow", "wide", "--store", compared.uri, "--format", "json")
    records = json.loads(out)
    assert [r["category"] for r in records] == list(frame["category"])
    only = next(r for r in records if r["changed"] == "only in B")
    assert only["p_value"] is None and only["held_out_f1_a"] is None  # NaN as null
    assert {r["selection_id_a"] for r in records} == {compared.narrow}


def test_an_unknown_id_is_one_line_naming_the_argument_and_exit_2(compared, capsys):
    code, out, err = run_cli(capsys, "compare", "nope", "wide", "--store", compared.uri)
    assert code == 2 and out == ""
    assert err.startswith(f"xialpha compare: error: A: no selection or sweep 'nope' in store {compared.uri}")
    assert len(err.strip().splitlines()) == 1 and "narrow" in err
    code, _, err = run_cli(capsys, "compare", "wide", "wid", "--store", compared.uri)
    assert code == 2 and "error: B: no selection or sweep 'wid'" in err and "did you mean wide?" in err


class Tables(HTMLParser):
    """The text of each cell of the table after the heading with id "comparison"."""

    def __init__(self):
        super().__init__()
        self.after, self.inside, self.rows, self.cell = False, False, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self.after = dict(attrs).get("id") == "comparison"
        elif tag == "table" and self.after:
            self.inside = True
        elif tag == "tr" and self.inside:
            self.rows.append([])
        elif tag in ("td", "th") and self.inside:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table" and self.inside:
            self.inside = self.after = False
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def test_the_report_page_has_a_comparison_section_when_asked(compared, capsys, tmp_path):
    page = tmp_path / "report.html"
    code, _, err = run_cli(capsys, "report", compared.uri, "--sweep", "wide", "--compare", "narrow", "--html", page)
    assert code == 0, err
    parser = Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    header, *rows = parser.rows
    assert header[:4] == ["category", "changed", "config A", "config B"] and header[-1] == "p (two-sided)"
    comparison = expected(compared, compared.wide, compared.narrow)  # A: the selection shown
    assert [row[0] for row in rows] == [r.category for r in comparison.most_changed_first()] + [MICRO, MACRO]
    assert [row[1] for row in rows[:-2]] == [r.changed_text for r in comparison.most_changed_first()]
    assert "only in A" in [row[1] for row in rows]
    micro = next(r for r in comparison.rows if r.category == MICRO)
    assert rows[-2][6] == f"{100 * micro.held_out_f1_a:.2f}" and rows[-2][10] == micro.test
    text = page.read_text(encoding="utf-8")
    assert f"xialpha compare {compared.wide} {compared.narrow}" in text
    assert "<1e-4" not in text  # every cell escaped
    code, _, _ = run_cli(capsys, "report", compared.uri, "--sweep", "wide", "--html", tmp_path / "plain.html")
    assert code == 0 and 'id="comparison"' not in (tmp_path / "plain.html").read_text(encoding="utf-8")


def test_the_terminal_report_shows_the_comparison_after_the_selection(compared, capsys):
    code, out, err = run_cli(capsys, "report", compared.uri, "--sweep", "wide", "--compare", "narrow")
    assert code == 0, err
    text = " ".join(out.split())
    assert f"A {compared.wide} (sweep wide) against B {compared.narrow} (sweep narrow)" in text
    assert "only in A" in out and text.index(f"selection {compared.wide}") < text.index("only in A")


def test_report_compare_with_an_unknown_id_names_the_flag(compared, capsys, tmp_path):
    code, out, err = run_cli(
        capsys, "report", compared.uri, "--sweep", "wide", "--compare", "nope", "--html", tmp_path / "r.html"
    )
    assert code == 2 and err.startswith("xialpha report: error: --compare: no selection or sweep 'nope'")
    assert not (tmp_path / "r.html").exists()


def drift_row_of(category: str, verdict: DriftVerdict) -> DriftRow:
    """The chosen window's row of a check of `category` that found `verdict` (its other columns null)."""
    D = DriftColumn
    return drift_row({D.CATEGORY: category, D.PREPROCESSING_ID: "p", D.KERNEL_ID: "k", D.C: 1.0, D.J: 1.0,
                      D.VERDICT: verdict, D.CHOSEN: True})  # fmt: skip


def test_a_drift_points_to_the_compare_command_with_the_ids_to_pass(compared):
    store = open_store(compared.uri, create=False, writable=True)
    report = DriftReport("d", "k", "2000-01-08", 8, 640, 0)
    report.rows = [drift_row_of("cat00", DriftVerdict.DRIFT)]
    newest = _selection_of_these_categories(store, report)
    assert newest == compared.blind  # saved last, and of the checked category
    step = report.next_step(newest)
    assert (
        step is not None
        and (  # issue 49.6: it said "the store's newest" where a --global one was newer
            f"`xialpha compare {compared.blind} NEW` ({compared.blind}: the newest saved per-category selection of "
            "these categories; NEW: the id select --save prints)"
        )
        in step
    )
    assert "`xialpha compare OLD NEW` (OLD: a saved selection of the data before" in (report.next_step(None) or "")
    report.rows = [drift_row_of("cat00", DriftVerdict.NO_DRIFT)]
    assert report.next_step(newest) is None


def test_a_drift_names_no_selection_of_other_categories_or_a_global_one(compared):
    """Issue 43.6: `next:` named the store's newest selection, whatever it had chosen for."""
    report = DriftReport("d", "k", "2000-01-08", 8, 640, 0)
    report.rows = [drift_row_of("grain", DriftVerdict.NO_DRIFT)]
    assert _selection_of_these_categories(open_store(compared.uri, create=False, writable=True), report) is None
    saved = pd.DataFrame(
        {
            "selection_id": ["sel-per-category", "sel-global"],
            "mode": ["category", "global"],
            "category": ["grain", "grain"],
            "created_at": pd.to_datetime(["2026-01-01", "2026-01-02"], utc=True),
        }
    )
    assert _selection_of_these_categories(SimpleNamespace(selections=lambda: saved), report) == "sel-per-category"
