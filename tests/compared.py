"""A store of real sweeps to compare selections in (`xialpha compare`, `xialpha.compare`): filled in
this process by the sweep's own task functions (`swept.fill_store`), with saved selections."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from store_rows import result_rows
from swept import fill_store

from xialpha.cli import main
from xialpha.spec.sweep import parse_spec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.opening import open_store

SPEC = """
[sweep]
id = "{id}"
[corpus]
loader = "synthetic"
n_docs = 400
n_categories = 4
seed = {seed}
train_split = "train"
test_split = "test"
[corpus.categories]
top_k = {top_k}
[[preprocessing]]
min_df = {min_df}
[[kernels]]
name = "linear"
{rbf}
[svm]
C = {C}
[estimators]
rho = [1.0]
holdout = {holdout}
"""
RBF = '[[kernels]]\nname = "rbf"\ngamma = 1.0'


@dataclass(frozen=True)
class Compared:
    """The store (`uri`) and the ids of its saved selections: narrow, wide (by span, the default),
    wide_xa (the same sweep by xa, saved before), other (other documents), blind (no held-out split);
    sweep "r1" (hand-written results) has none."""

    uri: str
    narrow: str
    wide: str
    wide_xa: str
    other: str
    blind: str


def spec(sweep_id: str, *, seed=3, top_k=2, min_df="2", rbf="", C="[0.01, 0.1]", holdout="true") -> str:
    return SPEC.format(id=sweep_id, seed=seed, top_k=top_k, min_df=min_df, rbf=rbf, C=C, holdout=holdout)


def fill_compared(root: Path) -> Compared:
    """Sweeps "narrow" (2 categories, linear, C 0.01 and 0.1: too small, so it loses to "wide"),
    "wide" (a third category, min_df 1 and 2, linear and rbf, C 0.1 to 100), "other" (narrow's grid
    on other documents), "blind" (narrow without the held-out split) and "r1" (hand-written, no
    selection), and their selections."""
    uri = str(root / "store")
    store = open_store(uri, create=True, writable=True)
    specs = {
        "narrow": spec("narrow"),
        "wide": spec("wide", top_k=3, min_df="[1, 2]", rbf=RBF, C="[0.1, 1.0, 10.0, 100.0]"),
        "other": spec("other", seed=5),
        "blind": spec("blind", holdout="false"),
    }
    for text in specs.values():
        fill_store(parse_spec(text), store)
    store.datasets.write_results(result_rows("r1"))
    ids = {}
    for name, extra in (("narrow", []), ("wide_xa", ["--estimator", "xa"]), ("wide", []), ("other", []), ("blind", [])):
        before = set(_saved(store))
        assert main(["select", uri, "--sweep", name.removesuffix("_xa"), "--save", "--format", "json", *extra]) == 0
        (ids[name],) = set(_saved(store)) - before
    return Compared(uri, **ids)


def _saved(store: StoreQueries) -> list[str]:
    frame = store.selections()
    return [] if frame.empty else list(frame["selection_id"].unique())
