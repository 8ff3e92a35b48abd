"""svmlight / libsvm sparse files: `<label>[,<label>...] [qid:<n>] <index>:<value> ... [# comment]`.

Each label value becomes a category named by its number in canonical form ("+1" and "1.0" -> "1",
"-1" -> "-1"), so a binary +1/-1 file has categories "1" and "-1" and a multi-label line
"2,7 3:0.5" belongs to categories "2" and "7"; a line starting with a feature has no label.
Document ids are the 1-based line numbers; qid fields are ignored.
"""

from __future__ import annotations

import math
import os

import numpy as np
import scipy.sparse as sp

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.sources import existing_path
from xialpha.errors import UserError

MAX_FEATURES = 2**31 - 1  # as libsvm and scikit-learn's int32 indices; dense weight vectors stay possible


def load_svmlight(path: str | os.PathLike, n_features: int | None = None, zero_based: bool | str = "auto") -> Corpus:
    """A corpus with a CSR feature matrix X (float64, shape (n_lines, n_features)) from an svmlight file.

    zero_based: whether feature indices start at 0; "auto" takes 0-based when some index is 0.
    n_features: the number of columns (default: the largest index seen); a larger index is an error.
    """
    if zero_based not in (True, False, "auto"):
        raise UserError(f"zero_based: must be true, false or 'auto', got {zero_based!r}")
    if n_features is not None and (isinstance(n_features, bool) or not isinstance(n_features, int)
                                   or not 1 <= n_features <= MAX_FEATURES):
        raise UserError(f"n_features: must be an integer between 1 and {MAX_FEATURES:,}, got {n_features!r}")
    file = existing_path(path)
    if not file.is_file():
        raise UserError(f"path: {file} is not a file")
    ids, labels, indptr, indices, values = [], [], [0], [], []
    with open(file, "rb") as lines:
        for number, raw in enumerate(lines, start=1):
            line = raw.split(b"#", 1)[0].strip()
            if not line:
                continue
            try:
                row_labels, row_indices, row_values = _parse_line(line.decode("ascii"))
            except (ValueError, UnicodeDecodeError) as exc:
                raise UserError(f"{file}, line {number}: malformed svmlight line ({_reason(exc)})") from None
            ids.append(str(number))
            labels.append(row_labels)
            indices.extend(row_indices)
            values.extend(row_values)
            indptr.append(len(indices))
    if not ids:
        raise UserError(f"path: {file} holds no svmlight lines (empty corpus)")
    columns = np.asarray(indices, dtype=np.int64)
    if zero_based is False or (zero_based == "auto" and (columns.size == 0 or columns.min() > 0)):
        if columns.size and columns.min() < 1:
            raise UserError(f"{file}: feature index 0 in a file read as 1-based (zero_based=False)")
        columns -= 1
    width = int(columns.max()) + 1 if columns.size else 0
    if n_features is not None:
        if width > n_features:
            raise UserError(f"n_features: {file} has feature index {width - 1} (0-based), not < {n_features}")
        width = n_features
    X = sp.csr_matrix((np.asarray(values, dtype=np.float64), columns, np.asarray(indptr, dtype=np.int64)),
                      shape=(len(ids), width))
    return Corpus(ids=np.array(ids), X=X, labels=labels, name=file.name.split(".")[0])


def _parse_line(line: str) -> tuple[frozenset[str], list[int], list[float]]:
    tokens = line.split()
    labels: frozenset[str] = frozenset()
    if ":" not in tokens[0]:
        labels = frozenset(_canonical_label(label) for label in tokens[0].split(",") if label)
        tokens = tokens[1:]
    indices, values = [], []
    previous = -1
    for token in tokens:
        key, colon, value = token.partition(":")
        if not colon:
            raise ValueError(f"expected <index>:<value>, got {token!r}")
        if key == "qid":
            continue
        index, number = int(key), float(value)
        if not 0 <= index < MAX_FEATURES or not math.isfinite(number):
            raise ValueError(f"bad feature {token!r}")
        if index <= previous:
            raise ValueError(f"feature indices must increase, {index} follows {previous}")
        previous = index
        indices.append(index)
        values.append(number)
    return labels, indices, values


def _canonical_label(token: str) -> str:
    number = float(token)
    if not math.isfinite(number):
        raise ValueError(f"label {token!r} is not a finite number")
    return str(int(number)) if number.is_integer() else repr(number)


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "bytes that are not ASCII"
    message = str(exc)
    if message.startswith(("invalid literal", "could not convert")):
        return f"not a number: {message.split(': ', 1)[-1]}"
    return message
