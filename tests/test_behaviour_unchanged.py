"""The same stored rows, selections, certifications, drift rows, reports and search results as the
golden record in tests/golden/behaviour.json, which was written by the code before the house was
re-cut (the package map of the README). What varies from run to run (ids, times, hosts, paths,
versions, seconds) is left out or masked; numbers compare to 1e-9 relative.

Everything runs in this process on an in-process Dask cluster (threads): three sweeps (every
estimator, kernel and preprocessing path; xi-alpha only; configs that fail in a task and in a
fit), the selections and reports people make of them, a certification, a refit, a drift check
and `XiAlphaSearchCV`. A change meant to alter these outputs rewrites the record with
`XIALPHA_GOLDEN_UPDATE=1 python -m pytest tests/test_behaviour_unchanged.py` and shows the
difference in its diff.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from distributed import Client

import xialpha
from xialpha.cli import main
from xialpha.storage.rows import drift_columns

GOLDEN = Path(__file__).parent / "golden" / "behaviour.json"
UPDATE = os.environ.get("XIALPHA_GOLDEN_UPDATE") == "1"
RTOL = 1e-9

SWEEP = """
[sweep]
id = "golden"
[corpus]
loader = "synthetic"
n_docs = 240
n_categories = 3
seed = 7
train_split = "train"
validation_fraction = 0.25
[corpus.categories]
top_k = 2
[[preprocessing]]
min_df = [1, 2]
[[kernels]]
name = "linear"
[[kernels]]
name = "rbf"
gamma = 0.5
[svm]
C = [0.1, 1.0, 10.0]
[estimators]
rho = [1.0, 2.0]
xa_ext_depth = 2
exact_loo = true
holdout = true
kfold = 3
bootstrap = 4
"""

SWEEP_XA = """
[sweep]
id = "golden-xa"
[corpus]
loader = "synthetic"
n_docs = 200
n_categories = 2
seed = 8
[[kernels]]
name = "linear"
[svm]
C = [0.5, 5.0]
j = [1.0, 2.0]
[estimators]
span = false
"""

SWEEP_FAILING = """
[sweep]
id = "golden-fail"
gram_memory_limit = "4KiB"
[corpus]
loader = "synthetic"
n_docs = 120
n_categories = 2
seed = 9
[[kernels]]
name = "linear"
[[kernels]]
name = "rbf"
gamma = 1.0
[svm]
C = [1.0]
[estimators]
kfold = 100
"""

DRIFT = """
[drift]
id = "golden-drift"
windows = "all"
margin = 2.0
[batches]
by = "time"
period = "1D"
[corpus]
loader = "synthetic"
n_docs = 600
n_categories = 3
seed = 3
n_batches = 6
shift = "abrupt"
shift_batch = 4
shifted_categories = 2
[corpus.categories]
top_k = 2
[[preprocessing]]
min_df = 2
[[kernels]]
name = "linear"
[svm]
C = [1.0, 4.0]
"""

# columns that differ between runs of the same code
VOLATILE = {
    "run_id",
    "created_at",
    "worker",
    "xialpha_version",
    "fit_seconds",
    "estimate_seconds",
    "selection_id",
    "certification_id",
    "checked_at",
    "spec_dir",
    "first_created_at",
    "last_created_at",
    "mean_fit_time",
    "mean_score_time",
}
MASKS = [
    (re.compile(r"sel-\d{8}T\d{6}-[0-9a-f]{6}"), "SELECTION-ID"),
    (re.compile(r"cert-\d{8}T\d{6}-[0-9a-f]{6}"), "CERTIFICATION-ID"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( UTC|\+00:00)?"), "TIME"),
    (re.compile(r"xialpha \d+\.\d+\.\d+\S*"), "xialpha VERSION"),
    (re.compile(r"Python \d+\.\d+\.\d+, .*"), "PYTHON AND LIBRARIES"),
    (re.compile(r"\b[0-9a-f]{12}\b"), "RUN-ID"),
    (re.compile(r'<div class="figure">.*?</div>', re.S), "FIGURE"),  # the drawing of a figure
    (re.compile(r"\d+ KiB"), "N KiB"),
]


def masked(text: str, tmp: Path) -> str:
    """`text` without this run's temporary directory, ids, times and versions."""
    text = text.replace(str(tmp), "TMP")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def records(frame: pd.DataFrame, sort: list[str] | None = None) -> list[dict]:
    """The rows of `frame` as JSON-able dicts without VOLATILE columns, in a fixed order; columns by
    name (sorted), so what is compared is the rows, not where a column sits."""
    frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE])
    if sort:
        frame = frame.sort_values(sort, kind="mergesort")
    frame = frame[sorted(frame.columns)]
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, (tuple, list, np.ndarray)):
        return [_plain(v) for v in value]
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return "TIME"
    return value


def cli(capsys, tmp: Path, *argv: str) -> dict:
    """The exit code and masked standard output and error of `xialpha ARGV` run in this process."""
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse refused the arguments
        code = exc.code
    out, err = capsys.readouterr()
    return {"code": code, "out": masked(out, tmp), "err": masked(err, tmp)}


def behaviour(tmp: Path, capsys) -> dict:
    """Every output the record holds, produced by the code under test."""
    from xialpha.commands import sweep as sweep_command
    from xialpha.jobs.dry_run import dry_run
    from xialpha.search import XiAlphaSearchCV
    from xialpha.spec.sweep import parse_spec
    from xialpha.storage.opening import open_store

    store = Path("store")
    out: dict = {}
    (tmp / "golden.toml").write_text(SWEEP, encoding="utf-8")
    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        for name, text in (("golden", SWEEP), ("golden-xa", SWEEP_XA), ("golden-fail", SWEEP_FAILING)):
            result = xialpha.sweep(text, store=store, client=client)
            summary = result.summary
            out[f"sweep {name}"] = {
                "ok": summary.ok,
                "failed": summary.failed,
                "skipped": summary.skipped,
                "fits": summary.fits,
                "n_keys": summary.n_keys,
                "failures": sorted(summary.failures),
            }
            out[f"results {name}"] = records(result.results, ["config_key"])
        opened = open_store(str(store), create=False, writable=True)
        keys = sorted(xialpha.results(store, sweep="golden")["config_key"])
        for estimator in ("xa", "span", "loo", "kfold", "bootstrap", "holdout", "xa_ext", "apparent"):
            found = opened.read_examples(keys, estimator, sweep_id="golden")
            out[f"examples {estimator}"] = {key: np.packbits(found[key]).tobytes().hex() for key in sorted(found)}
        out["runs"] = records(pd.concat([opened.datasets.read(d).to_pandas() for d in ("sweeps",)]), ["sweep_id"])

        chosen = xialpha.select(store, sweep="golden", save=True)
        out["select"] = records(chosen, ["category"])
        out["select global micro"] = records(
            xialpha.select(store, sweep="golden", per_category=False, average="micro"), ["category"]
        )
        out["select cost"] = records(xialpha.select(store, sweep="golden", metric="cost"), ["category"])
        out["select xa rho 2 error"] = records(
            xialpha.select(store, sweep="golden", estimator="xa", rho=2.0, metric="error", runners_up=1), ["category"]
        )
        out["select golden-xa"] = records(xialpha.select(store, sweep="golden-xa"), ["category"])
        out["select golden-xa global"] = records(
            xialpha.select(store, sweep="golden-xa", per_category=False, save=True), ["category"]
        )
        certified = xialpha.certify(
            store,
            selection=str(chosen["selection_id"].iloc[0]),
            test_split="test",
            client=client,
            draws=2000,
            spec=tmp / "golden.toml",
        )
        out["certify"] = records(certified, ["scope", "category"])
        models = xialpha.refit(store, selection=chosen, client=client)
        texts = ["w1 w2 w3 w4 w5", "w10 w11 w12", "a document without known words", "w3 w3 w3 w40 w41"]
        out["refit"] = {
            category: {
                "config": {k: _plain(v) for k, v in sorted(model.config.items())},
                "decision": model.decision_function(texts).tolist(),
            }
            for category, model in sorted(models.items())
        }
        drift = xialpha.drift(DRIFT, store=store, client=client)
        out["drift"] = {
            "exit_code": drift.exit_code,
            "newest_batch": drift.newest_batch,
            "rows": records(pd.DataFrame(map(drift_columns, drift.rows)), ["check_id"]),
        }
        again = xialpha.drift(DRIFT, store=store, client=client)
        out["drift again"] = {
            "skipped": again.skipped,
            "rows": records(pd.DataFrame(map(drift_columns, again.rows)), ["check_id"]),
        }

    view = xialpha.report(store, sweep="golden", html=tmp / "report.html")
    out["report curves"] = records(view, ["category", "preprocessing_id", "kernel_id", "j", "C"])
    out["report html"] = masked((tmp / "report.html").read_text(encoding="utf-8"), tmp)
    out["cli report"] = cli(capsys, tmp, "report", str(store), "--sweep", "golden")
    out["cli report xa"] = cli(capsys, tmp, "report", str(store), "--sweep", "golden-xa", "--wide")
    out["cli select"] = cli(capsys, tmp, "select", str(store), "--sweep", "golden", "--wide")
    out["cli select global json"] = cli(
        capsys, tmp, "select", str(store), "--sweep", "golden", "--global", "--format", "json"
    )
    out["cli select xa note"] = cli(capsys, tmp, "select", str(store), "--sweep", "golden-xa", "--format", "csv")
    out["cli select apparent"] = cli(capsys, tmp, "select", str(store), "--sweep", "golden", "--estimator", "apparent")
    out["cli select unknown"] = cli(capsys, tmp, "select", str(store), "--sweep", "golden", "--estimator", "nope")
    out["cli select failed sweep"] = cli(capsys, tmp, "select", str(store), "--sweep", "golden-fail")
    out["cli store ls"] = cli(capsys, tmp, "store", "ls", str(store), "--wide")
    out["cli store ls json"] = cli(capsys, tmp, "store", "ls", str(store), "--format", "json")

    spec = parse_spec(SWEEP, source="golden")
    capsys.readouterr()
    sweep_command._print_best(spec, open_store(str(store), create=False, writable=True))
    sweep_command._print_dry_run(
        dry_run(parse_spec(SWEEP + "[cluster]\nworkers = 1\n"), open_store("empty", create=True, writable=True))
    )
    out["cli sweep summary lines"] = masked(capsys.readouterr().out, tmp)

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, 0)
    from sklearn.svm import SVC

    for estimate in ("span", "xa"):
        search = XiAlphaSearchCV(
            SVC(kernel="rbf", gamma=0.5), {"C": [0.1, 1.0, 10.0]}, scoring="f1", estimate=estimate
        ).fit(X, y)
        results = {k: v for k, v in search.cv_results_.items() if k not in VOLATILE}
        out[f"search {estimate}"] = {
            "best_params": search.best_params_,
            "best_score": search.best_score_,
            "cv_results": {k: _plain(list(v)) for k, v in sorted(results.items())},
        }
    return out


def differences(got, want, path: str = "") -> list[str]:
    """Where `got` differs from `want` (floats to RTOL), one line per difference, named by its path."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: {type(got).__name__}, want a dict"]
        if sorted(got) != sorted(want):
            return [f"{path}: keys {sorted(set(got) ^ set(want))} differ"]
        return [line for key in want for line in differences(got[key], want[key], f"{path}/{key}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {len(got) if isinstance(got, list) else got!r} items, want {len(want)}"]
        return [line for i, (a, b) in enumerate(zip(got, want)) for line in differences(a, b, f"{path}[{i}]")]
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return [] if math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-12) else [f"{path}: {got!r} != {want!r}"]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def assert_same(got, want) -> None:
    found = differences(got, want)
    assert not found, f"{len(found)} difference(s):\n" + "\n".join(found[:20])


def test_outputs_are_those_of_the_golden_record(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the store is "store": messages name it so, whatever the temporary directory
    monkeypatch.delenv("COLUMNS", raising=False)  # output to a pipe, as recorded (pytest-xdist's workers set 80)
    if not UPDATE:
        assert GOLDEN.exists(), f"{GOLDEN} is missing: write it with XIALPHA_GOLDEN_UPDATE=1 and commit it"
    got = json.loads(json.dumps(behaviour(tmp_path, capsys), default=str))
    if UPDATE:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {GOLDEN}")
    assert_same(got, json.loads(GOLDEN.read_text(encoding="utf-8")))


def test_the_comparison_catches_a_changed_number_key_or_row():
    want = {"a": [{"x": 1.0, "y": "s"}], "b": 2}
    assert_same({"a": [{"x": 1.0 + 1e-12, "y": "s"}], "b": 2}, want)
    for changed in (
        {"a": [{"x": 1.001, "y": "s"}], "b": 2},
        {"a": [{"x": 1.0, "y": "t"}], "b": 2},
        {"a": [], "b": 2},
        {"a": [{"x": 1.0, "y": "s"}]},
    ):
        with pytest.raises(AssertionError):
            assert_same(changed, want)
