"""The one loop that grows C ladders round by round, for sweeps with `svm.C = "auto"` and for
`XiAlphaSearchCV` without C, as scikit-learn's `BaseSearchCV._run_search` is one loop over the
candidates its strategies propose.

`grow_ladders` owns the loop and when it stops. Each ladder (a key chosen by the caller: a sweep's C
path, a search's grid of other parameters) starts with its first rung: AUTO_C_START C from its
starting C, AUTO_C_FACTOR apart (`xialpha.estimators.c_ladder.first_rung`), with any C stored before.
Each round the caller's `evaluate` fits the round's C (a sweep on the cluster, storing the rows,
`xialpha.jobs.auto`; the search in process, `xialpha.search`), then the caller's `next_steps` applies
the C-step rule (`xialpha.selection.c_extension.next_step`) to what was evaluated, and every ladder
whose Step names a C gets it for the next round. The rounds end when no Step names a C (every ladder
interior, flat, settled, at the cap, or given no Step) or after `rounds` rounds.

Pure Python: no Dask, no files.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from xialpha.estimators.c_ladder import first_rung
from xialpha.selection.c_extension import Step
from xialpha.spec.grid import AUTO_C_FACTOR, AUTO_C_START

Key = TypeVar("Key", bound=Hashable)  # what names one ladder, chosen by the caller


@dataclass(frozen=True)
class Round(Generic[Key]):
    """One round for `evaluate`: its number (1 the first), every ladder's C so far, ascending,
    and the C new to each ladder this round, ascending (the whole ladder in the first round; a
    ladder with none new is left out)."""

    number: int
    ladders: dict[Key, tuple[float, ...]]
    rungs: dict[Key, tuple[float, ...]]


@dataclass(frozen=True)
class GrownLadders(Generic[Key]):
    """What `grow_ladders` did: the rounds evaluated, each ladder's C (ascending; a C given by the
    rule after the last round, `rounds` reached, is in it unevaluated), and the Step the rule gave
    each ladder after the last round (a ladder given none is left out)."""

    rounds: int
    ladders: dict[Key, tuple[float, ...]]
    steps: dict[Key, Step]


def grow_ladders(
    starts: Mapping[Key, float],
    evaluate: Callable[[Round[Key]], None],
    next_steps: Callable[[], Mapping[Key, Step]],
    *,
    rounds: int,
    stored: Mapping[Key, Iterable[float]] | None = None,
) -> GrownLadders[Key]:
    """Grow a ladder from each of `starts` ({ladder: its starting C}; `stored`: {ladder: C stored
    before, in its first round too}) round by round: `evaluate(round)` fits the round, then
    `next_steps()` gives the next Step of the ladders it chooses, and each Step's C joins its
    ladder; until no Step names a C or `rounds` rounds were evaluated."""
    earlier = stored or {}
    ladders = {
        key: tuple(sorted({*first_rung(start, AUTO_C_START, AUTO_C_FACTOR), *earlier.get(key, ())}))
        for key, start in starts.items()
    }
    evaluated: dict[Key, tuple[float, ...]] = {}
    steps: dict[Key, Step] = {}
    number = 0
    while number < rounds:
        number += 1
        rungs = {key: _new(C, evaluated.get(key, ())) for key, C in ladders.items()}
        evaluate(Round(number, dict(ladders), {key: C for key, C in rungs.items() if C}))
        evaluated = dict(ladders)
        steps = dict(next_steps())
        grown = {key: step.C for key, step in steps.items() if step.C is not None}
        for key, C in grown.items():
            ladders[key] = tuple(sorted({*ladders.get(key, ()), C}))
        if not grown:
            break
    return GrownLadders(number, ladders, steps)


def _new(ladder: tuple[float, ...], evaluated: tuple[float, ...]) -> tuple[float, ...]:
    """The C of `ladder` not in `evaluated`, ascending."""
    return tuple(C for C in ladder if C not in evaluated)
