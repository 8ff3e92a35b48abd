"""Corpora read in parts: every loader gives the same documents, ids, splits and fingerprint
whatever its parts, cuts fall on record starts (quoted newlines never split), and errors in a
later part name the file's own line numbers."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xialpha.corpora.svmlight as svmlight_module
import xialpha.corpora.table as table_module
from xialpha.corpora import load_svmlight, load_table, make_synthetic
from xialpha.corpora.parted import load_in_parts, plan_parts, read_part, refine_part
from xialpha.corpora.parts import PART_DOCUMENTS, number_parts
from xialpha.corpora.table_files import Block, read_block, text_blocks
from xialpha.corpora.text_scan import cut_points
from xialpha.errors import UserError


def same_corpus(a, b) -> None:
    assert a.ids.tolist() == b.ids.tolist()
    assert a.labels == b.labels
    assert (a.texts == b.texts) if a.texts is not None else (a.X != b.X).nnz == 0 and a.X.shape == b.X.shape
    for field in ("splits", "timestamps"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), field
    assert a.fingerprint() == b.fingerprint()


# --- synthetic: blocks of PART_DOCUMENTS -------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, digest",
    [
        # sha256 of the texts joined by \x1e, as the generator gave them before it generated in blocks
        (dict(n_docs=300, seed=3), "b86a20a292fbd147b92168cda2a66c738abd4ec014d5e96eecfe67d50b51ceef"),
        (
            dict(n_docs=9999, seed=2, n_batches=7, shift="abrupt-return", shifted_categories=2),
            "59d8411086b5f18f552999e92d147b73f5451d8a03645def43ae4436c6b4c530",
        ),
    ],
)
def test_a_corpus_of_one_block_is_what_one_draw_gave_before(kwargs, digest):
    corpus = make_synthetic(**kwargs)
    assert hashlib.sha256("\x1e".join(corpus.texts).encode()).hexdigest() == digest


def test_blocks_are_generated_apart_and_joined_in_order():
    n = 2 * PART_DOCUMENTS + 500
    whole = make_synthetic(n_docs=n, n_categories=3, seed=1, n_batches=4)
    parts = plan_parts("synthetic", {"n_docs": n, "n_categories": 3, "seed": 1, "n_batches": 4})
    assert [part.where[1:] for part in parts] == [
        (0, PART_DOCUMENTS),
        (PART_DOCUMENTS, 2 * PART_DOCUMENTS),
        (2 * PART_DOCUMENTS, n),
    ]
    last = read_part(parts[2]).corpus  # a block read by itself equals its slice of the whole
    assert (
        last.texts == whole.texts[2 * PART_DOCUMENTS :]
        and last.ids.tolist() == whole.ids[2 * PART_DOCUMENTS :].tolist()
    )
    assert np.array_equal(last.timestamps, whole.timestamps[2 * PART_DOCUMENTS :])
    assert len(set(whole.ids.tolist())) == n
    firsts = [-(-b * n // 4) for b in range(4)]  # each batch's first document is dated at midnight of its day
    assert whole.timestamps[firsts].tolist() == [np.datetime64(f"2000-01-0{b + 1}T00:00:00") for b in range(4)]
    # each block draws its own documents
    assert whole.texts[:100] != whole.texts[PART_DOCUMENTS : PART_DOCUMENTS + 100]


# --- text files cut at record starts ---------------------------------------------------------

FIELD = st.text(alphabet=st.sampled_from(list('ab ,"\n\r\té')), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(FIELD, FIELD), min_size=1, max_size=30),
    terminator=st.sampled_from(["\n", "\r\n"]),
    step=st.integers(1, 40),
    blank=st.booleans(),
)
def test_csv_cuts_fall_on_record_starts_and_know_their_line(tmp_path_factory, rows, terminator, step, blank):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=terminator)
    writer.writerow(["text", "label"])
    for row in rows:
        writer.writerow(row)
        if blank:
            buffer.write(terminator)
    path.write_bytes(buffer.getvalue().encode("utf-8"))
    data = path.read_bytes()
    cuts = cut_points(path, len(data), step, quotes=True)

    def read(block):
        return read_block(path, "csv", ["text", "label"], True, (), "utf-8", block)

    try:
        whole, whole_places = read(Block())
    except UserError as exc:  # a field with a lone \r that csv.writer left unquoted: the same error from the parts
        with pytest.raises(UserError, match=re.escape(str(exc))):
            for start, stop, line in cuts:
                read(Block(start, stop, line, None if start == 0 else ("text", "label")))
        return
    pieces = [read(Block(start, stop, line, None if start == 0 else ("text", "label"))) for start, stop, line in cuts]
    assert [value for columns, _ in pieces for value in columns["text"]] == whole["text"]
    assert [value for columns, _ in pieces for value in columns["label"]] == whole["label"]
    assert [place for _, places in pieces for place in places] == whole_places  # the file's own line numbers
    for start, _, line in cuts:  # a cut's line: line ends before it (\r\n once), plus one
        assert line == data[:start].replace(b"\r\n", b"\n").replace(b"\r", b"\n").count(b"\n") + 1


def _write_csv(path, n: int, bad_row: int | None = None) -> int | None:
    """A CSV of n rows, every 7th text quoted over two lines; with `bad_row`, that row's text is a
    quoted field with text after its closing quote. Returns the bad row's physical line."""
    lines, bad_line = ["id,text,label,split"], None
    for i in range(1, n + 1):
        text = f'"doc {i}, ""quoted""\nsecond line"' if i % 7 == 0 else f"doc {i} words here"
        if i == bad_row:
            text, bad_line = '"doc"x', sum(line.count("\n") + 1 for line in lines) + 1
        lines.append(f"n{i},{text},{'a' if i % 3 else 'b'},{'test' if i % 4 == 0 else 'train'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bad_line


@pytest.mark.parametrize("fmt", ["csv", "tsv", "tsv-headerless", "jsonl", "parquet"])
def test_a_table_read_in_many_parts_is_the_table_read_in_one(tmp_path, monkeypatch, fmt):
    n = 400
    rows = [
        {
            "id": f"n{i}",
            "text": f"doc {i} wheat\tcorn" if fmt == "jsonl" else f"doc {i} wheat corn",
            "label": "a" if i % 3 else "b",
            "split": "test" if i % 4 == 0 else "train",
        }
        for i in range(1, n + 1)
    ]
    args = {"label_column": "label", "split_column": "split"}
    if fmt == "csv":
        path = tmp_path / "t.csv"
        _write_csv(path, n)
        args["id_column"] = "id"
    elif fmt == "tsv":
        path = tmp_path / "t.tsv"
        path.write_text("text\tlabel\tsplit\n" + "".join(f"{r['text']}\t{r['label']}\t{r['split']}\r\n" for r in rows))
    elif fmt == "tsv-headerless":
        path = tmp_path / "t.txt"
        path.write_text("".join(f"{r['label']}\t{r['text']}\n" for r in rows) + "\n\n", encoding="utf-8")
        args = {"format": "tsv", "header": False}
    elif fmt == "jsonl":
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" + ("\n" if i % 50 == 0 else "") for i, r in enumerate(rows)))
    else:
        path = tmp_path / "t.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=37)
    one = load_table(path, **args)
    monkeypatch.setattr(table_module, "PART_BYTES", 512)
    parts = [piece for part in plan_parts("table", {"path": path, **args}) for piece in refine_part(part)]
    assert len(parts) > 5
    many = load_table(path, **args)
    same_corpus(many, one)
    if "id_column" not in args:  # default ids are the file's row numbers, numbered across parts
        assert many.ids.tolist()[:3] == ["1", "2", "3"] and many.ids.tolist()[-1] == str(n)


def test_per_split_files_number_their_rows_apart_in_parts(tmp_path, monkeypatch):
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    train.write_text("text,label\n" + "".join(f"train doc {i},a\n" for i in range(300)))
    test.write_text("text,label\n" + "".join(f"test doc {i},b\n" for i in range(100)))
    one = load_table({"train": train, "test": test})
    monkeypatch.setattr(table_module, "PART_BYTES", 256)
    many = load_table({"train": train, "test": test})
    same_corpus(many, one)
    assert many.ids.tolist()[299:301] == ["train/300", "test/1"]


def test_an_error_in_a_later_part_names_the_files_line(tmp_path, monkeypatch):
    path = tmp_path / "bad.csv"
    line = _write_csv(path, 2000, bad_row=1801)
    with pytest.raises(UserError) as whole:
        load_table(path, id_column="id", split_column="split")
    monkeypatch.setattr(table_module, "PART_BYTES", 1024)
    with pytest.raises(UserError) as parted:
        load_table(path, id_column="id", split_column="split")
    assert str(parted.value) == str(whole.value)
    assert f"bad.csv, line {line}: malformed CSV" in str(parted.value) and line > 2000


def test_an_undecodable_byte_is_named_by_its_file_offset(tmp_path, monkeypatch):
    path = tmp_path / "latin.csv"
    body = "".join(f"doc {i},a\n" for i in range(500)).encode() + "caf\xe9,b\n".encode("latin-1")
    path.write_bytes(b"text,label\n" + body)
    monkeypatch.setattr(table_module, "PART_BYTES", 300)
    with pytest.raises(
        UserError, match=rf"bytes at offset {len(b'text,label') + 1 + body.index(b'caf') + 3} are not valid utf-8"
    ):
        load_table(path)
    assert load_table(path, encoding="latin-1").texts[-1] == "caf\xe9"


# --- svmlight ---------------------------------------------------------------------------------


@pytest.mark.parametrize("first_zero_at", [None, 299])
def test_svmlight_in_parts_decides_the_index_base_from_all_of_them(tmp_path, monkeypatch, first_zero_at):
    lines = []
    for i in range(300):
        features = " ".join(f"{k}:{(i + k) % 5 + 1}" for k in range(1 + i % 4, 6 + i % 4))
        if i == first_zero_at:
            features = "0:1.5 " + features
        lines.append(f"{'+1' if i % 3 else '-1'} {features}  # line {i}" if i % 10 else "")
    path = tmp_path / "d.svm"
    path.write_text("\n".join(lines) + "\n")
    one = load_svmlight(path)
    monkeypatch.setattr(svmlight_module, "PART_BYTES", 200)
    parts = number_parts(refine_part(plan_parts("svmlight", {"path": str(path)})[0]))
    assert len(parts) > 10
    many = load_svmlight(path)
    same_corpus(many, one)
    assert many.X.shape[1] == (9 if first_zero_at is not None else 8)  # 0-based only where a part uses column 0


def test_parts_of_any_loader_join_into_one_fingerprint(tmp_path):
    corpus = make_synthetic(n_docs=PART_DOCUMENTS + 10, n_categories=2, seed=0)
    joined = load_in_parts("synthetic", {"n_docs": PART_DOCUMENTS + 10, "n_categories": 2, "seed": 0})
    assert joined.fingerprint() == corpus.fingerprint() == corpus.subset(np.arange(len(corpus))).fingerprint()
    assert corpus.split("train").fingerprint() != corpus.fingerprint()


def test_cut_points_of_a_file_without_any_line_end(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text('{"text": "' + "x" * 5000 + '", "label": "a"}')
    assert cut_points(path, path.stat().st_size, 100) == [(0, None, 1)]
    assert text_blocks(path, "jsonl", True, "utf-8", 100) == [Block()]
