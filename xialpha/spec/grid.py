"""What a sweep and a drift check both train: the grid of configurations on a corpus, and its tables
(`[[preprocessing]]`, `[[kernels]]`, `[svm]`: `configurations`), each list value expanding to a grid."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, TypeVar

from xialpha.errors import UserError, did_you_mean
from xialpha.estimators import LINEAR, TOL_RANGE
from xialpha.features.kernels import Kernel
from xialpha.features.preprocessing import Preprocessing
from xialpha.spec.corpus import CorpusSpec
from xialpha.spec.tables import Table

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Dataclass = TypeVar("_Dataclass", bound="DataclassInstance")

DEFAULT_MAX_CONFIGS = 100_000  # max_configs: preprocessings x kernels x C x j per category
AUTO_C = "auto"  # svm.C = "auto": the C values are found from the data (`xialpha.estimators.c_ladder`)
AUTO_C_LIMIT = 16  # C values per (category, preprocessing, kernel, j) path at most when svm.C = "auto"
AUTO_C_FACTOR = 4.0  # the ratio of neighbouring C on an auto ladder (bench/c_auto.py measures it against x2)
AUTO_C_START = 4  # C values of an auto ladder's first round: starting C x AUTO_C_FACTOR^0..3
AUTO_C_ROUNDS = 1 + AUTO_C_LIMIT - AUTO_C_START  # rounds at most: each later round adds one C to a path


def auto_C_rule() -> str:
    """One sentence saying what svm.C = "auto" does (a dry run cannot know its C values)."""
    return (
        f'svm.C = "auto": per category x preprocessing x kernel x j, {AUTO_C_START} C from a starting C computed '
        f"from the data (x{AUTO_C_FACTOR:g} apart); then round by round one C more (x{AUTO_C_FACTOR:g} or "
        f"/{AUTO_C_FACTOR:g}) where the default selection's choice sits at its C range's edge, until it is "
        f"interior, the estimate is flat or the solution stops changing; at most {AUTO_C_LIMIT} C a path "
        f"({AUTO_C_ROUNDS} rounds)"
    )


@dataclass(frozen=True)
class GridSpec:
    """id and store of the run, its corpus, and the configurations: preprocessings x kernels x C x j,
    each trained to the solver tolerance tol. `SweepSpec` and `DriftSpec` add what they do with them.
    C_auto: svm.C = "auto", C then being the C values chosen so far (none before the data is read)."""

    id: str
    store: str | None
    corpus: CorpusSpec
    preprocessings: tuple
    kernels: tuple
    C: tuple[float, ...]
    j: tuple[float, ...]
    tol: float
    C_auto: bool


def configurations(root: Table, section: Table) -> dict:
    """preprocessings, kernels, C, j and tol of the grid; UserError with the count, before the
    grid is expanded, when it has more than `section`'s max_configs configurations."""
    limit = section.int("max_configs", DEFAULT_MAX_CONFIGS, minimum=1)
    preprocessings = root.table_list("preprocessing", default=[{}])
    kernels = root.table_list("kernels", default=[{"name": LINEAR}])
    svm = _svm(root.table("svm"))
    sizes = {
        "preprocessings": _grid_size(preprocessings),
        "kernels": _grid_size(kernels),
        "C values": AUTO_C_LIMIT if svm["C_auto"] else len(svm["C"]),
        "j values": len(svm["j"]),
    }
    total = math.prod(sizes.values())
    if total > limit:
        raise UserError(
            f"{section.path}.max_configs: the grid has {total:,} configurations per category "
            f"({' x '.join(f'{n:,} {name}' for name, n in sizes.items())}), more than the limit "
            f"{limit:,}; shrink the grid or raise [{section.path}] max_configs"
        )
    return {"preprocessings": _preprocessings(preprocessings), "kernels": _kernels(kernels), **svm}


def _grid_size(entries: list) -> int:
    """How many variants `[[preprocessing]]` or `[[kernels]]` entries expand to (lists multiply)."""
    return sum(math.prod(len(v) if isinstance(v, list) else 1 for v in entry.raw.values()) for _, entry in entries)


def _preprocessings(entries: list) -> tuple:
    """`[[preprocessing]]` entries, each expanded as a grid where a value is a list."""
    variants = []
    for path, entry in entries:
        keys = sorted(entry.raw)
        grid = [entry.raw[k] if isinstance(entry.raw[k], list) else [entry.raw[k]] for k in keys]
        for values in itertools.product(*grid):
            variants.append(_construct(Preprocessing, dict(zip(keys, values)), path))
    return _unique(variants, "preprocessing")


def _kernels(entries: list) -> tuple:
    """`[[kernels]]` entries; list-valued gamma/degree/coef0 expand to one kernel per value."""
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


def _construct(cls: type[_Dataclass], kwargs: dict, path: str) -> _Dataclass:
    """cls(**kwargs) for a dataclass; an unknown key names the closest field, and an error about one
    of its fields is named as that key in the table at `path`."""
    known = [f.name for f in fields(cls) if f.init]
    unknown = [key for key in kwargs if key not in known]
    if unknown:
        raise UserError(
            f"unknown key{did_you_mean(unknown[0], known, listing='keys', list_when_close=False)}",
            key=f"{path}.{unknown[0]}",
        )
    try:
        return cls(**kwargs)
    except UserError as exc:
        raise (exc.within(path) if exc.key else UserError(str(exc), key=path)) from None
    except (TypeError, ValueError) as exc:
        raise UserError(str(exc), key=path) from None


def _unique(items: list, name: str) -> tuple:
    if not items:
        raise UserError(f"{name}: needs at least one entry")
    if len(set(items)) != len(items):
        raise UserError(f"{name}: has duplicate entries")
    return tuple(items)


def _svm(t: Table) -> dict:
    """`[svm]`: C (a list of numbers, or "auto": none yet, C_auto true), j and tol."""
    C = t.raw.get("C")
    if isinstance(C, str) and C != AUTO_C:
        raise UserError(f'svm.C: must be a number, a list of numbers or "auto", got {C!r}')
    C_auto = C == AUTO_C
    if C_auto:
        t.str("C")  # read: the C values come from the data
    out = {
        "C": () if C_auto else tuple(t.float_list("C", [1.0], positive=True)),
        "C_auto": C_auto,
        "j": tuple(t.float_list("j", [1.0], positive=True)),
        "tol": t.float("tol", 1e-3, positive=True, within=TOL_RANGE),
    }
    t.done()
    return out
