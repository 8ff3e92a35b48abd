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


# every code point str.splitlines breaks at, except "\n" and "\r\n": none ends a document
NOT_LINE_ENDS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_a_txt_input_keeps_one_row_per_line_whatever_code_points_a_line_holds(tmp_path):
    """Issue 42 item 2: a line holding "\\r", "\\x0b", "\\x0c", "\\x1c"-"\\x1e", "\\x85", "\\u2028" or
    "\\u2029" was split into several documents (25 rows for 18 input lines), and the ids no longer
    matched the input's line numbers."""
    lines = [f"stock{mark}bank rate {i}" for i, mark in enumerate(NOT_LINE_ENDS)]
    lines += ["", f"team{''.join(NOT_LINE_ENDS)}goal", "ends\rwith a carriage return\r", "last, no line break"]
    blank = len(NOT_LINE_ENDS)  # the blank line's index in `lines`
    documents = tmp_path / "docs.txt"
    documents.write_bytes(("\n".join(lines[:-2]) + "\r\n" + "\n".join(lines[-2:])).encode("utf-8"))
    ids, texts, blanks = read_documents(str(documents))
    expected = lines[:-3] + [lines[-3].removesuffix("\r"), lines[-2].removesuffix("\r"), lines[-1]]
    del expected[blank]  # a blank line is no document (issue 43.6); the ids still name the lines
    assert ids == [str(n) for n in range(1, len(lines) + 1) if n != blank + 1]
    assert texts == expected and blanks == 1


def test_a_txt_input_s_final_line_break_and_byte_order_mark_add_no_document(tmp_path):
    documents = tmp_path / "docs.txt"
    documents.write_bytes("\ufeffstock bank\r\n\r\nteam goal\r\n".encode())
    assert read_documents(str(documents)) == (["1", "3"], ["stock bank", "team goal"], 1)
    documents.write_bytes(b"\n")
    with pytest.raises(UserError, match="has no documents"):
        read_documents(str(documents))
    documents.write_bytes(b"")
    with pytest.raises(UserError, match="has no documents"):
        read_documents(str(documents))
