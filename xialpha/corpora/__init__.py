"""Corpora: `Corpus` (documents, multi-label category sets, optional times and splits) and its loaders.

No Dask, no file writing here: loaders read the user's corpus files and return in-memory corpora.
"""

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.directory import load_directory
from xialpha.corpora.loading import LOADERS, load_corpus
from xialpha.corpora.reuters import load_reuters
from xialpha.corpora.svmlight import load_svmlight
from xialpha.corpora.synthetic import SHIFTS, make_synthetic
from xialpha.corpora.table import load_table

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
