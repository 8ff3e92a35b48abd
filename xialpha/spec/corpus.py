"""The `[corpus]` table of a sweep or drift spec: a loader and its arguments (or documents given in
memory), the splits to train and hold out on, the categories, and a carved validation split.
Loader errors become errors naming the spec's key (`corpus_errors`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xialpha.corpora import reuters_files
from xialpha.corpora.loading import check_loader_arguments, load_corpus
from xialpha.corpora.splits import VALIDATION_SPLIT
from xialpha.errors import UserError, did_you_mean
from xialpha.spec.tables import Table

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus

URI = re.compile(r"^[a-z][a-z0-9+.-]*://")  # a corpus path that is a URL, not a local file
IN_MEMORY = "(in memory)"  # CorpusSpec.loader of a corpus given to parse_spec(corpus=)


@dataclass(frozen=True)
class CategorySpec:
    """Which categories to train: top_k by training frequency, explicit names, minimum positives."""

    top_k: int | None = None
    names: tuple[str, ...] = ()
    min_positives: int | None = None

    def choose(self, counts: Mapping[str, int], corpus_name: str) -> list[str]:
        """The categories to train, from `counts` {category: training documents} of corpus
        `corpus_name` (`xialpha.corpora.corpus.choose_categories`); its errors named inside
        [corpus.categories] ("corpus.categories.names: ...")."""
        from xialpha.corpora.corpus import choose_categories

        try:
            return choose_categories(
                counts, corpus_name, top_k=self.top_k, names=list(self.names) or None, min_positives=self.min_positives
            )
        except UserError as exc:
            raise exc.within("corpus.categories") from None


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus loader and its keyword arguments, the splits to train and hold out on; or, with
    `data`, a corpus given in memory (loader IN_MEMORY, no arguments: see `parse_spec`).
    validation_fraction: a seeded share (validation_seed) of the training split becomes split
    "validation", the sweep's held-out split, so the corpus's test split stays sealed for certify."""

    loader: str
    args: dict = field(default_factory=dict, hash=False)
    train_split: str | None = None
    test_split: str | None = None
    categories: CategorySpec = CategorySpec()
    validation_fraction: float | None = None
    validation_seed: int = 0

    source: str = field(default="", compare=False)  # the spec file, for messages
    data: Corpus | None = field(default=None, compare=False, repr=False)  # the in-memory `xialpha.corpora.Corpus`

    def load(self) -> Corpus:
        """Load the whole corpus (all splits) in this process; errors name the spec file and the
        key. A sweep reads it on the cluster instead (`xialpha.jobs.data.load_on_cluster`), part by
        part with the same functions, so both give the same documents."""
        if self.data is not None:
            corpus = self.data
        else:
            self.check_paths()
            with corpus_errors(self.source):
                corpus = load_corpus(self.loader, **self.args)
        if self.validation_fraction is None:
            return corpus
        if self.train_split is None:  # parse_corpus requires it with validation_fraction
            raise UserError("needs corpus.train_split (the split it is carved from)", key="corpus.validation_fraction")
        from xialpha.corpora.corpus import carve_validation

        return carve_validation(
            corpus, self.train_split, self.validation_fraction, self.validation_seed, self.source or "<spec>"
        )

    def check_paths(self) -> None:
        """UserError naming the spec file and the key for a local corpus path that does not exist
        (and how to fetch Reuters-21578), before any loader runs."""
        for key in ("path", "dir", "file"):
            value = self.args.get(key)
            for split, item in value.items() if isinstance(value, dict) else [("", value)]:  # path = {train = ...}
                if isinstance(item, str) and not URI.match(item) and not os.path.lexists(item):
                    fetch = self._reuters_advice(item) if self.loader == "reuters21578" else ""
                    name = f"{key}.{split}" if split else key
                    raise UserError(f"{item} does not exist{fetch}", key=f"corpus.{name}", file=self.source or "<spec>")

    def look(self) -> None:
        """UserError naming the spec file and the key for what the corpus shows before it is read:
        a local path that does not exist (`check_paths`), the loader's own checks of its arguments
        and files, and a table's header without a column the spec names
        (`xialpha.corpora.parted.look_before_reading`). For a command about to start a local
        cluster, whose workers see the files this process sees; a remote cluster's workers check
        their files themselves as they read them (this process may not see them)."""
        if self.data is not None:
            return
        self.check_paths()
        from xialpha.corpora.parted import look_before_reading

        with corpus_errors(self.source):
            look_before_reading(self.loader, self.args)

    def _reuters_advice(self, missing: str) -> str:
        """Where a missing Reuters-21578 path can come from: a copy `xialpha fetch` made in the
        working directory (the path to write in the spec, relative to the spec file), else fetching one."""
        found = reuters_files.fetched_copy(Path.cwd() / reuters_files.FETCH_DEST, Path.cwd() / "data")
        if found is None:
            return (
                f"; `xialpha fetch reuters21578 --dest {shlex.quote(missing)}` downloads it there (a relative "
                "path in a spec is relative to the spec file)"
            )
        spec_dir = Path(self.source).resolve().parent if self.source and Path(self.source).is_file() else None
        path = os.path.relpath(found.resolve(), spec_dir) if spec_dir else str(found.resolve())
        return (
            f" (a relative path in a spec is relative to the spec file); a fetched copy is in {found}: "
            f'set path = "{path}" in [corpus]'
        )


@contextlib.contextmanager
def corpus_errors(source: str | None = None) -> Iterator[None]:
    """A loader's UserError about an argument (its key "label_column", "path.train") named as the
    spec's key ("corpus.label_column") in spec file `source`; one naming its file already is
    complete (`CorpusSpec.check_paths`)."""
    try:
        yield
    except UserError as exc:
        if exc.file:
            raise
        raise exc.within("corpus", file=source or None) from None


CORPUS_KEYS = ("loader", "train_split", "test_split", "categories", "validation_fraction", "validation_seed")
IN_MEMORY_KEYS = CORPUS_KEYS[1:]  # a corpus given in memory takes no loader and no loader arguments


def parse_corpus(t: Table, base_dir: Path, in_memory: bool = False) -> CorpusSpec:
    """The `[corpus]` table `t` (relative paths resolved in `base_dir`); in_memory: the corpus is given
    in memory (`xialpha.spec.sweep.parse_spec(corpus=)`), so only splits and categories may be named.
    An unknown key is refused first (compared with every key valid in `[corpus]`: its own and the
    loader's), then the loader's arguments are checked, before the keys that depend on others."""
    if in_memory and "loader" in t.raw:
        raise UserError("the corpus is given in memory (corpus=); leave the loader out", key="corpus.loader")
    if not in_memory and "loader" not in t.raw:
        raise UserError(
            "is required (in Python, or the documents themselves as corpus=)", key="corpus.loader", mentions="corpus="
        )
    loader = IN_MEMORY if in_memory else t.str("loader", required=True)
    arguments = {key: value for key, value in t.raw.items() if key not in CORPUS_KEYS}
    if in_memory and arguments:
        unknown = next(iter(arguments))
        raise UserError(
            "unknown key for a corpus given in memory (corpus=)"
            f"{did_you_mean(unknown, IN_MEMORY_KEYS, listing='keys', list_when_close=False)}",
            key=f"corpus.{unknown}",
        )
    if not in_memory:  # names, required ones and types, before any file is read
        with corpus_errors():
            check_loader_arguments(loader, arguments, other_keys=CORPUS_KEYS)
    train_split = t.str("train_split", None)
    test_split = t.str("test_split", None)
    cats = t.table("categories")
    categories = CategorySpec(
        top_k=cats.int("top_k", None, minimum=1),
        names=tuple(cats.str_list("names", [])),
        min_positives=cats.int("min_positives", None, minimum=1),
    )
    cats.done()
    validation_fraction = t.float("validation_fraction", 0.0) if "validation_fraction" in t.raw else None
    if validation_fraction is not None and not 0 < validation_fraction < 1:
        raise UserError(f"must be > 0 and < 1, got {validation_fraction:g}", key="corpus.validation_fraction")
    validation_seed = t.int("validation_seed", 0, minimum=0)
    if validation_fraction is not None:
        if train_split is None:
            raise UserError("needs corpus.train_split (the split it is carved from)", key="corpus.validation_fraction")
        if test_split not in (None, VALIDATION_SPLIT):
            raise UserError(
                f"with validation_fraction the held-out split is {VALIDATION_SPLIT!r}; leave test_split "
                f"out ({test_split!r} stays sealed for `xialpha certify`)",
                key="corpus.test_split",
            )
        test_split = VALIDATION_SPLIT
    args = t.rest()
    for key in ("path", "dir", "file"):
        value = args.get(key)
        if isinstance(value, str) and not URI.match(value):
            args[key] = str((base_dir / value).resolve())
        elif isinstance(value, dict):  # one file per split: path = {train = "a.csv", test = "b.csv"}
            args[key] = {
                split: str((base_dir / item).resolve()) if isinstance(item, str) and not URI.match(item) else item
                for split, item in value.items()
            }
    return CorpusSpec(
        loader=loader,
        args=args,
        train_split=train_split,
        test_split=test_split,
        categories=categories,
        validation_fraction=validation_fraction,
        validation_seed=validation_seed,
    )
