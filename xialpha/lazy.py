"""Public names of a package imported on first use (PEP 562), so that importing one light module of
the package does not import its heavy siblings."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_names(package: str, homes: dict[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The module `__getattr__` of `package` that imports each name of `homes` ({submodule: names})
    from its submodule when it is first asked for."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        if name not in home_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home_of[name]}"), name)

    return __getattr__
