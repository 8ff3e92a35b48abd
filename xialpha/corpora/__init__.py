"""Corpora: `Corpus` (documents, multi-label category sets, optional times and splits) and its loaders.

No Dask, no file writing here: loaders read the user's corpus files and return in-memory corpora.
The names below resolve from their modules when first used (`xialpha.lazy`), so that importing
one module of the package (the spec reads `loading`, `reuters_files` and `splits`) imports none
of the others.
"""

from xialpha.lazy import lazy_exports

__all__, __getattr__ = lazy_exports(
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
