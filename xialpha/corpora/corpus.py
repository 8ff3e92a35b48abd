"""`Corpus`: documents (texts or a feature matrix), multi-label category sets, optional times and splits.

A validation split is carved from a corpus's training split (`[corpus] validation_fraction`,
`carve_validation`). The sweep scores its held-out figures on it, so the corpus's own test split
stays sealed for `xialpha certify`. The carving is seeded: loading the same corpus with the same
spec gives the same split every time (a stored spec re-loads it for certify and refit, and the
data fingerprint checks that it did).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from xialpha.corpora.splits import VALIDATION_SPLIT
from xialpha.errors import UserError, did_you_mean

if TYPE_CHECKING:  # scipy.sparse at run time only where features are held
    import scipy.sparse as sp


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
                raise UserError(
                    f"corpus {self.name!r}: document {str(ids[bad])!r} has no text "
                    f"(got {type(self.texts[bad]).__name__})"
                )
            object.__setattr__(self, "texts", list(self.texts))
        if self.X is not None:
            import scipy.sparse as sp

            object.__setattr__(self, "X", sp.csr_matrix(self.X, dtype=np.float64))
            if self.X.shape[0] != n:
                raise UserError(f"corpus {self.name!r}: X has {self.X.shape[0]} rows for {n} ids")
        if len(self.labels) != n:
            raise UserError(f"corpus {self.name!r}: {len(self.labels)} label sets for {n} ids")
        if len(np.unique(ids)) != n:
            duplicate = next(i for i, count in Counter(ids.tolist()).items() if count > 1)
            raise UserError(f"corpus {self.name!r}: document id {duplicate!r} occurs more than once")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(
            self,
            "labels",
            [frozenset({labels} if isinstance(labels, str) else map(str, labels)) for labels in self.labels],
        )
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
            raise UserError(f"corpus {self.name!r} has no split {name!r} (splits: {known})", key="split")
        return self.subset(self.splits == name)

    def category_counts(self) -> dict[str, int]:
        """Number of documents per category, most frequent first (ties by name)."""
        return ranked_counts(Counter(category for labels in self.labels for category in labels))

    def choose_categories(
        self,
        top_k: int | None = None,
        names: Sequence[str] | None = None,
        min_positives: int | None = None,
    ) -> list[str]:
        """Categories to train for: see `choose_categories` (on this corpus's category counts)."""
        return choose_categories(
            self.category_counts(), self.name, top_k=top_k, names=names, min_positives=min_positives
        )

    def y(self, category: str) -> np.ndarray:
        """Targets for one category: int8 array of shape (n,), +1 where the document has it, else -1."""
        if category not in self.category_counts():
            raise UserError(f"{category!r} is not a category of corpus {self.name!r}", key="category")
        return targets(self.labels, [category])[:, 0]

    def fingerprint(self) -> str:
        """The data fingerprint of these documents in this order (see `fingerprint_of`)."""
        return fingerprint_of([document_digests(self)], kind_of(self))


def concat(chunks: Sequence[Corpus], name: str | None = None) -> Corpus:
    """The documents of `chunks` one after the other (all texts or all feature matrices of one
    width); timestamps and splits are kept when every chunk has them."""
    if not chunks:
        raise UserError("corpus: no documents")
    import scipy.sparse as sp

    first = chunks[0]
    texts = None if first.texts is None else [text for chunk in chunks for text in chunk.texts]
    return Corpus(
        ids=np.concatenate([chunk.ids for chunk in chunks]),
        labels=[labels for chunk in chunks for labels in chunk.labels],
        name=name or first.name,
        texts=texts,
        X=None if texts is not None else sp.vstack([chunk.X for chunk in chunks], format="csr"),
        timestamps=_joined([chunk.timestamps for chunk in chunks]),
        splits=_joined([chunk.splits for chunk in chunks]),
    )


def _joined(arrays: list) -> np.ndarray | None:
    return None if any(array is None for array in arrays) else np.concatenate(arrays)


def ranked_counts(counts: Mapping[str, int]) -> dict[str, int]:
    """`counts` most frequent first, ties by name."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def choose_categories(
    counts: Mapping[str, int],
    corpus_name: str,
    top_k: int | None = None,
    names: Sequence[str] | None = None,
    min_positives: int | None = None,
) -> list[str]:
    """Categories to train for, from `counts` {category: documents} of the training documents:
    `names` (in that order) or all by frequency, keeping those with at least `min_positives`
    documents, then the first `top_k` of them. UserError naming the argument otherwise (when no
    category is left: the filter that left none, or no argument for a corpus without categories)."""
    counts = ranked_counts(counts)
    if names is not None:
        if isinstance(names, str):
            raise UserError(f"expected a list of category names, got the string {names!r}", key="names")
        unknown = [name for name in names if name not in counts]
        if unknown:
            raise UserError(
                f"unknown categor{'y' if len(unknown) == 1 else 'ies'} "
                f"{', '.join(map(repr, unknown))} in corpus {corpus_name!r}"
                f"{did_you_mean(unknown[0], counts, listing='most frequent')}",
                key="names",
            )
        chosen = list(dict.fromkeys(names))
    else:
        chosen = list(counts)
    emptied_by = "names" if not chosen and names is not None else None  # the filter that left no category
    if min_positives is not None:
        _check_count("min_positives", min_positives, minimum=1)
        before = len(chosen)
        chosen = [name for name in chosen if counts[name] >= min_positives]
        emptied_by = emptied_by or ("min_positives" if before and not chosen else None)
    if top_k is not None:
        _check_count("top_k", top_k, minimum=1)
        chosen = chosen[:top_k]
    if not chosen:
        given = {"top_k": top_k, "names": None if names is None else list(names), "min_positives": min_positives}
        settings = ", ".join(f"{key} = {json.dumps(value)}" for key, value in given.items() if value is not None)
        raise UserError(f"no category of corpus {corpus_name!r} is left ({settings or 'no filter'})", key=emptied_by)
    return chosen


def targets(labels: Sequence[frozenset[str]], categories: Sequence[str]) -> np.ndarray:
    """int8 array (n_documents, n_categories): +1 where a document has the category, else -1 (also
    for a category none of these documents has)."""
    y = np.full((len(labels), len(categories)), -1, dtype=np.int8)
    column = {category: c for c, category in enumerate(categories)}
    for i, document in enumerate(labels):
        for category in document:
            c = column.get(category)
            if c is not None:
                y[i, c] = 1
    return y


DIGEST_BYTES = 16


def document_digests(corpus: Corpus) -> np.ndarray:
    """uint8 array (n, DIGEST_BYTES): one BLAKE2b digest per document over its id, its text (or its
    feature row: sorted column indices and values) and its sorted label set, each length-prefixed."""
    out = np.empty((len(corpus), DIGEST_BYTES), dtype=np.uint8)
    ids = corpus.ids.tolist()
    X = None
    if corpus.X is not None:
        X = corpus.X.copy()
        X.sort_indices()
    for i, labels in enumerate(corpus.labels):
        digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
        _feed(digest, ids[i].encode("utf-8"))
        if X is None:
            _feed(digest, corpus.texts[i].encode("utf-8"))
        else:
            row = slice(X.indptr[i], X.indptr[i + 1])
            _feed(digest, np.ascontiguousarray(X.indices[row], dtype="<i8").tobytes())
            _feed(digest, np.ascontiguousarray(X.data[row], dtype="<f8").tobytes())
        _feed(digest, "\x1f".join(sorted(labels)).encode("utf-8"))
        out[i] = np.frombuffer(digest.digest(), dtype=np.uint8)
    return out


def kind_of(corpus: Corpus) -> str:
    """ "texts", or "X<n_features>" for a corpus of feature vectors (part of its fingerprint)."""
    return "texts" if corpus.texts is not None else f"X{corpus.X.shape[1]}"


def fingerprint_of(digests: Sequence[np.ndarray], kind: str) -> str:
    """sha256 hex digest of documents given as blocks of `document_digests`, in order: the same for
    the same documents however they are split into blocks (one task per partition computes its
    block; one reduction joins them). `kind`: see `kind_of`."""
    total = sum(block.shape[0] for block in digests)
    digest = hashlib.sha256(f"xialpha-documents-v2:{kind}:{total}:".encode())
    for block in digests:
        digest.update(np.ascontiguousarray(block, dtype=np.uint8).tobytes())
    return digest.hexdigest()


def _feed(digest, data: bytes) -> None:
    """Length-prefixed update, so that ("ab", "c") and ("a", "bc") hash differently."""
    digest.update(len(data).to_bytes(8, "little"))
    digest.update(data)


def _check_count(field: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise UserError(f"must be an integer >= {minimum}, got {value!r}", key=field)


def carve_validation(corpus, train_split: str, fraction: float, seed: int, source: str = "<spec>"):
    """`corpus` with round(fraction x its `train_split` documents), drawn with `seed`, moved to
    split "validation"; UserError naming `source` and the key when that is impossible."""
    check_carving(
        corpus.split_names,
        int((corpus.splits == train_split).sum()) if corpus.splits is not None else 0,
        train_split,
        fraction,
        source,
    )
    train = np.flatnonzero(corpus.splits == train_split)
    chosen = train[validation_ordinals(len(train), fraction, seed)]
    splits = corpus.splits.astype(object)
    splits[chosen] = VALIDATION_SPLIT
    return replace(corpus, splits=splits.astype(str))


def check_carving(split_names: list[str], n_train: int, train_split: str, fraction: float, source: str) -> None:
    """UserError naming `source` and the key unless a validation split can be carved from
    `n_train` documents of `train_split` in a corpus with splits `split_names`."""
    where = {"key": "corpus.validation_fraction", "file": source}
    if VALIDATION_SPLIT in split_names:
        raise UserError(f"the corpus already has a split {VALIDATION_SPLIT!r}; use it as test_split instead", **where)
    if train_split not in split_names:
        raise UserError(no_such_split(train_split, split_names), key="corpus.train_split", file=source)
    if not 0 < int(round(fraction * n_train)) < n_train:
        raise UserError(
            f"{fraction:g} of {n_train} training documents leaves no validation or no training document", **where
        )


def no_such_split(name: str, split_names) -> str:
    """What is wrong when a corpus with splits `split_names` has no split `name`; for a corpus
    without any split, how a user's own corpus gets them (a table's split_column or one file per split)."""
    if not len(split_names):
        return (
            f"the corpus has no split {name!r}: it has no splits at all (a table corpus gets them from "
            'split_column, or from one file per split: path = {train = "a.csv", test = "b.csv"})'
        )
    return f"the corpus has no split {name!r}{did_you_mean(name, split_names, listing='it has')}"


def validation_ordinals(n_train: int, fraction: float, seed: int) -> np.ndarray:
    """Which of `n_train` training documents (0-based, in corpus order) the carving moves: a seeded
    draw of round(fraction x n_train) without replacement, in draw order."""
    return np.random.default_rng(seed).choice(n_train, size=int(round(fraction * n_train)), replace=False)
