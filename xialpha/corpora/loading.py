"""`load_corpus(kind, **kwargs)`: the loader a spec names (`[corpus] loader = "synthetic"` plus keyword
arguments), and each loader's parts by name (`PARTED`: each loader module's `PartedLoader`): plan,
refine, read, check, which `xialpha.jobs` runs as tasks and `load_in_parts` runs here one after the
other."""

from __future__ import annotations

import inspect
import os
import types
import typing
from collections.abc import Callable

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.directory import DIRECTORY_PARTS, load_directory
from xialpha.corpora.parts import Census, Part, RawPart, read_in_parts
from xialpha.corpora.reuters import REUTERS_PARTS, load_reuters
from xialpha.corpora.svmlight import SVMLIGHT_PARTS, load_svmlight
from xialpha.corpora.synthetic import SYNTHETIC_PARTS, make_synthetic
from xialpha.corpora.table import TABLE_PARTS, load_table
from xialpha.errors import UserError, did_you_mean

LOADERS: dict[str, Callable[..., Corpus]] = {
    "reuters21578": load_reuters,
    "directory": load_directory,
    "svmlight": load_svmlight,
    "table": load_table,
    "synthetic": make_synthetic,
}
_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    type(None): "none",
    os.PathLike: "a path",
}


PARTED = {
    "reuters21578": REUTERS_PARTS,
    "directory": DIRECTORY_PARTS,
    "svmlight": SVMLIGHT_PARTS,
    "table": TABLE_PARTS,
    "synthetic": SYNTHETIC_PARTS,
}


def plan_parts(kind: str, arguments: dict) -> list[Part]:
    """The parts of the corpus loader `kind` reads with `arguments` (not yet refined; the arguments
    checked by `check_loader_arguments` where they come from a spec)."""
    return PARTED[kind].plan(**arguments)


def refine_part(part: Part) -> list[Part]:
    """`part` cut into the parts read (itself where the loader has nothing to cut)."""
    return PARTED[part.loader].refined(part)


def read_part(part: Part) -> RawPart:
    return PARTED[part.loader].read(part)


def check_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError for a corpus without documents, or what its loader's own check finds."""
    PARTED[parts[0].loader].check_all(parts, censuses)


def load_in_parts(kind: str, arguments: dict) -> Corpus:
    """The corpus loader `kind` reads with `arguments`, read here part after part (`read_in_parts`)."""
    return read_in_parts(PARTED[kind], arguments)


def load_corpus(kind: str, **kwargs) -> Corpus:
    """The corpus loaded by loader `kind` (one of LOADERS) with `kwargs`; UserError for an unknown
    loader, unknown keyword arguments, missing required ones or values of the wrong type."""
    check_loader_arguments(kind, kwargs)
    return LOADERS[kind](**kwargs)


def check_loader_arguments(kind: str, kwargs: dict, other_keys=()) -> None:
    """UserError unless loader `kind` exists and takes `kwargs`: every required argument given,
    none unknown, each of the type its annotation names (a list where a path belongs is refused).
    Each error's key is the argument's; an unknown one is compared with the loader's arguments
    and `other_keys` (the other keys valid where the arguments are given) for "did you mean"."""
    if kind not in LOADERS:
        raise UserError(f"unknown corpus loader {kind!r}{did_you_mean(kind, LOADERS, listing='known')}", key="loader")
    loader = LOADERS[kind]
    parameters = inspect.signature(loader).parameters
    unknown = [name for name in kwargs if name not in parameters]
    if unknown:
        raise UserError(
            f"unknown key for corpus loader {kind!r}"
            f"{did_you_mean(unknown[0], [*parameters, *other_keys], listing='keys', list_when_close=False)}",
            key=unknown[0],
        )
    missing = [
        name
        for name, parameter in parameters.items()
        if parameter.default is inspect.Parameter.empty and name not in kwargs
    ]
    if missing:
        raise UserError(f"is required by corpus loader {kind!r}", key=missing[0])
    hints = typing.get_type_hints(loader, include_extras=True)
    for name, value in kwargs.items():
        if name in hints and not _matches(value, hints[name]):
            raise UserError(f"must be {_describe(hints[name])}, got {value!r} (corpus loader {kind!r})", key=name)


def _matches(value, hint) -> bool:
    """Whether `value` (as read from TOML or given in Python) fits the annotation `hint`."""
    origin, arms = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _matches(value, arms[0])
    if origin in (types.UnionType, typing.Union):
        return any(_matches(value, arm) for arm in arms)
    if origin is dict:
        return isinstance(value, dict) and all(
            _matches(key, arms[0]) and _matches(item, arms[1]) for key, item in value.items()
        )
    if origin in (list, tuple):
        return isinstance(value, origin) and all(_matches(item, arms[0]) for item in value)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _describe(hint) -> str:
    """What `hint` asks for, in words; an `Annotated[type, "words"]` hint says it in its words."""
    origin, arms = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return arms[1]
    if origin in (types.UnionType, typing.Union):
        return " or ".join(dict.fromkeys(_describe(arm) for arm in arms))
    if origin in (list, tuple):
        return f"a list of {_describe(arms[0]).split(' ', 1)[-1]}s"
    return _NAMES.get(hint, hint.__name__)
