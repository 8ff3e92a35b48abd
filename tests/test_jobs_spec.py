"""Sweep spec validation: good specs parse into the expected grid, bad keys name their path."""

from __future__ import annotations

import pytest

from xialpha.errors import UserError
from xialpha.jobs.spec import load_spec, parse_spec

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
    assert spec.estimators.span and spec.selection_estimator == "span"


def test_selection_estimator_falls_back_to_xi_alpha_when_span_is_off():
    spec = parse_spec(MINIMAL + "[estimators]\nspan = false\n")
    assert not spec.estimators.span and spec.selection_estimator == "xa"


def test_lists_expand_to_grids():
    spec = parse_spec(MINIMAL + """
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
""")
    assert len(spec.preprocessings) == 4
    assert {(p.stemming, p.min_df) for p in spec.preprocessings} == {("none", 1), ("none", 3), ("porter", 1), ("porter", 3)}
    assert [(k.name, k.gamma) for k in spec.kernels] == [("linear", None), ("rbf", 0.5), ("rbf", 2.0)]
    assert spec.C == (0.1, 1.0, 10.0) and spec.j == (1.0, 2.0) and spec.estimators.rhos == (1.0, 2.0)


@pytest.mark.parametrize(
    "extra, message",
    [
        ('[[kernels]]\nname = "linear"\n[[kernels]]\nname = "rbf"\ngamma = -1', "kernels[1].gamma: must be > 0"),
        ("[svm]\nC = [1, 0]", "svm.C[1]: must be > 0"),
        ("[svm]\nC = []", "svm.C: must not be empty"),
        ('[svm]\nC = "big"', "svm.C[0]: must be a number"),
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

    from xialpha.jobs.drift_spec import load_drift_spec

    configs = sorted((Path(__file__).resolve().parents[1] / "config").glob("*.toml"))
    assert len(configs) >= 4, "config/ lacks the shipped specs"
    for path in configs:
        (load_drift_spec if path.stem.startswith("drift") else load_spec)(path)


def test_unknown_category_names_its_spec_field(tmp_path):
    from xialpha.jobs.sweep import prepare
    from xialpha.storage import ResultStore

    spec = parse_spec(MINIMAL + '[corpus.categories]\nnames = ["nope"]\n')
    with pytest.raises(UserError, match=r"^corpus\.categories\.names: unknown category 'nope'"):
        prepare(spec, ResultStore(str(tmp_path / "store")))
