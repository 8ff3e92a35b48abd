"""Sweep specs: a TOML file validated into frozen dataclasses.

Every error names the path of the offending key, e.g. `kernels[1].gamma: must be > 0`, and
unknown keys are errors (a typo never silently falls back to a default). See config/*.toml.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import math
import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from xialpha.errors import UserError, did_you_mean
from xialpha.estimators.registry import DEFAULT_SETTINGS, HELD_OUT, SELECTABLE, SETTINGS, switched_on
from xialpha.estimators.validation import TOL_RANGE
from xialpha.features.gram import DEFAULT_GRAM_LIMIT_BYTES
from xialpha.spec.cluster import ClusterSpec, parse_cluster
from xialpha.spec.grid import GridSpec
from xialpha.spec.tables import Table, parse_toml, read_spec_text
from xialpha.corpora.validation import VALIDATION_SPLIT, carve_validation
from xialpha.selection.choices import default_for
from xialpha.storage.schema import METRICS, SWEEP_ID_RULE, valid_sweep_id

URI = re.compile(r"^[a-z][a-z0-9+.-]*://")  # a corpus path that is a URL, not a local file
METRIC_NAMES = METRICS
IN_MEMORY = "(in memory)"  # CorpusSpec.loader of a corpus given to parse_spec(corpus=)
DEFAULT_MAX_CONFIGS = 100_000  # [sweep] max_configs: preprocessings x kernels x C x j per category


@dataclass(frozen=True)
class CategorySpec:
    """Which categories to train: top_k by training frequency, explicit names, minimum positives."""

    top_k: int | None = None
    names: tuple[str, ...] = ()
    min_positives: int | None = None


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
    data: object = field(default=None, compare=False, repr=False)  # the in-memory `xialpha.corpora.Corpus`

    def load(self):
        """Load the whole corpus (all splits) in this process; errors name the spec file and the
        key. A sweep reads it on the cluster instead (`xialpha.jobs.data.load_on_cluster`), part by
        part with the same functions, so both give the same documents."""
        from xialpha.corpora import load_corpus

        if self.data is not None:
            corpus = self.data
        else:
            self.check_paths()
            with corpus_errors(self.source):
                corpus = load_corpus(self.loader, **self.args)
        if self.validation_fraction is None:
            return corpus
        return carve_validation(corpus, self.train_split, self.validation_fraction, self.validation_seed,
                                self.source or "<spec>")

    def check_paths(self) -> None:
        """UserError naming the spec file and the key for a local corpus path that does not exist
        (and how to fetch Reuters-21578), before any loader runs."""
        for key in ("path", "dir", "file"):
            value = self.args.get(key)
            for split, item in value.items() if isinstance(value, dict) else [("", value)]:  # path = {train = ...}
                if isinstance(item, str) and not URI.match(item) and not os.path.lexists(item):
                    fetch = (f"; `xialpha fetch reuters21578 --dest {item}` downloads it there"
                             if self.loader == "reuters21578" else "")
                    name = f"{key}.{split}" if split else key
                    raise UserError(f"{self.source or '<spec>'}: corpus.{name}: {item} does not exist{fetch}")


@contextlib.contextmanager
def corpus_errors(source: str | None = None):
    """A loader's UserError about an argument ("key: ..." or "key.split: ...") as "[source: ]corpus.key: ..."."""
    try:
        yield
    except UserError as exc:
        text = f"corpus.{exc}" if re.match(r"^\w+(\.[\w-]+)?: ", str(exc)) else str(exc)
        raise UserError(f"{source}: {text}" if source else text) from None


@dataclass(frozen=True)
class EstimatorSpec:
    """Estimates computed next to every fit: the xi-alpha rhos, and every setting of the estimator
    registry (`xialpha.estimators.registry`) by key, which say what else runs and how (span unless
    switched off: it is the default selection estimator). `spec.estimators["kfold"]` is one setting."""

    rhos: tuple[float, ...] = (1.0,)
    settings: tuple[tuple[str, object], ...] = tuple(DEFAULT_SETTINGS.items())

    def __getitem__(self, key: str):
        return self.values[key]

    @property
    def values(self) -> dict:
        """Every setting by key."""
        return dict(self.settings)

    @property
    def enabled(self) -> tuple[str, ...]:
        """The names of the estimators these settings switch on, in registry order."""
        return tuple(estimator.name for estimator in switched_on(self.values))

    def needs(self, what: str) -> bool:
        """Whether an estimator switched on needs `what` (one of registry.NEEDS), e.g. the held-out split."""
        return any(estimator.needs == what for estimator in switched_on(self.values))


@dataclass(frozen=True)
class SweepSpec(GridSpec):
    """A whole sweep: corpus x preprocessing x kernel x C x j, estimates and where to run."""

    estimators: EstimatorSpec
    metric: str
    selection_estimator: str
    cluster: ClusterSpec
    batch_size: int | None = None
    gram_memory_limit: int = DEFAULT_GRAM_LIMIT_BYTES  # bytes of one Gram matrix, at most
    text: str = field(default="", repr=False, compare=False)
    base_dir: str = field(default="", repr=False, compare=False)  # relative corpus paths resolve here

    def data_fingerprint(self, fingerprint) -> str:
        """What the results depend on in the corpus loaded from this spec: the training split's
        fingerprint, combined with the test split's when the holdout estimator runs on it.
        fingerprint(split): the fingerprint of a split of that corpus (None: all of it)."""
        value = fingerprint(self.corpus.train_split)
        if self.estimators.needs(HELD_OUT) and self.corpus.test_split:
            value = hashlib.sha256(f"{value}:{fingerprint(self.corpus.test_split)}".encode()).hexdigest()
        return value


def split_fingerprints(corpus):
    """fingerprint(split) of an in-memory corpus, as `SweepSpec.data_fingerprint` takes it."""
    return lambda split: (corpus if split is None else corpus.split(split)).fingerprint()


def load_spec(path: str | Path, corpus=None) -> SweepSpec:
    """Read and validate a spec file (relative corpus paths are relative to the file); corpus: see `parse_spec`."""
    path = Path(path)
    return parse_spec(read_spec_text(path), source=str(path), base_dir=path.parent, default_id=path.stem, corpus=corpus)


def parse_spec(text: str, source: str = "<spec>", base_dir: Path | None = None, default_id: str = "sweep",
               corpus=None) -> SweepSpec:
    """Validate spec text; errors name `source` and the key path.

    corpus: an `xialpha.corpora.Corpus` to sweep instead of loading one; the spec's [corpus] table
    then holds only train_split, test_split and [corpus.categories] (it may be left out).
    """
    root = parse_toml(text, source)
    try:
        spec = _build(root, Path(base_dir or Path.cwd()).resolve(), default_id, text, corpus is not None)
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None
    return replace(spec, corpus=replace(spec.corpus, source=source, data=corpus))


def _build(root: Table, base_dir: Path, default_id: str, text: str, in_memory: bool = False) -> SweepSpec:
    sweep = root.table("sweep")
    sweep_id = sweep.str("id", default_id)
    if not valid_sweep_id(sweep_id):
        raise UserError(f"sweep.id: must be {SWEEP_ID_RULE}, got {sweep_id!r}")
    spec = SweepSpec(
        id=sweep_id,
        store=sweep.str("store", None),
        metric=sweep.choice("metric", METRIC_NAMES, "f1"),
        selection_estimator=sweep.choice("estimator", SELECTABLE, None),
        batch_size=sweep.int("batch_size", None, minimum=1),
        gram_memory_limit=sweep.bytes("gram_memory_limit", DEFAULT_GRAM_LIMIT_BYTES),
        corpus=_corpus(root.table("corpus", required=not in_memory), base_dir, in_memory),
        **configurations(root, sweep),
        estimators=_estimators(root.table("estimators")),
        cluster=parse_cluster(root.table("cluster"), base_dir),
        text=text,
        base_dir=str(base_dir),
    )
    sweep.done()
    root.done()
    if spec.corpus.test_split is None:
        for estimator in switched_on(spec.estimators.values):
            if estimator.needs == HELD_OUT:
                raise UserError(f"estimators.{estimator.switch.key}: needs corpus.test_split")
    if spec.selection_estimator is None:  # the default when computed, else xi-alpha
        spec = replace(spec, selection_estimator=default_for(spec.estimators.enabled))
    if spec.selection_estimator not in spec.estimators.enabled:
        raise UserError(f"sweep.estimator: {spec.selection_estimator!r} is not computed; enable it in [estimators]")
    return spec


def _corpus(t: Table, base_dir: Path, in_memory: bool = False) -> CorpusSpec:
    if in_memory and "loader" in t.raw:
        raise UserError("corpus.loader: the corpus is given in memory (corpus=); leave the loader out")
    if not in_memory and "loader" not in t.raw:
        raise UserError("corpus.loader: is required (in Python, or the documents themselves as corpus=)")
    loader = IN_MEMORY if in_memory else t.str("loader", required=True)
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
        raise UserError(f"corpus.validation_fraction: must be > 0 and < 1, got {validation_fraction:g}")
    validation_seed = t.int("validation_seed", 0, minimum=0)
    if validation_fraction is not None:
        if train_split is None:
            raise UserError("corpus.validation_fraction: needs corpus.train_split (the split it is carved from)")
        if test_split not in (None, VALIDATION_SPLIT):
            raise UserError(f"corpus.test_split: with validation_fraction the held-out split is {VALIDATION_SPLIT!r}; "
                            f"leave test_split out ({test_split!r} stays sealed for `xialpha certify`)")
        test_split = VALIDATION_SPLIT
    args = t.rest()
    for key in ("path", "dir", "file"):
        value = args.get(key)
        if isinstance(value, str) and not URI.match(value):
            args[key] = str((base_dir / value).resolve())
        elif isinstance(value, dict):  # one file per split: path = {train = "a.csv", test = "b.csv"}
            args[key] = {split: str((base_dir / item).resolve()) if isinstance(item, str) and not URI.match(item)
                         else item for split, item in value.items()}
    if in_memory and args:
        raise UserError(f"corpus.{next(iter(args))}: unknown key for a corpus given in memory (corpus=); "
                        "use train_split, test_split, [corpus.categories]")
    from xialpha.corpora.loading import check_loader_arguments  # names, required ones and types, before any file is read

    if not in_memory:
        with corpus_errors():
            check_loader_arguments(loader, args)
    return CorpusSpec(loader=loader, args=args, train_split=train_split, test_split=test_split, categories=categories,
                      validation_fraction=validation_fraction, validation_seed=validation_seed)


def configurations(root: Table, section: Table) -> dict:
    """preprocessings, kernels, C, j and tol of the grid; UserError with the count, before the
    grid is expanded, when it has more than `section`'s max_configs configurations."""
    limit = section.int("max_configs", DEFAULT_MAX_CONFIGS, minimum=1)
    preprocessings = root.table_list("preprocessing", default=[{}])
    kernels = root.table_list("kernels", default=[{"name": "linear"}])
    svm = _svm(root.table("svm"))
    sizes = {"preprocessings": _grid_size(preprocessings), "kernels": _grid_size(kernels),
             "C values": len(svm["C"]), "j values": len(svm["j"])}
    total = math.prod(sizes.values())
    if total > limit:
        raise UserError(f"{section.path}.max_configs: the grid has {total:,} configurations per category "
                        f"({' x '.join(f'{n:,} {name}' for name, n in sizes.items())}), more than the limit "
                        f"{limit:,}; shrink the grid or raise [{section.path}] max_configs")
    return {"preprocessings": _preprocessings(preprocessings), "kernels": _kernels(kernels), **svm}


def _grid_size(entries: list) -> int:
    """How many variants `[[preprocessing]]` or `[[kernels]]` entries expand to (lists multiply)."""
    return sum(math.prod(len(v) if isinstance(v, list) else 1 for v in entry.raw.values()) for _, entry in entries)


def _preprocessings(entries: list) -> tuple:
    """`[[preprocessing]]` entries, each expanded as a grid where a value is a list."""
    from xialpha.features import Preprocessing

    variants = []
    for path, entry in entries:
        keys = sorted(entry.raw)
        grid = [entry.raw[k] if isinstance(entry.raw[k], list) else [entry.raw[k]] for k in keys]
        for values in itertools.product(*grid):
            variants.append(_construct(Preprocessing, dict(zip(keys, values)), path))
    return _unique(variants, "preprocessing")


def _kernels(entries: list) -> tuple:
    """`[[kernels]]` entries; list-valued gamma/degree/coef0 expand to one kernel per value."""
    from xialpha.features import Kernel

    kernels = []
    for path, entry in entries:
        raw = dict(entry.raw)
        name = raw.pop("name", None)
        if name is None:
            raise UserError(f"{path}.name: is required")
        keys = sorted(raw)
        grid = [raw[k] if isinstance(raw[k], list) else [raw[k]] for k in keys]
        for values in itertools.product(*grid):
            kernels.append(_construct(Kernel, {"name": name, **dict(zip(keys, values))}, path))
    return _unique(kernels, "kernels")


def _construct(cls, kwargs: dict, path: str):
    """cls(**kwargs) for a dataclass; an unknown key names the closest field."""
    known = [f.name for f in fields(cls) if f.init]
    unknown = [key for key in kwargs if key not in known]
    if unknown:
        raise UserError(f"{path}.{unknown[0]}: unknown key{did_you_mean(unknown[0], known, listing='keys', list_when_close=False)}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise UserError(f"{path}: {exc}") from None
    except (UserError, ValueError) as exc:
        raise UserError(f"{path}.{exc}" if re.match(r"^\w+: ", str(exc)) else f"{path}: {exc}") from None


def _unique(items: list, name: str) -> tuple:
    if not items:
        raise UserError(f"{name}: needs at least one entry")
    if len(set(items)) != len(items):
        raise UserError(f"{name}: has duplicate entries")
    return tuple(items)


def _svm(t: Table) -> dict:
    out = {
        "C": tuple(t.float_list("C", [1.0], positive=True)),
        "j": tuple(t.float_list("j", [1.0], positive=True)),
        "tol": t.float("tol", 1e-3, positive=True, within=TOL_RANGE),
    }
    t.done()
    return out


def _estimators(t: Table) -> EstimatorSpec:
    """`[estimators]`: rho, and each registered estimator's settings (`xialpha.estimators.registry`)."""
    rhos = tuple(t.float_list("rho", [1.0], positive=True))
    values = {setting.key: _setting(t, setting) for setting in SETTINGS}
    t.done()
    for setting in SETTINGS:
        value = values[setting.key]
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < setting.least_on:
            raise UserError(f"estimators.{setting.key}: must be 0 (off) or >= {setting.least_on}")
    return EstimatorSpec(rhos, tuple(values.items()))


def _setting(t: Table, setting):
    """One estimator setting of `t`, of its default's type (a str one among its choices)."""
    if isinstance(setting.default, bool):
        return t.bool(setting.key, setting.default)
    if isinstance(setting.default, int):
        return t.int(setting.key, setting.default, minimum=0)
    return t.choice(setting.key, setting.choices, setting.default)
