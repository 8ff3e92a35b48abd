"""Streams of dated documents with a known concept shift, for the drift tests."""

from __future__ import annotations

import numpy as np

from xialpha.corpora import Corpus, make_synthetic


def relevance_stream(n_docs: int, n_batches: int, seed: int, shift_batch: int | None) -> Corpus:
    """A synthetic stream whose "relevant" documents are those of cat00 before `shift_batch` and
    those of cat01 from it on (Klinkenberg & Joachims' relevance swap); None: no shift."""
    corpus = make_synthetic(n_docs=n_docs, n_categories=4, seed=seed, n_batches=n_batches, category_skew=0.5)
    batch = np.arange(n_docs) * n_batches // n_docs
    wanted = np.where(batch >= (n_batches if shift_batch is None else shift_batch), "cat01", "cat00")
    labels = [{"relevant"} if topic in labels else set() for topic, labels in zip(wanted, corpus.labels)]
    return Corpus(ids=corpus.ids, texts=corpus.texts, labels=labels, name="relevance", timestamps=corpus.timestamps)
