"""Each corpus loader's parts by name (`PARTED`: each loader module's `PartedLoader`): plan, refine,
read, check, which `xialpha.jobs` runs as tasks and `load_in_parts` runs here one after the other;
and `look_before_reading`, the cheap look at a corpus a command takes before it starts a cluster."""

from __future__ import annotations

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.directory import DIRECTORY_PARTS
from xialpha.corpora.parts import Census, Part, RawPart, read_in_parts
from xialpha.corpora.reuters import REUTERS_PARTS
from xialpha.corpora.svmlight import SVMLIGHT_PARTS
from xialpha.corpora.synthetic import SYNTHETIC_PARTS
from xialpha.corpora.table import TABLE_PARTS

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


def look_before_reading(kind: str, arguments: dict) -> None:
    """UserError for what a corpus shows without being read, as its tasks would find it: the loader's
    plan (its settings, that its files exist, their formats) and each planned part's look at the head of
    its file (a table's header without a column it names). For a command about to start a local
    cluster, whose workers see the files this process sees."""
    loader = PARTED[kind]
    for part in loader.plan(**arguments):
        loader.looked(part)
