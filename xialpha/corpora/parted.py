"""Each corpus loader's parts by name (`parted(kind)`: the loader module's `PartedLoader`, imported
when first asked for, so that looking at a table imports no svmlight reader): plan, refine, read,
check, which `xialpha.jobs` runs as tasks and `load_in_parts` runs here one after the other; and
`look_before_reading`, the cheap look at a corpus a command takes before it starts a cluster."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from xialpha.corpora.parts import Census, Part, PartedLoader, RawPart, read_in_parts

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus

HOMES = {  # loader name -> (its module under xialpha.corpora, the module's PartedLoader)
    "reuters21578": ("reuters", "REUTERS_PARTS"),
    "directory": ("directory", "DIRECTORY_PARTS"),
    "svmlight": ("svmlight", "SVMLIGHT_PARTS"),
    "table": ("table", "TABLE_PARTS"),
    "synthetic": ("synthetic", "SYNTHETIC_PARTS"),
}


def parted(kind: str) -> PartedLoader:
    """The `PartedLoader` of corpus loader `kind` (one of HOMES)."""
    module, name = HOMES[kind]
    return getattr(importlib.import_module(f"xialpha.corpora.{module}"), name)


def plan_parts(kind: str, arguments: dict) -> list[Part]:
    """The parts of the corpus loader `kind` reads with `arguments` (not yet refined; the arguments
    checked by `check_loader_arguments` where they come from a spec)."""
    return parted(kind).plan(**arguments)


def refine_part(part: Part) -> list[Part]:
    """`part` cut into the parts read (itself where the loader has nothing to cut)."""
    return parted(part.loader).refined(part)


def read_part(part: Part) -> RawPart:
    return parted(part.loader).read(part)


def check_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError for a corpus without documents, or what its loader's own check finds."""
    parted(parts[0].loader).check_all(parts, censuses)


def load_in_parts(kind: str, arguments: dict) -> Corpus:
    """The corpus loader `kind` reads with `arguments`, read here part after part (`read_in_parts`)."""
    return read_in_parts(parted(kind), arguments)


def look_before_reading(kind: str, arguments: dict) -> None:
    """UserError for what a corpus shows without being read, as its tasks would find it: the loader's
    plan (its settings, that its files exist, their formats) and each planned part's look at the head of
    its file (a table's header without a column it names). For a command about to start a local
    cluster, whose workers see the files this process sees."""
    loader = parted(kind)
    for part in loader.plan(**arguments):
        loader.looked(part)
