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
SPEC = {"sweep": {"id": "api"},
        "corpus": {"loader": "synthetic", "n_docs": 300, "n_categories": 2, "seed": 4,
                   "train_split": "train", "test_split": "test"},
        "svm": {"C": [0.1, 1.0, 10.0]},
        "cluster": {"workers": 1}}


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
        assert model.category == category and set(model.predict(texts)) <= {-1, 1}
        np.testing.assert_array_equal(model.predict(texts), np.where(model.decision_function(texts) > 0, 1, -1))
        copy = pickle.loads(pickle.dumps(model))  # the user can pickle a model
        np.testing.assert_allclose(copy.decision_function(texts), model.decision_function(texts))
    # by id, once saved
    saved = xialpha.select(store, save=True)
    by_id = xialpha.refit(store, selection=str(saved["selection_id"].iloc[0]))
    np.testing.assert_allclose(by_id["cat00"].decision_function(texts), models["cat00"].decision_function(texts))


def test_mistakes_are_named_by_parameter(swept, tmp_path):
    store, _ = swept
    with pytest.raises(UserError, match=r"^sweep=: no sweep 'nope' in store "):
        xialpha.select(store, sweep="nope")
    with pytest.raises(UserError, match="alpha=: must be between 0 and 1"):
        xialpha.select(store, alpha=2.0)
    with pytest.raises(UserError, match="selection=: give the DataFrame"):
        xialpha.refit(store, selection=3)
    with pytest.raises(UserError, match="spec: give a path to a TOML file"):
        xialpha.sweep(42, store=tmp_path / "x")
    with pytest.raises(UserError, match=r"spec: svm.C\[0\]: must be > 0"):
        xialpha.sweep({**SPEC, "svm": {"C": [-1.0]}}, store=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_the_readme_and_module_examples_run_as_written(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## From Python"):]
    (example,) = _python_blocks(section[:section.index("\n## ", 3)])
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
    assert done.stderr.strip().splitlines()[-1].endswith('put the code that calls it under `if __name__ == "__main__":` '
                                                         "(or pass client= a running distributed.Client)")
    assert "Nanny" not in done.stderr and "bootstrapping" not in done.stderr  # before: pages of both
    assert not (tmp_path / "store").exists()
    # inside a function called from guarded code it just works
    script.write_text(f"import xialpha\ndef main():\n    print(xialpha.sweep({SPEC!r}, store='store').summary.ok)\n"
                      "if __name__ == '__main__':\n    main()\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "6", done.stderr[-2000:]


def test_a_running_client_is_used_and_left_open(tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        result = xialpha.sweep(SPEC, store=tmp_path / "store", client=client)
        assert result.summary.ok == 6
        assert client.status == "running" and client.submit(sum, [1, 2]).result() == 3
