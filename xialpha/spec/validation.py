"""A validation split carved from a corpus's training split (`[corpus] validation_fraction`).

The sweep scores its held-out figures on it, so the corpus's own test split stays sealed for
`xialpha certify`. The carving is seeded: loading the same corpus with the same spec gives the
same split every time (a stored spec re-loads it for certify and refit, and the data
fingerprint checks that it did).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from xialpha.errors import UserError

VALIDATION_SPLIT = "validation"


def carve_validation(corpus, train_split: str, fraction: float, seed: int, source: str = "<spec>"):
    """`corpus` with round(fraction x its `train_split` documents), drawn with `seed`, moved to
    split "validation"; UserError naming `source` and the key when that is impossible."""
    where = f"{source}: corpus.validation_fraction"
    if VALIDATION_SPLIT in corpus.split_names:
        raise UserError(f"{where}: the corpus already has a split {VALIDATION_SPLIT!r}; use it as test_split instead")
    if train_split not in corpus.split_names:
        known = ", ".join(corpus.split_names) or "none"
        raise UserError(f"{source}: corpus.train_split: the corpus has no split {train_split!r} (it has: {known})")
    train = np.flatnonzero(corpus.splits == train_split)
    size = int(round(fraction * len(train)))
    if not 0 < size < len(train):
        raise UserError(f"{where}: {fraction:g} of {len(train)} training documents leaves no validation or no "
                        "training document")
    chosen = np.random.default_rng(seed).choice(train, size=size, replace=False)
    splits = corpus.splits.astype(object)
    splits[chosen] = VALIDATION_SPLIT
    return replace(corpus, splits=splits.astype(str))
