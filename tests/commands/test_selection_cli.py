"""select / certify / predict / report end to end on a real store of real estimates.

The store is filled in-process by the sweep's own task functions (`xialpha.jobs.tasks`) on a
small synthetic corpus, so these tests need no Dask cluster (the sweep's tests cover that).
"""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from swept import SELECTION_SPEC as SPEC
from swept import fill_store

from xialpha.cli import main
from xialpha.models.artifact import load_artifact
from xialpha.selection.objective import Objective
from xialpha.spec.sweep import load_spec
from xialpha.storage.arrow_schema import DATASETS
from xialpha.storage.opening import open_store

HASH = re.compile(r"\b[0-9a-f]{8,}\b")  # an id or fingerprint (a selection id's time stamp is no match)


@pytest.fixture(scope="module")
def swept(tmp_path_factory, selection_store):
    """(spec path, store uri) of a finished sweep "sel": 3 categories x 2 preprocessings x 2 kernels x 3 C x 2 rho."""
    root = tmp_path_factory.mktemp("swept")
    uri = str(selection_store(root))
    return root / "sel.toml", uri


@pytest.fixture(scope="module")
def swept_without_span(tmp_path_factory):
    """Store uri of a finished sweep "plain" run with `span = false` (as sweeps were before span was on)."""
    root = tmp_path_factory.mktemp("plain")
    spec_path = root / "plain.toml"
    spec_path.write_text(
        SPEC.replace('id = "sel"', 'id = "plain"').replace("top_k = 3", "top_k = 2") + "span = false\n",
        encoding="utf-8",
    )
    uri = str(root / "store")
    fill_store(load_spec(spec_path), open_store(uri, create=True, writable=True))
    return uri


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def selection_of(uri: str, selection_id: str) -> pd.DataFrame:
    table = open_store(uri, create=True, writable=True).datasets.read(
        "selections", filters=[("selection_id", "=", selection_id)]
    )
    return table.to_pandas().sort_values("category").reset_index(drop=True)


def stored_id(out: str, prefix: str) -> str:
    """The id in the command's closing "stored selection <id> ..." / "stored certification <id>"
    line, or "selection <id> is stored already" (the same selection saved before)."""
    found = re.search(rf"^(?:stored \w+ ({prefix}\S+)|selection ({prefix}\S+) is stored already)", out, re.MULTILINE)
    return found.group(1) or found.group(2)


def test_the_same_selection_saved_twice_keeps_one_id_and_another_gets_its_own(swept, capsys):
    _, uri = swept
    saved = [stored_id(run_cli(capsys, "select", uri, "--sweep", "sel", "--save")[1], "sel-") for _ in range(2)]
    other = stored_id(run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--estimator", "xa")[1], "sel-")
    assert saved[0] == saved[1] != other
    ids = (
        open_store(uri, create=True, writable=True)
        .datasets.read("selections", filters=[("sweep_id", "=", "sel")])
        .to_pandas()["selection_id"]
    )
    assert list(ids).count(saved[0]) == 3 and list(ids).count(other) == 3  # one row per category, once


def test_store_keys_selection_and_certification_rows_by_category():
    # One row per category shares a selection_id (and a certification_id): the key must include it.
    assert DATASETS["selections"].key_columns == ("selection_id", "category")
    assert DATASETS["certifications"].key_columns == ("certification_id", "category")


def test_select_per_category_stores_the_best_config_of_each_category(swept, capsys):
    _, uri = swept
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--wide")  # every p-value column
    assert code == 0, out
    rows = selection_of(uri, stored_id(out, "sel-"))
    results = open_store(uri, create=True, writable=True).read_results_df("sel")
    at_rho1 = results[results["rho"] == 1.0]
    assert list(rows["category"]) == sorted(at_rho1["category"].unique())
    best = at_rho1.groupby("category")["span_f1"].max()  # span: the default estimator
    assert np.allclose(rows["value"], best.loc[rows["category"]].to_numpy())
    assert set(rows["config_key"]) <= set(at_rho1["config_key"])
    assert (rows["mode"] == "category").all() and (rows["estimator"] == "span").all()
    assert rows["p_micro_sign"].between(0, 1).all() and rows["p_mcnemar"].between(0, 1).all()
    assert rows["p_proportion"].between(0, 1).all()
    assert rows["p_macro_t"].isna().all() and rows["p_macro_rank_t"].isna().all()
    assert (rows["n_runners_up"] == 3).all()
    assert "selection sel-" in out and "category" in out and "proportions" in out  # "p proportions", wrapped


def test_select_defaults_to_xi_alpha_for_sweeps_without_span(swept_without_span, capsys):
    uri = swept_without_span
    code, out, err = run_cli(capsys, "select", uri, "--sweep", "plain", "--save")
    assert code == 0, out
    assert "has no span estimates; selecting by xa" in err
    rows = selection_of(uri, stored_id(out, "sel-"))
    assert (rows["estimator"] == "xa").all()
    results = open_store(uri, create=True, writable=True).read_results_df("plain")
    best = results[results["rho"] == 1.0].groupby("category")["xa_f1"].max()
    assert np.allclose(rows["value"], best.loc[rows["category"]].to_numpy())
    code, out, _ = run_cli(capsys, "report", uri, "--sweep", "plain")
    assert code == 0 and "best C by f1 of xa" in out
    code, _, err = run_cli(capsys, "select", uri, "--sweep", "plain", "--estimator", "span")
    assert code == 2 and "--estimator: sweep 'plain' computed no 'span' estimates" in err


def test_select_global_micro_shares_one_config(swept, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # --wide: every column, headers unwrapped
    _, uri = swept
    code, out, _ = run_cli(
        capsys,
        "select",
        uri,
        "--sweep",
        "sel",
        "--save",
        "--global",
        "--average",
        "micro",
        "--metric",
        "error",
        "--wide",
    )
    assert code == 0
    rows = selection_of(uri, stored_id(out, "sel-"))
    assert rows[["preprocessing_id", "kernel_id", "C", "j"]].drop_duplicates().shape[0] == 1
    assert (rows["average"] == "micro").all() and rows["selection_value"].nunique() == 1
    results = open_store(uri, create=True, writable=True).read_results_df("sel")
    results = results[results["rho"] == 1.0]
    shared = ["preprocessing_id", "kernel_id", "j"]
    micro = {
        C: (group["span_d_pos"] + group["span_d_neg"]).sum() / group["n"].sum()
        for C, group in results.merge(rows[shared]).groupby("C")
    }  # the chosen shared config at each C
    grid, C = sorted(micro), float(rows["C"].iloc[0])
    near = grid[max(0, grid.index(C) - 1) : grid.index(C) + 2]
    assert rows["selection_value"].iloc[0] == pytest.approx(np.mean([micro[c] for c in near]))  # averaged over C
    assert rows["value"].to_numpy() == pytest.approx(
        results.set_index("config_key").loc[rows["config_key"], "span_error"]
    )
    assert rows["p_macro_sign"].notna().all() and rows["p_micro_sign"].notna().all()
    assert rows["p_macro_rank_t"].between(0, 1).all() and rows["p_proportion"].between(0, 1).all()
    assert "rank" in out and "t-test" in out  # the header "p macro rank t-test", wrapped to the width of its numbers


def test_select_by_cost(swept, capsys):
    _, uri = swept
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--cost-fn", "10", "--cost-fp", "1")
    assert code == 0
    rows = selection_of(uri, stored_id(out, "sel-"))
    assert (rows["metric"] == "cost").all() and (rows["cost_fn"] == 10).all()
    results = open_store(uri, create=True, writable=True).read_results_df("sel")
    at_rho1 = results[results["rho"] == 1.0]
    cost = (10 * at_rho1["span_d_pos"] + at_rho1["span_d_neg"]) / at_rho1["n"]
    assert np.allclose(rows["value"], cost.groupby(at_rho1["category"]).min().loc[rows["category"]].to_numpy())


def test_refit_predict_and_certify(swept, tmp_path, capsys):
    spec_path, uri = swept
    artifact = tmp_path / "model"
    code, out, err = run_cli(capsys, "select", uri, "--sweep", "sel", "--refit", artifact)
    assert code == 0 and "pickle" not in err
    assert sorted(p.name for p in artifact.iterdir()) == ["arrays.npz", "manifest.json", "model.json"]
    selection_id = stored_id(out, "sel-")
    manifest, trained = load_artifact(artifact)
    assert manifest["selection_id"] == selection_id and manifest["sweep_id"] == "sel"
    assert manifest["versions"]["xialpha"] and len(manifest["categories"]) == 3

    # the refitted models are the sweep's fits: same training errors as the stored apparent counts
    spec = load_spec(spec_path)
    corpus = spec.corpus.load()
    train, test = corpus.split("train"), corpus.split("test")
    decision = trained.decision_values(texts=train.texts)
    results = open_store(uri, create=True, writable=True).read_results_df("sel").set_index("config_key")
    for column, model in enumerate(trained.models):
        y = train.y(model.category)
        wrong = y * decision[:, column] <= 0
        stored = results.loc[model.config["config_key"]]
        assert (int((wrong & (y > 0)).sum()), int((wrong & (y < 0)).sum())) == (
            stored["apparent_d_pos"],
            stored["apparent_d_neg"],
        )

    # predict: one document per line, and a CSV table with ids
    lines = tmp_path / "docs.txt"
    lines.write_text("\n".join(test.texts[:5]) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "predict", artifact, "--input", lines)
    assert code == 0 and "pickle" not in err.lower()
    predicted = list(csv.DictReader(out.splitlines()))
    assert [row["id"] for row in predicted] == ["1", "2", "3", "4", "5"]
    expected = trained.decision_values(texts=test.texts[:5])
    assert np.allclose(
        [[float(row[f"decision_{c}"]) for c in trained.categories] for row in predicted], expected, atol=1e-5
    )
    # a blank line is no document (issue 43.6: it was scored as one): left out and said, each id its line number
    lines.write_text(f"{test.texts[0]}\n\n{test.texts[1]}\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "predict", artifact, "--input", lines, "--output", tmp_path / "blank.csv")
    predicted = list(csv.DictReader((tmp_path / "blank.csv").read_text(encoding="utf-8").splitlines()))
    assert code == 0 and [row["id"] for row in predicted] == ["1", "3"] and "labelled 2 documents" in err
    assert "1 blank line left out (each id is its document's line number)" in err
    expected = trained.decision_values(texts=[test.texts[0], test.texts[1]])
    assert np.allclose(
        [[float(row[f"decision_{c}"]) for c in trained.categories] for row in predicted], expected, atol=1e-5
    )
    table = tmp_path / "docs.csv"
    pd.DataFrame({"doc": test.ids[:4], "text": test.texts[:4]}).to_csv(table, index=False)
    out_file = tmp_path / "labels.jsonl"
    assert run_cli(capsys, "predict", artifact, "--input", table, "--id-column", "doc", "--output", out_file)[0] == 0
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [r["id"] for r in records] == list(test.ids[:4])
    for record, values in zip(records, trained.decision_values(texts=test.texts[:4])):
        assert record["categories"] == [c for c, v in zip(trained.categories, values) if v > 0]

    # certify once on the sealed test split; a second time is refused; --force warns and records it
    code, out, err = run_cli(
        capsys, "certify", uri, "--selection", selection_id, "--test-split", "test", "--draws", "4000"
    )
    assert code == 0, err
    certification_id = stored_id(out, "cert-")
    rows = (
        open_store(uri, create=True, writable=True)
        .datasets.read("certifications", filters=[("certification_id", "=", certification_id)])
        .to_pandas()
    )
    per_category = rows[rows["scope"] == "category"].set_index("category")
    decision = trained.decision_values(texts=test.texts)
    for column, category in enumerate(trained.categories):
        truth, guess = test.y(category) > 0, decision[:, column] > 0
        assert per_category.loc[category, ["tp", "fp", "fn"]].tolist() == [
            int((truth & guess).sum()),
            int((~truth & guess).sum()),
            int((truth & ~guess).sum()),
        ]
    assert (rows["test_fingerprint"] == test.fingerprint()).all() and (rows["n_test"] == len(test)).all()
    assert (rows["f1_lower"] <= rows["f1"]).all() and (rows["error_upper"] >= rows["error"]).all()
    assert set(rows["scope"]) == {"category", "micro", "macro"}
    micro = rows[rows["scope"] == "micro"].iloc[0]
    assert micro["tp"] == per_category["tp"].sum()

    code, _, err = run_cli(capsys, "certify", uri, "--selection", selection_id, "--test-split", "test")
    assert code == 2 and "already used for certification" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli(
        capsys, "certify", uri, "--selection", selection_id, "--test-split", "test", "--force", "--draws", "4000"
    )
    assert code == 0 and "sequential testing" in err
    forced = open_store(uri, create=True, writable=True).datasets.read(
        "certifications", filters=[("certification_id", "=", stored_id(out, "cert-"))]
    )
    assert set(forced["previous_certifications"].to_pylist()) == {1} and all(forced["forced"].to_pylist())


def test_report_in_the_terminal(swept, capsys, monkeypatch):
    _, uri = swept
    monkeypatch.setenv("XIALPHA_STORE", uri)
    code, out, _ = run_cli(capsys, "report")  # the store from the environment, its only sweep
    assert code == 0
    assert "best C by f1 of span" in out and "LOO candidates" in out
    results = open_store(uri, create=True, writable=True).read_results_df("sel")
    for category in results["category"].unique():
        assert category in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["select", "{uri}", "--sweep", "nope"], "--sweep: no sweep 'nope' in store"),
        (["select", "{uri}", "--sweep", "sel", "--rho", "3"], "--rho: sweep 'sel' has no results at rho=3"),
        (
            ["select", "{uri}", "--sweep", "sel", "--estimator", "loo"],
            "--estimator: sweep 'sel' computed no 'loo' estimates",
        ),
        (
            ["select", "{uri}", "--sweep", "sel", "--metric", "f1", "--cost-fn", "2"],
            "--cost-fn: applies to --metric cost only",
        ),
        (
            ["select", "{missing}", "--sweep", "sel"],
            "not a xialpha store: no such directory; `xialpha sweep SPEC --store",
        ),
        (
            ["select", "{empty}", "--sweep", "sel"],
            "not a xialpha store yet: empty, no sweep has written to it; `xialpha sweep",
        ),
        (
            ["certify", "{uri}", "--selection", "sel-none", "--test-split", "test"],
            "--selection: no selection 'sel-none'",
        ),
        (["report", "{uri}", "--sweep", "sel", "--rho", "0"], "--rho: must be a number > 0"),
        (
            ["predict", "{missing}", "--input", "x.txt"],
            "is not a xialpha artefact: no such directory; `xialpha select --refit",
        ),
        (
            ["predict", "{empty}", "--input", "x.txt"],
            "is not a xialpha artefact (no manifest.json); `xialpha select --refit DIR`",
        ),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(swept, tmp_path, capsys, argv, message):
    _, uri = swept
    (tmp_path / "empty").mkdir()
    args = [a.format(uri=uri, missing=tmp_path / "missing", empty=tmp_path / "empty") for a in argv]
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_certify_refuses_the_training_split(swept, capsys):
    _, uri = swept
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save")
    code, _, err = run_cli(capsys, "certify", uri, "--selection", stored_id(out, "sel-"), "--test-split", "train")
    assert code == 2 and "--test-split: 'train' is the sweep's training split" in err


def test_objective_rows_match_the_cli_choice(swept):
    """The library call behind the CLI gives the same choice (a guard for the CLI wiring)."""
    from xialpha.selection.selector import select

    _, uri = swept
    results = open_store(uri, create=True, writable=True).read_results_df("sel")
    selection = select(results, Objective("precision"), sweep_id="sel")
    at_rho1 = results[results["rho"] == 1.0]
    for category, value in zip(selection.rows["category"], selection.rows["value"]):
        rows = at_rho1[at_rho1["category"] == category]
        assert value == pytest.approx(rows["span_precision"].fillna(0.0).max())


def test_refit_of_linear_choices_builds_no_gram(swept, tmp_path, capsys, monkeypatch):
    # before: every refit went through an n x n linear Gram, so a corpus the linear path swept
    # (tens of thousands of documents) could not be refitted
    import xialpha.features

    spec_path, uri = swept
    made = []
    real = xialpha.features.linear_gram
    monkeypatch.setattr(xialpha.features, "linear_gram", lambda X, **kw: made.append(X.shape) or real(X, **kw))
    code, out, err = run_cli(capsys, "select", uri, "--sweep", "sel", "--refit", tmp_path / "model")
    assert code == 0, err
    _, trained = load_artifact(tmp_path / "model")
    kernels = {model.config["kernel"] for model in trained.models}
    nonlinear_pps = {model.preprocessing_id for model in trained.models if model.config["kernel"] != "linear"}
    assert len(made) == len(nonlinear_pps), (kernels, made)
    for model in trained.models:
        assert (model.model.weights is not None) == (model.config["kernel"] == "linear")


# --- labels and output formats: 80 columns, no hashes, csv and json for scripts ------------------


def test_select_and_certify_fit_80_columns_without_hashes(swept, capsys, monkeypatch):
    _, uri = swept
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save")
    assert code == 0
    assert max(len(line) for line in out.splitlines() if not line.startswith("stored ")) <= 80
    assert not HASH.search(out) and "min_df=" in out and "what the labels stand for" in out
    code, cert, err = run_cli(
        capsys,
        "certify",
        uri,
        "--selection",
        stored_id(out, "sel-"),
        "--test-split",
        "test",
        "--draws",
        "2000",
        "--force",
    )
    assert code == 0, err
    assert max(len(line) for line in cert.splitlines() if not line.startswith("stored ")) <= 80
    assert not HASH.search(cert) and "min_df=" in cert and ">= lower" in cert
    code, report, _ = run_cli(capsys, "report", uri, "--sweep", "sel")
    assert code == 0 and not HASH.search(report)
    assert max(len(line) for line in report.splitlines()) <= 80


def test_select_wide_shows_every_p_value(swept, capsys, monkeypatch):
    _, uri = swept
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--wide")
    assert code == 0 and "McNemar" in out and "runner-up config" in out
    code, narrow, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save")
    assert "McNemar" not in narrow


def test_select_and_certify_json_and_csv_hold_every_column(swept, capsys):
    _, uri = swept
    code, out, err = run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--format", "json")
    assert code == 0
    records = json.loads(out)  # standard output holds only the rows; the "stored" line is on stderr
    selection_id = stored_id(err, "sel-")
    stored = selection_of(uri, selection_id)
    assert len(records) == len(stored)
    # every stored column, the labels first and the ids last
    assert set(stored.columns) | {"config", "runner_up_config", "tie", "at_edge", "flat", "settled"} == set(records[0])
    assert list(records[0])[:3] == ["config", "category", "value"] and list(records[0])[-1] == "created_at"
    assert [r["significant"] for r in records] == stored["significant"].tolist()
    assert [r["n_runners_up_significant"] for r in records] == stored["n_runners_up_significant"].tolist()
    assert [r["value"] for r in records] == stored["value"].tolist()  # every digit
    assert all(r["config"] and not HASH.search(r["config"]) for r in records)

    code, out, err = run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--format", "csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == list(records[0]) and len(table) == len(stored)

    code, out, err = run_cli(
        capsys,
        "certify",
        uri,
        "--selection",
        selection_id,
        "--test-split",
        "test",
        "--draws",
        "2000",
        "--force",
        "--format",
        "csv",
    )
    assert code == 0, err
    rows = pd.read_csv(io.StringIO(out))
    assert {"certification_id", "f1", "f1_lower", "tp", "config"} <= set(rows.columns)
    assert list(rows["category"])[-2:] == ["(micro)", "(macro)"] and rows["config"].iloc[0].startswith("min_df=")
    code, out, err = run_cli(
        capsys,
        "certify",
        uri,
        "--selection",
        selection_id,
        "--test-split",
        "test",
        "--draws",
        "2000",
        "--force",
        "--format",
        "json",
    )
    assert code == 0 and len(json.loads(out)) == len(rows)


def test_the_refit_manifest_names_configs_by_label(swept, tmp_path, capsys):
    _, uri = swept
    code, _, err = run_cli(capsys, "select", uri, "--sweep", "sel", "--refit", tmp_path / "model")
    assert code == 0, err
    manifest = json.loads((tmp_path / "model" / "manifest.json").read_text())
    assert all(c["label"].startswith("min_df=") for c in manifest["categories"])
    assert {entry["label"] for entry in manifest["labels"]} >= {c["label"].split()[0] for c in manifest["categories"]}


def test_select_averages_over_C_neighbours_unless_told_not_to(swept, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    _, uri = swept
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save")
    assert code == 0 and re.search(r"averaged\s+over\s+C\s+neighbours", out)
    smoothed = selection_of(uri, stored_id(out, "sel-"))
    code, out, _ = run_cli(capsys, "select", uri, "--sweep", "sel", "--save", "--no-smooth")
    assert code == 0 and not re.search(r"averaged\s+over\s+C", out)
    alone = selection_of(uri, stored_id(out, "sel-"))
    assert smoothed["smooth_c"].all() and not alone["smooth_c"].any()
    assert smoothed["selection_id"].iloc[0] != alone["selection_id"].iloc[0]  # another objective: its own id
    results = open_store(uri, create=True, writable=True).read_results_df("sel")
    best = results[results["rho"] == 1.0].groupby("category")["span_f1"].max()
    assert np.allclose(alone["value"], best.loc[alone["category"]].to_numpy())
    assert np.allclose(alone["selection_value"], alone["value"])


def test_an_estimator_the_sweep_did_not_compute_names_the_spec_key_that_turns_it_on(swept, capsys):
    _, uri = swept
    code, _, err = run_cli(capsys, "select", uri, "--estimator", "kfold")
    assert code == 2
    assert err.strip() == (
        "xialpha select: error: --estimator: sweep 'sel' computed no 'kfold' estimates; "
        "set [estimators] kfold in its spec and sweep again"
    )  # no rho: k-fold has none
