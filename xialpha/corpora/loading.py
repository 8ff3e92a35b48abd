"""The corpus loaders a spec names (`[corpus] loader = "synthetic"` plus keyword arguments): `LOADERS`,
each loader's function, `load_corpus(kind, **kwargs)` and `check_loader_arguments`.

Light to import (no numpy, no scikit-learn, no numba): a spec is checked against the loaders'
signatures before anything heavy is imported, and each loader's reading machinery is imported when
it reads. Each loader reads its corpus in parts (`xialpha.corpora.parted`: plan, refine, read,
check), which `xialpha.jobs` runs as tasks and the functions here run one after the other.
"""

from __future__ import annotations

import importlib
import inspect
import os
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from xialpha.errors import UserError, did_you_mean

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus
    from xialpha.corpora.parts import PartedLoader

SplitFiles = Annotated[dict[str, str | os.PathLike], 'a table of split = file, e.g. {train = "a.csv", test = "b.csv"}']
_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    type(None): "none",
    os.PathLike: "a path",
}


def load_directory(
    path: str | os.PathLike, layout: str = "auto", skip_empty: bool = False, follow_symlinks: bool = False
) -> Corpus:
    """A corpus from a directory-per-category tree at `path` (directory or tar archive), read split
    folder by split folder (`xialpha.corpora.directory.directory_parts`) as a sweep's tasks read it.

    layout: "split/category" (`<split>/<category>/<file>`), "category" (`<category>/<file>`), or
    "auto" (split/category when files lie two folders deep). skip_empty: drop documents whose text
    is empty or white space instead of refusing them. follow_symlinks: read symbolic links that
    lead outside `path` (refused otherwise; FIFOs, sockets and devices are always refused).
    """
    return _read_in_parts("directory", dict(locals()))


def load_reuters(path: str | os.PathLike, split: str = "modapte", follow_symlinks: bool = False) -> Corpus:
    """Reuters-21578 from directory or archive `path`, read file by file (`xialpha.corpora.reuters.reuters_parts`) as a
    sweep's tasks read it.

    split="modapte": the 12,902 stories with TOPICS="YES" and LEWISSPLIT TRAIN (9,603) or TEST
    (3,299). split="all": all 21,578 stories, splits "train"/"test"/"not-used" from LEWISSPLIT.
    follow_symlinks: read symbolic links that lead outside `path` (refused otherwise).
    """
    return _read_in_parts("reuters21578", dict(locals()))


def load_svmlight(path: str | os.PathLike, n_features: int | None = None, zero_based: bool | str = "auto") -> Corpus:
    """A corpus with a CSR feature matrix X (float64, shape (n_lines, n_features)) from an svmlight
    file (a local path or an fsspec URI), read block by block (`xialpha.corpora.svmlight.svmlight_parts`)
    as a sweep's tasks read it.

    zero_based: whether feature indices start at 0; "auto" takes 0-based when some index is 0.
    n_features: the number of columns (default: the largest index seen); a larger index is an error.
    """
    return _read_in_parts("svmlight", dict(locals()))


def load_table(
    path: str | os.PathLike | SplitFiles,
    text_column: str = "text",
    label_column: str = "label",
    id_column: str | None = None,
    time_column: str | None = None,
    split_column: str | None = None,
    label_separator: str | None = None,
    format: str = "auto",
    header: bool = True,
    column_names: tuple[str, ...] | list[str] = ("label", "text"),
    encoding: str = "utf-8",
    skip_empty: bool = False,
) -> Corpus:
    """A corpus from the table file at `path`, or from several: `path` = {split name: file}, whose
    rows take that split (then without `split_column`), in the order the splits are given. Files
    are local paths or fsspec URIs (s3://..., memory://...).

    format: "auto" (from each file's suffix: .csv, .tsv/.tab/.txt, .jsonl/.ndjson, .parquet/.pq) or
    one of csv/tsv/jsonl/parquet. header=False (CSV/TSV): the columns are `column_names` in order.
    skip_empty: drop rows whose text is empty instead of refusing them. label_separator: the
    character joining several labels in one cell; None: not said (refused where the labels look
    joined: `xialpha.corpora.table`); "": each cell is one label.

    Read here part by part (`xialpha.corpora.table.table_parts`), as the tasks of a sweep read it.
    """
    return _read_in_parts("table", dict(locals()))


def make_synthetic(
    n_docs: int = 2000,
    n_categories: int = 10,
    seed: int = 0,
    n_batches: int | None = None,
    shift: str | None = None,
    shift_batch: int | None = None,
    shift_width: int | None = None,
    shifted_categories: int | list[str] = 1,
    vocabulary_size: int = 5000,
    mean_length: float = 80.0,
    topic_words: int = 40,
    signal: float = 0.14,
    max_prevalence: float = 0.3,
    category_skew: float = 1.4,
    test_fraction: float = 0.3,
    start: str = "2000-01-01",
) -> Corpus:
    """A corpus of `n_docs` texts over `n_categories` categories, reproducible from `seed`.

    splits: a random `test_fraction` of the documents is "test", the rest "train". timestamps: only
    with n_batches (None otherwise). The documents are generated in blocks of PART_DOCUMENTS (see
    `xialpha.corpora.synthetic.synthetic_parts`), here one after the other.
    """
    arguments = dict(locals())
    from xialpha.corpora.synthetic import synthetic_corpus

    return synthetic_corpus(arguments)


LOADERS: dict[str, Callable[..., Corpus]] = {
    "reuters21578": load_reuters,
    "directory": load_directory,
    "svmlight": load_svmlight,
    "table": load_table,
    "synthetic": make_synthetic,
}


HOMES = {  # loader name -> (its module under xialpha.corpora, the module's PartedLoader)
    "reuters21578": ("reuters", "REUTERS_PARTS"),
    "directory": ("directory", "DIRECTORY_PARTS"),
    "svmlight": ("svmlight", "SVMLIGHT_PARTS"),
    "table": ("table", "TABLE_PARTS"),
    "synthetic": ("synthetic", "SYNTHETIC_PARTS"),
}


def parted(kind: str) -> PartedLoader:
    """The `PartedLoader` of corpus loader `kind` (one of HOMES): its loader module, imported when
    first asked for, so that looking at a table imports no svmlight reader."""
    module, name = HOMES[kind]
    return getattr(importlib.import_module(f"xialpha.corpora.{module}"), name)


def _read_in_parts(kind: str, arguments: dict) -> Corpus:
    """The corpus loader `kind` reads with all its `arguments`, part after part in this process."""
    from xialpha.corpora.parts import read_in_parts

    return read_in_parts(parted(kind), arguments)


def load_corpus(kind: str, **kwargs) -> Corpus:
    """The corpus loaded by loader `kind` (one of LOADERS) with `kwargs`; UserError for an unknown
    loader, unknown keyword arguments, missing required ones or values of the wrong type."""
    check_loader_arguments(kind, kwargs)
    return LOADERS[kind](**kwargs)


def with_defaults(kind: str, arguments: dict) -> dict:
    """`arguments` of corpus loader `kind` (checked: `check_loader_arguments`) and, for each one left
    out, the default its function's signature states: the one place a loader's defaults are written
    (its parts' plan takes every argument; the spec reference shows these)."""
    bound = inspect.signature(LOADERS[kind]).bind_partial(**arguments)
    bound.apply_defaults()
    return dict(bound.arguments)


def parameter_hints(loader: Callable, include_extras: bool = True) -> dict[str, typing.Any]:
    """{parameter: its annotation} of a loader function, as `typing.get_type_hints` gives them, but
    without its return type (a `Corpus`, named only for type checkers in this module)."""
    annotations = {name: hint for name, hint in loader.__annotations__.items() if name != "return"}
    holder = types.SimpleNamespace(__annotations__=annotations, __globals__=loader.__globals__)
    return typing.get_type_hints(holder, include_extras=include_extras)


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
    hints = parameter_hints(loader)
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
