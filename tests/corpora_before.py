"""The hand-written readers that issue 15 replaced with libraries, kept here (only) so that tests can
check the libraries give the same output: svmlight parsing (now scikit-learn's load_svmlight_file),
Parquet columns through pyarrow (now pandas.read_parquet), file SHA-256 in chunks (now
hashlib.file_digest)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import scipy.sparse as sp


def svmlight_before(path, n_features=None, zero_based="auto"):
    """(ids, X, labels) as xialpha read an svmlight file before issue 15; ValueError where it refused one."""
    ids, labels, indptr, indices, values = [], [], [0], [], []
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, start=1):
            line = raw.split(b"#", 1)[0].strip()
            if not line:
                continue
            row_labels, row_indices, row_values = _parse_line(line.decode("ascii"))
            ids.append(str(number))
            labels.append(row_labels)
            indices.extend(row_indices)
            values.extend(row_values)
            indptr.append(len(indices))
    columns = np.asarray(indices, dtype=np.int64)
    if zero_based is False or (zero_based == "auto" and (columns.size == 0 or columns.min() > 0)):
        if columns.size and columns.min() < 1:
            raise ValueError("feature index 0 in a file read as 1-based")
        columns -= 1
    width = int(columns.max()) + 1 if columns.size else 0
    if n_features is not None:
        if width > n_features:
            raise ValueError("n_features")
        width = n_features
    X = sp.csr_matrix(
        (np.asarray(values, dtype=np.float64), columns, np.asarray(indptr, dtype=np.int64)), shape=(len(ids), width)
    )
    return ids, X, labels


def _parse_line(line):
    tokens = line.split()
    labels = frozenset()
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
        if not 0 <= index < 2**31 - 1 or not math.isfinite(number):
            raise ValueError(f"bad feature {token!r}")
        if index <= previous:
            raise ValueError("feature indices must increase")
        previous = index
        indices.append(index)
        values.append(number)
    return labels, indices, values


def _canonical_label(token):
    number = float(token)
    if not math.isfinite(number):
        raise ValueError(f"label {token!r} is not a finite number")
    return str(int(number)) if number.is_integer() else repr(number)


def parquet_columns_before(file, wanted):
    """{column: values} as xialpha read a Parquet table before issue 15 (pyarrow's to_pylist)."""
    import pyarrow.parquet as pq

    table = pq.read_table(file, columns=wanted)
    return {name: table.column(name).to_pylist() for name in wanted}


def file_sha256_before(path):
    """Hex SHA-256 of a file, read in 1 MiB chunks, as before issue 15."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(2**20), b""):
            digest.update(chunk)
    return digest.hexdigest()
