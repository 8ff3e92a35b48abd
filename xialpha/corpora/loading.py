"""`load_corpus(kind, **kwargs)`: the loader a spec names (`[corpus] loader = "synthetic"` plus keyword arguments)."""

from __future__ import annotations

import inspect

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.directory import load_directory
from xialpha.corpora.reuters import load_reuters
from xialpha.corpora.svmlight import load_svmlight
from xialpha.corpora.synthetic import make_synthetic
from xialpha.corpora.table import load_table
from xialpha.errors import UserError

LOADERS = {
    "reuters21578": load_reuters,
    "directory": load_directory,
    "svmlight": load_svmlight,
    "table": load_table,
    "synthetic": make_synthetic,
}


def load_corpus(kind: str, **kwargs) -> Corpus:
    """The corpus loaded by loader `kind` (one of LOADERS) with `kwargs`; UserError for an unknown
    loader, unknown keyword arguments or missing required ones."""
    if kind not in LOADERS:
        raise UserError(f"loader: unknown corpus loader {kind!r} (known: {', '.join(LOADERS)})")
    loader = LOADERS[kind]
    parameters = inspect.signature(loader).parameters
    unknown = sorted(set(kwargs) - set(parameters))
    if unknown:
        raise UserError(f"corpus loader {kind!r}: unknown argument{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(unknown)} (known: {', '.join(parameters)})")
    missing = [name for name, parameter in parameters.items()
               if parameter.default is inspect.Parameter.empty and name not in kwargs]
    if missing:
        raise UserError(f"corpus loader {kind!r}: missing argument {', '.join(missing)}")
    return loader(**kwargs)
