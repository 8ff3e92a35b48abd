"""Sweep spec validation: good specs parse into the expected grid, bad keys name their path."""

from __future__ import annotations

import pytest

from xialpha.errors import UserError
from xialpha.spec.sweep import load_spec, parse_spec

MINIMAL = """
[corpus]
loader = "synthetic"
n_docs = 100
"""


def test_minimal_spec_defaults():
    spec = parse_spec(MINIMAL, default_id="mini")
    assert spec.id == "mini"
    assert spec.corpus.loader == "synthetic" and spec.corpus.args == {"n_docs": 100}
    assert [k.name for k in spec.kernels] == ["linear"]
    assert len(spec.preprocessings) == 1
    assert spec.C == (1.0,) and spec.j == (1.0,) and spec.estimators.rhos == (1.0,)
    assert spec.cluster.kind == "local"
    assert spec.estimators["span"] and spec.selection_estimator == "span"


def test_selection_estimator_falls_back_to_xi_alpha_when_span_is_off():
    spec = parse_spec(MINIMAL + "[estimators]\nspan = false\n")
    assert not spec.estimators["span"] and spec.selection_estimator == "xa"


def test_lists_expand_to_grids():
    spec = parse_spec(
        MINIMAL
        + """
[[preprocessing]]
stemming = ["none", "porter"]
min_df = [1, 3]
[[kernels]]
name = "linear"
[[kernels]]
name = "rbf"
gamma = [0.5, 2.0]
[svm]
C = [0.1, 1, 10]
j = [1, 2]
[estimators]
rho = [1, 2]
"""
    )
    assert len(spec.preprocessings) == 4
    assert {(p.stemming, p.min_df) for p in spec.preprocessings} == {
        ("none", 1),
        ("none", 3),
        ("porter", 1),
        ("porter", 3),
    }
    assert [(k.name, k.gamma) for k in spec.kernels] == [("linear", None), ("rbf", 0.5), ("rbf", 2.0)]
    assert spec.C == (0.1, 1.0, 10.0) and spec.j == (1.0, 2.0) and spec.estimators.rhos == (1.0, 2.0)


@pytest.mark.parametrize(
    "extra, message",
    [
        ('[[kernels]]\nname = "linear"\n[[kernels]]\nname = "rbf"\ngamma = -1', "kernels[1].gamma: must be > 0"),
        ("[svm]\nC = [1, 0]", "svm.C[1]: must be > 0"),
        ("[svm]\nC = []", "svm.C: must not be empty"),
        ('[svm]\nC = "big"', "svm.C: must be a number, a list of numbers or \"auto\", got 'big'"),
        ('[svm]\nC = ["auto"]', "svm.C[0]: must be a number"),
        ("[svm]\ncost = 1", "svm.cost: unknown key"),
        ("[estimators]\nrho = [0]", "estimators.rho[0]: must be > 0"),
        ("[estimators]\nkfold = 1", "estimators.kfold: must be 0 (off) or >= 2"),
        ('[estimators]\nloo_prune = "lemma"', "estimators.loo_prune: must be one of support, xi_alpha"),
        ("[estimators]\nholdout = true", "estimators.holdout: needs corpus.test_split"),
        ('[sweep]\nid = "a/b"', "sweep.id: must be 1-64 letters"),
        ('[sweep]\nmetric = "auc"', "sweep.metric: must be one of"),
        ('[sweep]\nestimator = "span"\n[estimators]\nspan = false', "sweep.estimator: 'span' is not computed"),
        ('[sweep]\nestimator = "loo"', "sweep.estimator: 'loo' is not computed"),
        ('[cluster]\nkind = "cloud"', "cluster.kind: must be one of"),
        ('[cluster]\nkind = "address"', "cluster.address: is required"),
        ('[cluster.security]\nca_file = "ca.pem"', "cluster.security: needs ca_file, cert_file and key_file"),
        ("[cluster]\nworkers = 0", "cluster.workers: must be >= 1"),
        ("[[preprocessing]]\nstemmer = 'porter'", "preprocessing[0]"),
        ("[unknown]\nx = 1", "unknown: unknown key"),
    ],
)
def test_bad_keys_name_their_path(extra, message):
    with pytest.raises(UserError) as info:
        parse_spec(MINIMAL + extra, source="bad.toml")
    assert message in str(info.value)
    assert str(info.value).startswith("bad.toml: ")
    assert "\n" not in str(info.value)


def test_missing_corpus_and_bad_toml():
    with pytest.raises(UserError, match="corpus: is required"):
        parse_spec("[svm]\nC = 1")
    with pytest.raises(UserError, match="not valid TOML"):
        parse_spec("[corpus\nloader=1")


def test_load_spec_resolves_corpus_paths_relative_to_the_file(tmp_path):
    (tmp_path / "sub").mkdir()
    spec_file = tmp_path / "sub" / "s.toml"
    spec_file.write_text('[corpus]\nloader = "directory"\npath = "../data"\n')
    spec = load_spec(spec_file)
    assert spec.id == "s"
    assert spec.corpus.args["path"] == str((tmp_path / "data").resolve())
    with pytest.raises(UserError, match="spec file not found"):
        load_spec(tmp_path / "missing.toml")


def test_shipped_configs_parse():
    from pathlib import Path

    from xialpha.spec.drift import load_drift_spec

    configs = sorted((Path(__file__).resolve().parents[2] / "config").glob("*.toml"))
    assert len(configs) >= 4, "config/ lacks the shipped specs"
    for path in configs:
        (load_drift_spec if path.stem.startswith("drift") else load_spec)(path)


def test_unknown_category_names_its_spec_field(tmp_path):
    from distributed import Client

    from xialpha.jobs.sweep import prepare
    from xialpha.storage.opening import open_store

    with Client(processes=False, n_workers=1, dashboard_address=None) as client:
        spec = parse_spec(MINIMAL + '[corpus.categories]\nnames = ["nope"]\n')
        with pytest.raises(UserError, match=r"^corpus\.categories\.names: unknown category 'nope'"):
            prepare(spec, open_store(str(tmp_path / "store"), create=True, writable=True), client, "a")
        spec = parse_spec(MINIMAL + '[corpus.categories]\nnames = ["cat_01"]\n')
        with pytest.raises(
            UserError, match=r"unknown category 'cat_01' .*; did you mean cat01\? \(most frequent: cat0"
        ):
            prepare(spec, open_store(str(tmp_path / "store"), create=True, writable=True), client, "b")
        spec = parse_spec(MINIMAL + 'train_split = "training"\ntest_fraction = 0.3\n')
        with pytest.raises(
            UserError, match=r"^<spec>: corpus.train_split: .*'training'; did you mean train\? \(it has: test, train\)"
        ):
            prepare(spec, open_store(str(tmp_path / "store"), create=True, writable=True), client, "c")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[[preprocessing]]\nmin_dif = 2", "preprocessing[0].min_dif: unknown key; did you mean min_df?"),
        ('[[kernels]]\nname = "rbf"\ngama = 0.5', "kernels[0].gama: unknown key; did you mean gamma?"),
        ("[estimators]\nholdot = true", "estimators.holdot: unknown key; did you mean holdout?"),
        ("[svm]\nCc = [1.0]", "svm.Cc: unknown key; did you mean C?"),
        ("[[preprocessing]]\nzzz = 2", "preprocessing[0].zzz: unknown key (keys: lowercase, token_pattern, "),
        ("[corpus.categories]\ntop = 2", "corpus.categories.top: unknown key; did you mean top_k?"),
        (
            '[sweep]\nestimator = "spna"',
            "sweep.estimator: must be one of xa, loo, holdout, kfold, bootstrap, span, "
            "xa_ext, got 'spna'; did you mean span?",
        ),
    ],
)
def test_unknown_keys_suggest_the_closest_key(extra, message):
    with pytest.raises(UserError) as error:
        parse_spec(MINIMAL + extra, source="my.toml")
    assert str(error.value).startswith(f"my.toml: {message}")


def test_unknown_loader_arguments_and_loaders_suggest_the_closest(tmp_path):
    with pytest.raises(
        UserError, match=r"^s.toml: corpus.n_doc: unknown key for corpus loader 'synthetic'; did you mean n_docs\?$"
    ):
        parse_spec(MINIMAL.replace("n_docs", "n_doc"), source="s.toml")
    with pytest.raises(
        UserError,
        match=r"^s.toml: corpus.loader: unknown corpus loader 'reuters'; did you mean reuters21578\? \(known: ",
    ):
        parse_spec(MINIMAL.replace('"synthetic"', '"reuters"').replace("n_docs = 100", ""), source="s.toml")


@pytest.mark.parametrize(
    "typo, message",
    [
        # issue 34: "did you mean test_fraction?" (a synthetic argument), and a consequence of the typo
        # ("validation_fraction: needs corpus.train_split") named instead of the typo itself
        (
            "validaton_fraction = 0.2",
            "corpus.validaton_fraction: unknown key for corpus loader 'synthetic'; did you mean validation_fraction?",
        ),
        (
            'trian_split = "train"\nvalidation_fraction = 0.2',
            "corpus.trian_split: unknown key for corpus loader 'synthetic'; did you mean train_split?",
        ),
        ('test_splt = "test"', "corpus.test_splt: unknown key for corpus loader 'synthetic'; did you mean test_split?"),
        (
            "validation_sed = 1",
            "corpus.validation_sed: unknown key for corpus loader 'synthetic'; did you mean validation_seed?",
        ),
    ],
)
def test_a_mistyped_corpus_key_is_named_first_and_compared_with_every_corpus_key(typo, message):
    with pytest.raises(UserError) as error:
        parse_spec(MINIMAL.replace("n_docs = 100", f"n_docs = 100\n{typo}"), source="s.toml")
    assert str(error.value) == f"s.toml: {message}"


def test_a_mistyped_key_of_a_corpus_given_in_memory_names_the_closest():
    from xialpha.corpora.loading import make_synthetic

    with pytest.raises(
        UserError,
        match=r"^<spec>: corpus.trian_split: unknown key for a corpus given in memory "
        r"\(corpus=\); did you mean train_split\?$",
    ):
        parse_spec('[corpus]\ntrian_split = "train"\n', corpus=make_synthetic(n_docs=20))


def test_a_split_asked_of_a_table_without_splits_says_how_a_table_gets_them(tmp_path):
    """Issue 34: before, "corpus.train_split: the corpus has no split 'train' (it has: none)"."""
    (tmp_path / "docs.csv").write_text("text,label\nalpha beta,a\ngamma delta,b\nbeta gamma,a\ndelta,b\n")
    spec = tmp_path / "s.toml"
    spec.write_text('[corpus]\nloader = "table"\npath = "docs.csv"\ntrain_split = "train"\nvalidation_fraction = 0.5\n')
    with pytest.raises(UserError) as error:
        load_spec(spec).corpus.load()
    assert str(error.value) == (
        f"{spec}: corpus.train_split: the corpus has no split 'train': it has no splits at all "
        "(a table corpus gets them from split_column, or from one file per split: "
        'path = {train = "a.csv", test = "b.csv"})'
    )


def test_a_column_the_file_lacks_names_the_key_to_set_and_the_closest_column(tmp_path):
    """Issue 34: before, "no column 'label' (columns: id, text, labels, split)" named no key."""
    (tmp_path / "docs.csv").write_text("id,text,labels,split\n1,alpha beta,a,train\n2,gamma delta,b,test\n")
    (tmp_path / "docs.jsonl").write_text('{"text": "alpha", "label": "a"}\n{"body": "gamma", "label": "b"}\n')
    spec = tmp_path / "s.toml"
    spec.write_text('[corpus]\nloader = "table"\npath = "docs.csv"\n')
    with pytest.raises(UserError) as error:
        load_spec(spec).corpus.load()
    assert str(error.value) == (
        f"{spec}: corpus.label_column: {tmp_path / 'docs.csv'} has no column 'label'; "
        "did you mean labels? (columns: id, text, labels, split)"
    )
    spec.write_text('[corpus]\nloader = "table"\npath = "docs.jsonl"\n')
    with pytest.raises(UserError) as error:
        load_spec(spec).corpus.load()
    assert str(error.value) == (
        f"{spec}: corpus.text_column: {tmp_path / 'docs.jsonl'}, line 2 has no column 'text' (columns: body, label)"
    )


def test_multi_label_rows_are_refused_naming_the_spec_key(tmp_path):
    """The corpus of issue 34: "finance;health" in a column of single labels, no label_separator."""
    (tmp_path / "docs.csv").write_text(
        "id,text,label,split\n1,rates rise,finance,train\n2,flu season,health,train\n"
        "3,hospital bonds,finance;health,test\n4,loan losses,finance,test\n"
    )
    spec = tmp_path / "s.toml"
    spec.write_text('[corpus]\nloader = "table"\npath = "docs.csv"\nsplit_column = "split"\n')
    with pytest.raises(
        UserError,
        match=r"^\S+s.toml: corpus.label_separator: 1 of 4 labels in column 'label' of \S+docs.csv "
        r"hold ';' \(e.g. 'finance;health'\): set label_separator = \";\" if",
    ):
        load_spec(spec).corpus.load()
    spec.write_text('[corpus]\nloader = "table"\npath = "docs.csv"\nsplit_column = "split"\nlabel_separator = ";"\n')
    assert load_spec(spec).corpus.load().category_counts() == {"finance": 3, "health": 2}


def test_a_user_error_keeps_its_key_and_file_across_processes():
    """Loader errors are raised in Dask workers and pickled back: the key must survive (to be
    named as the spec's key, corpus.<key>, by the driver)."""
    import pickle

    error = pickle.loads(pickle.dumps(UserError("must be a column name, got ''", key="label_column")))
    assert (error.key, error.file, str(error)) == ("label_column", None, "label_column: must be a column name, got ''")
    named = error.within("corpus", file="s.toml")
    assert (named.key, named.file) == ("corpus.label_column", "s.toml")
    assert str(pickle.loads(pickle.dumps(named))) == "s.toml: corpus.label_column: must be a column name, got ''"
    assert str(UserError("a.csv, line 3: 2 fields").within("corpus")) == "a.csv, line 3: 2 fields"  # no key: as it was


def test_a_missing_corpus_path_names_the_spec_file_and_key_and_how_to_fetch_reuters(tmp_path, monkeypatch):
    monkeypatch.chdir(
        tmp_path
    )  # no copy fetched into the working directory (tests/commands/test_first_steps.py: one is)
    path = tmp_path / "specs" / "reuters.toml"
    path.parent.mkdir()
    path.write_text('[corpus]\nloader = "reuters21578"\npath = "../data/reuters21578"\n', encoding="utf-8")
    spec = load_spec(path)
    missing = tmp_path / "data" / "reuters21578"
    with pytest.raises(UserError) as error:
        spec.corpus.load()
    assert str(error.value) == (
        f"{path}: corpus.path: {missing} does not exist; "
        f"`xialpha fetch reuters21578 --dest {missing}` downloads it there (a relative path in a "
        "spec is relative to the spec file)"
    )
    path.write_text('[corpus]\nloader = "table"\npath = "docs.csv"\n', encoding="utf-8")
    with pytest.raises(UserError) as error:
        load_spec(path).corpus.load()
    assert str(error.value) == f"{path}: corpus.path: {path.parent / 'docs.csv'} does not exist"


def test_a_missing_corpus_path_of_a_spec_named_relatively_is_named_once(tmp_path, monkeypatch, capsys):
    from xialpha.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text('[corpus]\nloader = "table"\npath = "docs.csv"\n', encoding="utf-8")
    assert main(["sweep", "s.toml", "--store", str(tmp_path / "store"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err == f"xialpha sweep: error: s.toml: corpus.path: {tmp_path / 'docs.csv'} does not exist\n", err


# Every numeric field, each with values no field takes: integers beyond TOML's 64 bits (too large
# for a float at 10**400), infinities and NaN. Before: OverflowError tracebacks or silent acceptance.
HUGE = "1" + "0" * 400
NUMERIC_FIELDS = [
    ("[svm]\nC = [{v}]", "svm.C[0]"),
    ("[svm]\nj = [1, {v}]", "svm.j[1]"),
    ("[svm]\ntol = {v}", "svm.tol"),
    ("[estimators]\nrho = [{v}]", "estimators.rho[0]"),
    ("[estimators]\nkfold = {v}", "estimators.kfold"),
    ("[estimators]\nbootstrap = {v}", "estimators.bootstrap"),
    ("[estimators]\nxa_ext_depth = {v}", "estimators.xa_ext_depth"),
    ("[sweep]\nbatch_size = {v}", "sweep.batch_size"),
    ("[sweep]\nmax_configs = {v}", "sweep.max_configs"),
    ("[sweep]\ngram_memory_limit = {v}", "sweep.gram_memory_limit"),
    ('[[kernels]]\nname = "rbf"\ngamma = {v}', "kernels[0].gamma"),
    ('[[kernels]]\nname = "poly"\ndegree = {v}', "kernels[0].degree"),
    ('[[kernels]]\nname = "sigmoid"\ncoef0 = [0.5, {v}]', "kernels[0].coef0[1]"),
    ("[[preprocessing]]\nmin_df = {v}", "preprocessing[0].min_df"),
    ("[[preprocessing]]\nmax_df = {v}", "preprocessing[0].max_df"),
    ("[cluster]\nworkers = {v}", "cluster.workers"),
    ("[cluster]\nthreads_per_worker = {v}", "cluster.threads_per_worker"),
    ("[cluster]\nmax_workers = {v}", "cluster.max_workers"),
    ("[cluster]\nmemory_limit = {v}", "cluster.memory_limit"),
    ("[corpus.categories]\ntop_k = {v}", "corpus.categories.top_k"),
]


@pytest.mark.parametrize(
    "value, problem",
    [
        (HUGE, "integer out of range"),
        (str(2**63), "integer out of range"),
        (str(-(2**63) - 1), "integer out of range"),
        ("inf", "must be a finite number"),
        ("-inf", "must be a finite number"),
        ("nan", "must be a finite number"),
    ],
    ids=["10^400", "2^63", "-2^63-1", "inf", "-inf", "nan"],
)
@pytest.mark.parametrize("template, path", NUMERIC_FIELDS, ids=[path for _, path in NUMERIC_FIELDS])
def test_numbers_no_field_takes_are_refused_naming_the_field(template, path, value, problem):
    with pytest.raises(UserError) as info:
        parse_spec(MINIMAL + template.format(v=value), source="bad.toml")
    assert str(info.value).startswith(f"bad.toml: {path}: {problem}") and "\n" not in str(info.value)


def test_loader_arguments_are_checked_too():
    with pytest.raises(UserError, match="corpus.n_docs: integer out of range.*\\(TOML integers are 64-bit\\)"):
        parse_spec(MINIMAL.replace("n_docs = 100", f"n_docs = {HUGE}"))
    with pytest.raises(UserError, match="corpus.mean_length: must be a finite number, got inf"):
        parse_spec(MINIMAL + "mean_length = inf\n")
    # the largest 64-bit integer and large finite floats are numbers TOML allows: refused later by what reads them
    assert parse_spec(MINIMAL + f"seed = {2**63 - 1}\n[svm]\nC = [1e300]").C == (1e300,)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a = " + "1" * 5000, "not valid TOML: Exceeds the limit"),  # a ValueError that is not a TOMLDecodeError
        # refused from its text before the parser recurses (issue 48, item 7)
        ("a = " + "[" * 100_000 + "]" * 100_000, r"^bad.toml: line 1: tables or arrays nested more than 16 levels"),
        ("a = " + "[" * 100_000, r"^bad.toml: line 1: tables or arrays nested more than 16 levels"),
        ("a = [" + '"x' * 100_000, "not valid TOML"),  # an unclosed string: the scan stops, the parser names it
    ],
)
def test_toml_the_parser_chokes_on_is_one_line(text, message):
    with pytest.raises(UserError, match=message):
        parse_spec(text, source="bad.toml")


@pytest.mark.parametrize("size", ['"1..5kB"', '"1e999GB"', '"-5MB"', '""', '"5 foos"', "true", "0", '"nan kB"'])
def test_byte_sizes_are_read_by_dask_and_malformed_ones_refused(size):
    for key in ("[sweep]\ngram_memory_limit", "[cluster]\nmemory_limit"):
        with pytest.raises(UserError, match=r"must be a (size like 8GiB or 500MB|string), got"):
            parse_spec(MINIMAL + f"{key} = {size}")
    spec = parse_spec(MINIMAL + '[sweep]\ngram_memory_limit = "1.5 GiB"\n[cluster]\nmemory_limit = "500MB"')
    assert spec.gram_memory_limit == 1.5 * 2**30 and spec.cluster.memory_limit == "500MB"


@pytest.mark.parametrize(
    "nesting",
    [
        "[" + ".".join(["a"] * 5000) + "]\nx = 1\n",  # a dotted header: parsed without recursion, 5,000 tables deep
        "[" + ".".join(["a"] * 10) + "]\nx = " + "[" * 12 + "1" + "]" * 12 + "\n",  # tables, then arrays
        "x = " + "{a = " * 20 + "1" + "}" * 20 + "\n",  # inline tables
    ],
    ids=["dotted-header", "tables-then-arrays", "inline-tables"],
)
def test_a_spec_nested_too_deeply_is_one_line_naming_the_file(tmp_path, nesting):
    """Issue 42 item 4: a spec with deeply nested tables gave `internal error: RecursionError`."""
    spec = tmp_path / "deep.toml"
    spec.write_text(MINIMAL + nesting)
    with pytest.raises(UserError) as raised:
        load_spec(spec)
    message = str(raised.value)
    assert message.startswith(f"{spec}: ") and "nested more than 16 levels deep" in message, message
    assert len(message) < 300
    from xialpha.spec.drift import load_drift_spec

    with pytest.raises(UserError, match="nested more than 16 levels deep"):
        load_drift_spec(spec)


def test_a_spec_over_the_size_limit_is_refused_having_read_no_more_than_the_limit(tmp_path, monkeypatch):
    import xialpha.spec.tables as tables

    spec = tmp_path / "huge.toml"
    spec.write_text(MINIMAL + "# padding\n" * (tables.MAX_SPEC_BYTES // 10))
    read: list[int] = []
    real_open = type(spec).open

    def counting_open(path, *args, **kwargs):
        file = real_open(path, *args, **kwargs)
        real_read = file.read
        file.read = lambda n=-1: read.append(n) or real_read(n)
        return file

    monkeypatch.setattr(type(spec), "open", counting_open)
    with pytest.raises(UserError, match=r"huge.toml: larger than 4 MiB, the most a spec may be"):
        load_spec(spec)
    assert read == [tables.MAX_SPEC_BYTES + 1]
    with pytest.raises(UserError, match=r"<spec>: larger than 4 MiB"):
        parse_spec(spec.read_text())
    assert parse_spec(MINIMAL + "# padding\n" * 1000).corpus.args == {"n_docs": 100}


def test_a_spec_that_is_not_utf8_is_named(tmp_path):
    spec = tmp_path / "latin1.toml"
    spec.write_bytes(MINIMAL.encode() + b'[sweep]\nid = "caf\xe9"\n')
    with pytest.raises(UserError, match=r"latin1.toml: not UTF-8 text \(byte 0xe9 on line 6\)"):
        load_spec(spec)


@pytest.mark.parametrize(
    "args, message",
    [
        ('loader = "directory"\npath = ["docs"]', "corpus.path: must be a string or a path, got ['docs']"),
        ('loader = "table"\npath = "x.csv"\nheader = "no"', "corpus.header: must be true or false, got 'no'"),
        ('loader = "table"\npath = "x.csv"\ncolumn_names = "label"', "corpus.column_names: must be a list of strings"),
        ('loader = "synthetic"\nn_docs = 10.5', "corpus.n_docs: must be an integer, got 10.5"),
        ('loader = "synthetic"\nstart = 2000-01-01', "corpus.start: must be a string, got datetime.date(2000, 1, 1)"),
        (
            'loader = "svmlight"\npath = "x.svm"\nzero_based = 1',
            "corpus.zero_based: must be true or false or a string, got 1",
        ),
    ],
)
def test_loader_arguments_of_the_wrong_type_are_refused_at_spec_time(args, message):
    with pytest.raises(UserError) as info:
        parse_spec(f"[corpus]\n{args}\n", source="bad.toml")
    assert str(info.value).startswith(f"bad.toml: {message}")
    assert str(info.value).endswith(f"(corpus loader {args.split(chr(34))[1]!r})")


def test_C_auto_leaves_the_C_values_to_the_data_and_counts_as_its_limit_in_max_configs():
    spec = parse_spec(MINIMAL + '[svm]\nC = "auto"\nj = [1, 2]\n')
    assert spec.C_auto and spec.C == () and spec.j == (1.0, 2.0)
    assert not parse_spec(MINIMAL).C_auto
    with pytest.raises(UserError, match=r"1 kernels x 16 C values x 2 j values\), more than the limit 31"):
        parse_spec(MINIMAL + '[sweep]\nmax_configs = 31\n[svm]\nC = "auto"\nj = [1, 2]\n')


def test_a_grid_beyond_max_configs_is_refused_with_its_count_before_expanding():
    grid = "[svm]\nC = [%s]\nj = [%s]\n" % (
        ", ".join(str(i + 1) for i in range(1000)),
        ", ".join(str(i + 1) for i in range(1000)),
    )
    with pytest.raises(
        UserError,
        match=r"sweep.max_configs: the grid has 1,000,000 configurations per category "
        r"\(1 preprocessings x 1 kernels x 1,000 C values x 1,000 j values\), more than the limit 100,000",
    ):
        parse_spec(MINIMAL + grid)
    # a preprocessing grid of a million variants is counted, not built (building it takes minutes)
    pp = "[[preprocessing]]\nmin_df = [%s]\nmax_df = [%s]\n" % (
        ", ".join(str(i + 1) for i in range(1000)),
        ", ".join(str((i + 1) / 1000) for i in range(1000)),
    )
    with pytest.raises(UserError, match=r"1,000,000 preprocessings x 1 kernels"):
        parse_spec(MINIMAL + pp)
    assert len(parse_spec(MINIMAL + "[sweep]\nmax_configs = 1000000\n" + grid).C) == 1000


def test_workers_beyond_max_workers_are_refused_with_the_number():
    with pytest.raises(UserError, match=r"cluster.workers: 1,000,000 workers is more than cluster.max_workers = 1,024"):
        parse_spec(MINIMAL + "[cluster]\nworkers = 1000000")
    assert parse_spec(MINIMAL + "[cluster]\nworkers = 2000\nmax_workers = 4096").cluster.workers == 2000
    with pytest.raises(UserError, match=r"cluster.threads_per_worker: must be <= 1,024"):
        parse_spec(MINIMAL + "[cluster]\nthreads_per_worker = 1000000")


def test_table_files_per_split_resolve_next_to_the_spec_and_errors_name_the_key(tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "a.csv").write_text("text,label\nwheat,grain\n")
    (folder / "b.csv").write_text("text,label\n")
    path = folder / "s.toml"
    path.write_text('[corpus]\nloader = "table"\npath = {train = "a.csv", test = "c.csv"}\n', encoding="utf-8")
    with pytest.raises(UserError) as error:
        load_spec(path).corpus.load()
    assert str(error.value) == f"{path}: corpus.path.test: {folder / 'c.csv'} does not exist"
    path.write_text('[corpus]\nloader = "table"\npath = {train = "a.csv", test = "b.csv"}\n', encoding="utf-8")
    with pytest.raises(UserError) as error:
        load_spec(path).corpus.load()
    assert str(error.value) == f"{path}: corpus.path.test: {folder / 'b.csv'} has no rows (empty corpus)"
    path.write_text('[corpus]\nloader = "table"\npath = {train = "a.csv", test = "a.csv"}\n', encoding="utf-8")
    assert load_spec(path).corpus.load().splits.tolist() == ["train", "test"]


# --- a validation split carved from training keeps the test split sealed (issue 18) ---------------


def _carving(corpus_keys: str) -> str:
    return f'[corpus]\nloader = "synthetic"\nn_docs = 400\nseed = 3\n{corpus_keys}\n[estimators]\nholdout = true\n'


def test_validation_fraction_carves_a_seeded_validation_split_from_training_only():
    import numpy as np

    from xialpha.corpora import load_corpus

    spec = parse_spec(_carving('train_split = "train"\nvalidation_fraction = 0.25\nvalidation_seed = 5'))
    assert spec.corpus.test_split == "validation"  # the held-out figures; "test" is never read by the sweep
    original = load_corpus("synthetic", n_docs=400, seed=3)
    carved = spec.corpus.load()
    assert carved.split_names == ["test", "train", "validation"]
    was_train = original.splits == "train"
    assert (carved.splits[~was_train] == original.splits[~was_train]).all()  # test documents untouched
    assert (carved.splits == "validation").sum() == round(0.25 * was_train.sum())
    assert np.array_equal(carved.splits, spec.corpus.load().splits)  # the same every time (stored specs re-load it)
    other = parse_spec(_carving('train_split = "train"\nvalidation_fraction = 0.25\nvalidation_seed = 6')).corpus.load()
    assert not np.array_equal(carved.splits, other.splits)


@pytest.mark.parametrize(
    "keys, message",
    [
        ("validation_fraction = 0.2", "corpus.validation_fraction: needs corpus.train_split"),
        ('train_split = "train"\nvalidation_fraction = 1.0', "corpus.validation_fraction: must be > 0 and < 1, got 1"),
        ('train_split = "train"\nvalidation_fraction = 0', "corpus.validation_fraction: must be > 0 and < 1, got 0"),
        ('train_split = "train"\nvalidation_fraction = "a"', "corpus.validation_fraction: must be a number"),
        (
            'train_split = "train"\ntest_split = "test"\nvalidation_fraction = 0.2',
            "corpus.test_split: with validation_fraction the held-out split is 'validation'; leave test_split out",
        ),
        (
            'train_split = "train"\nvalidation_fraction = 0.2\nvalidation_seed = -1',
            "corpus.validation_seed: must be >= 0",
        ),
    ],
)
def test_bad_validation_settings_name_their_key(keys, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_spec(_carving(keys))


def test_a_validation_fraction_leaving_no_document_is_refused_when_loading():
    spec = parse_spec(_carving('train_split = "train"\nvalidation_fraction = 0.0001'), source="s.toml")
    with pytest.raises(UserError, match="s.toml: corpus.validation_fraction: 0.0001 of .* training documents leaves"):
        spec.corpus.load()


def test_shipped_specs_keep_their_test_split_sealed():
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[2] / "config").glob("*.toml")):
        if path.name.startswith("drift"):
            continue
        spec = load_spec(path)
        assert spec.corpus.test_split in (None, "validation"), path.name
