"""Issue 43.1: mistakes are answered first. A spec is read and checked, and a local corpus's paths
and columns looked at, before the sweep stack is imported or a cluster started: a typo comes back
with no numpy, scikit-learn, numba, pyarrow or Dask imported, and a wrong corpus path or column
before Dask's distributed (which starts clusters) is imported at all."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "pandas", "sklearn", "numba", "pyarrow", "dask", "distributed")


def _imported(stderr: str) -> set[str]:
    """The top-level packages `python -X importtime` reports as imported."""
    return {
        line.split("|")[2].strip().split(".")[0]
        for line in stderr.splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    }


def _sweep(tmp_path, spec_text: str, *arguments: str) -> subprocess.CompletedProcess:
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text, encoding="utf-8")
    command = [sys.executable, "-X", "importtime", "-m", "xialpha.cli", "sweep", str(spec), *arguments]
    return subprocess.run(
        [*command, "--store", str(tmp_path / "store")], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )


def _message(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if not line.startswith("import time:")]


def test_a_spec_typo_is_refused_with_nothing_heavy_imported(tmp_path):
    done = _sweep(tmp_path, '[corpus]\nloader = "synthetic"\n[svm]\nCs = [1.0]\n')
    assert done.returncode == 2, done.stderr[-2000:]
    assert _message(done) == [f"xialpha sweep: error: {tmp_path / 'spec.toml'}: svm.Cs: unknown key; did you mean C?"]
    assert not _imported(done.stderr) & set(HEAVY), sorted(_imported(done.stderr) & set(HEAVY))
    assert not (tmp_path / "store").exists()


def test_a_size_and_a_kernel_are_checked_without_dask_or_numpy(tmp_path):
    """gram_memory_limit is read as Dask reads sizes, and kernels are checked, without importing either."""
    text = (
        '[sweep]\ngram_memory_limit = "2 GiB"\n[corpus]\nloader = "synthetic"\n'
        '[[kernels]]\nname = "linera"\n[svm]\nC = [1.0]\n'
    )
    done = _sweep(tmp_path, text)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "kernels[0].name: " in _message(done)[0] and "did you mean linear?" in _message(done)[0]
    assert not _imported(done.stderr) & set(HEAVY)


@pytest.mark.parametrize(
    "corpus, message",
    [
        ('path = "missing.csv"', "corpus.path: {dir}/missing.csv does not exist"),
        (
            'path = "docs.csv"\ntext_column = "text"',
            "corpus.text_column: {dir}/docs.csv has no column 'text' (columns: label, body)",
        ),
        (
            'path = "docs.csv"\ntext_column = "body"\nlabel_column = "labels"',
            "corpus.label_column: {dir}/docs.csv has no column 'labels'; did you mean label? (columns: label, body)",
        ),
    ],
    ids=["path", "text-column", "label-column"],
)
def test_a_wrong_corpus_path_or_column_is_refused_before_a_cluster_starts(tmp_path, corpus, message):
    """Before issue 43 these came from the workers, after `starting cluster` and `loading corpus`."""
    (tmp_path / "docs.csv").write_text("label,body\nspam,buy now\nham,see you\n", encoding="utf-8")
    done = _sweep(tmp_path, f'[corpus]\nloader = "table"\n{corpus}\n[svm]\nC = [1.0]\n')
    assert done.returncode == 2, done.stderr[-2000:]
    spec = tmp_path / "spec.toml"
    assert _message(done) == [f"xialpha sweep: error: {spec}: {message.format(dir=tmp_path)}"]
    assert "distributed" not in _imported(done.stderr)
    assert not (tmp_path / "store").exists()


def test_the_api_looks_at_the_corpus_before_it_starts_a_cluster(tmp_path, monkeypatch):
    """xialpha.sweep: the same look, before `connect` is called."""
    import xialpha
    from xialpha.errors import UserError
    from xialpha.jobs import sweep as jobs_sweep

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started for a corpus that does not exist")

    monkeypatch.setattr(jobs_sweep, "connect", no_cluster)
    spec = {"corpus": {"loader": "table", "path": str(tmp_path / "gone.csv")}, "svm": {"C": [1.0]}}
    with pytest.raises(UserError, match="gone.csv does not exist"):
        xialpha.sweep(spec, store=str(tmp_path / "store"))
