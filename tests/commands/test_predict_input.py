"""`xialpha predict --input`: every accepted suffix is named when one is not known, and
--input-format reads a file whatever its suffix (issue 34d)."""

from __future__ import annotations

import pytest

from xialpha.cli import ArgumentMistake, build_parser
from xialpha.errors import UserError
from xialpha.models.prediction import read_documents


def test_an_unknown_suffix_names_every_accepted_one_and_the_flag(tmp_path):
    documents = tmp_path / "docs.dat"
    documents.write_text("stock bank rate\nteam goal\n", encoding="utf-8")
    with pytest.raises(UserError) as raised:
        read_documents(str(documents))
    message = str(raised.value)
    for suffix in (".txt", ".csv", ".tsv", ".jsonl", ".parquet"):
        assert suffix in message, message
    assert message.startswith("input=: ") and "give input_format=" in message  # from Python: parameters
    shown = raised.value.named({"input": "--input", "input_format": "--input-format"})  # as the CLI shows it
    assert shown.startswith("--input: ") and "give --input-format" in shown


def test_input_format_reads_a_file_whatever_its_suffix(tmp_path):
    lines = tmp_path / "docs.dat"
    lines.write_text("stock bank rate\nteam goal\n", encoding="utf-8")
    assert read_documents(str(lines), input_format="txt")[:2] == (["1", "2"], ["stock bank rate", "team goal"])
    table = tmp_path / "docs.export"
    table.write_text("doc,text\nd1,stock bank rate\nd2,team goal\n", encoding="utf-8")
    assert read_documents(str(table), id_column="doc", input_format="csv")[:2] == (
        ["d1", "d2"],
        ["stock bank rate", "team goal"],
    )
    csv_named_txt = tmp_path / "docs.txt"  # the suffix's default stays: a .txt is one document per line
    csv_named_txt.write_text("doc,text\nd1,stock\n", encoding="utf-8")
    assert read_documents(str(csv_named_txt))[1] == ["doc,text", "d1,stock"]
    assert read_documents(str(csv_named_txt), input_format="csv")[1] == ["stock"]


def test_the_flag_offers_the_formats_predict_reads():
    parser = build_parser(("predict",))
    args = parser.parse_args(["predict", "model", "--input", "docs.dat", "--input-format", "jsonl"])
    assert args.input_format == "jsonl"
    with pytest.raises(ArgumentMistake):
        parser.parse_args(["predict", "model", "--input", "docs.dat", "--input-format", "xlsx"])


def test_a_missing_column_names_its_flag_and_blank_lines_are_no_documents(tmp_path):
    """Issue 43.6: the missing column's error named no flag; a blank line was scored as a document."""
    table = tmp_path / "docs.csv"
    table.write_text("doc,body\nd1,stock bank rate\n", encoding="utf-8")
    with pytest.raises(UserError) as raised:
        read_documents(str(table))
    shown = raised.value.named({"text_column": "--text-column"})
    assert shown.startswith("--text-column: ") and "has no column 'text'" in shown, shown
    with pytest.raises(UserError) as raised:
        read_documents(str(table), text_column="body", id_column="id")
    assert raised.value.parameters == ("id_column",)
    lines = tmp_path / "docs.txt"
    lines.write_text("stock bank rate\n\n  \nteam goal\n", encoding="utf-8")
    assert read_documents(str(lines)) == (["1", "4"], ["stock bank rate", "team goal"], 2)
