"""The select table and the report speak plainly: a "significant" column without double
negatives, a one-line legend for the p-values (and what to do when no choice is significant),
ties marked as ties, span without rho, --wide readable at 80 columns, costs with their unit and
direction, and the HTML report's certification beside each category's estimate."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest
from swept import SELECTION_SPEC, fill_store

from xialpha.cli import main
from xialpha.reports.formatting import percent
from xialpha.reports.verdicts import legend, verdicts
from xialpha.spec.sweep import load_spec
from xialpha.storage.opening import open_store

P_LEGEND = "p: chance of a gap this large between equal configs; significant: a p < 0.05"


@pytest.fixture(scope="module")
def store(tmp_path_factory, selection_store) -> str:
    return str(selection_store(tmp_path_factory.mktemp("plain")))


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _rows(**columns) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {"metric": ["f1"] * n, "alpha": [0.05] * n, "cost_fn": [None] * n, "cost_fp": [None] * n}
    return pd.DataFrame({**base, **columns})


def test_the_select_table_says_significant_with_a_legend_and_no_rho_for_span(store, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel", "--save")
    assert code == 0
    lines = out.splitlines()
    title = next(line for line in lines if line.strip().startswith("selection sel-"))
    assert "f1 of span, averaged over C neighbours" in title and "rho" not in title  # span has no rho
    assert "significant" in out and "n.s." not in out and "not significant" not in out
    assert P_LEGEND in lines
    rows = open_store(store, create=True, writable=True).selections(sweep_id="sel")
    words = verdicts(rows)
    if "yes" not in words:
        assert "no choice is significant: its runners-up do as well; keep it or add documents" in lines
    for category, word in zip(rows["category"], words):
        assert re.search(rf"^\s*{category}\b.*\s{word}\s*$", out, re.MULTILINE), (category, word, out)
    assert max(len(line) for line in lines if not line.startswith("stored ")) <= 80
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel", "--estimator", "xa", "--rho", "2")
    assert code == 0 and "f1 of xa (rho=2)" in out  # xi-alpha depends on rho: it is said


def test_ties_are_marked_and_no_significance_says_what_to_do():
    # ranked equal; the same estimate, ranked apart by the C neighbours' average (the issue's
    # "0.8171 0.8171 1.0000"); significant; neither; no runner-up
    rows = _rows(
        significant=[False, False, True, False, None],
        value=[0.8, 0.8171, 0.9, 0.7, 0.5],
        runner_up_value=[0.81, 0.8171, 0.8, 0.6, None],
        selection_value=[0.8171, 0.82, 0.9, 0.7, 0.5],
        runner_up_selection_value=[0.8171, 0.81, 0.8, 0.6, None],
    )
    assert verdicts(rows) == ["tie", "tie", "yes", "no", "-"]
    assert legend(rows) == [
        P_LEGEND,
        "tie: same estimate as the runner-up; C neighbours or simplicity decided",
        "  either serves: keep it, or add documents to tell them apart",  # what to do (issue 49.6)
    ]
    none = _rows(
        significant=[False, False],
        value=[0.9, 0.7],
        runner_up_value=[0.8, 0.6],
        selection_value=[0.9, 0.7],
        runner_up_selection_value=[0.8, 0.6],
    )
    assert legend(none)[-1] == "no choice is significant: its runners-up do as well; keep it or add documents"
    costly = none.assign(metric="cost", cost_fn=10.0, cost_fp=0.5)
    assert legend(costly)[-1] == "cost = (10 x misses + 0.5 x false alarms) per document; lower is better"
    assert max(len(line) for line in legend(rows) + legend(none) + legend(costly)) <= 80


def test_a_choice_whose_own_value_is_below_its_runner_ups_is_explained():
    """The issue-34 walkthrough: "finance C=10 0.896, runner-up 0.9256" with nothing saying why
    the lower value was chosen (its average with its C neighbours' ranked first)."""
    rows = _rows(
        category=["finance", "health", "sports"],
        significant=[False, False, False],
        smooth_c=[True, True, True],
        value=[0.896, 0.8966, 0.8171],
        runner_up_value=[0.9256, 0.871, 0.8171],
        selection_value=[0.9108, 0.8895, 0.82],
        runner_up_selection_value=[0.9087, 0.8757, 0.81],
    )
    below = "finance: behind the runner-up's value; won on its C neighbours' average"
    assert below in legend(rows) and not any(line.startswith("health") for line in legend(rows))
    assert below not in legend(rows.assign(smooth_c=False))  # ranked by the values themselves: never below
    errors = rows.assign(metric="error", value=[0.07, 0.07, 0.2], runner_up_value=[0.08, 0.06, 0.2])
    assert legend(errors)[-1].startswith("health: behind")  # lower is better for error


def test_wide_is_readable_at_80_columns(store, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel", "--save", "--wide")
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines if not line.startswith("stored ")) <= 80
    # every header whole on one line (before: folded into 3-character fragments)
    for header in ("runner-up config", "p McNemar", "p macro rank t-test", "error %", "significant"):
        assert sum(line.strip().startswith(header + " ") for line in lines) == 3, header  # once per category
    for category in open_store(store, create=True, writable=True).selections(sweep_id="sel")["category"].unique():
        assert f"category {category}" in [line.strip() for line in lines]


def test_costs_say_their_unit_and_direction(store, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel", "--cost-fn", "5")
    assert code == 0
    assert "cost of span" in out
    assert "cost = (5 x misses + 1 x false alarms) per document; lower is better" in out.splitlines()


def test_the_html_report_puts_each_estimate_beside_its_certified_figure(store, tmp_path, capsys):
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel", "--save")
    selection_id = re.search(r"^(?:stored selection|selection) (sel-\S+)(?: in | is stored)", out, re.MULTILINE).group(
        1
    )
    code, _, err = _cli(
        capsys, "certify", store, "--selection", selection_id, "--test-split", "test", "--draws", "2000", "--force"
    )
    assert code == 0, err
    assert _cli(capsys, "report", store, "--selection", selection_id, "--html", tmp_path / "r.html")[0] == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = page[page.index('id="certifications"') : page.index("<h2", page.index('id="certifications"'))]
    assert "<th>F1 % estimated</th><th>F1 % test</th>" in section
    selection = open_store(store, create=True, writable=True).selections(selection_id=selection_id)
    certified = open_store(store, create=True, writable=True).certifications(selection_id=selection_id)
    for _, row in selection.iterrows():
        test_f1 = certified.loc[certified["category"] == row["category"], "f1"].iloc[-1]
        assert f"<td>{percent(row['estimate_f1'])}</td><td>{percent(test_f1)}</td>" in section, row["category"]
    assert "not significant" not in page and html.escape(P_LEGEND) in page


@pytest.fixture(scope="module")
def edge_store(tmp_path_factory) -> str:
    """SELECTION_SPEC's sweep at C 0.03, 0.1, 0.3: its choices sit at the largest C with bounded
    support vectors (at C up to 10 they were hard margins, which no larger C changes)."""
    root = tmp_path_factory.mktemp("edge")
    text = SELECTION_SPEC.replace("C = [0.1, 1.0, 10.0]", "C = [0.03, 0.1, 0.3]")
    (root / "sel.toml").write_text(text, encoding="utf-8")
    uri = str(root / "store")
    fill_store(load_spec(root / "sel.toml"), open_store(uri, create=True, writable=True))
    return uri


def test_choices_at_the_grid_edge_are_said_in_the_csv_and_under_the_table(edge_store, capsys, monkeypatch):
    """Issue 36: choices at the grid's largest C (as on the demo), and nothing said so."""
    store = edge_store
    import io

    from xialpha.reports.verdicts import edge_lines

    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel", "--format", "csv")
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and list(frame.columns[6:8]) == ["at_edge", "flat"]
    assert set(frame["at_edge"].dropna()) <= {"low", "high"} and frame["at_edge"].notna().any()
    frame["at_edge"] = frame["at_edge"].astype(object).where(frame["at_edge"].notna(), None)
    said = edge_lines(frame)
    code, out, _ = _cli(capsys, "select", store, "--sweep", "sel")
    lines = out.splitlines()
    assert code == 0 and said and all(line in lines for line in said)
    assert lines.index(said[0]) < lines.index(next(line for line in lines if "what the labels stand for" in line))
