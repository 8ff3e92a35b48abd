"""Each corpus loader's parts by name (`xialpha.corpora.loading.parted`): plan, refine, read,
check, which `xialpha.jobs` runs as tasks and `load_in_parts` runs here one after the other, the
loader's defaults filled in for the arguments left out (`xialpha.corpora.loading.with_defaults`);
`look_before_reading`, the cheap look at a corpus a command takes before it starts a cluster; and
`survey`, what a dry run learns of a corpus without reading its documents."""

from __future__ import annotations

from dataclasses import dataclass

from xialpha.corpora.corpus import Corpus, concat
from xialpha.corpora.loading import parted, with_defaults
from xialpha.corpora.parts import (
    Census,
    Part,
    PartSummary,
    RawPart,
    listed_summary,
    number_parts,
    read_in_parts,
)

SAMPLE_DOCUMENTS = 200  # documents a survey reads, spread evenly over the corpus, for its estimates


def plan_parts(kind: str, arguments: dict) -> list[Part]:
    """The parts of the corpus loader `kind` reads with `arguments` (not yet refined; the arguments
    checked by `check_loader_arguments` where they come from a spec), those left out taking the
    loader's defaults (`with_defaults`)."""
    return parted(kind).plan(**with_defaults(kind, arguments))


def refine_part(part: Part) -> list[Part]:
    """`part` cut into the parts read (itself where the loader has nothing to cut)."""
    return parted(part.loader).refined(part)


def read_part(part: Part) -> RawPart:
    return parted(part.loader).read(part)


def check_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError for a corpus without documents, or what its loader's own check finds."""
    parted(parts[0].loader).check_all(parts, censuses)


def load_in_parts(kind: str, arguments: dict) -> Corpus:
    """The corpus loader `kind` reads with `arguments` (the loader's defaults for those left out),
    read here part after part (`read_in_parts`)."""
    return read_in_parts(parted(kind), with_defaults(kind, arguments))


def look_before_reading(kind: str, arguments: dict) -> None:
    """UserError for what a corpus shows without being read, as its tasks would find it: the loader's
    plan (its settings, that its files exist, their formats) and each planned part's look at the head of
    its file (a table's header without a column it names). For a command about to start a local
    cluster, whose workers see the files this process sees."""
    loader = parted(kind)
    for part in plan_parts(kind, arguments):
        loader.looked(part)


@dataclass(frozen=True)
class Survey:
    """A corpus as the listing of its files shows it (`survey`): its parts; its summary (documents and
    category counts per split, from folder names: a file filed under several categories counts for
    each, an empty one counts); its files' bytes; and `sample`, up to SAMPLE_DOCUMENTS of its
    documents read, spread evenly over it, for estimates."""

    parts: list[Part]
    summary: PartSummary
    n_bytes: int
    sample: Corpus


def survey(
    kind: str,
    arguments: dict,
    train_split: str | None = None,
    validation_fraction: float | None = None,
    validation_seed: int = 0,
    source: str = "<spec>",
) -> Survey | None:
    """The `Survey` of the corpus loader `kind` reads with `arguments` (its validation split carved
    from `train_split` as the reading carves it; `source`: the spec file, for its errors), reading
    no document but its sample; None where the loader's listing does not show its documents (every
    loader but "directory", and an archive), so the corpus must be read to be counted."""
    loader = parted(kind)
    if loader.listed is None or loader.sample is None:
        return None
    parts = number_parts(plan_parts(kind, arguments))
    listings = [loader.listed(part) for part in parts]
    if any(listing is None for listing in listings):
        return None
    found = [listing for listing in listings if listing is not None]
    total = sum(len(listing.sizes) for listing in found)
    if not total:
        return None
    wanted = {round(i * total / min(total, SAMPLE_DOCUMENTS)) for i in range(min(total, SAMPLE_DOCUMENTS))}
    samples, start = [], 0
    for part, listing in zip(parts, found):
        positions = sorted(i - start for i in wanted if start <= i < start + len(listing.sizes))
        if positions:
            samples.append(loader.sample(part, listing, positions))
        start += len(listing.sizes)
    return Survey(
        parts,
        listed_summary(found, train_split, validation_fraction, validation_seed, source),
        sum(sum(listing.sizes) for listing in found),
        concat(samples),
    )
