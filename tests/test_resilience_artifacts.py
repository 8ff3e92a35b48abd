"""`predict` and artefacts: artefacts are data (JSON and NumPy arrays) and load without unpickling;
old pickled artefacts load only with --allow-pickle; damaged model files are one line, exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xialpha.cli import main


class _Plant:
    """Unpickling this runs os.mkdir(marker): proof that a file was unpickled."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def _trained():
    import numpy as np

    from xialpha.features import Kernel, Preprocessing, row_sq_norms
    from xialpha.models.trained import CategoryModel, KernelModel, TrainedSelection

    texts = ["wheat grain harvest", "oil crude barrel", "wheat price rises", "crude oil price falls"]
    preprocessing = Preprocessing(stemming="porter", tf="log")
    fitted, X = preprocessing.fit_transform(texts)
    weights = np.zeros(X.shape[1])
    weights[fitted.vocabulary["wheat"]] = 2.0
    vectors = X[[1, 3]]
    models = [
        CategoryModel("grain", preprocessing.id, KernelModel(Kernel(), -0.25, weights=weights), {"category": "grain"}),
        CategoryModel(
            "crude",
            preprocessing.id,
            KernelModel(
                Kernel("rbf", gamma=0.5),
                -0.5,
                support_vectors=vectors,
                sv_sq_norms=row_sq_norms(vectors),
                coef=np.array([1.0, 0.5]),
            ),
            {"category": "crude"},
        ),
    ]
    return TrainedSelection({preprocessing.id: fitted}, models)


def _predict(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["predict", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _rehash(artifact: Path, name: str) -> None:
    """Rewrite the manifest's SHA-256 of `name`: what an attacker who can write both files does."""
    import hashlib
    import json

    manifest = json.loads((artifact / "manifest.json").read_text())
    digest = hashlib.sha256((artifact / name).read_bytes()).hexdigest()
    if name == "models.joblib":
        manifest["models_sha256"] = digest
    else:
        manifest["sha256"][name] = digest
    (artifact / "manifest.json").write_text(json.dumps(manifest))


def test_artefacts_are_data_and_predict_the_same(tmp_path, capsys):
    import csv

    import numpy as np

    from xialpha.models.artifact import load_artifact, save_artifact

    trained = _trained()
    artifact = save_artifact(tmp_path / "model", trained, {"sweep_id": "s"})
    assert sorted(p.name for p in artifact.iterdir()) == ["arrays.npz", "manifest.json", "model.json"]
    docs = ["wheat harvest", "oil prices", "nothing known"]
    _, loaded = load_artifact(artifact)
    assert np.array_equal(loaded.decision_values(texts=docs), trained.decision_values(texts=docs))
    (tmp_path / "docs.txt").write_text("\n".join(docs) + "\n")
    code, out, err = _predict([str(artifact), "--input", str(tmp_path / "docs.txt")], capsys)
    assert code == 0 and out.splitlines()[0] == "id,categories,decision_grain,decision_crude"
    assert err == (  # issue 49.4: a document none of whose words the model knows is said, not an error
        "warning: 1 of 3 documents shares no word with the model's vocabulary (their decision values are "
        "the biases alone): is this the model for these documents?\n"
    )
    written = [[float(v) for v in line[2:]] for line in list(csv.reader(out.splitlines()))[1:]]
    assert np.allclose(written, trained.decision_values(texts=docs), atol=1e-5)


def test_predict_never_unpickles_a_data_artefact(tmp_path, capsys):
    import numpy as np

    from xialpha.models.artifact import save_artifact

    artifact = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    marker = tmp_path / "code-ran"
    np.savez(artifact / "arrays.npz", m0_weights=np.array([_Plant(marker)], dtype=object))
    _rehash(artifact, "arrays.npz")
    (tmp_path / "docs.txt").write_text("wheat\n")
    code, _, err = _predict([str(artifact), "--input", str(tmp_path / "docs.txt")], capsys)
    assert code == 2 and err.count("\n") == 1 and "is malformed (ValueError: Object arrays cannot be loaded" in err, err
    assert not marker.exists()


def test_pickled_artefacts_load_only_with_allow_pickle(tmp_path, capsys):
    import joblib

    # an artefact of format version 1 whose pickle runs code; its manifest hash matches
    artifact = tmp_path / "old"
    artifact.mkdir()
    (artifact / "manifest.json").write_text('{"format": "xialpha-artifact", "format_version": 1}')
    marker = tmp_path / "code-ran"
    joblib.dump(_Plant(marker), artifact / "models.joblib")
    _rehash(artifact, "models.joblib")
    (tmp_path / "docs.txt").write_text("wheat\n")
    argv = [str(artifact), "--input", str(tmp_path / "docs.txt")]
    code, _, err = _predict(argv, capsys)  # before: unpickled it (and ran the code) after a warning
    assert code == 2 and err.count("\n") == 1 and "holds a pickle (format version 1)" in err and "--allow-pickle" in err
    assert not marker.exists()
    code, _, err = _predict([*argv, "--allow-pickle"], capsys)
    assert marker.exists()  # the flag is the one way to unpickle; the payload then is no artefact
    assert code == 2 and err.startswith("warning: ") and "runs code from the file" in err and "cannot be loaded" in err


@pytest.mark.parametrize(
    "name, rehash, message",
    [
        ("arrays.npz", False, "arrays.npz does not match the SHA-256 in manifest.json (changed or corrupt)"),
        ("arrays.npz", True, "model.json or arrays.npz is malformed"),
        ("model.json", True, "model.json or arrays.npz is malformed (JSONDecodeError"),
    ],
)
def test_truncated_model_files_are_one_line(tmp_path, capsys, name, rehash, message):
    from xialpha.models.artifact import save_artifact

    artifact = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    data = (artifact / name).read_bytes()
    (artifact / name).write_bytes(data[: len(data) // 2])
    if rehash:
        _rehash(artifact, name)
    (tmp_path / "docs.txt").write_text("wheat\n")
    code, _, err = _predict([str(artifact), "--input", str(tmp_path / "docs.txt")], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_a_truncated_pickle_is_one_line_even_when_allowed(tmp_path, capsys):
    import joblib

    artifact = tmp_path / "old"
    artifact.mkdir()
    (artifact / "manifest.json").write_text('{"format": "xialpha-artifact", "format_version": 1}')
    joblib.dump({"preprocessings": {}, "models": [("a", "pp", [1.0] * 1000, {})]}, artifact / "models.joblib")
    data = (artifact / "models.joblib").read_bytes()
    (artifact / "models.joblib").write_bytes(data[: len(data) // 2])
    _rehash(artifact, "models.joblib")  # before: the digest matched, and joblib's EOFError was a traceback
    (tmp_path / "docs.txt").write_text("wheat\n")
    code, _, err = _predict([str(artifact), "--input", str(tmp_path / "docs.txt"), "--allow-pickle"], capsys)
    assert code == 2 and "models.joblib cannot be loaded" in err and err.count("\n") == 2  # the warning, the error


def test_a_token_pattern_that_backtracks_is_refused_within_its_time_budget(tmp_path):
    """A tampered model.json (its digest updated) with a pattern that backtracks catastrophically on
    a 60-character document: before, predict ran for minutes; now the document's time budget ends
    it with one line naming the pattern."""
    import json
    import subprocess
    import sys

    from xialpha.models.artifact import save_artifact

    artifact = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    model = json.loads((artifact / "model.json").read_text())
    for entry in model["preprocessings"].values():
        entry["params"]["token_pattern"] = "(a|aa)+b"
    (artifact / "model.json").write_text(json.dumps(model))
    _rehash(artifact, "model.json")
    (tmp_path / "docs.txt").write_text("wheat\n" + "a" * 60 + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "predict", str(artifact), "--input", str(tmp_path / "docs.txt")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "token_pattern '(a|aa)+b'" in done.stderr and "document 2" in done.stderr, done.stderr


def test_a_spec_token_pattern_that_backtracks_ends_with_one_line_too():
    from xialpha.errors import UserError
    from xialpha.features.preprocessing import Preprocessing

    fitted = Preprocessing().fit(["a b", "aa bb"])
    slow = Preprocessing(token_pattern="(x|xx)+y")
    with pytest.raises(UserError, match=r"token_pattern '\(x\|xx\)\+y': .* document 2 "):
        slow.fit(["x y", "x" * 60])
    assert fitted.transform(["aa"]).nnz == 1


def test_a_full_disk_leaves_no_truncated_predictions(tmp_path, capsys, monkeypatch):
    """ENOSPC half-way through `predict --output` used to be "internal error: OSError" and leave a
    truncated CSV; now one line naming --output and the file, and no file (an older one kept whole)."""
    import errno

    import xialpha.models.prediction as prediction
    from xialpha.models.artifact import save_artifact

    artifact = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    (tmp_path / "docs.txt").write_text("wheat\noil\n")
    write = prediction.write_predictions

    def full(stream, *args):
        write(stream, *args)
        stream.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("xialpha.commands.predict.write_predictions", full)
    out = tmp_path / "out" / "labels.csv"
    out.parent.mkdir()
    out.write_text("an older result\n")
    code, _, err = _predict([str(artifact), "--input", str(tmp_path / "docs.txt"), "--output", str(out)], capsys)
    assert code == 2 and err == f"xialpha predict: error: --output: cannot write {out}: No space left on device\n", err
    assert [p.name for p in out.parent.iterdir()] == ["labels.csv"] and out.read_text() == "an older result\n"


def test_a_full_disk_while_saving_an_artefact_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    """ENOSPC while `select --refit` saves its artefact used to be "internal error: OSError"."""
    import errno

    import numpy as np

    from xialpha.errors import UserError
    from xialpha.models.artifact import save_artifact

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", full)
    with pytest.raises(UserError, match=r"^refit=: cannot write .*model: No space left on device$"):
        save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("pattern", [r"(?u)\b\w\w+\b", r"\b\w+\b"])
def test_the_usual_token_patterns_tokenise_as_re_and_scikit_learn_do(pattern):
    """The usual patterns (scikit-learn's default and its one-character variant) run on `re`, as
    before token patterns got a time budget and as scikit-learn does: the `regex` engine's \\w also
    matches combining marks (e + U+0301 would become a term), which would change the features."""
    import re

    from xialpha.features.preprocessing import make_analyzer

    text = "Ölpreise steigen: 2.5 mln dlrs, x_y z; naïve CAFÉ 北京 a1 _ e\u0301 \u00a0tab\there\n"
    assert make_analyzer(False, pattern, "none", "none")(text) == re.findall(pattern, text)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda model: model["models"][0].update(b=float("nan")),
            "model 0: its bias b is nan, expected a finite number",
        ),
        (lambda model: model["models"][1].update(b=float("-inf")), "model 1: its bias b is -inf, expected a finite"),
        (lambda model: model.update(models=[]), "model.json holds no models"),
    ],
)
def test_a_non_finite_bias_or_no_model_is_one_line(tmp_path, capsys, change, message):
    """Issue 48.9: a NaN or inf bias was accepted (every decision NaN, exit 0); "models": [] was an
    internal error."""
    import json

    from xialpha.models.artifact import save_artifact

    artifact = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    model = json.loads((artifact / "model.json").read_text())
    change(model)
    (artifact / "model.json").write_text(json.dumps(model))  # NaN and Infinity: Python's json reads them back
    _rehash(artifact, "model.json")
    (tmp_path / "docs.txt").write_text("wheat harvest\n")
    code, out, err = _predict([str(artifact), "--input", str(tmp_path / "docs.txt")], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err, err
    assert "internal error" not in err
