"""Lazy exports: a package's names resolved from their modules when first used.

A package whose `__init__` imported every module for its exports would make importing any one of
its modules (`xialpha.corpora.reuters_files`, `xialpha.features.preprocessing`) import all the
others and their libraries (scikit-learn, numba, scipy.sparse): a reading command that needs one
light module would pay for the fitting stack at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(package: str, names: Mapping[str, Sequence[str]]) -> tuple[list[str], Callable[[str], object]]:
    """The `__all__` and the module `__getattr__` of `package`, whose exports are `names` ({module under
    the package: the names it exports}), each resolved from its module when first asked for."""
    origin = {name: module for module, exported in names.items() for name in exported}

    def __getattr__(name: str) -> object:
        if name not in origin:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{origin[name]}"), name)

    return sorted(origin), __getattr__
