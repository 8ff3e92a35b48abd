"""svmlight / libsvm sparse files: `<label>[,<label>...] [qid:<n>] <index>:<value> ... [# comment]`,
parsed by scikit-learn's compiled `load_svmlight_file` (multi-label mode).

Each label value becomes a category named by its number in canonical form ("+1" and "1.0" -> "1",
"-1" -> "-1"), so a binary +1/-1 file has categories "1" and "-1" and a multi-label line
"2,7 3:0.5" belongs to categories "2" and "7"; a line starting with a feature has no label.
Document ids are the 1-based line numbers; a qid field (right after the labels) is ignored.

Beyond scikit-learn, values and labels must be finite numbers, and an error names its line:
scikit-learn's messages carry none, so after one the file is parsed again in blocks of lines to
find the first line that fails by itself (a cost paid only for a malformed file). Well-formed files
give the corpus the hand-written parser before it gave (tests/corpora/test_corpora_svmlight.py compares
them); scikit-learn is stricter in three odd cases that parser read: a qid anywhere but right
after the labels, an empty label ("2,,7"), and control characters \x1c-\x1f between fields.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.parts import PART_BYTES, Census, Part, PartedLoader, RawPart
from xialpha.corpora.sources import existing_file, file_size, read_range
from xialpha.corpora.text_scan import cut_points
from xialpha.errors import UserError

if TYPE_CHECKING:
    import scipy.sparse as sp

MAX_FEATURES = 2**31 - 1  # as libsvm and scikit-learn's int32 indices; dense weight vectors stay possible
_BLOCK = 4096  # lines parsed at once while looking for the line of an error
_REASONS = (  # scikit-learn's message (a pattern) -> ours
    (r"sorted and unique", "feature indices must increase along the line"),
    (r"values? to unpack", "expected <index>:<value>"),
    (r"Invalid index 0 ", "feature index 0 in a file read as 1-based (zero_based = false)"),
    (r"Invalid index (-\d+)", r"feature index \1 is negative"),
    (r"too large to convert|int too large", f"a feature index beyond {MAX_FEATURES:,}"),
    (r"(?:could not convert string to float|invalid literal for int\(\) with base 10): b?(.*)", r"not a number: \1"),
)


def svmlight_parts(*, path, n_features: int | None, zero_based: bool | str) -> list[Part]:
    """The file as one part (`refine_svmlight_part` cuts it into blocks of lines)."""
    if zero_based not in (True, False, "auto"):
        raise UserError(f"must be true, false or 'auto', got {zero_based!r}", key="zero_based")
    if n_features is not None and (
        isinstance(n_features, bool) or not isinstance(n_features, int) or not 1 <= n_features <= MAX_FEATURES
    ):
        raise UserError(f"must be an integer between 1 and {MAX_FEATURES:,}, got {n_features!r}", key="n_features")
    file = existing_file(path)
    settings = {"path": path, "n_features": n_features, "zero_based": zero_based}
    return [Part("svmlight", str(file), settings, where=(file, 0, None, 1))]


def refine_svmlight_part(part: Part) -> list[Part]:
    """The file cut into blocks of whole lines of about PART_BYTES, each knowing its first line."""
    file = part.where[0]
    size = file_size(file)
    if size <= PART_BYTES:
        return [part]
    cuts = cut_points(file, size, PART_BYTES, lone_cr_ends_lines=False)
    return [
        replace(part, source=f"{file} (lines from {line:,})", where=(file, start, stop, line))
        for start, stop, line in cuts
    ]


def read_svmlight_part(part: Part) -> RawPart:
    """The lines of one block: ids are their line numbers; with zero_based "auto" the indices are
    read as 0-based (`xialpha.corpora.parts.finishes` shifts them once all blocks are read)."""
    file, start, stop, first_line = part.where
    zero_based, n_features = part.args["zero_based"], part.args["n_features"]
    import scipy.sparse as sp

    data = read_range(file, start, stop)
    lines = data.split(b"\n")
    ids = [str(number) for number, line in enumerate(lines, start=first_line) if line.split(b"#", 1)[0].split()]
    name = Path(str(file)).name.split(".")[0]
    if not ids:
        return RawPart(
            Corpus(ids=np.array([], dtype=str), X=sp.csr_matrix((0, n_features or 0)), labels=[], name=name), 0
        )
    as_read = True if zero_based == "auto" else zero_based
    try:
        X, labels = _parse(io.BytesIO(data), as_read, None if zero_based == "auto" else n_features)
    except (ValueError, OverflowError) as exc:
        wide = re.match(r"n_features was set to \d+, but input file contains (\d+) features", str(exc))
        if wide:
            raise UserError(
                f"{file} has feature index {int(wide[1]) - 1} (0-based), not < {n_features}", key="n_features"
            ) from None
        number, reason = _first_bad_line(lines, first_line, as_read)
        if number is None:
            raise UserError(f"{file}: malformed svmlight file ({_reason(exc)})") from None
        raise UserError(f"{file}, line {number}: malformed svmlight line ({reason})") from None
    if X.indices.size and int(X.indices.max()) >= MAX_FEATURES:
        raise UserError(f"{file}: feature index {int(X.indices.max())} (0-based) is beyond {MAX_FEATURES - 1:,}")
    if n_features is None or zero_based == "auto":
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], int(X.indices.max()) + 1 if X.nnz else 0))
    return RawPart(Corpus(ids=np.array(ids), X=X, labels=labels, name=name), len(ids))


def check_svmlight_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError for a file without svmlight lines."""
    if not sum(c.n_rows for c in censuses):
        raise UserError(f"{parts[0].where[0]} holds no svmlight lines (empty corpus)", key="path")


def _parse(stream, zero_based: bool | str, n_features: int | None) -> tuple[sp.csr_array, list[frozenset[str]]]:
    """X and the label sets of the svmlight lines in binary `stream`; ValueError for a value or
    label that is not a finite number, or whatever scikit-learn refuses."""
    from sklearn.datasets import load_svmlight_file  # scikit-learn: not for a spec's checks

    X, targets = load_svmlight_file(
        stream, n_features=n_features, dtype=np.float64, multilabel=True, zero_based=zero_based
    )
    if not np.isfinite(X.data).all():
        raise ValueError("a feature value that is not a finite number")
    return X, [frozenset(_canonical_label(number) for number in target) for target in targets]


def _canonical_label(number: float) -> str:
    if not math.isfinite(number):
        raise ValueError(f"label {number} is not a finite number")
    return str(int(number)) if number.is_integer() else repr(number)


def _first_bad_line(lines: list[bytes], first_line: int, zero_based: bool) -> tuple[int | None, str]:
    """(number, reason) of the first of `lines` (numbered from `first_line`) that fails to parse by
    itself, found block by block; (None, "") should none fail alone."""
    lines = [line + b"\n" for line in lines]
    for start in range(0, len(lines), _BLOCK):
        if _failure(lines[start : start + _BLOCK], zero_based) is None:
            continue
        for number, line in enumerate(lines[start : start + _BLOCK], start=first_line + start):
            failure = _failure([line], zero_based)
            if failure is not None:
                return number, (
                    "bytes that are not ASCII" if not line.split(b"#", 1)[0].isascii() else _reason(failure)
                )
    return None, ""


def _failure(lines: list[bytes], zero_based: bool) -> Exception | None:
    """The error parsing `lines` alone raises, or None."""
    try:
        _parse(io.BytesIO(b"".join(lines)), zero_based, None)
    except (ValueError, OverflowError) as exc:
        return exc
    return None


def _reason(exc: Exception) -> str:
    message = str(exc)
    for pattern, reason in _REASONS:
        match = re.search(pattern, message)
        if match:
            return match.expand(reason)
    return message


SVMLIGHT_PARTS = PartedLoader(svmlight_parts, read_svmlight_part, refine_svmlight_part, check_svmlight_parts)
