"""Table corpora: CSV, TSV, JSON lines or Parquet with a text column and a label column, optional
id/time/split columns; also the one-file `label<TAB>text` corpora (format="tsv", header=False).

A label cell is one label, a list of labels, or (with `label_separator`) a delimited string;
an empty cell means no category. Without label_separator, string labels that look like several
joined (";", "," or "|" in at least 1% of a block's labels), or a label column named "labels",
"categories", "tags", "topics" or "classes", are refused naming label_separator: set it to the
separator, or label_separator = "" to say each cell is one label. A text column whose every cell
is a number, or an id (one word with a digit, all different), is refused naming text_column. Ids default to the
1-based row numbers. Times are ISO 8601
strings (a time zone is converted to UTC), date/datetime values, or numbers of seconds since
1970-01-01; an empty time cell is NaT.

Train and test rows in separate files: `path = {train = "train.csv", test = "test.csv"}` (a TOML
table of split name = file); each file's rows get the split its key names, and default ids are
"<split>/<row>". A list of files is refused: it does not say which split each file holds.
"""

from __future__ import annotations

import codecs
import math
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.parts import PART_BYTES, Census, Part, PartedLoader, RawPart
from xialpha.corpora.sources import existing_file, is_uri
from xialpha.corpora.table_files import (
    Block,
    head_columns,
    no_column,
    parquet_blocks,
    read_block,
    table_format,
    text_blocks,
)
from xialpha.corpora.text_scan import byte_scannable
from xialpha.errors import UserError


def table_parts(**args) -> list[Part]:
    """One part per file (`refine_table_part` cuts it into blocks); UserError naming the argument
    for a bad column role, a missing file or an unknown format."""
    settings = _settings(**args)
    files = _split_files(settings["path"], settings["split_column"])
    return [
        Part(
            "table",
            str(file),
            settings,
            where=(split, field, file, table_format(Path(str(file)), settings["format"])),
            group=f"{field}={file}",
        )
        for split, field, file in files
    ]


def refine_table_part(part: Part) -> list[Part]:
    """A file's part cut into blocks of about PART_BYTES (text files, at record starts) or into its
    row groups (Parquet), each one part; the blocks of one file are numbered together."""
    split, field, file, format = part.where
    a = part.args
    if format == "parquet":
        blocks = parquet_blocks(file)
    elif not a["header"] and format == "jsonl":
        raise UserError("JSON lines files name their fields; header = false applies to CSV/TSV only", key="header")
    else:
        blocks = text_blocks(file, format, a["header"], a["encoding"], PART_BYTES)
    return [
        replace(
            part,
            source=f"{file}" if len(blocks) == 1 else f"{file} (block {i + 1} of {len(blocks)})",
            where=(split, field, file, format, block),
        )
        for i, block in enumerate(blocks)
    ]


def read_table_part(part: Part) -> RawPart:
    """The rows of one block; default ids are the block's row numbers (`RawPart.id_prefix`)."""
    a = part.args
    split, field, file, format, *rest = part.where
    block = rest[0] if rest else Block()
    roles = {role: a[role] for role in ROLES}
    wanted, keys = _wanted_columns(a)
    columns, places = read_block(
        file, format, wanted, a["header"], tuple(a["column_names"]), a["encoding"], block, keys
    )
    _check_cells(file, columns, places, roles)
    if a["label_separator"] is None:
        _refuse_unsaid_multi_labels(file, columns[a["label_column"]], a["label_column"])
    _refuse_numbers_as_text(file, columns[a["text_column"]], a["text_column"])
    rows = _rows(file, columns, places, roles, a["label_separator"], a["skip_empty"], split)
    split_given = a["split_column"] is not None or split is not None
    corpus = Corpus(
        ids=np.array(rows["ids"], dtype=str),
        texts=rows["texts"],
        labels=rows["labels"],
        name=Path(str(file)).name.split(".")[0],
        timestamps=np.array(rows["times"], dtype="datetime64[s]") if a["time_column"] else None,
        splits=np.array(rows["splits"], dtype=str) if split_given else None,
    )
    prefix = None if a["id_column"] else ("" if split is None else f"{split}/")
    return RawPart(corpus, len(places), prefix)


LOOK_BYTES = 2**20  # of a text file's head, read for its header before any task runs


def look_at_table_part(part: Part) -> None:
    """UserError naming the key of a column the arguments name (text_column, label_column, ...)
    that a planned part's file does not have, as its tasks would find it, from the head of the file
    only (`head_columns`). A remote file (a URI) is left to the tasks, which may see it where this
    process may not."""
    split, field, file, format = part.where
    if is_uri(file):
        return
    a = part.args
    wanted, keys = _wanted_columns(a)
    head = head_columns(file, format, a["header"], tuple(a["column_names"]), a["encoding"], LOOK_BYTES)
    if head is None:
        return
    names, where = head
    for column in wanted:
        if column not in names:
            raise no_column(where, column, names, keys)


def _wanted_columns(a: dict) -> tuple[list[str], dict[str, str]]:
    """The columns the arguments `a` name (each once, in role order) and {column: its argument}
    (the first role naming a column wins)."""
    roles = {role: a[role] for role in ROLES}
    wanted = list(dict.fromkeys(column for column in roles.values() if column is not None))
    keys = {column: role for role, column in reversed(roles.items()) if column is not None}
    return wanted, keys


def check_table_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError naming the argument of a file without rows, or whose every row has an empty text."""
    rows: dict[tuple, list[int]] = {}
    for part, counted in zip(parts, censuses):
        totals = rows.setdefault(part.where[1:3], [0, 0])
        totals[0] += counted.n_rows
        totals[1] += sum(counted.split_sizes.values())
    for (field, file), (n_rows, n_documents) in rows.items():
        if not n_rows:
            raise UserError(f"{file} has no rows (empty corpus)", key=field)
        if not n_documents:
            raise UserError(f"every row of {file} has an empty text (empty corpus)", key=field)


ROLES = ("text_column", "label_column", "id_column", "time_column", "split_column")


def _settings(
    *,
    path,
    text_column: str,
    label_column: str,
    id_column: str | None,
    time_column: str | None,
    split_column: str | None,
    label_separator: str | None,
    format: str,
    header: bool,
    column_names,
    encoding: str,
    skip_empty: bool,
) -> dict:
    """All of `load_table`'s arguments (its signature states their defaults), the column roles checked."""
    settings = dict(locals())
    for role in ROLES:
        column = settings[role]
        if column is not None and (not isinstance(column, str) or not column):
            raise UserError(f"must be a column name, got {column!r}", key=role)
    if not byte_scannable(encoding) and not _known_encoding(encoding):
        raise UserError(f"unknown text encoding {encoding!r}", key="encoding")
    settings["column_names"] = tuple(column_names)
    return settings


def _known_encoding(encoding: str) -> bool:
    try:
        codecs.lookup(encoding)
    except LookupError:
        return False
    return True


def _split_files(path, split_column: str | None) -> list[tuple[str | None, str, Path | str]]:
    """(split name or None, key, file) for each table file `path` names; UserError naming the key
    (`path` or `path.<split>`) of a file that is missing or not a file."""
    if isinstance(path, (list, tuple)):
        raise UserError(
            'a list of files does not say which split each holds; write path = {train = "a.csv", test = "b.csv"}',
            key="path",
        )
    if not isinstance(path, dict):
        named = [(None, "path", path)]
    elif not path:
        raise UserError(
            'the table of split = file is empty (e.g. path = {train = "a.csv", test = "b.csv"})', key="path"
        )
    elif split_column is not None:
        raise UserError(
            "the splits come from the keys of path; leave split_column out or give path as one file", key="split_column"
        )
    else:
        named = [(str(split), f"path.{split}", file) for split, file in path.items()]
    files = []
    for split, field, file in named:
        if split is not None and not split.strip():
            raise UserError("a split name must not be empty", key=field)
        files.append((split, field, existing_file(file, field)))
    return files


def _rows(
    file,
    columns: dict[str, list],
    places: list[str],
    roles: dict[str, str | None],
    label_separator: str | None,
    skip_empty: bool,
    split: str | None,
) -> dict[str, list]:
    """The kept rows of one block as lists: ids (the id column's, else row numbers from 1 within
    the block), texts, labels, times (if a time column), splits (the split column's values, or
    `split` for each row of a file named under a split). `places`: where each row is, for messages."""
    text_column, id_column = roles["text_column"], roles["id_column"]
    row_ids = (
        [_cell_text(value) for value in columns[id_column]]
        if id_column
        else [str(row) for row in range(1, len(places) + 1)]
    )
    keep, texts = [], []
    for row, value in enumerate(columns[text_column]):
        if value is not None and not isinstance(value, str):
            raise UserError(
                f"{file}, {places[row]}: text column {text_column!r} holds a {type(value).__name__}, expected text"
            )
        if value is None or not value.strip():
            if skip_empty:
                continue
            named = f" (id {row_ids[row]!r})" if id_column else ""
            raise UserError(
                f"{file}, {places[row]}{named}: text column {text_column!r} "
                f"is empty (set skip_empty = true in [corpus] to drop such rows)"
            )
        keep.append(row)
        texts.append(value)
    time_column, split_column = roles["time_column"], roles["split_column"]
    return {
        "ids": [row_ids[row] for row in keep],
        "texts": texts,
        "labels": [_labels(columns[roles["label_column"]][row], label_separator) for row in keep],
        "times": [_timestamp(columns[time_column][row], file, places[row], time_column) for row in keep]
        if time_column
        else [],
        "splits": (
            [_split(columns[split_column][row], file, places[row], split_column) for row in keep]
            if split_column
            else [split] * len(keep)
            if split is not None
            else []
        ),
    }


def _check_cells(file, columns: dict[str, list], places: list[str], roles: dict[str, str | None]) -> None:
    """UserError naming the row for a label, id, time or split cell that is not one value (a
    JSON object or a nested list, say); a label cell may also be a flat list of labels."""
    for role, column in roles.items():
        if column is None or role == "text_column":
            continue
        for row, value in enumerate(columns[column]):
            items = value if role == "label_column" and isinstance(value, (list, tuple)) else [value]
            bad = next(
                (item for item in items if item is not None and not isinstance(item, (str, int, float, date))), None
            )
            if bad is not None:
                expected = "a label or a list of labels" if role == "label_column" else "a single value"
                shown = repr(bad) if len(repr(bad)) <= 40 else f"{repr(bad)[:40]}..."
                raise UserError(
                    f"{file}, {places[row]}: {role.removesuffix('_column')} column {column!r} holds "
                    f"a {type(bad).__name__} {shown}, expected {expected}"
                )


SEPARATORS = (";", ",", "|")  # characters that join several labels in one cell
MULTI_LABEL_NAMES = ("labels", "categories", "tags", "topics", "classes")  # label columns named as holding several
MULTI_LABEL_SHARE = 0.01  # label cells holding a separator beyond which a block's labels look multi-label


def _refuse_unsaid_multi_labels(file, cells: list, column: str) -> None:
    """UserError naming label_separator when the label cells of a block look like several labels
    joined by a separator (one of SEPARATORS in at least one cell and MULTI_LABEL_SHARE of them),
    or the column's name says it holds several (MULTI_LABEL_NAMES) and its cells are strings,
    while the spec does not say how to split them: read as they are, "finance;health" would be a
    category of its own, silently. label_separator = "" says each cell is one label."""
    texts = [value.strip() for value in cells if isinstance(value, str) and value.strip()]
    if not texts:
        return
    holding = {separator: [text for text in texts if separator in text] for separator in SEPARATORS}
    separator, joined = max(holding.items(), key=lambda item: len(item[1]))
    if joined and len(joined) >= MULTI_LABEL_SHARE * len(texts):
        raise UserError(
            f"{len(joined):,} of {len(texts):,} labels in column {column!r} of {file} hold {separator!r} "
            f'(e.g. {joined[0][:60]!r}): set label_separator = "{separator}" if they are several labels, '
            'or label_separator = "" if each is one label',
            key="label_separator",
        )
    if column.strip().lower() in MULTI_LABEL_NAMES:
        raise UserError(
            f"label column {column!r} of {file} is named as holding several labels, and none holds "
            f"{', '.join(map(repr, SEPARATORS))}: set label_separator to the character between them, "
            'or label_separator = "" if each is one label',
            key="label_separator",
        )


def _refuse_numbers_as_text(file, cells: list, column: str) -> None:
    """UserError naming text_column when every non-empty text cell of a block is a number, or an
    id (one word with a digit, each cell another: "doc-17"): an id or count column named by
    mistake, or header = false on a file whose columns are in another order."""
    texts = [value.strip() for value in cells if isinstance(value, str) and value.strip()]
    if not texts:
        return
    if all(_is_number(text) for text in texts):
        what = "numbers"
    elif (
        len(texts) > 1
        and len(set(texts)) == len(texts)
        and all(len(text.split()) == 1 and any(c.isdigit() for c in text) for text in texts)
    ):
        what = "ids"
    else:
        return
    raise UserError(
        f"column {column!r} of {file} holds {what}, not text (e.g. {texts[0][:30]!r}); set "
        "text_column to the column holding the documents",
        key="text_column",
    )


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def _labels(value, separator: str | None) -> frozenset[str]:
    if _is_missing(value):
        return frozenset()
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return frozenset(label for item in value if not _is_missing(item) and (label := _cell_text(item)))
    text = _cell_text(value)
    parts = text.split(separator) if separator else [text]
    return frozenset(part.strip() for part in parts if part.strip())


def _cell_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _is_missing(value) -> bool:
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def _timestamp(value, file, place: str, column: str) -> np.datetime64:
    if _is_missing(value):
        return np.datetime64("NaT")
    try:
        if isinstance(value, bool):
            raise ValueError("a boolean")
        if isinstance(value, (int, float)):
            moment = datetime.fromtimestamp(value, tz=UTC)
        elif isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime(value.year, value.month, value.day)
        else:
            moment = datetime.fromisoformat(str(value).strip())
    except (ValueError, OverflowError, OSError, TypeError):
        raise UserError(
            f"{file}, {place}: time column {column!r} holds {value!r}, expected an ISO 8601 time or seconds since 1970"
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return np.datetime64(moment, "s")


def _split(value, file, place: str, column: str) -> str:
    if _is_missing(value):
        raise UserError(f"{file}, {place}: split column {column!r} is empty")
    return _cell_text(value)


TABLE_PARTS = PartedLoader(table_parts, read_table_part, refine_table_part, check_table_parts, look=look_at_table_part)
