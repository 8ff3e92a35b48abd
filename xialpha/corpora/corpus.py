"""`Corpus`: documents (texts or a feature matrix), multi-label category sets, optional times and splits."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from xialpha.errors import UserError, did_you_mean


@dataclass(frozen=True, eq=False)
class Corpus:
    """n documents in a fixed order.

    ids: np.ndarray of str, shape (n,), unique. Exactly one of `texts` (list of n str) and `X`
    (scipy CSR, shape (n, n_features), float64) is set. labels: list of n frozensets of category
    names (a document may have none; a single string is taken as one category). timestamps:
    np.ndarray datetime64[s], shape (n,), NaT where unknown, or None. splits: np.ndarray of str,
    shape (n,), e.g. "train"/"test", or None.
    """

    ids: np.ndarray
    labels: list[frozenset[str]]
    name: str
    texts: list[str] | None = None
    X: sp.csr_matrix | None = None
    timestamps: np.ndarray | None = None
    splits: np.ndarray | None = None

    def __post_init__(self) -> None:
        ids = np.asarray(self.ids).astype(str)
        n = len(ids)
        if (self.texts is None) == (self.X is None):
            raise UserError(f"corpus {self.name!r}: give exactly one of texts and X")
        if self.texts is not None and len(self.texts) != n:
            raise UserError(f"corpus {self.name!r}: {len(self.texts)} texts for {n} ids")
        if self.texts is not None:
            bad = next((i for i, text in enumerate(self.texts) if not isinstance(text, str)), None)
            if bad is not None:
                raise UserError(f"corpus {self.name!r}: document {str(ids[bad])!r} has no text "
                                f"(got {type(self.texts[bad]).__name__})")
            object.__setattr__(self, "texts", list(self.texts))
        if self.X is not None:
            object.__setattr__(self, "X", sp.csr_matrix(self.X, dtype=np.float64))
            if self.X.shape[0] != n:
                raise UserError(f"corpus {self.name!r}: X has {self.X.shape[0]} rows for {n} ids")
        if len(self.labels) != n:
            raise UserError(f"corpus {self.name!r}: {len(self.labels)} label sets for {n} ids")
        if len(np.unique(ids)) != n:
            duplicate = next(i for i, count in Counter(ids.tolist()).items() if count > 1)
            raise UserError(f"corpus {self.name!r}: document id {duplicate!r} occurs more than once")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "labels", [frozenset({labels} if isinstance(labels, str) else map(str, labels))
                                            for labels in self.labels])
        if self.timestamps is not None:
            times = np.asarray(self.timestamps).astype("datetime64[s]")
            if times.shape != (n,):
                raise UserError(f"corpus {self.name!r}: timestamps have shape {times.shape}, expected ({n},)")
            object.__setattr__(self, "timestamps", times)
        if self.splits is not None:
            splits = np.asarray(self.splits).astype(str)
            if splits.shape != (n,):
                raise UserError(f"corpus {self.name!r}: splits have shape {splits.shape}, expected ({n},)")
            object.__setattr__(self, "splits", splits)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        kind = "texts" if self.texts is not None else f"X {self.X.shape[1]} features"
        return f"Corpus({self.name!r}, {len(self)} documents, {kind}, {len(self.category_counts())} categories)"

    @property
    def split_names(self) -> list[str]:
        """The distinct split names, sorted; empty when the corpus has no predefined splits."""
        return [] if self.splits is None else sorted(set(self.splits.tolist()))

    def subset(self, idx: Sequence[int] | np.ndarray) -> Corpus:
        """The documents at integer positions `idx` (or where boolean mask `idx` is True), in that order."""
        idx = np.asarray(idx)
        if idx.dtype == bool:
            if idx.shape != (len(self),):
                raise UserError(f"subset: boolean mask has shape {idx.shape}, expected ({len(self)},)")
            idx = np.flatnonzero(idx)
        elif idx.size == 0:
            idx = idx.astype(np.intp)
        elif not np.issubdtype(idx.dtype, np.integer):
            raise UserError(f"subset: idx must be integer positions or a boolean mask, got dtype {idx.dtype}")
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            raise UserError(f"subset: positions must lie in [0, {len(self)}), got {idx.min()}..{idx.max()}")
        return Corpus(
            ids=self.ids[idx],
            labels=[self.labels[i] for i in idx],
            name=self.name,
            texts=None if self.texts is None else [self.texts[i] for i in idx],
            X=None if self.X is None else self.X[idx],
            timestamps=None if self.timestamps is None else self.timestamps[idx],
            splits=None if self.splits is None else self.splits[idx],
        )

    def split(self, name: str) -> Corpus:
        """The documents of predefined split `name` (e.g. "train"); UserError if there is no such split."""
        if name not in self.split_names:
            known = ", ".join(self.split_names) or "none"
            raise UserError(f"split: corpus {self.name!r} has no split {name!r} (splits: {known})")
        return self.subset(self.splits == name)

    def category_counts(self) -> dict[str, int]:
        """Number of documents per category, most frequent first (ties by name)."""
        counts = Counter(category for labels in self.labels for category in labels)
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def choose_categories(
        self,
        top_k: int | None = None,
        names: Sequence[str] | None = None,
        min_positives: int | None = None,
    ) -> list[str]:
        """Categories to train for: `names` (in that order) or all by frequency, keeping those with
        at least `min_positives` documents here, then the first `top_k` of them."""
        counts = self.category_counts()
        if names is not None:
            if isinstance(names, str):
                raise UserError(f"names: expected a list of category names, got the string {names!r}")
            unknown = [name for name in names if name not in counts]
            if unknown:
                raise UserError(f"names: unknown categor{'y' if len(unknown) == 1 else 'ies'} "
                                f"{', '.join(map(repr, unknown))} in corpus {self.name!r}"
                                f"{did_you_mean(unknown[0], counts, listing='most frequent')}")
            chosen = list(dict.fromkeys(names))
        else:
            chosen = list(counts)
        if min_positives is not None:
            _check_count("min_positives", min_positives, minimum=1)
            chosen = [name for name in chosen if counts[name] >= min_positives]
        if top_k is not None:
            _check_count("top_k", top_k, minimum=1)
            chosen = chosen[:top_k]
        if not chosen:
            given = {"top_k": top_k, "names": None if names is None else list(names), "min_positives": min_positives}
            settings = ", ".join(f"{key} = {json.dumps(value)}" for key, value in given.items() if value is not None)
            raise UserError(f"categories: no category of corpus {self.name!r} is left ({settings or 'no filter'})")
        return chosen

    def y(self, category: str) -> np.ndarray:
        """Targets for one category: int8 array of shape (n,), +1 where the document has it, else -1."""
        if category not in self.category_counts():
            raise UserError(f"category: {category!r} is not a category of corpus {self.name!r}")
        return np.fromiter((1 if category in labels else -1 for labels in self.labels),
                           dtype=np.int8, count=len(self))

    def fingerprint(self) -> str:
        """sha256 hex digest over the ids, the texts (or X) and the label sets, in order."""
        digest = hashlib.sha256()
        for value in self.ids.tolist():
            _feed(digest, value.encode("utf-8"))
        if self.texts is not None:
            digest.update(b"texts")
            for text in self.texts:
                _feed(digest, text.encode("utf-8"))
        else:
            X = self.X.copy()
            X.sort_indices()
            digest.update(b"X" + np.asarray(X.shape, dtype="<i8").tobytes())
            for part, dtype in ((X.indptr, "<i8"), (X.indices, "<i8"), (X.data, "<f8")):
                _feed(digest, np.ascontiguousarray(part, dtype=dtype).tobytes())
        digest.update(b"labels")
        for labels in self.labels:
            _feed(digest, "\x1f".join(sorted(labels)).encode("utf-8"))
        return digest.hexdigest()


def _feed(digest, data: bytes) -> None:
    """Length-prefixed update, so that ("ab", "c") and ("a", "bc") hash differently."""
    digest.update(len(data).to_bytes(8, "little"))
    digest.update(data)


def _check_count(field: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise UserError(f"{field}: must be an integer >= {minimum}, got {value!r}")
