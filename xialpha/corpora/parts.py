"""A corpus read in partitions: what one task reads (`Part`), what reading it gives (`RawPart`), the
small facts planning needs from it (`census`, `summarize`), and the step that makes a read part
final once facts about the parts before it are known (`finish`).

A corpus is the concatenation of its parts in `Part.index` order. Every loader plans its parts
(cheaply: file names, sizes, Parquet metadata, a scan for record boundaries) and reads one part
at a time, so the parts can be read by different processes; `xialpha.jobs` runs these plain
functions as tasks, and `read_in_parts` runs them one after the other in this process. Nothing
here knows Dask. Each loader module describes its steps as a `PartedLoader`.

Steps, each a function of one part (and small arguments):

1. read -> `RawPart`: the part's documents; default ids numbered from 1 within the part where a
   loader numbers rows (table files without an id column).
2. `census` -> `Census`: rows read, documents per split, the feature columns used (feature
   vectors): what numbering, the validation carving and the matrix width need from every part.
3. `finish` -> the final `Corpus` chunk: ids renumbered by the rows of the earlier parts of the
   same file, a carved validation split applied, feature vectors widened to the corpus's width.
4. `summarize` -> `PartSummary` (documents and category counts per split; `merge_summaries`
   joins them) and `part_digests` (per-document digests; `fingerprints_and_duplicates` joins
   them into the data fingerprints and finds a repeated id).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np

from xialpha.corpora.corpus import (
    DIGEST_BYTES,
    VALIDATION_SPLIT,
    Corpus,
    check_carving,
    concat,
    document_digests,
    fingerprint_of,
    kind_of,
    ranked_counts,
    validation_ordinals,
)
from xialpha.corpora.sources import is_uri
from xialpha.corpora.stamps import Stamp, check, stamp_of
from xialpha.errors import UserError

PART_DOCUMENTS = 10_000  # documents per part where the loader chooses (synthetic, a corpus in memory)
PART_BYTES = 16 * 2**20  # bytes of a text file (CSV, TSV, JSON lines, svmlight) per part, about
WHOLE = "(all)"  # the split key of the whole corpus in fingerprints and counts
T = TypeVar("T")


@dataclass(frozen=True)
class Part:
    """One partition of a corpus: small and picklable, so a task can be sent it.

    loader: the loader's name (`xialpha.corpora.loading.LOADERS`); index: its place in the
    corpus (set by `number_parts`); source: the file, URI or block it reads, for messages;
    args: the loader's keyword arguments; where: loader-specific position (a byte range and the
    line it starts on, a row group, a block of generated documents); group: parts whose default
    ids are numbered together (one table file), None where ids need no numbering; stamp: what the
    file it reads was when the part was planned (`stamped`), checked as it is read (`on_planned_file`).
    """

    loader: str
    source: str
    args: dict = field(hash=False, compare=False)
    where: tuple = ()
    group: str | None = None
    index: int = -1
    stamp: Stamp | None = None  # the file it reads as it was when planned (`stamped`)


@dataclass(frozen=True, eq=False)
class RawPart:
    """A part as read: its documents, and `n_rows` records read (before any empty one was skipped),
    by which default ids of later parts of the same group are numbered. With `id_prefix` set, the
    ids are row numbers counted from 1 within the part and `finish` renumbers them."""

    corpus: Corpus
    n_rows: int
    id_prefix: str | None = None


@dataclass(frozen=True)
class Census:
    """What planning needs from each read part before finishing it: records read, documents per
    split (None: unsplit), and for feature vectors the smallest column index used (None: none)
    and the width of its matrix."""

    n_rows: int
    split_sizes: dict
    min_column: int | None = None
    n_columns: int = 0


@dataclass(frozen=True)
class Finish:
    """What `finish` needs besides the part: `row_offset` rows read before it in its group, the
    training split a validation split is carved from, and for feature vectors the corpus's width
    and whether column indices count from 1 (they are shifted down by one)."""

    row_offset: int = 0
    train_split: str | None = None
    n_columns: int | None = None
    one_based: bool = False


def stamped(part: Part) -> Part:
    """`part` with the stamp (`stamps.Stamp`) of the one file it reads: its source (a local path or
    a URI) or a local path of its `where`; as it is where the part reads no single file (a folder of
    files, generated documents)."""
    candidates = [
        part.source,
        *(w for w in part.where if isinstance(w, os.PathLike) or (isinstance(w, str) and os.path.isabs(w))),
    ]
    for candidate in candidates:
        found = stamp_of(candidate if is_uri(candidate) else os.path.abspath(os.fspath(candidate)))
        if found is not None:
            return replace(part, stamp=found)
    return part


def on_planned_file(step: Callable[[Part], T], part: Part) -> T:
    """`step(part)` (reading or cutting it) on the file as it was planned: UserError naming the file
    when it is gone, or when its size, times (or version) differ before or after the step or its
    content digest after it (`stamps.check`), so nothing read from another version of it goes under
    the planned one's fingerprint."""
    if part.stamp is None:
        return step(part)
    check(part.stamp)
    try:
        result = step(part)
    except FileNotFoundError:
        check(part.stamp)
        raise UserError(f"{part.source}: is gone") from None
    check(part.stamp, content=True)
    return result


# What a read corpus holds in memory at least (its chunks, before any features), for refusing one that
# cannot fit before it is read (`held_bytes`). A generated document held 433 bytes at mean_length 20,
# 768 at 80 and 1,832 at 300 (tracemalloc over a 10,000-document part): about 330 + 5 per token.
SYNTHETIC_DOCUMENT_BYTES = 330
SYNTHETIC_TOKEN_BYTES = 5
FILE_SHARE_HELD = 0.5  # of a file's bytes, a read corpus holds at least this share (its texts without markup)


@dataclass(frozen=True)
class HeldBytes:
    """A lower bound of the bytes a corpus holds in memory once read, the loader argument it grows
    with (`key`: "n_docs", "path") and how it was estimated, in words."""

    bytes: int
    key: str
    how: str


def held_bytes(parts: list[Part]) -> HeldBytes | None:
    """A lower bound of what the corpus of `parts` (planned, not read) holds in memory once read:
    generated documents by their number and mean length, files by the sizes they had when planned
    (`stamped`: FILE_SHARE_HELD of them); None where the parts tell neither (a folder of files)."""
    if not parts:
        return None
    if parts[0].loader == "synthetic":
        documents = sum(part.where[2] - part.where[1] for part in parts)
        each = SYNTHETIC_DOCUMENT_BYTES + SYNTHETIC_TOKEN_BYTES * parts[0].args["mean_length"]
        return HeldBytes(int(documents * each), "n_docs", f"{documents:,} documents of about {each:,.0f} bytes")
    sizes = {part.stamp.path: part.stamp.size for part in parts if part.stamp is not None}
    if not sizes:
        return None
    total = sum(sizes.values())
    files = f"{len(sizes)} file{'' if len(sizes) == 1 else 's'}"
    return HeldBytes(int(total * FILE_SHARE_HELD), "path", f"{files} of {total / 2**30:.1f} GiB, at least half of it")


def memory_parts(corpus: Corpus) -> list[RawPart]:
    """A corpus given in memory as read parts of PART_DOCUMENTS documents."""
    return [
        RawPart(
            corpus.subset(np.arange(lo, min(lo + PART_DOCUMENTS, len(corpus)))), min(PART_DOCUMENTS, len(corpus) - lo)
        )
        for lo in range(0, len(corpus), PART_DOCUMENTS)
    ]


def number_parts(parts: list[Part]) -> list[Part]:
    """The parts with `index` = their position."""
    return [replace(part, index=index) for index, part in enumerate(parts)]


def census(raw: RawPart) -> Census:
    corpus = raw.corpus
    sizes = Counter(corpus.splits.tolist()) if corpus.splits is not None else {WHOLE: len(corpus)}
    if corpus.X is None:
        return Census(raw.n_rows, dict(sizes))
    used = corpus.X.indices
    if not used.size:
        return Census(raw.n_rows, dict(sizes), None, 0)
    return Census(raw.n_rows, dict(sizes), int(used.min()), int(used.max()) + 1)


def finish(raw: RawPart, how: Finish, validation: np.ndarray | None = None) -> Corpus:
    """The final chunk of a read part (see `Finish`); `validation`: positions among its training
    documents that move to split "validation" (`carve_positions`), None for none."""
    corpus = raw.corpus
    changes = {}
    if raw.id_prefix is not None:
        rows = corpus.ids.astype(np.int64) + how.row_offset
        changes["ids"] = np.char.add(raw.id_prefix, rows.astype(str)) if len(rows) else corpus.ids
    if validation is not None and len(validation):
        splits = corpus.splits.astype(object)
        positions = np.flatnonzero(corpus.splits == how.train_split)[validation]
        splits[positions] = VALIDATION_SPLIT
        changes["splits"] = splits.astype(str)
    if corpus.X is not None and (how.one_based or (how.n_columns is not None and how.n_columns != corpus.X.shape[1])):
        import scipy.sparse as sp

        X = corpus.X
        if how.one_based:
            X = sp.csr_matrix((X.data, X.indices - 1, X.indptr), shape=(X.shape[0], max(X.shape[1] - 1, 0)))
        changes["X"] = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], how.n_columns or X.shape[1]))
    return replace(corpus, **changes) if changes else corpus


@dataclass(frozen=True)
class PartSummary:
    """Documents and category counts per split of a part or a whole corpus (split WHOLE when the
    corpus is unsplit), whether any document has a time, and its kind (`kind_of`)."""

    name: str
    kind: str
    split_sizes: dict
    category_counts: dict  # {split: {category: documents}}
    has_times: bool

    @property
    def n_documents(self) -> int:
        return sum(self.split_sizes.values())

    @property
    def split_names(self) -> list[str]:
        """The distinct split names, sorted; empty when the corpus has no predefined splits."""
        return sorted(name for name in self.split_sizes if name != WHOLE)

    def size(self, split: str | None) -> int:
        """Documents of split `split` (None: all)."""
        return self.n_documents if split is None else self.split_sizes.get(split, 0)

    def counts(self, split: str | None) -> dict[str, int]:
        """{category: documents} of split `split` (None: all), most frequent first."""
        if split is not None:
            return ranked_counts(self.category_counts.get(split, {}))
        total: Counter = Counter()
        for counts in self.category_counts.values():
            total.update(counts)
        return ranked_counts(total)


def summarize(corpus: Corpus) -> PartSummary:
    """The `PartSummary` of one final chunk."""
    keys = corpus.splits.tolist() if corpus.splits is not None else [WHOLE] * len(corpus)
    counts: dict[str, Counter] = {}
    for key, labels in zip(keys, corpus.labels):
        counts.setdefault(key, Counter()).update(labels)
    has_times = corpus.timestamps is not None and bool((~np.isnat(corpus.timestamps)).any())
    return PartSummary(
        corpus.name, kind_of(corpus), dict(Counter(keys)), {k: dict(v) for k, v in counts.items()}, has_times
    )


def merge_summaries(summaries: list[PartSummary]) -> PartSummary:
    """The summary of the parts' concatenation."""
    sizes: Counter = Counter()
    counts: dict[str, Counter] = {}
    for summary in summaries:
        sizes.update(summary.split_sizes)
        for split, categories in summary.category_counts.items():
            counts.setdefault(split, Counter()).update(categories)
    first = summaries[0]
    return PartSummary(
        first.name,
        first.kind,
        dict(sizes),
        {k: dict(v) for k, v in counts.items()},
        any(summary.has_times for summary in summaries),
    )


@dataclass(frozen=True, eq=False)
class PartDigests:
    """A part's `document_digests` per split (WHOLE: all its documents), and a BLAKE2b digest of
    each of its ids (n, DIGEST_BYTES) uint8, in document order."""

    by_split: dict
    ids: np.ndarray


def part_digests(corpus: Corpus) -> PartDigests:
    digests = document_digests(corpus)
    by_split = {WHOLE: digests}
    if corpus.splits is not None:
        for split in np.unique(corpus.splits):
            by_split[str(split)] = digests[corpus.splits == split]
    ids = np.empty((len(corpus), DIGEST_BYTES), dtype=np.uint8)
    for i, value in enumerate(corpus.ids.tolist()):
        ids[i] = np.frombuffer(hashlib.blake2b(value.encode("utf-8"), digest_size=DIGEST_BYTES).digest(), np.uint8)
    return PartDigests(by_split, ids)


def fingerprints_and_duplicates(
    parts: list[PartDigests], kind: str, splits: list[str]
) -> tuple[dict[str, str], tuple[int, int] | None]:
    """{split: fingerprint} of `splits` (WHOLE: all documents), equal to `Corpus.fingerprint` of the
    split loaded in one piece, and (part, position) of the first document whose id occurred
    before it (None when ids are unique)."""
    empty = np.empty((0, DIGEST_BYTES), dtype=np.uint8)
    found = {split: fingerprint_of([part.by_split.get(split, empty) for part in parts], kind) for split in splits}
    ids = np.ascontiguousarray(np.concatenate([part.ids for part in parts])).view(f"V{DIGEST_BYTES}").ravel()
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    repeated = np.flatnonzero(first[inverse.ravel()] != np.arange(len(ids)))
    if not repeated.size:
        return found, None
    position = int(repeated[0])
    sizes = np.cumsum([len(part.ids) for part in parts])
    part = int(np.searchsorted(sizes, position, side="right"))
    return found, (part, position - int(sizes[part - 1] if part else 0))


def duplicate_id_position(corpus: Corpus, position: int) -> str:
    """The id of the document at `position`."""
    return str(corpus.ids[position])


def carve_positions(train_sizes: list[int], fraction: float, seed: int) -> list[np.ndarray]:
    """Per part, the positions among its training documents that the validation carving
    (`xialpha.corpora.corpus.carve_validation`, the same draw) moves to split "validation"."""
    chosen = np.sort(validation_ordinals(sum(train_sizes), fraction, seed))
    bounds = np.concatenate([[0], np.cumsum(train_sizes)])
    return [chosen[(chosen >= lo) & (chosen < hi)] - lo for lo, hi in zip(bounds[:-1], bounds[1:])]


def row_offsets(parts: list[Part], censuses: list[Census]) -> list[int]:
    """Per part, the rows read by the earlier parts of its group (0 for parts without a group)."""
    offsets, read = [], Counter()
    for part, counted in zip(parts, censuses):
        offsets.append(read[part.group] if part.group is not None else 0)
        if part.group is not None:
            read[part.group] += counted.n_rows
    return offsets


def finishes(parts: list[Part], censuses: list[Census], train_split: str | None = None) -> list[Finish]:
    """The `Finish` of every part from all the parts' censuses: row numbering, and for feature
    vectors the width and the index base the
    loader's `n_features` and `zero_based` arguments give (see `xialpha.corpora.svmlight`):
    with zero_based "auto" the parts are read as 0-based and shifted down by one unless some part
    uses column 0; the width is `n_features`, else the widest part's."""
    offsets = row_offsets(parts, censuses)
    args = parts[0].args if parts else {}
    used = [c.min_column for c in censuses if c.min_column is not None]
    one_based = args.get("zero_based", "auto") == "auto" and bool(used) and min(used) > 0
    widest = max((c.n_columns for c in censuses), default=0) - one_based
    n_features = args.get("n_features")
    if n_features is not None and widest > n_features:
        raise UserError(
            f"{parts[0].source} has feature index {widest - 1} (0-based), not < {n_features}", key="n_features"
        )
    width = max(widest, 0) if n_features is None else n_features
    return [Finish(offset, train_split, width, one_based) for offset in offsets]


@dataclass(frozen=True)
class Listing:
    """A part's documents as the listing of its files shows them, none read (`PartedLoader.listed`):
    per document, in the order the part reads them, its split (None: the corpus is unsplit), its
    category, its file's size in bytes and the file (its path in the tree, the path to open it
    by). A file filed under several categories counts once for each, and an empty file counts
    (the reading merges or refuses them)."""

    name: str
    splits: list[str] | None
    categories: list[str]
    sizes: list[int]
    files: list[tuple[str, str]]


def listed_summary(
    listings: list[Listing],
    train_split: str | None = None,
    validation_fraction: float | None = None,
    seed: int = 0,
    source: str = "<spec>",
) -> PartSummary:
    """The `PartSummary` of the parts `listings` show, with the validation split carved from
    `train_split` as `finish` carves it (`carve_positions`, the same draw) when `validation_fraction`
    is given; UserError naming spec file `source` when it cannot be carved (`check_carving`)."""
    keys = [list(listing.splits or [WHOLE] * len(listing.categories)) for listing in listings]
    if validation_fraction is not None:
        train_sizes = [split.count(train_split) for split in keys]
        names = sorted({name for split in keys for name in split if name != WHOLE})
        check_carving(names, sum(train_sizes), str(train_split), validation_fraction, source)
        for split, carved in zip(keys, carve_positions(train_sizes, validation_fraction, seed)):
            train = [i for i, name in enumerate(split) if name == train_split]
            for position in carved.tolist():
                split[train[position]] = VALIDATION_SPLIT
    counts: dict[str, Counter] = {}
    for split, listing in zip(keys, listings):
        for key, category in zip(split, listing.categories):
            counts.setdefault(key, Counter())[category] += 1
    sizes = Counter(key for split in keys for key in split)
    return PartSummary(
        listings[0].name, "texts", dict(sizes), {key: dict(value) for key, value in counts.items()}, False
    )


@dataclass(frozen=True)
class PartedLoader:
    """A loader as plain per-part functions. plan(**arguments): the parts, cheaply (a file's part may
    stand for the whole file), from every argument of the loader's function (`plan_parts` in
    `xialpha.corpora.parted` fills in the defaults its signature states); refine(part): such a
    part cut into the parts read (scanning the file for record starts, or reading its metadata);
    read(part): one part's documents; check(parts, censuses): UserError for what only all parts
    together show (an empty file); look(part): UserError for what the head of a planned part's
    file shows (a table's header without a column the arguments name), read before any task runs
    (`looked`); listed(part): the part's documents as its file listing shows them (`Listing`),
    none read, None where the listing does not show them (an archive); sample(part, listing,
    positions): the documents at `positions` of the part's `listing` read, for estimates."""

    plan: Callable[..., list[Part]]
    read: Callable[[Part], RawPart]
    refine: Callable[[Part], list[Part]] | None = None
    check: Callable[[list[Part], list[Census]], None] | None = None
    look: Callable[[Part], None] | None = None
    listed: Callable[[Part], Listing | None] | None = None
    sample: Callable[[Part, Listing, list[int]], Corpus] | None = None

    def refined(self, part: Part) -> list[Part]:
        """`part` cut into the parts read (itself where the loader has nothing to cut)."""
        return [part] if self.refine is None else self.refine(part)

    def looked(self, part: Part) -> None:
        """UserError for what the head of planned `part`'s file shows (nothing where the loader has no look)."""
        if self.look is not None:
            self.look(part)

    def check_all(self, parts: list[Part], censuses: list[Census]) -> None:
        """UserError for a corpus without documents, or what the loader's own check finds."""
        if self.check is not None:
            self.check(parts, censuses)
        if not sum(sum(c.split_sizes.values()) for c in censuses):
            raise UserError("corpus: the corpus has no documents")


def read_in_parts(loader: PartedLoader, arguments: dict) -> Corpus:
    """The corpus `loader` reads with `arguments`, its parts planned, read and finished here one
    after the other (what a sweep's tasks do on a cluster)."""
    planned = [stamped(part) for part in loader.plan(**arguments)]
    parts = number_parts([piece for part in planned for piece in on_planned_file(loader.refined, part)])
    raws = [on_planned_file(loader.read, part) for part in parts]
    censuses = [census(raw) for raw in raws]
    loader.check_all(parts, censuses)
    return concat([finish(raw, how) for raw, how in zip(raws, finishes(parts, censuses))])
