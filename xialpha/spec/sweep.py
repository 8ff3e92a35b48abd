"""Sweep specs: a TOML file validated into frozen dataclasses.

Every error names the path of the offending key, e.g. `kernels[1].gamma: must be > 0`, and
unknown keys are errors (a typo never silently falls back to a default). See config/*.toml.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from xialpha.errors import UserError
from xialpha.estimators import DEFAULT_RHO, METRICS
from xialpha.estimators.registry import (
    DEFAULT_SETTINGS,
    HELD_OUT,
    SELECTABLE,
    SETTINGS,
    default_for,
    switched_on,
)
from xialpha.features.kernels import DEFAULT_GRAM_LIMIT_BYTES
from xialpha.spec.cluster import ClusterSpec, parse_cluster
from xialpha.spec.corpus import parse_corpus
from xialpha.spec.grid import GridSpec, configurations
from xialpha.spec.tables import Table, parse_toml, read_spec_text
from xialpha.storage.sweep_ids import SWEEP_ID_RULE, valid_sweep_id

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus
    from xialpha.estimators.registry import Setting

METRIC_NAMES = METRICS


@dataclass(frozen=True)
class EstimatorSpec:
    """Estimates computed next to every fit: the xi-alpha rhos, and every setting of the estimator
    registry (`xialpha.estimators.registry`) by key, which say what else runs and how (span unless
    switched off: it is the default selection estimator). `spec.estimators["kfold"]` is one setting."""

    rhos: tuple[float, ...] = (DEFAULT_RHO,)
    settings: tuple[tuple[str, object], ...] = tuple(DEFAULT_SETTINGS.items())

    def __getitem__(self, key: str) -> object:
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

    @property
    def held_out_split(self) -> str | None:
        """The split the held-out figures are scored on: corpus.test_split when an estimator needs
        it (the holdout estimator), else None."""
        return self.corpus.test_split if self.estimators.needs(HELD_OUT) else None

    def data_fingerprint(self, fingerprint: Callable[[str | None], str]) -> str:
        """What the results depend on in the corpus loaded from this spec: the training split's
        fingerprint, combined with the test split's when the holdout estimator runs on it.
        fingerprint(split): the fingerprint of a split of that corpus (None: all of it)."""
        value = fingerprint(self.corpus.train_split)
        if self.held_out_split:
            value = hashlib.sha256(f"{value}:{fingerprint(self.held_out_split)}".encode()).hexdigest()
        return value


def split_fingerprints(corpus: Corpus) -> Callable[[str | None], str]:
    """fingerprint(split) of an in-memory corpus, as `SweepSpec.data_fingerprint` takes it."""
    return lambda split: (corpus if split is None else corpus.split(split)).fingerprint()


def load_spec(path: str | os.PathLike[str], corpus: Corpus | None = None) -> SweepSpec:
    """Read and validate a spec file (relative corpus paths are relative to the file); corpus: see `parse_spec`."""
    path = Path(path)
    return parse_spec(read_spec_text(path), source=str(path), base_dir=path.parent, default_id=path.stem, corpus=corpus)


def parse_spec(
    text: str,
    source: str = "<spec>",
    base_dir: str | Path | None = None,
    default_id: str = "sweep",
    corpus: Corpus | None = None,
) -> SweepSpec:
    """Validate spec text; errors name `source` and the key path.

    corpus: an `xialpha.corpora.Corpus` to sweep instead of loading one; the spec's [corpus] table
    then holds only train_split, test_split and [corpus.categories] (it may be left out).
    """
    root = parse_toml(text, source)
    try:
        spec = _build(root, Path(base_dir or Path.cwd()).resolve(), default_id, text, corpus is not None)
    except UserError as exc:
        raise exc.within(file=source) from None
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
        selection_estimator=sweep.choice("estimator", SELECTABLE, None),  # type: ignore[arg-type]  # None: set below
        batch_size=sweep.int("batch_size", None, minimum=1),
        gram_memory_limit=sweep.bytes("gram_memory_limit", DEFAULT_GRAM_LIMIT_BYTES),
        corpus=parse_corpus(root.table("corpus", required=not in_memory), base_dir, in_memory),
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
                raise UserError(
                    f"estimators.{estimator.switch.key if estimator.switch else estimator.name}: "
                    "needs corpus.test_split"
                )
    if spec.selection_estimator is None:  # the default when computed, else xi-alpha
        spec = replace(spec, selection_estimator=default_for(spec.estimators.enabled))
    if spec.selection_estimator not in spec.estimators.enabled:
        raise UserError(f"sweep.estimator: {spec.selection_estimator!r} is not computed; enable it in [estimators]")
    prune = spec.estimators["span_prune"]
    if prune not in ("off", "any", spec.metric):
        raise UserError(
            f"estimators.span_prune: {prune!r} keeps the choices by {prune} only, and the sweep's best "
            f'are chosen by sweep.metric {spec.metric!r}: set it to "{spec.metric}", "any" or "off"'
        )
    return spec


def _estimators(t: Table) -> EstimatorSpec:
    """`[estimators]`: rho, and each registered estimator's settings (`xialpha.estimators.registry`)."""
    rhos = tuple(t.float_list("rho", [DEFAULT_RHO], positive=True))
    values = {setting.key: _setting(t, setting) for setting in SETTINGS}
    t.done()
    for setting in SETTINGS:
        value = values[setting.key]
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < setting.least_on:
            raise UserError(f"estimators.{setting.key}: must be 0 (off) or >= {setting.least_on}")
    return EstimatorSpec(rhos, tuple(values.items()))


def _setting(t: Table, setting: Setting) -> bool | int | str | None:
    """One estimator setting of `t`, of its default's type (a str one among its choices)."""
    if isinstance(setting.default, bool):
        return t.bool(setting.key, setting.default)
    if isinstance(setting.default, int):
        return t.int(setting.key, setting.default, minimum=0)
    return t.choice(setting.key, setting.choices, setting.default)
