"""Malformed specs, corpora, files and arguments: each is one line on stderr naming what is wrong,
exit code 2, and the result store is byte-for-byte unchanged; nothing hangs (a FIFO, a huge grid,
an unreachable store) and nothing is half-read. (Artefacts and predict: test_resilience_artifacts.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fuzzing import swept_store, time_bound

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


def _write(name: str, data: str | bytes, *more: tuple[str, str | bytes]):
    def make(tmp: Path) -> None:
        for relative, content in ((name, data), *more):
            path = tmp / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())

    return make


def _docs(extra):
    """A two-category tree under tmp/docs, then `extra(tmp)` (a FIFO, a symbolic link...)."""

    def make(tmp: Path) -> None:
        _write("docs/a/1", "alpha beta", ("docs/a/2", "beta gamma"), ("docs/b/1", "gamma delta"))(tmp)
        extra(tmp)

    return make


HUGE = "1" + "0" * 400
GRID_10_6 = "C = [%s]\nj = [%s]" % (
    ", ".join(str(i + 1) for i in range(1000)),
    ", ".join(str(i + 1) for i in range(1000)),
)
SGML = """<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="1"><TOPICS><D>earn</D></TOPICS>
<TEXT><TITLE>PROFIT UP</TITLE><BODY>Net profit rose.</BODY></TEXT></REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="2"><TOPICS><D>acq</D></TOPICS>
<TEXT><TITLE>BID</TITLE><BODY>A takeover bid was made</BODY></TEXT></REUTERS>
"""


# (case id, spec text from the tmp dir, files to create, extra arguments, expected message part)
CASES = [
    ("spec-missing", None, None, [], "spec file not found"),
    ("not-toml", lambda tmp: "[sweep\nid = 1", None, [], "not valid TOML"),
    ("unknown-table", lambda tmp: GOOD + "[sweeps]\nid = 'x'\n", None, [], "sweeps: unknown key"),
    ("no-corpus", lambda tmp: "[svm]\nC = [1.0]\n", None, [], "corpus: is required"),
    ("unknown-loader", _replace('"synthetic"', '"synthetik"'), None, [], "unknown corpus loader 'synthetik'"),
    (
        "loader-argument",
        _replace("seed = 5", "seeds = 5"),
        None,
        [],
        "corpus.seeds: unknown key for corpus loader 'synthetic'; did you mean seed?",
    ),
    ("negative-C", _replace("C = [1.0]", "C = [-1.0]"), None, [], "svm.C[0]: must be > 0"),
    # before: libsvm never stopped (a sweep of 30 documents hung for good)
    (
        "tol-below-float64",
        _replace("C = [1.0]", "C = [1.0]\ntol = 1e-300"),
        None,
        [],
        "svm.tol: must be between 1e-12 and 1",
    ),
    ("bad-sweep-id", _replace('id = "inputs"', 'id = "../x"'), None, [], "sweep.id: must be"),
    ("bad-kernel", lambda tmp: GOOD + '[[kernels]]\nname = "rbf"\ngamma = 0\n', None, [], "kernels[0].gamma"),
    ("bad-stemming", lambda tmp: GOOD + '[[preprocessing]]\nstemming = "snowball-x"\n', None, [], "preprocessing[0]"),
    ("cluster-kind", _replace("workers = 1", 'kind = "yarn"'), None, [], "cluster.kind: must be one of"),
    (
        "slurm-unknown-key",
        _replace("workers = 1", 'kind = "slurm"\nmemory_limit = "1GiB"\nnodes = 2'),
        None,
        [],
        'cluster.nodes: unknown key for kind "slurm"',
    ),
    (
        "slurm-walltime",
        _replace("workers = 1", 'kind = "slurm"\nmemory_limit = "1GiB"\nwalltime = "1 hour"'),
        None,
        [],
        "cluster.walltime: must be a SLURM time",
    ),
    ("kubernetes-no-image", _replace("workers = 1", 'kind = "kubernetes"'), None, [], "cluster.image: is required"),
    ("memory-limit", _replace("workers = 1", 'memory_limit = "big"'), None, [], "cluster.memory_limit: must be a size"),
    (
        "tls-file-missing",
        lambda tmp: GOOD + '[cluster.security]\nca_file = "ca.pem"\ncert_file = "c.pem"\nkey_file = "k.pem"\n',
        None,
        [],
        "cluster.security.ca_file: file not found",
    ),
    (
        "tls-not-pem",
        lambda tmp: GOOD + '[cluster.security]\nca_file = "ca.pem"\ncert_file = "ca.pem"\nkey_file = "ca.pem"\n',
        _write("ca.pem", "not a certificate\n"),
        [],
        "cluster.security.ca_file: not a PEM CA certificate",
    ),
    (
        "tls-address-without-security",
        _replace("workers = 1", 'address = "tls://127.0.0.1:8786"'),
        None,
        [],
        "cluster.address: a tls:// address needs [cluster.security]",
    ),
    (
        "bad-scheduler-argument",
        _replace("C = [1.0]", "C = [2.0]"),
        None,
        ["--scheduler", "scheduler:port"],
        "--scheduler: not a scheduler address",
    ),
    ("workers-argument", _replace("C = [1.0]", "C = [2.0]"), None, ["--workers", "0"], "--workers: must be >= 1"),
    (
        "unreachable-scheduler",
        _replace("C = [1.0]", "C = [2.0]"),
        None,
        ["--scheduler", "tcp://127.0.0.1:9"],
        "--scheduler: no Dask scheduler listens at tcp://127.0.0.1:9",
    ),
    (
        "no-such-split",
        _replace('train_split = "train"', 'train_split = "training"'),
        None,
        [],
        "corpus.train_split: the corpus has no split 'training'",
    ),
    (
        "no-category",
        lambda tmp: GOOD.replace(
            'train_split = "train"', 'train_split = "train"\n[corpus.categories]\nnames = ["nope"]'
        ),
        None,
        [],
        "corpus.categories.names: unknown category 'nope'",
    ),
    # before: "corpus.categories.categories: no category ..." (the key named twice, not the filter)
    (
        "no-category-left",
        lambda tmp: GOOD.replace(
            'train_split = "train"', 'train_split = "train"\n[corpus.categories]\nmin_positives = 100000'
        ),
        None,
        [],
        "corpus.categories.min_positives: no category of corpus 'synthetic-150x2-seed5' is left (min_positives = "
        "100000)",
    ),
    (
        "holdout-without-test",
        lambda tmp: GOOD + "[estimators]\nholdout = true\n",
        None,
        [],
        "estimators.holdout: needs corpus.test_split",
    ),
    ("corpus-dir-missing", _corpus('[corpus]\nloader = "directory"\npath = "{tmp}/nowhere"'), None, [], "nowhere"),
    (
        "svmlight-corrupt",
        _corpus('[corpus]\nloader = "svmlight"\npath = "{tmp}/bad.svm"'),
        _write("bad.svm", "1 3:0.5 x:y\n-1 1:zz\n"),
        [],
        "bad.svm",
    ),
    (
        "table-no-label-column",
        _corpus('[corpus]\nloader = "table"\npath = "{tmp}/docs.csv"'),
        _write("docs.csv", "text,topic\nhello world,a\n"),
        [],
        "spec.toml: corpus.label_column: ",
    ),
    (
        "reuters-garbage",
        _corpus('[corpus]\nloader = "reuters21578"\npath = "{tmp}/reuters"'),
        _write("reuters/reut2-000.sgm", b"\x00\xff garbage"),
        [],
        "reuters",
    ),
    # numbers no field takes: before, OverflowError tracebacks (exit 1)
    ("C-int-too-large-for-a-float", _replace("C = [1.0]", f"C = [{HUGE}]"), None, [], "svm.C[0]: integer out of range"),
    (
        "gamma-inf",
        lambda tmp: GOOD + '[[kernels]]\nname = "rbf"\ngamma = inf\n',
        None,
        [],
        "kernels[0].gamma: must be a finite number",
    ),
    (
        "gamma-int-too-large",
        lambda tmp: GOOD + f'[[kernels]]\nname = "rbf"\ngamma = {HUGE}\n',
        None,
        [],
        "kernels[0].gamma: integer out of range",
    ),
    (
        "min-df-inf",
        lambda tmp: GOOD + "[[preprocessing]]\nmin_df = inf\n",
        None,
        [],
        "preprocessing[0].min_df: must be a finite number",
    ),
    (
        "n-docs-int-too-large",
        _replace("n_docs = 150", f"n_docs = {HUGE}"),
        None,
        [],
        "corpus.n_docs: integer out of range",
    ),
    (
        "n-docs-too-many",
        _replace("n_docs = 150", "n_docs = 1000000000000000"),
        None,
        [],
        "n_docs: must be at most 1,000,000,000, got 1,000,000,000,000,000",
    ),
    (
        "size-malformed",
        _replace('id = "inputs"', 'id = "inputs"\ngram_memory_limit = "1..5kB"'),
        None,
        [],
        "sweep.gram_memory_limit: must be a size like 8GiB or 500MB, got '1..5kB'",
    ),
    (
        "size-overflow",
        _replace("workers = 1", 'memory_limit = "1e999GB"'),
        None,
        [],
        "cluster.memory_limit: must be a size",
    ),
    (
        "spec-not-utf8",
        lambda tmp: GOOD.encode() + b"# caf\xe9\n",
        None,
        [],
        "spec.toml: not UTF-8 text (byte 0xe9 on line 14)",
    ),
    (
        "loader-path-a-list",
        _corpus('[corpus]\nloader = "directory"\npath = ["{tmp}/docs"]'),
        _docs(lambda tmp: None),
        [],
        "corpus.path: must be a string or a path",
    ),
    (
        "table-json-nested-deeply",
        _corpus('[corpus]\nloader = "table"\npath = "{tmp}/deep.jsonl"'),
        _write("deep.jsonl", '{"text": "a", "label": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
        [],
        "line 1: unreadable JSON (values nested too deeply)",
    ),
    (
        "table-json-huge-number",
        _corpus('[corpus]\nloader = "table"\npath = "{tmp}/huge.jsonl"'),
        _write("huge.jsonl", '{"text": "a", "label": ' + "7" * 10_000 + "}\n"),
        [],
        "line 1: unreadable JSON (Exceeds the limit",
    ),
    # caps instead of hangs: before, a FIFO blocked forever, a 10^6 grid and 10^6 workers ran for minutes
    (
        "fifo-in-corpus",
        _corpus('[corpus]\nloader = "directory"\npath = "{tmp}/docs"'),
        _docs(lambda tmp: os.mkfifo(tmp / "docs/b/2")),
        [],
        "docs/b/2: is a FIFO (named pipe), not a regular file",
    ),
    (
        "grid-of-a-million",
        _replace("C = [1.0]", GRID_10_6),
        None,
        [],
        "sweep.max_configs: the grid has 1,000,000 configurations per category",
    ),
    (
        "grid-of-a-million-dry-run",
        _replace("C = [1.0]", GRID_10_6),
        None,
        ["--dry-run"],
        "1,000 C values x 1,000 j values",
    ),
    (
        "workers-argument-a-million",
        _replace("C = [1.0]", "C = [3.0]"),
        None,
        ["--workers", "1000000"],
        "--workers: 1,000,000 workers is more than cluster.max_workers = 1,024",
    ),
    (
        "cluster-workers-a-million",
        _replace("workers = 1", "workers = 1000000"),
        None,
        [],
        "cluster.workers: 1,000,000 workers is more than cluster.max_workers = 1,024",
    ),
    # half-read corpora: before, loaded what came before the damage with exit 0
    (
        "reuters-truncated",
        _corpus('[corpus]\nloader = "reuters21578"\npath = "{tmp}/reuters"\nsplit = "all"'),
        _write("reuters/reut2-000.sgm", SGML[: SGML.index("A takeover")]),
        [],
        "reut2-000.sgm: story 2 (NEWID=2, line 3) has no </REUTERS>",
    ),
    (
        "csv-unterminated-quote",
        _corpus('[corpus]\nloader = "table"\npath = "{tmp}/docs.csv"'),
        _write("docs.csv", 'text,label\nfine,a\nopen,"b\nswallowed,c\n'),
        [],
        "docs.csv, line 3: a quoted field is never closed",
    ),
    (
        "csv-nul-bytes",
        _corpus('[corpus]\nloader = "table"\npath = "{tmp}/docs.csv"'),
        _write("docs.csv", "text,label\nfine,a\nbin\0ary,b\n"),
        [],
        "docs.csv, line 3: holds a NUL byte",
    ),
    # symbolic links: before, followed to /dev/zero (reading forever) and to files outside the corpus
    (
        "symlink-out-of-the-corpus",
        _corpus('[corpus]\nloader = "directory"\npath = "{tmp}/docs"'),
        _docs(lambda tmp: (tmp / "docs/b/2").symlink_to("/etc/hostname")),
        [],
        "docs/b/2 is a symbolic link to /etc/hostname, outside the corpus",
    ),
    (
        "symlink-to-a-device",
        _corpus('[corpus]\nloader = "directory"\npath = "{tmp}/docs"\nfollow_symlinks = true'),
        _docs(lambda tmp: (tmp / "docs/b/2").symlink_to("/dev/zero")),
        [],
        "docs/b/2: is a character device, not a regular file",
    ),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store holding one finished sweep, written by a real `xialpha sweep` process."""
    return swept_store(tmp_path_factory.mktemp("inputs"), GOOD)


@pytest.fixture(autouse=True)
def answers_within_two_minutes():
    """A hang (a FIFO read, a grid expanded for minutes) fails the test instead of stalling the suite."""
    with time_bound(120, "this test"):
        yield


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sweep(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["sweep", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name, spec_text, files, extra, message", CASES, ids=[case[0] for case in CASES])
def test_malformed_input_is_one_line_exit_2_and_the_store_is_unchanged(
    name, spec_text, files, extra, message, store, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")
    import dask

    dask.config.refresh()
    if files:
        files(tmp_path)
    spec = tmp_path / "spec.toml"
    if spec_text is not None:
        text = spec_text(tmp_path)
        spec.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = _snapshot(store)
    code, err = _sweep([str(spec), "--store", str(store), "--quiet", *extra], capsys)
    assert code == 2, err
    assert err.startswith("xialpha sweep: error: ") and err.count("\n") == 1, err
    assert message in err
    assert _snapshot(store) == before


@pytest.mark.parametrize(
    "make_store, message",
    [
        (lambda tmp: _write("store", "a file")(tmp), "is a file, not a store directory"),
        (lambda tmp: _write("store/notes.txt", "mine")(tmp), "not a xialpha store"),
        (lambda tmp: _write("store/_xialpha_store.json", "{broken")(tmp), "_xialpha_store.json"),
    ],
    ids=["store-is-a-file", "store-is-another-directory", "store-marker-corrupt"],
)
def test_a_bad_store_is_refused_and_left_as_it_was(make_store, message, tmp_path, capsys):
    make_store(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD)
    target = tmp_path / "store"
    before = target.read_bytes() if target.is_file() else _snapshot(target)
    code, err = _sweep([str(spec), "--store", str(target), "--quiet"], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert (target.read_bytes() if target.is_file() else _snapshot(target)) == before


def test_a_store_path_that_is_a_symlink_loop_is_one_line(tmp_path, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD)
    for argv in (
        ["sweep", str(spec), "--store", str(tmp_path / "a"), "--dry-run"],
        ["store", "ls", str(tmp_path / "a")],
        ["select", str(tmp_path / "a"), "--sweep", "inputs"],
    ):
        capsys.readouterr()
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Too many levels of symbolic links" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "spec.toml"]


@pytest.mark.parametrize(
    "uri",
    [
        "gs://xialpha-no-such-bucket-16/store",
        "s3://bucket/store?endpoint_override=127.0.0.1:9&scheme=http&region=us-east-1",
        # before: "internal error: ClientConnectorError" (the probe of the root passed)
        "http://127.0.0.1:9/store",
    ],
)
def test_an_unreachable_remote_store_fails_fast_with_one_line(uri, monkeypatch, capsys):
    # before: gs:// retried for 15 minutes; s3:// with a closed port printed an OSError traceback
    monkeypatch.setenv("XIALPHA_STORE_TIMEOUT", "3")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for argv in (["store", "ls", uri], ["report", uri, "--sweep", "x"]):
        capsys.readouterr()
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert err.startswith(f"xialpha {argv[0]}: error: store {uri}: ")
        assert "no answer within 3 s" in err or "cannot reach it" in err


def test_huge_draws_and_negative_seeds_are_refused_before_any_work(store, capsys):
    capsys.readouterr()
    assert main(["select", str(store), "--sweep", "inputs", "--save"]) == 0
    out = capsys.readouterr().out
    selection_id = out.split("stored selection ", 1)[1].split()[0]
    before = _snapshot(store)
    # before: trained the selection, then numpy failed to draw 10^20 samples (a traceback)
    code = main(["certify", str(store), "--selection", selection_id, "--test-split", "test", "--draws", str(10**20)])
    err = capsys.readouterr().err
    assert (
        code == 2
        and err
        == "xialpha certify: error: --draws: must be between 1,000 and 1,000,000, got 100,000,000,000,000,000,000\n"
    )
    assert _snapshot(store) == before
    # before: a negative seed failed in numpy after the training (a traceback)
    code = main(["certify", str(store), "--selection", selection_id, "--test-split", "test", "--seed", "-1"])
    assert code == 2 and capsys.readouterr().err == "xialpha certify: error: --seed: must be >= 0, got -1\n"
    assert _snapshot(store) == before


def test_tex_characters_in_category_names_are_drawn_as_typed(tmp_path, capsys):
    from xialpha.estimators.metrics import Estimate
    from xialpha.storage.opening import open_store
    from xialpha.storage.schema import estimate_values

    names = ["$^$", "$x_1$ & 100% #1"]  # before: matplotlib's mathtext failed on "$^$" (a ValueError traceback)
    rows = []
    for category in names:
        for C in (0.1, 1.0, 10.0):
            estimate = Estimate("xa", 100, 10, 3, int(C))
            rows.append(
                {
                    "sweep_id": "tex",
                    "run_id": "r",
                    "status": "ok",
                    "data_fingerprint": "fp",
                    "config_key": f"{category}-{C}",
                    "category": category,
                    "preprocessing_id": "pp",
                    "kernel": "linear",
                    "kernel_id": "lin",
                    "C": C,
                    "j": 1.0,
                    "rho": 1.0,
                    "n": 100,
                    "n_pos": 10,
                    "n_sv": 20,
                    **estimate_values(estimate),
                }
            )
    open_store(str(tmp_path / "store"), create=True, writable=True).datasets.write_results(rows)
    page = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "store"), "--sweep", "tex", "--estimator", "xa", "--html", str(page)]) == 0
    text = page.read_text()
    assert "$^$" in text and "$x_1$ &amp; 100% #1" in text
    # the curves are inline SVG (reports/svg.py), each panel titled by its category's name as typed
    titles = re.findall(r"<svg[^>]*>.*?</svg>", text, flags=re.S)
    assert any(">$^$<" in figure for figure in titles) and any(">$x_1$ &amp; 100% #1<" in f for f in titles)
    # the page's curves are one figure, a panel per category, each titled by its name as typed
    import xialpha.plot

    figure = xialpha.plot.curves(tmp_path / "store", sweep="tex", estimator="xa")
    assert sorted(ax.get_title() for ax in figure.axes if ax.get_title()) == sorted(names)


@pytest.mark.parametrize("command", [["store", "ls", "{store}"], ["report", "{store}", "--sweep", "inputs"]])
def test_stdout_closed_early_is_quiet(store, command):
    # `xialpha store ls STORE | head -0`: before, a BrokenPipeError traceback on stderr
    argv = [sys.executable, "-m", "xialpha.cli", *(part.format(store=store) for part in command)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1, err
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err, err


def test_min_df_beyond_the_corpus_says_the_vocabulary_is_empty(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD + "[[preprocessing]]\nmin_df = 100000\n")
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 1, done.stderr
    failures = [line for line in done.stderr.splitlines() if line.startswith("  failed:")]
    assert (
        len(failures) == 2 and "r_delta2" not in done.stderr
    )  # before: "r_delta2: must be a finite number > 0, got 0.0"
    assert all(
        "vocabulary is empty after preprocessing: min_df=100000 and max_df=1 keep none of the" in line
        for line in failures
    )
    # before: each local worker also logged "Compute Failed" with the task's traceback
    assert "Traceback" not in done.stderr and "Compute Failed" not in done.stderr, done.stderr


def test_an_error_carrying_its_parameter_names_the_flag_from_that_field_not_its_text():
    """Issue 32: the CLI read parameters out of messages with a regex; an error that carries them
    (UserError(parameter=)) is named by the field, and its text is left as written."""
    from xialpha.cli import _classify, _flags, build_parser
    from xialpha.errors import UserError

    flags = _flags(build_parser(), "select")
    error = UserError("must be >= 0, got -1 (as in runners_up=-1)", parameter="runners_up")
    assert str(error) == "runners_up=: must be >= 0, got -1 (as in runners_up=-1)"
    assert _classify(error, flags) == (2, "error: --runners-up: must be >= 0, got -1 (as in runners_up=-1)")
    both = UserError("at least one cost must be > 0", parameter=("cost_fn", "cost_fp"))
    assert _classify(both, flags) == (2, "error: --cost-fn, --cost-fp: at least one cost must be > 0")
    assert _classify(UserError("no flag", parameter="alpha"), _flags(build_parser(), "sweep")) == (
        2,
        "error: alpha=: no flag",
    )
    assert _classify(UserError("per category", parameter="per_category"), flags) == (2, "error: --global: per category")
