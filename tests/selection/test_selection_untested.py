"""Issue 44 item 3: counts of significance count the tests that ran. A runner-up no test could
separate from the choice (no per-example vectors: an estimator that stores none, or an examples
partition lost or quarantined) is untested, never counted as significantly worse, and select,
report and saved selections say why no test ran."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from selection_rows import result_row

import xialpha
from xialpha.cli import main
from xialpha.estimators.metrics import Estimate
from xialpha.storage.opening import open_store
from xialpha.storage.schema import estimate_values
from xialpha.storage.validate import flat_table

CATEGORIES = ("big", "rare")
CURVE = {0.1: 40, 1.0: 20, 10.0: 25, 100.0: 30}  # errors on positives per C: C = 1 is best everywhere


def _row(category: str, C: float, errors: int) -> dict:
    """A results row whose xi-alpha and bootstrap estimates err on `errors` positives (and 5 negatives)."""
    row = result_row(category, C, errors, 5, n_pos=100)
    return row | {"run_id": "r", "status": "ok", **estimate_values(Estimate("bootstrap", 1000, 100, errors + 1, 5))}


@pytest.fixture
def store(tmp_path) -> str:
    """A sweep whose xi-alpha per-example vectors are stored (bootstrap stores none)."""
    uri = str(tmp_path / "store")
    result_store = open_store(uri, create=True, writable=True)
    result_store.datasets.write_results([_row(c, C, e) for c in CATEGORIES for C, e in CURVE.items()])
    examples = []
    for category in CATEGORIES:
        for C, errors in CURVE.items():
            key = _row(category, C, errors)["config_key"]
            vector = np.zeros(1000, dtype=bool)
            vector[:errors] = True  # the better configs err on a subset of the worse ones' examples
            vector[100:105] = True
            examples.append(
                {"sweep_id": "s1", "config_key": key, "category": category, "estimator": "xa"} | {"bits": vector}
            )
    result_store.datasets.write_examples(examples)
    return uri


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _json_rows(capsys, store: str, *options: str) -> list[dict]:
    code, out, err = _cli(capsys, "select", store, "--sweep", "s1", "--no-smooth", "--format", "json", *options)
    assert code == 0, err
    return json.loads(out)


def test_tested_runners_up_are_counted_as_before(store, capsys):
    rows = _json_rows(capsys, store, "--estimator", "xa")
    for row in rows:
        assert row["C"] == 1.0 and row["n_runners_up"] == 3 and row["n_runners_up_tested"] == 3
        assert row["n_runners_up_significant"] == 3 and row["significant"] is True  # 5+ more errors each
        assert row["untested"] is None


def test_an_estimator_without_per_example_vectors_counts_no_runner_up_as_significant(store, capsys):
    for row in _json_rows(capsys, store, "--estimator", "bootstrap"):
        assert row["n_runners_up"] == 3 and row["p_micro_sign"] is None and row["significant"] is None
        assert row["n_runners_up_significant"] is None and row["n_runners_up_tested"] == 0
        assert "bootstrap estimator stores no per-example vectors" in row["untested"]
    code, out, _ = _cli(capsys, "select", store, "--sweep", "s1", "--estimator", "bootstrap", "--format", "csv")
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and frame["n_runners_up_significant"].isna().all() and frame["significant"].isna().all()


def test_the_table_says_why_no_test_ran_and_not_that_no_choice_is_significant(store, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = _cli(capsys, "select", store, "--sweep", "s1", "--estimator", "bootstrap")
    assert code == 0
    assert "no choice is significant" not in out
    assert "big, rare: no test ran, so no runner-up is counted significant:" in out
    assert "the bootstrap estimator stores no per-example vectors (span and xa do: select by one to test)" in (
        " ".join(out.split())
    )


def test_a_saved_selection_stores_no_count_where_no_test_ran(store):
    chosen = xialpha.select(store, sweep="s1", estimator="bootstrap", save=True)
    assert chosen["n_runners_up_significant"].isna().all() and chosen["significant"].isna().all()
    saved = open_store(store, create=True, writable=True).selections(sweep_id="s1")
    assert len(saved) == 2 and saved["n_runners_up_significant"].isna().all()
    assert saved["significant"].isna().all() and (saved["n_runners_up_tested"] == 0).all()
    assert saved["untested"].str.contains("bootstrap estimator stores no per-example vectors").all()


def test_a_missing_examples_partition_leaves_the_runners_up_untested(store, capsys, monkeypatch):
    """The examples moved aside (as `store check --quarantine` moves a damaged file): nothing is
    counted significant, and the rows say the vectors are missing."""
    shutil.move(str(Path(store) / "examples"), str(Path(store).parent / "examples-aside"))
    for row in _json_rows(capsys, store, "--estimator", "xa"):
        assert row["n_runners_up_significant"] is None and row["significant"] is None
        assert "are missing from the store" in row["untested"] and "--quarantine" in row["untested"]
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = _cli(capsys, "select", store, "--sweep", "s1", "--estimator", "xa", "--save")
    assert code == 0 and "no test ran" in out and "no choice is significant" not in out
    assert "the per-example vectors of 8 configuration(s) are missing from the store" in " ".join(out.split())
    code, out, _ = _cli(capsys, "report", store, "--sweep", "s1", "--estimator", "xa")
    assert code == 0 and "no test ran" in out and "no choice is significant" not in out
    assert "the per-example vectors of 8 configuration(s) are missing from the store" in " ".join(out.split())


def test_a_selection_stored_before_reads_with_the_counts_shown_then(store):
    """Rows stored by an earlier xialpha (not_significant, n_runners_up_not_significant) read back
    in this version's columns; their first runner-up untested reads as untested."""
    result_store = open_store(store, create=True, writable=True)
    xialpha.select(store, sweep="s1", estimator="xa", save=True)
    rows = result_store.selections(sweep_id="s1")
    legacy = rows.drop(columns=["significant", "n_runners_up_significant", "n_runners_up_tested", "untested"])
    legacy = legacy.loc[:, legacy.notna().any()].assign(
        selection_id="sel-old", not_significant=[False, None], n_runners_up_not_significant=[1, 0]
    )
    result_store.datasets.append("selections", flat_table(legacy.to_dict("records"), "selections"))
    old = result_store.selections(selection_id="sel-old").sort_values("category")
    assert old["significant"].tolist() == [True, None]
    assert old["n_runners_up_significant"].tolist() == [2, pd.NA]
    assert old["n_runners_up_tested"].tolist() == [3, 0]
    assert "not_significant" not in old and "n_runners_up_not_significant" not in old
