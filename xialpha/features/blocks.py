"""Features of a corpus in partitions: each part's rows counted in its own vocabulary
(`count_part`), the training rows' document frequencies joined into one vocabulary
(`DocumentFrequencies.merge`, `Preprocessing.fit_frequencies`), then each part's rows weighted in
that vocabulary and split into training and held-out rows (`feature_block`); `stack` puts the
blocks of all parts back in corpus order.

The result equals `Preprocessing.fit_transform` on the training texts and `transform` on the
held-out ones, row for row and bit for bit (tests/features/test_features_blocks.py), whatever the parts.
Not dask-ml's CountVectorizer / HashingVectorizer: hashing has no vocabulary (an artefact could
not name its terms, min_df/max_df and idf need document frequencies), and dask-ml's
CountVectorizer gathers the vocabulary in the client and knows neither max_df as a share of the
training documents, nor this project's analyzer (stemming, stop words before stemming), nor
idf "log" with weight-0 terms dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from xialpha.corpora.corpus import Corpus, targets
from xialpha.features.preprocessing import DocumentFrequencies, FittedPreprocessing, Preprocessing, TermCounts


@dataclass(frozen=True, eq=False)
class PartCounts:
    """A part's term counts of the documents `counted` keeps ((n,) bool over the part's documents:
    its training and held-out rows), in part order, and which of those are training rows
    ((counted.sum(),) bool)."""

    counts: TermCounts
    train: np.ndarray
    counted: np.ndarray

    def rows(self, documents: np.ndarray) -> np.ndarray:
        """(counted.sum(),) bool: the counted rows among `documents` ((n,) bool over the part's
        documents, every one of them counted)."""
        if documents[~self.counted].any():
            raise ValueError("documents: some were not counted (count_part's held_out_split differs)")
        return documents[self.counted]

    def frequencies(self) -> DocumentFrequencies:
        """Document frequencies over the part's training rows."""
        return DocumentFrequencies.of(self.counts.rows(self.train))


@dataclass(frozen=True, eq=False)
class FeatureBlock:
    """Rows for the fits (a part's, or all parts' stacked): X_train (n, d) and X_test (m, d) CSR
    float64 (X_test None without a held-out split), y_train (n, C) and y_test (m, C) int8 of
    -1/+1, column c for category categories[c]."""

    X_train: sp.csr_matrix
    X_test: sp.csr_matrix | None
    y_train: np.ndarray
    y_test: np.ndarray
    categories: tuple[str, ...] = ()

    def targets(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """({category: (n,) int8} of the training rows, the same of the held-out rows; {} without any)."""
        train = {c: np.ascontiguousarray(self.y_train[:, i]) for i, c in enumerate(self.categories)}
        test = (
            {}
            if self.X_test is None
            else {c: np.ascontiguousarray(self.y_test[:, i]) for i, c in enumerate(self.categories)}
        )
        return train, test


def frequencies_of(counts: PartCounts) -> DocumentFrequencies:
    """`PartCounts.frequencies` as a function (a task's)."""
    return counts.frequencies()


def rows_of(corpus: Corpus, split: str | None, within: np.ndarray | None = None) -> np.ndarray:
    """(n,) bool: the documents of split `split` (None: all of them); with `within`, a bool mask
    over those documents, only the ones it keeps (a drift check's dated documents)."""
    if split is None:
        rows = np.ones(len(corpus), dtype=bool)
    elif corpus.splits is None:
        rows = np.zeros(len(corpus), dtype=bool)
    else:
        rows = corpus.splits == split
    if within is not None:
        rows[np.flatnonzero(rows)[~within]] = False
    return rows


def count_part(
    corpus: Corpus,
    preprocessing: Preprocessing,
    train_split: str | None,
    within: np.ndarray | None = None,
    held_out_split: str | None = None,
) -> PartCounts:
    """The term counts of a part of texts: of its training rows (see `rows_of`) and the rows of
    split `held_out_split` (None: none), the only ones `feature_block` weights."""
    train = rows_of(corpus, train_split, within)
    counted = train if held_out_split is None else train | rows_of(corpus, held_out_split)
    texts = corpus.texts if counted.all() else [corpus.texts[i] for i in np.flatnonzero(counted)]
    return PartCounts(preprocessing.count(texts), train[counted], counted)


def stem_part(counts: PartCounts, stemming: str) -> PartCounts:
    """A part's unstemmed counts (`Preprocessing.unstemmed`) as a stemming preprocessing counts them
    (`TermCounts.stemmed`): preprocessings that differ only in stemming tokenise each part once."""
    return PartCounts(counts.counts.stemmed(stemming), counts.train, counts.counted)


def feature_block(
    corpus: Corpus,
    train_split: str | None,
    test_split: str | None,
    categories: list[str],
    counts: PartCounts | None = None,
    fitted: FittedPreprocessing | None = None,
    within: np.ndarray | None = None,
) -> FeatureBlock:
    """A part's `FeatureBlock`: its texts' `counts` (`count_part` with held_out_split `test_split`)
    weighted by `fitted`, or its feature vectors as they are; training rows: see `rows_of`."""
    train = rows_of(corpus, train_split, within)
    test = rows_of(corpus, test_split) if test_split is not None else None
    if corpus.texts is None:
        X_train, X_test = corpus.X[train], None if test is None else corpus.X[test]
    else:  # the part's columns mapped to the vocabulary once, for its training and held-out rows
        mapped = fitted.vocabulary_counts(counts.counts)
        X_train = fitted.weight(mapped[counts.rows(train)])
        X_test = None if test is None else fitted.weight(mapped[counts.rows(test)])
    y = targets(corpus.labels, categories)
    return FeatureBlock(X_train, X_test, y[train], y[test] if test is not None else y[:0], tuple(categories))


def stack(blocks: list[FeatureBlock]) -> FeatureBlock:
    """The blocks one after the other (parts in corpus order)."""
    tests = [block.X_test for block in blocks]
    return FeatureBlock(
        X_train=sp.vstack([block.X_train for block in blocks], format="csr"),
        X_test=None if tests[0] is None else sp.vstack(tests, format="csr"),
        y_train=np.concatenate([block.y_train for block in blocks]),
        y_test=np.concatenate([block.y_test for block in blocks]),
        categories=blocks[0].categories,
    )


def estimated_feature_bytes(corpus: Corpus, preprocessing: Preprocessing, n_documents: int) -> int:
    """Bytes of the CSR features of `n_documents` documents like the part `corpus` (its term counts
    scaled: 12 bytes per stored value, 8 per row); a corpus of feature vectors is measured."""
    if corpus.texts is None:
        stored = corpus.X.nnz
    else:
        stored = preprocessing.count(corpus.texts).counts.nnz
    return int(12 * stored * n_documents / max(len(corpus), 1) + 8 * n_documents)


def features_in_one_piece(
    corpus: Corpus,
    preprocessing: Preprocessing | None,
    train_split: str | None,
    test_split: str | None,
    categories: list[str],
) -> tuple[FittedPreprocessing | None, FeatureBlock]:
    """In one process and one part: what the parts' tasks compute (the fitted preprocessing, None
    for feature vectors, and the corpus's block)."""
    if corpus.texts is None:
        return None, feature_block(corpus, train_split, test_split, categories)
    counts = count_part(corpus, preprocessing, train_split, held_out_split=test_split)
    fitted = preprocessing.fit_frequencies(counts.frequencies())
    return fitted, feature_block(corpus, train_split, test_split, categories, counts, fitted)
