"""The corpus read and vectorised by a cluster's tasks: what the driver learns (split sizes,
category counts, fingerprints) and the features equal the corpus read in this process; bad
parts, repeated ids and impossible carvings are named."""

from __future__ import annotations

import numpy as np
import pytest
from distributed import Client

import xialpha.corpora.table as table_module
from xialpha.corpora.parts import PART_DOCUMENTS, WHOLE
from xialpha.errors import UserError
from xialpha.features import blocks
from xialpha.jobs import tasks
from xialpha.jobs.data import load_on_cluster, submit_features
from xialpha.spec.sweep import parse_spec, split_fingerprints

SYNTHETIC = """
[corpus]
loader = "synthetic"
n_docs = {n}
n_categories = 3
seed = 2
train_split = "train"
{extra}
"""


@pytest.fixture(scope="module")
def client():
    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        yield client


def _spec(text: str):
    return parse_spec(text, source="test.toml")


def _check_like_in_process(client, spec, run_id: str):
    loaded = load_on_cluster(client, spec.corpus, run_id)
    corpus = spec.corpus.load()
    summary = loaded.summary
    assert summary.n_documents == len(corpus) and summary.split_names == corpus.split_names
    for split in corpus.split_names:
        assert summary.size(split) == len(corpus.split(split))
        assert summary.counts(split) == corpus.split(split).category_counts()
        assert loaded.fingerprint(split) == corpus.split(split).fingerprint()
    assert loaded.fingerprint(None) == corpus.fingerprint()
    assert spec.data_fingerprint(loaded.fingerprint) == spec.data_fingerprint(split_fingerprints(corpus))
    return loaded, corpus


def test_a_synthetic_corpus_of_several_blocks(client):
    spec = _spec(SYNTHETIC.format(n=2 * PART_DOCUMENTS + 300, extra=""))
    loaded, corpus = _check_like_in_process(client, spec, "syn")
    assert len(loaded.chunks) == 3
    assert client.gather(loaded.chunks[2]).texts == corpus.texts[2 * PART_DOCUMENTS :]


def test_a_carved_validation_split_is_the_one_carved_in_process(client):
    spec = _spec(SYNTHETIC.format(n=PART_DOCUMENTS + 2000, extra="validation_fraction = 0.2\nvalidation_seed = 7"))
    loaded, corpus = _check_like_in_process(client, spec, "carve")
    assert loaded.summary.size("validation") == round(
        0.2 * (len(corpus.split("train")) + loaded.summary.size("validation"))
    )


def test_table_parts_and_their_features(client, tmp_path, monkeypatch):
    path = tmp_path / "news.csv"
    rows = [
        f'n{i},"story {i} about {"wheat" if i % 3 else "oil"}\n prices",{"grain" if i % 3 else "crude"},'
        f"{'test' if i % 5 == 0 else 'train'}"
        for i in range(3000)
    ]
    path.write_text("id,text,label,split\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(table_module, "PART_BYTES", 4096)  # the workers are threads of this process
    spec = _spec(
        f'[corpus]\nloader = "table"\npath = "{path}"\nid_column = "id"\nsplit_column = "split"\n'
        'train_split = "train"\ntest_split = "test"\n[[preprocessing]]\nmin_df = 2\nstemming = "porter"'
    )
    loaded, corpus = _check_like_in_process(client, spec, "table")
    assert len(loaded.parts) > 20
    features = submit_features(client, loaded, spec.preprocessings[0], "train", "test", ["grain", "crude"], "t")
    stacked = client.submit(tasks.stack_blocks, features.blocks).result()
    expected = tasks.vectorize(corpus, spec.preprocessings[0], "train", "test", ["grain", "crude"])
    for name in ("X_train", "X_test"):
        got, want = getattr(stacked, name), getattr(expected, name)
        assert got.shape == want.shape and (got != want).nnz == 0
    assert np.array_equal(stacked.y_train, expected.y_train) and np.array_equal(stacked.y_test, expected.y_test)
    assert features.fitted.result().vocabulary == spec.preprocessings[0].fit(corpus.split("train").texts).vocabulary


def test_the_first_bad_part_in_corpus_order_is_named(client, tmp_path, monkeypatch):
    path = tmp_path / "bad.jsonl"
    lines = [f'{{"text": "doc {i}", "label": "a"}}' for i in range(2000)]
    lines[1500] = '{"text": "doc", "label": {"a": 1}}'  # a later part: a label that is an object
    lines[400] = '{"text": "doc", '  # an earlier part: broken JSON
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(table_module, "PART_BYTES", 2048)
    spec = _spec(f'[corpus]\nloader = "table"\npath = "{path}"')
    with pytest.raises(UserError, match=r"bad.jsonl, line 401: not valid JSON"):
        load_on_cluster(client, spec.corpus, "bad")


def test_an_id_repeated_in_another_part_is_named(client, tmp_path, monkeypatch):
    path = tmp_path / "ids.csv"
    path.write_text("id,text,label\n" + "".join(f"d{i % 1900},text {i},a\n" for i in range(2000)))
    monkeypatch.setattr(table_module, "PART_BYTES", 2048)
    spec = _spec(f'[corpus]\nloader = "table"\npath = "{path}"\nid_column = "id"')
    with pytest.raises(UserError, match=r"document id 'd0' occurs more than once"):
        load_on_cluster(client, spec.corpus, "ids")


def test_a_corpus_given_in_memory_is_sent_in_parts(client):
    from xialpha.corpora import make_synthetic

    corpus = make_synthetic(n_docs=PART_DOCUMENTS + 5, n_categories=2, seed=9)
    spec = parse_spec('[corpus]\ntrain_split = "train"', corpus=corpus)
    loaded = load_on_cluster(client, spec.corpus, "memory")
    assert len(loaded.chunks) == 2 and loaded.fingerprint(WHOLE) == corpus.fingerprint()
    assert loaded.fingerprint("train") == corpus.split("train").fingerprint()


def test_a_validation_split_that_cannot_be_carved_is_refused(client):
    spec = _spec(SYNTHETIC.format(n=30, extra="validation_fraction = 0.01"))
    with pytest.raises(
        UserError, match="corpus.validation_fraction: 0.01 of .* training documents leaves no validation"
    ):
        load_on_cluster(client, spec.corpus, "nocarve")


@pytest.mark.cluster
def test_a_bad_row_in_a_later_part_is_one_line_exit_2_before_any_fit(tmp_path, capsys):
    """A corpus file of two parts (more than PART_BYTES) whose second part holds a broken line: the
    sweep ends before any fit with one line naming the file and line, and no store is created."""
    import json

    from xialpha.cli import main
    from xialpha.corpora.parts import PART_BYTES

    path = tmp_path / "big.jsonl"
    row = json.dumps({"text": "a document about wheat and corn prices " + "x" * 60, "label": "a"}) + "\n"
    n = PART_BYTES // len(row) + 2000
    with path.open("w") as out:
        for i in range(n):
            out.write('{"text": "broken", \n' if i == n - 100 else row)
    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nid = "bad"\n[corpus]\nloader = "table"\npath = "{path}"\n[svm]\nC = [1.0]\n')
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"big.jsonl, line {n - 99}: not valid JSON" in err, err
    assert not (tmp_path / "store").exists()


TOKENISED: list[str] = []  # the stemming of each part's texts tokenised by `_count_part`


def _count_part(chunk, preprocessing, *args):
    """`count_part` noting the preprocessing's stemming (module level: Dask pickles it by reference)."""
    TOKENISED.append(preprocessing.stemming)
    return blocks.count_part(chunk, preprocessing, *args)


def test_preprocessings_that_split_texts_alike_count_them_once(client, monkeypatch):
    """...and those that differ only in stemming tokenise them once: the stemmed counts are the
    unstemmed ones' terms stemmed."""
    from xialpha.features import Preprocessing
    from xialpha.jobs import data

    TOKENISED.clear()
    monkeypatch.setattr(data, "count_part", _count_part)

    spec = _spec(SYNTHETIC.format(n=PART_DOCUMENTS + 500, extra='test_split = "test"'))
    loaded = load_on_cluster(client, spec.corpus, "shared")
    corpus = spec.corpus.load()
    raw, log, stemmed = (
        Preprocessing(min_df=2),
        Preprocessing(min_df=3, tf="log", idf="smooth"),
        Preprocessing(stemming="porter"),
    )
    counted = {}
    features = {
        pre: submit_features(client, loaded, pre, "train", "test", ["cat00"], "shared", counted=counted)
        for pre in (raw, log, stemmed)
    }
    assert raw.analyzer_id == log.analyzer_id != stemmed.analyzer_id and len(counted) == 2
    for pre, found in features.items():
        stacked = client.submit(tasks.stack_blocks, found.blocks).result()
        expected = tasks.vectorize(corpus, pre, "train", "test", ["cat00"])
        assert (stacked.X_train != expected.X_train).nnz == 0 and (stacked.X_test != expected.X_test).nnz == 0
    assert TOKENISED == ["none"] * len(loaded.chunks)
