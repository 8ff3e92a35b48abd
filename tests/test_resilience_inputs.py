"""Malformed specs, corpora, files and arguments: each is one line on stderr naming what is wrong,
exit code 2, and the result store is byte-for-byte unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from xialpha.cli import main

pytestmark = pytest.mark.cluster

GOOD = """
[sweep]
id = "inputs"
[corpus]
loader = "synthetic"
n_docs = 150
n_categories = 2
seed = 5
train_split = "train"
[svm]
C = [1.0]
[cluster]
workers = 1
"""


def _replace(old: str, new: str):
    return lambda tmp: GOOD.replace(old, new)


def _corpus(section: str):
    """GOOD with its [corpus] table replaced by `section` (formatted with the case's tmp dir)."""
    start, end = GOOD.index("[corpus]"), GOOD.index("[svm]")
    return lambda tmp: GOOD[:start] + section.format(tmp=tmp) + "\n" + GOOD[end:]


def _write(name: str, data: str | bytes):
    def make(tmp: Path) -> None:
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return make


# (case id, spec text from the tmp dir, files to create, extra arguments, expected message part)
CASES = [
    ("spec-missing", None, None, [], "spec file not found"),
    ("not-toml", lambda tmp: "[sweep\nid = 1", None, [], "not valid TOML"),
    ("unknown-table", lambda tmp: GOOD + "[sweeps]\nid = 'x'\n", None, [], "sweeps: unknown key"),
    ("no-corpus", lambda tmp: "[svm]\nC = [1.0]\n", None, [], "corpus: is required"),
    ("unknown-loader", _replace('"synthetic"', '"synthetik"'), None, [], "unknown corpus loader 'synthetik'"),
    ("loader-argument", _replace("seed = 5", "seeds = 5"), None, [], "unknown argument seeds"),
    ("negative-C", _replace("C = [1.0]", "C = [-1.0]"), None, [], "svm.C[0]: must be > 0"),
    ("bad-sweep-id", _replace('id = "inputs"', 'id = "../x"'), None, [], "sweep.id: must be"),
    ("bad-kernel", lambda tmp: GOOD + '[[kernels]]\nname = "rbf"\ngamma = 0\n', None, [], "kernels[0].gamma"),
    ("bad-stemming", lambda tmp: GOOD + '[[preprocessing]]\nstemming = "snowball-x"\n', None, [], "preprocessing[0]"),
    ("cluster-kind", _replace("workers = 1", 'kind = "yarn"'), None, [], "cluster.kind: must be one of"),
    ("slurm-unknown-key", _replace("workers = 1", 'kind = "slurm"\nmemory_limit = "1GiB"\nnodes = 2'),
     None, [], 'cluster.nodes: unknown key for kind "slurm"'),
    ("slurm-walltime", _replace("workers = 1", 'kind = "slurm"\nmemory_limit = "1GiB"\nwalltime = "1 hour"'),
     None, [], "cluster.walltime: must be a SLURM time"),
    ("kubernetes-no-image", _replace("workers = 1", 'kind = "kubernetes"'), None, [], "cluster.image: is required"),
    ("memory-limit", _replace("workers = 1", 'memory_limit = "big"'), None, [], "cluster.memory_limit: must be a size"),
    ("tls-file-missing", lambda tmp: GOOD + '[cluster.security]\nca_file = "ca.pem"\ncert_file = "c.pem"\nkey_file = "k.pem"\n',
     None, [], "cluster.security.ca_file: file not found"),
    ("tls-not-pem", lambda tmp: GOOD + '[cluster.security]\nca_file = "ca.pem"\ncert_file = "ca.pem"\nkey_file = "ca.pem"\n',
     _write("ca.pem", "not a certificate\n"), [], "cluster.security.ca_file: not a PEM CA certificate"),
    ("tls-address-without-security", _replace("workers = 1", 'address = "tls://127.0.0.1:8786"'),
     None, [], "cluster.address: a tls:// address needs [cluster.security]"),
    ("bad-scheduler-argument", _replace("C = [1.0]", "C = [2.0]"), None, ["--scheduler", "scheduler:port"], "--scheduler: not a scheduler address"),
    ("workers-argument", _replace("C = [1.0]", "C = [2.0]"), None, ["--workers", "0"], "--workers: must be >= 1"),
    ("unreachable-scheduler", _replace("C = [1.0]", "C = [2.0]"), None, ["--scheduler", "tcp://127.0.0.1:9"],
     "--scheduler: cannot reach a Dask scheduler"),
    ("no-such-split", _replace('train_split = "train"', 'train_split = "training"'), None, [],
     "corpus.train_split: the corpus has no split 'training'"),
    ("no-category", lambda tmp: GOOD.replace('train_split = "train"', 'train_split = "train"\n[corpus.categories]\nnames = ["nope"]'),
     None, [], "unknown category 'nope'"),
    ("holdout-without-test", lambda tmp: GOOD + "[estimators]\nholdout = true\n", None, [], "estimators.holdout: needs corpus.test_split"),
    ("corpus-dir-missing", _corpus('[corpus]\nloader = "directory"\npath = "{tmp}/nowhere"'), None, [], "nowhere"),
    ("svmlight-corrupt", _corpus('[corpus]\nloader = "svmlight"\npath = "{tmp}/bad.svm"'),
     _write("bad.svm", "1 3:0.5 x:y\n-1 1:zz\n"), [], "bad.svm"),
    ("table-no-label-column", _corpus('[corpus]\nloader = "table"\npath = "{tmp}/docs.csv"'),
     _write("docs.csv", "text,topic\nhello world,a\n"), [], "label"),
    ("reuters-garbage", _corpus('[corpus]\nloader = "reuters21578"\npath = "{tmp}/reuters"'),
     _write("reuters/reut2-000.sgm", b"\x00\xff garbage"), [], "reuters"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store holding one finished sweep, written by a real `xialpha sweep` process."""
    root = tmp_path_factory.mktemp("inputs")
    spec = root / "good.toml"
    spec.write_text(GOOD)
    done = subprocess.run([sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(root / "store"), "--quiet"],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return root / "store"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sweep(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["sweep", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name, spec_text, files, extra, message", CASES, ids=[case[0] for case in CASES])
def test_malformed_input_is_one_line_exit_2_and_the_store_is_unchanged(
        name, spec_text, files, extra, message, store, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")
    import dask

    dask.config.refresh()
    if files:
        files(tmp_path)
    spec = tmp_path / "spec.toml"
    if spec_text is not None:
        spec.write_text(spec_text(tmp_path))
    before = _snapshot(store)
    code, err = _sweep([str(spec), "--store", str(store), "--quiet", *extra], capsys)
    assert code == 2, err
    assert err.startswith("xialpha sweep: error: ") and err.count("\n") == 1, err
    assert message in err
    assert _snapshot(store) == before


@pytest.mark.parametrize("make_store, message", [
    (lambda tmp: _write("store", "a file")(tmp), "is a file, not a store directory"),
    (lambda tmp: _write("store/notes.txt", "mine")(tmp), "not a xialpha store"),
    (lambda tmp: _write("store/_xialpha_store.json", "{broken")(tmp), "_xialpha_store.json"),
], ids=["store-is-a-file", "store-is-another-directory", "store-marker-corrupt"])
def test_a_bad_store_is_refused_and_left_as_it_was(make_store, message, tmp_path, capsys):
    make_store(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD)
    target = tmp_path / "store"
    before = target.read_bytes() if target.is_file() else _snapshot(target)
    code, err = _sweep([str(spec), "--store", str(target), "--quiet"], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert (target.read_bytes() if target.is_file() else _snapshot(target)) == before
