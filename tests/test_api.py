"""The Python API (xialpha.sweep, select, refit, results): the documented examples run as
written on real worker processes, results come back as DataFrames, models predict raw text,
and mistakes are named by parameter."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import xialpha
import xialpha.api
from xialpha.errors import UserError

REPO = Path(__file__).resolve().parents[1]
SPEC = {
    "sweep": {"id": "api"},
    "corpus": {
        "loader": "synthetic",
        "n_docs": 300,
        "n_categories": 2,
        "seed": 4,
        "train_split": "train",
        "test_split": "test",
    },
    "svm": {"C": [0.1, 1.0, 10.0]},
    "cluster": {"workers": 1},
}


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    store = tmp_path_factory.mktemp("api") / "store"
    return store, xialpha.sweep(SPEC, store=store)


def test_sweep_from_a_dict_returns_its_rows_and_summary(swept):
    store, result = swept
    assert result.summary.ok == 6 and result.summary.failed == 0 and result.sweep_id == "api"
    assert isinstance(result.results, pd.DataFrame) and len(result.results) == 6
    assert set(result.results["category"]) == {"cat00", "cat01"}
    # a second call resumes: nothing recomputed, the same rows
    again = xialpha.sweep(SPEC, store=store)
    assert again.summary.skipped == 6 and again.summary.fits == 0
    assert set(xialpha.results(store)["config_key"]) == set(result.results["config_key"])


def test_select_refit_predict_without_internal_imports(swept, tmp_path):
    store, result = swept
    chosen = xialpha.select(store)  # the store holds one sweep: no sweep= needed
    assert list(chosen["category"]) == ["cat00", "cat01"]
    best = result.results.loc[result.results.groupby("category")["span_f1"].idxmax()]
    assert sorted(chosen["C"]) == sorted(best["C"])
    models = xialpha.refit(store, selection=chosen)
    texts = ["a new document", "another one"]
    for category, model in models.items():
        assert model.category == category and model.predict(texts).dtype == bool
        np.testing.assert_array_equal(model.predict(texts), model.decision_function(texts) > 0)
        copy = pickle.loads(pickle.dumps(model))  # the user can pickle a model
        np.testing.assert_allclose(copy.decision_function(texts), model.decision_function(texts))
    # by id, once saved
    saved = xialpha.select(store, save=True)
    by_id = xialpha.refit(store, selection=str(saved["selection_id"].iloc[0]))
    np.testing.assert_allclose(by_id["cat00"].decision_function(texts), models["cat00"].decision_function(texts))


def test_selections_and_results_are_tidy_frames_named_as_the_command_line_names_them(swept, capsys):
    from xialpha.cli import main

    store, result = swept
    chosen = xialpha.select(store)
    assert list(chosen[["category", "config", "value"]].columns) == ["category", "config", "value"]
    assert list(chosen.columns[:3]) == ["config", "category", "value"] and chosen.columns[-1] == "created_at"
    assert list(chosen["config"]) == [f"C={c:g}" for c in chosen["C"]]  # only C varies in this sweep
    assert str(chosen["significant"].dtype) == "boolean" and "not_significant" not in chosen
    assert set(chosen["at_edge"].dropna()) <= {"low", "high"} and chosen["flat"].dtype == bool  # issue 36
    assert list(chosen.columns).index("selection_id") > list(chosen.columns).index("estimate_f1")  # ids last
    capsys.readouterr()
    assert main(["select", str(store), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split(",") == list(chosen.columns)  # as the CLI writes it
    rows = xialpha.results(store)
    assert list(rows.columns[:7]) == ["config", "category", "C", "j", "kernel", "rho", "status"]
    assert list(rows.columns[7:13]) == [
        "span_d_pos",
        "span_d_neg",
        "span_error",
        "span_recall",
        "span_precision",
        "span_f1",
    ]  # the default estimator's estimates first
    assert "loo_f1" not in rows and rows.notna().any().all()  # no column without a value (loo never ran)
    assert rows.columns[-1] == "created_at" and "config_key" in rows.columns[-8:]
    assert list(result.results.columns) == list(xialpha.results(store, include_failed=True).columns)


def test_mistakes_are_named_by_parameter(swept, tmp_path):
    store, _ = swept
    with pytest.raises(UserError, match=r"^sweep=: no sweep 'nope' in store "):
        xialpha.select(store, sweep="nope")
    with pytest.raises(UserError, match="alpha=: must be between 0 and 1"):
        xialpha.select(store, alpha=2.0)
    with pytest.raises(UserError, match="selection=: give the DataFrame"):
        xialpha.refit(store, selection=3)
    with pytest.raises(UserError, match="spec=: give a path to a TOML file"):
        xialpha.sweep(42, store=tmp_path / "x")
    with pytest.raises(UserError, match=r"spec: svm.C\[0\]: must be > 0"):
        xialpha.sweep({**SPEC, "svm": {"C": [-1.0]}}, store=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_the_readme_and_module_examples_run_as_written(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## From Python") :]
    (example,) = _python_blocks(section[: section.index("\n## ", 3)])
    assert len(example.strip().splitlines()) <= 15 and "xialpha." in example
    docstring = textwrap.dedent(xialpha.api.__doc__.split("\n\n")[1])
    assert docstring.startswith("import xialpha\n") and "xialpha.refit(" in docstring
    for name, code in (("readme", example), ("docstring", docstring)):
        script = tmp_path / f"{name}.py"
        script.write_text('if __name__ == "__main__":\n' + textwrap.indent(code, "    "), encoding="utf-8")
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        (tmp_path / "my-store").rename(tmp_path / f"store-{name}")  # each example starts from an empty store


def test_a_script_without_a_main_guard_gets_one_sentence_before_any_process_starts(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(f"import xialpha\nxialpha.sweep({SPEC!r}, store='store')\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            'put the code that calls it under `if __name__ == "__main__":` '
            "(or pass client= a running distributed.Client)"
        )
    )
    assert "Nanny" not in done.stderr and "bootstrapping" not in done.stderr  # before: pages of both
    assert not (tmp_path / "store").exists()
    # inside a function called from guarded code it just works
    script.write_text(
        f"import xialpha\ndef main():\n    print(xialpha.sweep({SPEC!r}, store='store').summary.ok)\n"
        "if __name__ == '__main__':\n    main()\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "6", done.stderr[-2000:]


def test_a_guarded_script_whose_workers_fail_to_start_is_not_told_to_add_the_guard(tmp_path):
    """The guard advice only where the guard is missing: here it is there, and importing the
    script again in the worker processes fails for a reason of the script's own."""
    script = tmp_path / "guarded.py"
    script.write_text(
        "import xialpha\nif __name__ != '__main__':\n    raise RuntimeError('not importable')\n"
        f"if __name__ == '__main__':\n    xialpha.sweep({SPEC!r}, store='store')\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("xialpha.errors.UserError: the local cluster's worker processes failed to start"), last
    assert "they import your script guarded.py again first" in last and "__main__" not in last.replace(
        "__mp_main__", ""
    )
    assert "RuntimeError: not importable" in done.stderr  # the script's own error, as the workers met it
    assert "The above exception was the direct cause" not in done.stderr  # one error, not Dask's chain


def test_a_guarded_script_piped_to_python_sweeps(tmp_path):
    """`python - < script.py`: the script is no file, so the workers do not try to run it again."""
    script = (
        f"import xialpha\nif __name__ == '__main__':\n    print(xialpha.sweep({SPEC!r}, store='store').summary.ok)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "6", done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "FileNotFoundError" not in done.stderr


def test_a_running_client_is_used_and_left_open(tmp_path):
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        result = xialpha.sweep(SPEC, store=tmp_path / "store", client=client)
        assert result.summary.ok == 6
        assert client.status == "running" and client.submit(sum, [1, 2]).result() == 3


def _in_memory_corpus():
    """(texts, label_sets, splits): 160 documents, "sport" and "money" by their words, 4/5 train."""
    rng = np.random.default_rng(5)
    words = {"sport": ["goal", "match", "team", "coach"], "money": ["bank", "rate", "stock", "loan"]}
    texts, labels = [], []
    for i in range(160):
        topic = "sport" if i % 2 else "money"
        texts.append(" ".join([*rng.choice(words[topic], 4), *rng.choice(["the", "a", "said", "today"], 4)]))
        labels.append({topic})
    return texts, labels, ["test" if i % 5 == 0 else "train" for i in range(160)]


def test_a_corpus_in_memory_is_swept_selected_and_refitted(tmp_path):
    from distributed import Client, LocalCluster

    corpus = _in_memory_corpus()
    spec = {
        "sweep": {"id": "memory"},
        "corpus": {"train_split": "train", "test_split": "test"},
        "svm": {"C": [0.1, 1.0]},
    }
    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        result = xialpha.sweep(spec, store=tmp_path / "store", corpus=corpus, client=client)
    assert result.summary.ok == 4 and set(result.results["category"]) == {"money", "sport"}
    assert (result.results["n"] == 128).all()  # trained on the train split of the documents given
    chosen = xialpha.select(tmp_path / "store")
    models = xialpha.refit(tmp_path / "store", selection=chosen, corpus=corpus)
    assert list(models["sport"].predict(["goal team coach match", "bank loan rate stock"])) == [True, False]
    with pytest.raises(UserError, match=r"corpus\.loader: is required"):  # the documents are not in the store
        xialpha.refit(tmp_path / "store", selection=chosen)
    other = (corpus[0], corpus[1][::-1], corpus[2])
    with pytest.raises(UserError, match="differ from the ones it trained on"):
        xialpha.refit(tmp_path / "store", selection=chosen, corpus=other)


def test_corpus_mistakes_are_named_by_parameter(tmp_path):
    texts, labels, _ = _in_memory_corpus()
    with pytest.raises(UserError, match=r"corpus=: give a Corpus, \(texts, label_sets\)"):
        xialpha.sweep({"sweep": {"id": "m"}}, store=tmp_path / "s", corpus="documents")
    with pytest.raises(UserError, match="corpus=: corpus 'corpus=': 159 label sets for 160 ids"):
        xialpha.sweep({"sweep": {"id": "m"}}, store=tmp_path / "s", corpus=(texts, labels[1:]))
    with pytest.raises(UserError, match=r"corpus\.loader: the corpus is given in memory \(corpus=\)"):
        xialpha.sweep(SPEC, store=tmp_path / "s", corpus=(texts, labels))
    assert not (tmp_path / "s").exists()


def test_a_drift_check_from_python(tmp_path):
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        report = xialpha.drift(REPO / "config" / "drift.toml", store=tmp_path / "store", client=client)
        again = xialpha.drift(REPO / "config" / "drift.toml", store=tmp_path / "store", client=client)
    assert report.exit_code == 3 and report.n_drift >= 1 and not report.skipped  # the demo stream drifts
    assert again.skipped  # stored: the same verdicts, nothing recomputed
    assert {k: r.verdict for k, r in again.verdicts().items()} == {k: r.verdict for k, r in report.verdicts().items()}
    with pytest.raises(UserError, match="spec=: give a path to a TOML file or TOML text"):
        xialpha.drift({"drift": {}}, store=tmp_path / "store")


def test_the_command_line_names_its_flags_where_the_library_names_parameters():
    from xialpha.cli import _classify, _flags, build_parser

    parser = build_parser()
    certify, select = _flags(parser, "certify"), _flags(parser, "select")
    used = UserError("used before; use a fresh test set, or force=True", parameter="test_split", mentions="force=True")
    assert str(used) == "test_split=: used before; use a fresh test set, or force=True"
    assert _classify(used, certify) == (2, "error: --test-split: used before; use a fresh test set, or --force")
    rho = UserError("sweep 's' has no results at rho=0.5", parameter="rho")
    assert _classify(rho, select)[1] == "error: --rho: sweep 's' has no results at rho=0.5"
    costs = UserError("at least one cost must be > 0", parameter=("cost_fn", "cost_fp"))
    assert _classify(costs, select)[1] == "error: --cost-fn, --cost-fp: at least one cost must be > 0"
    assert (
        _classify(UserError("no configuration", parameter="per_category"), select)[1]
        == "error: --global: no configuration"
    )
    alpha = UserError("must be between 0 and 1", parameter="alpha")
    assert _classify(alpha, certify)[1] == "error: alpha=: must be between 0 and 1"  # certify has no --alpha
    # the text is not searched: a parameter written in it, and not given as a field, stays as written
    assert (
        _classify(UserError("rho=: must be > 0, or force=True"), select)[1] == "error: rho=: must be > 0, or force=True"
    )


def test_a_library_error_reaches_the_command_line_as_its_flag(swept, capsys):
    from xialpha.cli import main

    store, _ = swept
    assert main(["select", str(store), "--rho", "0.5"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "xialpha select: error: --rho: sweep 'api' has no results at rho=0.5 (stored: 1)"
    )


def test_certify_from_python_once_per_test_set(swept):
    store, _ = swept
    saved = xialpha.select(store, save=True)
    first = xialpha.certify(store, selection=saved, test_split="test", draws=2000)
    assert list(first["category"]) == ["cat00", "cat01", "(micro)", "(macro)"]
    # issue 34b: what it found comes first, where pandas' default display shows it; the rest follows
    assert list(first.columns[:8]) == ["category", "config", "f1", "f1_lower", "error", "error_upper"] + [
        "independent",
        "forced",
    ]
    assert list(first["config"][:2]) == list(saved["config"]) and first["independent"].all()
    with pd.option_context("display.max_columns", 20, "display.width", None):  # a notebook's defaults
        shown = repr(first).splitlines()[0].split()
    assert {"config", "f1", "f1_lower", "error_upper", "independent"} <= set(shown) and "certification_id" in first
    assert ((first["f1_lower"] <= first["f1"]) & (first["f1"] <= 1)).all()
    with pytest.raises(UserError, match="^test_split=: this test set was already used for certification"):
        xialpha.certify(store, selection=str(saved["selection_id"].iloc[0]), test_split="test", draws=2000)
    with pytest.warns(UserWarning, match="biases effectiveness estimates upward"):
        forced = xialpha.certify(store, selection=saved, test_split="test", draws=2000, force=True)
    assert forced["forced"].all() and (forced["previous_certifications"] == 1).all()
    with pytest.raises(UserError, match="^test_split=: 'train' is the sweep's training split"):
        xialpha.certify(store, selection=saved, test_split="train")


def test_a_certification_on_the_held_out_split_is_marked_not_independent(tmp_path, capsys):
    """issue 34f: the sweep's holdout estimates were scored on the test split, so testing there
    again is not one-shot honest (Webber et al. 2013): a warning, and a mark wherever it is listed."""
    from xialpha.cli import main

    store = tmp_path / "store"
    spec = {**SPEC, "sweep": {"id": "held"}, "estimators": {"holdout": True}, "svm": {"C": [1.0]}}
    xialpha.sweep(spec, store=store, quiet=True)
    saved = xialpha.select(store, save=True)
    with pytest.warns(UserWarning, match="held-out estimates on 'test': this certification is no independent test"):
        certified = xialpha.certify(store, selection=saved, test_split="test", draws=2000)
    assert not certified["independent"].any()
    capsys.readouterr()
    assert main(["store", "ls", str(store)]) == 0
    listing = capsys.readouterr().out
    assert "test*" in listing and "* not an independent test" in listing
    assert main(["report", str(store)]) == 0
    assert "not an independent test" in " ".join(capsys.readouterr().out.split())  # the title may wrap
    assert main(["report", str(store), "--html", str(tmp_path / "r.html")]) == 0
    assert "Not an independent test" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_certifying_an_unsaved_selection_stores_it_first_and_report_shows_both(swept, tmp_path, capsys):
    """issue 26: an unsaved select() passed to certify used to spend the test split with no stored
    selection: report showed no certification and certifying again needed force=True."""
    import shutil

    from xialpha.cli import main
    from xialpha.storage.opening import open_store

    source, _ = swept
    store = tmp_path / "store"  # the sweep alone: no selection or certification of the other tests
    shutil.copytree(source, store, ignore=lambda _, names: [n for n in names if n in ("selections", "certifications")])
    chosen = xialpha.select(store)
    assert open_store(str(store), create=False, writable=True).selections().empty
    certified = xialpha.certify(store, selection=chosen, test_split="test", draws=2000)
    selection_id = str(chosen["selection_id"].iloc[0])
    assert set(certified["selection_id"]) == {selection_id}
    saved = open_store(str(store), create=False, writable=True).selections(selection_id=selection_id)
    assert list(saved["config_key"]) == list(chosen["config_key"])
    capsys.readouterr()
    assert main(["report", str(store)]) == 0
    out = capsys.readouterr().out
    assert selection_id in out and f"certification {certified['certification_id'].iloc[0]}" in out
    # no rho = 2 rows: one line saying so, not a table of dashes (issue 34's walkthrough)
    assert "LOO candidates: the sweep has no rho = 2 rows (add 2.0 to estimators.rho)" in out
    assert "examples xi-alpha (rho=2) flags" not in out
    assert "held-out values: the sweep scored no held-out split" in out  # why its held-out columns are dashes
    again = xialpha.select(store)  # the same selection, not saved: its stored id is found
    with pytest.raises(UserError, match="already used for certification"):
        xialpha.certify(store, selection=again, test_split="test", draws=2000)
    assert set(open_store(str(store), create=False, writable=True).selections()["selection_id"]) == {selection_id}


def test_report_from_python(swept, tmp_path):
    store, _ = swept
    curves = xialpha.report(store, html=tmp_path / "report.html")
    assert len(curves) == 6 and set(curves["category"]) == {"cat00", "cat01"} and curves["estimate"].between(0, 1).all()
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8")
    with pytest.raises(UserError, match="^estimator=: sweep 'api' computed no 'loo' estimates"):
        xialpha.report(store, estimator="loo")


def test_select_takes_every_selection_flag_under_the_flag_name():
    """Issue 32 item 4: the Python API offers what `xialpha select` does, costs included, under the
    same names (the flags' dests; --global is per_category=False, --no-smooth smooth=False)."""
    import inspect

    from xialpha.cli import build_parser
    from xialpha.selection.options import SelectionOptions

    actions = build_parser()._subparsers._group_actions[0].choices["select"]._actions
    # output flags (how the terminal shows the result) have no place in the API, which returns the frame
    flags = {a.dest for a in actions if a.option_strings} - {"help", "store_option", "format", "wide", "all"}
    parameters = set(inspect.signature(xialpha.select).parameters) - {"store", "client"}  # store: --store or STORE
    assert flags == parameters == set(SelectionOptions.__dataclass_fields__) | {"sweep", "refit", "spec"}


def test_select_refit_saves_an_artefact_and_stores_the_selection_after_it(swept, tmp_path):
    """As `xialpha select --refit DIR`: the models are trained first, the selection stored last
    (a target that is not an empty directory stores nothing)."""
    from xialpha.models.artifact import load_artifact
    from xialpha.storage.opening import open_store

    store, _ = swept
    before = len(open_store(str(store), create=True, writable=True).selections())
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(UserError, match=r"^refit=: .*taken already exists and is not an empty directory$"):
        xialpha.select(store, metric="recall", refit=tmp_path / "taken")
    assert len(open_store(str(store), create=True, writable=True).selections()) == before
    chosen = xialpha.select(store, metric="recall", refit=tmp_path / "model")
    stored = open_store(str(store), create=True, writable=True).selections(selection_id=chosen["selection_id"].iloc[0])
    manifest, trained = load_artifact(tmp_path / "model")
    assert len(stored) == len(chosen) and sorted(trained.categories) == sorted(chosen["category"])
    assert manifest["selection_id"] == chosen["selection_id"].iloc[0]


def test_select_by_cost_from_python_as_the_command_line_does(swept, capsys):
    from xialpha.cli import main

    store, _ = swept
    chosen = xialpha.select(store, cost_fn=5.0)
    assert set(chosen["metric"]) == {"cost"} and set(chosen["cost_fn"]) == {5.0} and set(chosen["cost_fp"]) == {1.0}
    capsys.readouterr()
    assert main(["select", str(store), "--cost-fn", "5", "--format", "csv"]) == 0
    table = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert list(table["config"]) == list(chosen["config"]) and list(table["value"]) == pytest.approx(
        list(chosen["value"])
    )
    with pytest.raises(UserError, match=r"^cost_fn=: applies to metric= cost only, not f1$"):
        xialpha.select(store, metric="f1", cost_fn=5.0)
    assert main(["select", str(store), "--metric", "f1", "--cost-fn", "5"]) == 2
    assert capsys.readouterr().err.strip() == "xialpha select: error: --cost-fn: applies to --metric cost only, not f1"
