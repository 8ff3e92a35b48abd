"""What a sweep and a drift check both train: the grid of configurations on a corpus."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xialpha.spec.sweep import CorpusSpec


@dataclass(frozen=True)
class GridSpec:
    """id and store of the run, its corpus, and the configurations: preprocessings x kernels x C x j,
    each trained to the solver tolerance tol. `SweepSpec` and `DriftSpec` add what they do with them."""

    id: str
    store: str | None
    corpus: CorpusSpec
    preprocessings: tuple
    kernels: tuple
    C: tuple[float, ...]
    j: tuple[float, ...]
    tol: float
