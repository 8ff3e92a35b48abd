"""Corpora: `Corpus` (documents, multi-label category sets, optional times and splits) and its loaders.

No Dask, no file writing here: loaders read the user's corpus files and return in-memory corpora.
The names below are imported when first used, so that importing a light module of this package
(`xialpha.corpora.loading`, which a spec is checked against) loads no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xialpha.lazy import lazy_names

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus
    from xialpha.corpora.loading import (
        LOADERS,
        load_corpus,
        load_directory,
        load_reuters,
        load_svmlight,
        load_table,
        make_synthetic,
    )
    from xialpha.corpora.synthetic import SHIFTS

__all__ = [
    "Corpus",
    "LOADERS",
    "SHIFTS",
    "load_corpus",
    "load_directory",
    "load_reuters",
    "load_svmlight",
    "load_table",
    "make_synthetic",
]
__getattr__ = lazy_names(
    __name__,
    {
        "corpus": ("Corpus",),
        "loading": (
            "LOADERS",
            "load_corpus",
            "load_directory",
            "load_reuters",
            "load_svmlight",
            "load_table",
            "make_synthetic",
        ),
        "synthetic": ("SHIFTS",),
    },
)
