"""A validation split carved from a corpus's training split (`[corpus] validation_fraction`).

The sweep scores its held-out figures on it, so the corpus's own test split stays sealed for
`xialpha certify`. The carving is seeded: loading the same corpus with the same spec gives the
same split every time (a stored spec re-loads it for certify and refit, and the data
fingerprint checks that it did).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from xialpha.errors import UserError, did_you_mean

VALIDATION_SPLIT = "validation"


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
