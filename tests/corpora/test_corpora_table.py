"""Table loader: CSV, TSV, JSON lines, Parquet, headerless label<TAB>text; label forms and errors."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xialpha.corpora import load_corpus, load_table
from xialpha.errors import UserError

ROWS = [
    {
        "doc": "n1",
        "body": 'wheat prices rise, "sharply"',
        "tags": "grain;wheat",
        "when": "1987-02-26T15:01:01",
        "part": "train",
    },
    {"doc": "n2", "body": "oil output\nfalls", "tags": "crude", "when": "1987-02-27T00:00:00+02:00", "part": "test"},
    {"doc": "n3", "body": "quarterly dividend", "tags": "", "when": "", "part": "train"},
]
ARGS = dict(
    text_column="body",
    label_column="tags",
    id_column="doc",
    time_column="when",
    split_column="part",
    label_separator=";",
)


def check_rows(corpus):
    assert corpus.ids.tolist() == ["n1", "n2", "n3"]
    assert corpus.texts == [row["body"] for row in ROWS]
    assert corpus.labels == [frozenset({"grain", "wheat"}), frozenset({"crude"}), frozenset()]
    assert corpus.timestamps[0] == np.datetime64("1987-02-26T15:01:01")
    assert corpus.timestamps[1] == np.datetime64("1987-02-26T22:00:00")  # +02:00 converted to UTC
    assert np.isnat(corpus.timestamps[2])
    assert corpus.splits.tolist() == ["train", "test", "train"]


def test_csv_round_trip(tmp_path):
    import csv

    path = tmp_path / "news.csv"
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(ROWS[0]))
        writer.writeheader()
        writer.writerows(ROWS)
    check_rows(load_table(path, **ARGS))


def test_jsonl_round_trip_with_list_labels(tmp_path):
    path = tmp_path / "news.jsonl"
    rows = [{**row, "tags": [t for t in row["tags"].split(";") if t]} for row in ROWS]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    check_rows(load_corpus("table", path=path, **{**ARGS, "label_separator": None}))


def test_parquet_round_trip_with_list_labels_and_timestamps(tmp_path):
    path = tmp_path / "news.parquet"
    table = pa.table(
        {
            "doc": [row["doc"] for row in ROWS],
            "body": [row["body"] for row in ROWS],
            "tags": [["grain", "wheat"], ["crude"], []],
            "when": pa.array(
                [np.datetime64("1987-02-26T15:01:01"), np.datetime64("1987-02-26T22:00:00"), None],
                type=pa.timestamp("s"),
            ),
            "part": [row["part"] for row in ROWS],
        }
    )
    pq.write_table(table, path)
    check_rows(load_table(path, **{**ARGS, "label_separator": None}))


def test_tsv_with_header_keeps_quotes_literally(tmp_path):
    path = tmp_path / "news.tsv"
    path.write_text('id\ttext\tlabel\n7\tsaid "hello\tearn\n', encoding="utf-8")
    corpus = load_table(path, id_column="id")
    assert corpus.texts == ['said "hello']
    assert corpus.labels == [frozenset({"earn"})]


def test_headerless_label_tab_text_file(tmp_path):
    path = tmp_path / "r8-train.txt"
    path.write_text("earn\tshr cts net\tprofit\nacq\tcompany buys stake\n\ngrain\twheat\n", encoding="utf-8")
    corpus = load_table(path, header=False)
    assert corpus.texts == ["shr cts net\tprofit", "company buys stake", "wheat"]  # the text keeps its tabs
    assert [sorted(labels) for labels in corpus.labels] == [["earn"], ["acq"], ["grain"]]
    assert corpus.ids.tolist() == ["1", "2", "3"]  # row numbers


def test_numeric_labels_become_names(tmp_path):
    path = tmp_path / "nums.jsonl"
    path.write_text('{"text": "a b", "label": 3}\n{"text": "c d", "label": 2.0}\n')
    assert load_table(path).labels == [frozenset({"3"}), frozenset({"2"})]


@pytest.mark.parametrize("encoding", [None, "utf-8", "UTF8"])
def test_a_utf8_byte_order_mark_is_not_part_of_the_first_column_name(tmp_path, encoding):
    """Spreadsheet programs save CSV as UTF-8 with a BOM; before, "no column 'text' (columns: \\ufefftext, label)"."""
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbftext,label\nalpha beta,a\ngamma,b\n")
    corpus = load_table(path) if encoding is None else load_table(path, encoding=encoding)
    assert corpus.texts == ["alpha beta", "gamma"] and corpus.labels == [frozenset({"a"}), frozenset({"b"})]
    path.write_bytes(b"\xef\xbb\xbfa\talpha\n")  # headerless TSV: the BOM is not part of the first label
    assert load_table(path, format="tsv", header=False).labels == [frozenset({"a"})]


@pytest.mark.parametrize("separator", [";", ",", "|"])
def test_labels_joined_by_a_separator_are_refused_until_the_spec_says_how_to_split(tmp_path, separator):
    """Issue 34: "finance;health" read as one category of its own (9 "categories", several with
    F1 = 0, no warning); now refused, naming label_separator and the separator seen."""
    path = tmp_path / "docs.csv"
    joined = f"finance{separator}health"
    path.write_text(f'text,label\nrates rise,finance\nflu season,health\nhospital bonds,"{joined}"\n')
    with pytest.raises(UserError) as error:
        load_table(path)
    assert str(error.value) == (
        f"label_separator: 1 of 3 labels in column 'label' of {path} hold {separator!r} "
        f'(e.g. {joined!r}): set label_separator = "{separator}" if they are several labels, '
        'or label_separator = "" if each is one label'
    )
    assert load_table(path, label_separator=separator).labels[2] == frozenset({"finance", "health"})
    assert load_table(path, label_separator="").labels[2] == frozenset({joined})  # said: one label each


def test_a_rare_separator_in_single_labels_is_read_as_one_label(tmp_path):
    """Below 1% of a block's labels a separator is taken as part of a label ("R&D, Europe")."""
    path = tmp_path / "docs.csv"
    path.write_text("text,label\n" + "".join(f"doc {i},a\n" for i in range(199)) + 'last doc,"R&D, Europe"\n')
    assert load_table(path).labels[-1] == frozenset({"R&D, Europe"})


def test_a_label_column_named_as_holding_several_needs_label_separator(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text("text,tags\nrates rise,finance\nflu season,health\n")
    with pytest.raises(
        UserError,
        match=r"^label_separator: label column 'tags' of \S+ is named as holding several "
        r"labels, and none holds ';', ',', '\|': set label_separator to the character "
        r'between them, or label_separator = "" if each is one label$',
    ):
        load_table(path, label_column="tags")
    assert load_table(path, label_column="tags", label_separator="").labels == [
        frozenset({"finance"}),
        frozenset({"health"}),
    ]
    lists = tmp_path / "docs.jsonl"  # a JSON list of labels says it itself
    lists.write_text('{"text": "rates rise", "tags": ["finance", "rates"]}\n')
    assert load_table(lists, label_column="tags").labels == [frozenset({"finance", "rates"})]


def test_a_text_column_of_numbers_is_refused_naming_text_column(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text("id,body,label\n17,rates rise,a\n18,flu season,b\n")
    with pytest.raises(UserError) as error:
        load_table(path, text_column="id")
    assert str(error.value) == (
        f"text_column: column 'id' of {path} holds numbers, not text (e.g. '17'); set "
        "text_column to the column holding the documents"
    )
    assert load_table(path, text_column="body").texts == ["rates rise", "flu season"]
    path.write_text("doc,body,label\ndoc-17,rates rise,a\ndoc-18,flu season,b\n")
    with pytest.raises(UserError, match=r"^text_column: column 'doc' of \S+ holds ids, not text \(e.g. 'doc-17'\); "):
        load_table(path, text_column="doc")
    path.write_text("text,label\nR2D2,a\nC3PO,b\nR2D2,a\n")  # one-word texts that repeat are documents
    assert load_table(path).texts == ["R2D2", "C3PO", "R2D2"]


def test_bad_tables(tmp_path):
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("text,category\nhello,earn\n")
    with pytest.raises(UserError, match=r"no column 'label' \(columns: text, category\)"):
        load_table(csv_path)
    with pytest.raises(UserError, match="does not exist"):
        load_table(tmp_path / "missing.csv")
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(
        UserError,
        match=r"cannot tell the format of t.xlsx from its suffix; "
        r"set format = \"csv\" or another of tsv, jsonl, parquet$",
    ):
        load_table(tmp_path / "t.xlsx")
    empty = tmp_path / "empty.csv"
    empty.write_text("text,label\n")
    with pytest.raises(UserError, match="empty corpus"):
        load_table(empty)
    blank = tmp_path / "blank.csv"
    blank.write_text("text,label\nfine,a\n  ,b\n")
    with pytest.raises(
        UserError, match=r"blank.csv, line 3: text column 'text' is empty \(set skip_empty = true in \[corpus\]"
    ):
        load_table(blank)
    assert load_table(blank, skip_empty=True).ids.tolist() == ["1"]
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("text,label\nfine,a,extra\n")
    with pytest.raises(UserError, match="line 2: 3 fields, the header has 2"):
        load_table(ragged)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\ncaf\xe9,a\n".encode("latin-1"))
    with pytest.raises(UserError, match=r"not valid utf-8; set encoding = \"latin-1\" \(or the file.s encoding\)$"):
        load_table(latin)
    assert load_table(latin, encoding="latin-1").texts == ["caf\u00e9"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "a", "label": "x"}\n{"text": "b", \n')
    with pytest.raises(UserError, match="line 2: not valid JSON"):
        load_table(broken)
    times = tmp_path / "times.csv"
    times.write_text("text,label,t\na,x,yesterday\n")
    with pytest.raises(UserError, match="times.csv, line 2: time column 't' holds 'yesterday'"):
        load_table(times, time_column="t")
    dupes = tmp_path / "dupes.csv"
    dupes.write_text("id,text,label\n1,a,x\n1,b,y\n")
    with pytest.raises(UserError, match="document id '1' occurs more than once"):
        load_table(dupes, id_column="id")
    not_parquet = tmp_path / "fake.parquet"
    not_parquet.write_text("text,label\n")
    with pytest.raises(UserError, match="not a readable Parquet file"):
        load_table(not_parquet)


@pytest.mark.parametrize(
    "name, data, message",
    [
        # before: the open quote swallowed lines 3-4 into row 1's label, and 1 row of 3 was loaded
        (
            "quote.csv",
            'text,label\nfirst,"a\nsecond,b\nthird,c\n',
            r"quote.csv, line 2: a quoted field is never closed \(unterminated quote\)",
        ),
        ("quote_headerless.csv", 'a,fine\nb,"open\nc,rest\n', r"line 2: a quoted field is never closed"),
        ("stray.csv", 'text,label\n"hel"lo,a\n', r"stray.csv, line 2: malformed CSV \(',' expected after '\"'\)"),
        ("nul.csv", "text,label\nfine,a\nhel\0lo,b\n", r"nul.csv, line 3: holds a NUL byte"),
        ("nul_header.csv", "te\0xt,label\nfine,a\n", r"nul_header.csv, line 1: holds a NUL byte"),
        ("nul.tsv", "text\tlabel\nhel\0lo\tb\n", r"nul.tsv, line 2: holds a NUL byte"),
        (
            "deep.jsonl",
            '{"text": "a", "label": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            r"deep.jsonl, line 1: unreadable JSON \(values nested too deeply\)",
        ),
        (
            "huge.jsonl",
            '{"text": "a", "label": ' + "9" * 5000 + "}\n",
            r"huge.jsonl, line 1: unreadable JSON \(Exceeds the limit",
        ),
        (
            "object.jsonl",
            '{"text": "a", "label": {"name": "x"}}\n',
            r"object.jsonl, line 1: label column 'label' holds a dict",
        ),
        (
            "nested.jsonl",
            '{"text": "a", "label": [["x", "y"]]}\n',
            r"nested.jsonl, line 1: label column 'label' holds a list \['x', 'y'\]",
        ),
        (
            "deep_label.jsonl",
            '{"text": "a", "label": ' + "[" * 500 + "]" * 500 + "}\n",
            r"deep_label.jsonl, line 1: label column 'label' holds a list",
        ),
        (
            "id.jsonl",
            '{"text": "a", "label": "x", "id": [1]}\n',
            r"id.jsonl, line 1: id column 'id' holds a list \[1\], expected a single value",
        ),
    ],
)
def test_half_readable_tables_are_refused_naming_file_and_line(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_text(data)
    kwargs = {"header": False, "column_names": ["text", "label"]} if "headerless" in name else {}
    with pytest.raises(UserError, match=message):
        load_table(path, id_column="id" if name == "id.jsonl" else None, **kwargs)


def test_quoted_newlines_and_list_labels_still_load(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text('text,label\n"two\nlines",a\n"say ""hi""",b\n')
    assert load_table(path).texts == ["two\nlines", 'say "hi"']
    jsonl = tmp_path / "ok.jsonl"
    jsonl.write_text('{"text": "a", "label": ["x", 1, null]}\n')
    assert load_table(jsonl).labels == [frozenset({"x", "1"})]


def test_train_and_test_files_under_their_split_names(tmp_path):
    (tmp_path / "train.csv").write_text("text,label\nwheat rises,grain\noil falls,crude\n")
    (tmp_path / "test.jsonl").write_text('{"text": "corn harvest", "label": "grain"}\n')
    corpus = load_corpus("table", path={"train": str(tmp_path / "train.csv"), "test": tmp_path / "test.jsonl"})
    assert corpus.ids.tolist() == ["train/1", "train/2", "test/1"]
    assert corpus.splits.tolist() == ["train", "train", "test"]
    assert corpus.texts == ["wheat rises", "oil falls", "corn harvest"]
    assert corpus.split("test").labels == [frozenset({"grain"})]
    assert corpus.name == "train"
    one = load_table(tmp_path / "train.csv")
    assert one.splits is None and one.ids.tolist() == ["1", "2"]  # the single-file form is unchanged


def test_split_files_errors_name_the_key_and_the_file(tmp_path):
    (tmp_path / "train.csv").write_text("text,label\nwheat,grain\n")
    (tmp_path / "empty.csv").write_text("text,label\n")
    train = str(tmp_path / "train.csv")
    with pytest.raises(UserError, match=r"^path\.test: .*missing\.csv does not exist$"):
        load_table({"train": train, "test": str(tmp_path / "missing.csv")})
    with pytest.raises(UserError, match=r"^path\.test: .*empty\.csv has no rows \(empty corpus\)$"):
        load_table({"train": train, "test": str(tmp_path / "empty.csv")})
    with pytest.raises(UserError, match=r"^path\.test: .* is not a file$"):
        load_table({"train": train, "test": str(tmp_path)})
    with pytest.raises(UserError, match=r"^split_column: the splits come from the keys of path"):
        load_table({"train": train}, split_column="part")
    with pytest.raises(UserError, match=r"^path: the table of split = file is empty"):
        load_table({})
    with pytest.raises(
        UserError,
        match=r"^path: a list of files does not say which split each holds; "
        r'write path = \{train = "a.csv", test = "b.csv"\}$',
    ):
        load_table([train, train])
    with pytest.raises(
        UserError,
        match=r"^path: must be a string or a path or "
        r'a table of split = file, e.g. \{train = "a.csv", test = "b.csv"\}, got \[.*'
        r"\(corpus loader 'table'\)$",
    ):
        load_corpus("table", path=[train, train])
    with pytest.raises(UserError, match=r"^path: must be .*, got \{'train': 3\}"):
        load_corpus("table", path={"train": 3})


def test_parquet_through_pandas_gives_what_pyarrow_gave(tmp_path):
    """pandas.read_parquet replaced pyarrow's to_pylist: the same Python values, column by column."""
    import datetime as dt

    from corpora_before import parquet_columns_before

    from xialpha.corpora.table_files import read_columns

    path = tmp_path / "types.parquet"
    pq.write_table(
        pa.table(
            {
                "text": ["a", None, "c"],
                "int": pa.array([1, None, 2**62], pa.int64()),
                "float": [1.5, float("nan"), None],
                "list": [["x", None], [], None],
                "nested": [[["a"]], None, [[]]],
                "struct": [{"n": "x"}, None, {"n": None}],
                "time": pa.array([1, None, 2], pa.timestamp("s")),
                "zoned": pa.array([1, None, 3], pa.timestamp("us", tz="+02:00")),
                "date": pa.array([dt.date(2000, 1, 2), None, dt.date(1970, 1, 1)], pa.date32()),
                "bool": [True, False, None],
            }
        ),
        path,
    )
    names = ["text", "int", "float", "list", "nested", "struct", "time", "zoned", "date", "bool"]
    new, old = read_columns(path, "parquet", names, True, (), "utf-8"), parquet_columns_before(path, names)
    for name in names:
        assert repr(new[name]) == repr(old[name]), name  # equal values of equal types (nan too)
        assert [type(value) for value in new[name]] == [type(value) for value in old[name]], name
    with pytest.raises(
        UserError, match=r"^label_column: \S*types.parquet has no column 'label' \(columns: text, int, float, list, "
    ):
        load_table(path)
