"""Table corpora: CSV, TSV, JSON lines or Parquet with a text column and a label column, optional
id/time/split columns; also the one-file `label<TAB>text` corpora (format="tsv", header=False).

A label cell is one label, a list of labels, or (with `label_separator`) a delimited string;
an empty cell means no category. Ids default to the 1-based row numbers. Times are ISO 8601
strings (a time zone is converted to UTC), date/datetime values, or numbers of seconds since
1970-01-01; an empty time cell is NaT.

Train and test rows in separate files: `path = {train = "train.csv", test = "test.csv"}` (a TOML
table of split name = file); each file's rows get the split its key names, and default ids are
"<split>/<row>". A list of files is refused: it does not say which split each file holds.
"""

from __future__ import annotations

import math
import os
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Annotated

import numpy as np

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.sources import existing_path
from xialpha.corpora.table_files import read_columns, table_format
from xialpha.errors import UserError

SplitFiles = Annotated[dict[str, str | os.PathLike], 'a table of split = file, e.g. {train = "a.csv", test = "b.csv"}']


def load_table(
    path: str | os.PathLike | SplitFiles,
    text_column: str = "text",
    label_column: str = "label",
    id_column: str | None = None,
    time_column: str | None = None,
    split_column: str | None = None,
    label_separator: str | None = None,
    format: str = "auto",
    header: bool = True,
    column_names: tuple[str, ...] | list[str] = ("label", "text"),
    encoding: str = "utf-8",
    skip_empty: bool = False,
) -> Corpus:
    """A corpus from the table file at `path`, or from several: `path` = {split name: file}, whose
    rows take that split (then without `split_column`), in the order the splits are given.

    format: "auto" (from each file's suffix: .csv, .tsv/.tab/.txt, .jsonl/.ndjson, .parquet/.pq) or
    one of csv/tsv/jsonl/parquet. header=False (CSV/TSV): the columns are `column_names` in order.
    skip_empty: drop rows whose text is empty instead of refusing them.
    """
    roles = {"text_column": text_column, "label_column": label_column, "id_column": id_column,
             "time_column": time_column, "split_column": split_column}
    for role, column in roles.items():
        if column is not None and (not isinstance(column, str) or not column):
            raise UserError(f"{role}: must be a column name, got {column!r}")
    files = _split_files(path, split_column)
    wanted = list(dict.fromkeys(column for column in roles.values() if column is not None))
    parts = {"ids": [], "texts": [], "labels": [], "times": [], "splits": []}
    for split, field, file in files:
        columns = read_columns(file, table_format(file, format), wanted, header, tuple(column_names), encoding,
                               field)
        _check_cells(file, columns, roles)
        for key, values in _rows(file, field, columns, roles, label_separator, skip_empty, split).items():
            parts[key] += values
    split_given = split_column is not None or files[0][0] is not None
    return Corpus(ids=np.array(parts["ids"]), texts=parts["texts"], labels=parts["labels"],
                  name=files[0][2].name.split(".")[0],
                  timestamps=np.array(parts["times"], dtype="datetime64[s]") if time_column else None,
                  splits=np.array(parts["splits"]) if split_given else None)


def _split_files(path, split_column: str | None) -> list[tuple[str | None, str, Path]]:
    """(split name or None, key, file) for each table file `path` names; UserError naming the key
    (`path` or `path.<split>`) of a file that is missing or not a file."""
    if isinstance(path, (list, tuple)):
        raise UserError('path: a list of files does not say which split each holds; '
                        'write path = {train = "a.csv", test = "b.csv"}')
    if not isinstance(path, dict):
        named = [(None, "path", path)]
    elif not path:
        raise UserError('path: the table of split = file is empty (e.g. path = {train = "a.csv", test = "b.csv"})')
    elif split_column is not None:
        raise UserError("split_column: the splits come from the keys of path; leave split_column out "
                        "or give path as one file")
    else:
        named = [(str(split), f"path.{split}", file) for split, file in path.items()]
    files = []
    for split, field, file in named:
        if split is not None and not split.strip():
            raise UserError(f"{field}: a split name must not be empty")
        found = existing_path(file, field)
        if not found.is_file():
            raise UserError(f"{field}: {found} is not a file")
        files.append((split, field, found))
    return files


def _rows(file: Path, field: str, columns: dict[str, list], roles: dict[str, str | None],
          label_separator: str | None, skip_empty: bool, split: str | None) -> dict[str, list]:
    """The kept rows of one file (given as key `field`) as lists: ids, texts, labels, times (if a
    time column), splits (the split column's values, or `split` for each row of a file named under
    a split)."""
    text_column, id_column = roles["text_column"], roles["id_column"]
    n_rows = len(columns[text_column])
    prefix = "" if split is None else f"{split}/"
    row_ids = ([_cell_text(value) for value in columns[id_column]] if id_column
               else [f"{prefix}{row}" for row in range(1, n_rows + 1)])
    keep, texts = [], []
    for row, value in enumerate(columns[text_column]):
        if value is not None and not isinstance(value, str):
            raise UserError(f"{file}, row {row + 1}: text column {text_column!r} holds a "
                            f"{type(value).__name__}, expected text")
        if value is None or not value.strip():
            if skip_empty:
                continue
            raise UserError(f"{file}, row {row + 1} (id {row_ids[row]!r}): text column {text_column!r} "
                            f"is empty (set skip_empty = true in [corpus] to drop such rows)")
        keep.append(row)
        texts.append(value)
    if not keep:
        raise UserError(f"{field}: every row of {file} has an empty text (empty corpus)")
    time_column, split_column = roles["time_column"], roles["split_column"]
    return {
        "ids": [row_ids[row] for row in keep],
        "texts": texts,
        "labels": [_labels(columns[roles["label_column"]][row], label_separator) for row in keep],
        "times": [_timestamp(columns[time_column][row], file, row, time_column) for row in keep] if time_column else [],
        "splits": ([_split(columns[split_column][row], file, row, split_column) for row in keep] if split_column
                   else [split] * len(keep) if split is not None else []),
    }


def _check_cells(file, columns: dict[str, list], roles: dict[str, str | None]) -> None:
    """UserError naming the row for a label, id, time or split cell that is not one value (a
    JSON object or a nested list, say); a label cell may also be a flat list of labels."""
    for role, column in roles.items():
        if column is None or role == "text_column":
            continue
        for row, value in enumerate(columns[column]):
            items = value if role == "label_column" and isinstance(value, (list, tuple)) else [value]
            bad = next((item for item in items if item is not None and not isinstance(item, (str, int, float, date))),
                       None)
            if bad is not None:
                expected = "a label or a list of labels" if role == "label_column" else "a single value"
                shown = repr(bad) if len(repr(bad)) <= 40 else f"{repr(bad)[:40]}..."
                raise UserError(f"{file}, row {row + 1}: {role.removesuffix('_column')} column {column!r} holds "
                                f"a {type(bad).__name__} {shown}, expected {expected}")


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
    return (value is None or (isinstance(value, float) and math.isnan(value))
            or (isinstance(value, str) and not value.strip()))


def _timestamp(value, file, row: int, column: str) -> np.datetime64:
    if _is_missing(value):
        return np.datetime64("NaT")
    try:
        if isinstance(value, bool):
            raise ValueError("a boolean")
        if isinstance(value, (int, float)):
            moment = datetime.fromtimestamp(value, tz=timezone.utc)
        elif isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime(value.year, value.month, value.day)
        else:
            moment = datetime.fromisoformat(str(value).strip())
    except (ValueError, OverflowError, OSError, TypeError):
        raise UserError(f"{file}, row {row + 1}: time column {column!r} holds {value!r}, "
                        "expected an ISO 8601 time or seconds since 1970") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return np.datetime64(moment, "s")


def _split(value, file, row: int, column: str) -> str:
    if _is_missing(value):
        raise UserError(f"{file}, row {row + 1}: split column {column!r} is empty")
    return _cell_text(value)
