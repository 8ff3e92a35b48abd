"""Reading documents to label and writing predicted categories with decision values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from xialpha.corpora.table_files import FORMATS as TABLE_FORMATS
from xialpha.corpora.table_files import SUFFIX_FORMATS, read_columns
from xialpha.errors import UserError
from xialpha.reports.records import json_text, write_csv

TEXT = "txt"  # one document per line
INPUT_SUFFIXES = {".txt": TEXT, **{suffix: f for suffix, f in SUFFIX_FORMATS.items() if suffix != ".txt"}}
INPUT_FORMATS = (TEXT, *TABLE_FORMATS)


def format_of(path: str) -> str:
    """The format `--input` is read as when --input-format is not given: its suffix's
    (INPUT_SUFFIXES; .txt is one document per line here, not a TSV table)."""
    suffix = Path(path).suffix.lower()
    if suffix not in INPUT_SUFFIXES:
        raise UserError(
            f"cannot tell the format of {Path(path).name} from its suffix (one of "
            f"{', '.join(INPUT_SUFFIXES)}); give input_format= ({', '.join(INPUT_FORMATS)})",
            parameter="input",
            mentions="input_format=",
        )
    return INPUT_SUFFIXES[suffix]


class Documents(NamedTuple):
    """The documents to label: their ids and texts, and the blank lines of a text file left out."""

    ids: list[str]
    texts: list[str]
    blank_lines: int = 0


def read_documents(
    path: str, text_column: str = "text", id_column: str | None = None, input_format: str | None = None
) -> Documents:
    """The documents of a text file (format "txt": one document per line, `text_lines`, a blank
    line none: it is left out and counted; ids are the 1-based line numbers, so an output row still
    names its line) or of a table file read by xialpha's table reader (CSV/TSV/JSON lines/Parquet; a
    column it lacks is named by its parameter, text_column or id_column). input_format: one of
    INPUT_FORMATS, or None for the file's suffix's (`format_of`)."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"{path} is not a file", parameter="input")
    if input_format is None:
        input_format = format_of(path)
    if input_format == TEXT:
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{path}: bytes at offset {exc.start} are not valid UTF-8", parameter="input") from None
        lines = text_lines(text)
        rows = [(str(number), line) for number, line in enumerate(lines, start=1) if line.strip()]
        blank = len(lines) - len(rows)
    else:
        blank = 0
        wanted = [text_column] + ([id_column] if id_column else [])
        keys = {column: name for name, column in (("id_column", id_column), ("text_column", text_column)) if column}
        try:
            columns = read_columns(file, input_format, wanted, True, (), "utf-8", keys=keys)
        except UserError as exc:
            if exc.key in keys.values():  # a column the file lacks: named by its parameter (--text-column)
                raise UserError(exc.message, parameter=exc.key) from None
            raise
        texts = columns[text_column]
        ids = [str(v) for v in columns[id_column]] if id_column else [str(i) for i in range(1, len(texts) + 1)]
        for doc_id, text in zip(ids, texts):
            if not isinstance(text, str):
                raise UserError(
                    f"{path}, id {doc_id}: column {text_column!r} holds {type(text).__name__}, expected text",
                    parameter="input",
                )
        rows = list(zip(ids, texts))
    if not rows:
        raise UserError(f"{path} has no documents", parameter="input")
    return Documents([doc_id for doc_id, _ in rows], [text for _, text in rows], blank)


def text_lines(text: str) -> list[str]:
    """The documents of a .txt input, one per line: only "\\n" (or "\\r\\n") ends a line, as a
    user's editor and `wc -l` count them; a final line break ends the last document rather than
    starting an empty one, and a leading byte-order mark is dropped. Every other code point that
    `str.splitlines` would break at ("\\r" alone, "\\x0b", "\\x0c", "\\x1c"-"\\x1e", "\\x85",
    "\\u2028", "\\u2029") stays inside its document, so output row n is input line n."""
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def wordless(features: dict) -> int:
    """How many documents have no feature in any of `features` (CSR matrices (m, d) by
    preprocessing id, `TrainedSelection.features_by_preprocessing`): documents that share no word
    with the models' vocabulary, whose decision values are the biases alone."""
    empty = None
    for matrix in features.values():
        rows = np.diff(sp.csr_matrix(matrix).indptr) == 0
        empty = rows if empty is None else empty & rows
    return 0 if empty is None else int(empty.sum())


def write_predictions(stream, ids: list[str], categories: list[str], decision: np.ndarray, out_format: str) -> None:
    """CSV or JSON lines to `stream`, a row per document. CSV (`xialpha.reports.records.write_csv`):
    id, categories (the predicted ones as a JSON list, ["earn","acq"], so that any name, one
    holding ";" or "," included, reads back whole), then decision_<category> per category (6
    significant digits). JSON lines (`records.json_text`): {"id", "categories", "decision"}."""
    if out_format == "csv":
        header = ["id", "categories", *[f"decision_{c}" for c in categories]]
        write_csv(
            stream,
            [
                header,
                *[
                    [doc_id, _category_list(categories, values), *[float(f"{v:.6g}") for v in values]]
                    for doc_id, values in zip(ids, decision)
                ],
            ],
        )
        return
    for doc_id, values in zip(ids, decision):
        record = {
            "id": doc_id,
            "categories": [c for c, v in zip(categories, values) if v > 0],
            "decision": {c: float(v) for c, v in zip(categories, values)},
        }
        stream.write(json_text(record) + "\n")


def _category_list(categories: list[str], values: np.ndarray) -> str:
    """The categories with a positive decision value, as a JSON list (compact, names unescaped)."""
    return json.dumps([c for c, v in zip(categories, values) if v > 0], ensure_ascii=False, separators=(",", ":"))
