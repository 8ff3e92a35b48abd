"""A seeded synthetic multi-label text corpus, optionally in time-ordered batches with a concept shift.

Words are letters-only pseudo-words whose background frequencies follow a Zipf-Mandelbrot law.
Category c (named "cat00", "cat01", ...; cat00 most frequent) has a document prevalence of
max_prevalence / (c + 1) ** category_skew, labels are drawn independently per category, and each
category owns `topic_words` mid-frequency words (sets of different categories may overlap). A
document of length L ~ Poisson(mean_length * lognormal) draws a share of its tokens (on average
`signal`, varying per document) from each of its categories' topic words and the rest from the
background, so some positives carry little evidence: categories are learnable but not trivially
separable.

Concept shift (needs n_batches; documents are split into equal consecutive batches, batch b dated
`start` + b days): the `shifted_categories` (a count of the most frequent, or a list of names) swap to
a fresh set of topic words — "abrupt": from batch `shift_batch` on; "gradual": the share of documents
using the new words grows linearly from 0 to 1 over `shift_width` batches starting at `shift_batch`;
"abrupt-return": for batches shift_batch .. shift_batch + shift_width - 1 only.

Documents are generated in blocks of PART_DOCUMENTS (`synthetic_parts`), one task each on a
cluster; a corpus of at most PART_DOCUMENTS documents is the same for a seed as before blocks
existed, a larger one differs from what earlier versions generated (each later block draws from
its own seed sequence).
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from xialpha.corpora.corpus import Corpus, concat
from xialpha.corpora.parts import PART_DOCUMENTS, Part, PartedLoader, RawPart
from xialpha.errors import UserError, one_of

SHIFTS = ("abrupt", "gradual", "abrupt-return")
MAX_TOKENS = 10**8  # documents of one block x mean_length: about 1 GB of word indices while generating it
MAX_CELLS = 10**8  # documents of one block x n_categories label draws
MAX_DOCUMENTS = 10**9
MAX_VOCABULARY = 10**7
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
_TOPIC_RANKS_FROM = 50


def synthetic_corpus(args: dict) -> Corpus:
    """`xialpha.corpora.loading.make_synthetic`'s corpus from its arguments: the blocks generated
    here one after the other."""
    return concat([read_synthetic_part(part).corpus for part in synthetic_parts(**args)])


def synthetic_parts(**args) -> list[Part]:
    """The blocks of PART_DOCUMENTS documents a synthetic corpus is generated in, each one task's
    work. What all blocks share (topic words, prevalences, concept-shift schedule) comes from
    `seed`; block 0 continues that random stream and block b > 0 draws from the seed sequence
    (seed, b), so a corpus of at most PART_DOCUMENTS documents is what one draw always gave.
    UserError naming the argument for values out of range."""
    settings = _settings(**args)
    n_docs = settings["n_docs"]
    starts = list(range(0, n_docs, PART_DOCUMENTS))
    return [
        Part(
            "synthetic",
            f"synthetic documents {lo:,}-{min(lo + PART_DOCUMENTS, n_docs) - 1:,}",
            settings,
            where=(block, lo, min(lo + PART_DOCUMENTS, n_docs)),
        )
        for block, lo in enumerate(starts)
    ]


def read_synthetic_part(part: Part) -> RawPart:
    """Generate the documents of one block (see the module docstring for the model)."""
    a = part.args
    block, lo, hi = part.where
    n_docs, n_categories, topic_words, vocabulary_size = (
        a["n_docs"],
        a["n_categories"],
        a["topic_words"],
        a["vocabulary_size"],
    )
    categories = [f"cat{c:02d}" for c in range(n_categories)]
    batch_of_doc, new_share = _batches(n_docs, a["n_batches"], a["shift"], a["shift_batch"], a["shift_width"], lo, hi)
    shifted = _shifted(a["shifted_categories"], categories) if a["shift"] else []
    n_topic_sets = n_categories + len(shifted)

    rng = np.random.default_rng(a["seed"])
    background = _background(vocabulary_size)
    pool = rng.permutation(np.arange(_TOPIC_RANKS_FROM, vocabulary_size))[: int(n_topic_sets * topic_words * 1.2)]
    topic_sets = [rng.choice(pool, size=topic_words, replace=False) for _ in range(n_topic_sets)]
    topic_weights = 1.0 / np.arange(1, topic_words + 1) ** 0.5
    topic_weights /= topic_weights.sum()
    if block > 0:
        rng = np.random.default_rng([a["seed"], block])

    n = hi - lo
    prevalence = a["max_prevalence"] / np.arange(1, n_categories + 1) ** a["category_skew"]
    member = rng.random((n, n_categories)) < prevalence
    lengths = np.maximum(3, rng.poisson(a["mean_length"] * rng.lognormal(-0.125, 0.5, n)))
    shares = np.where(member, a["signal"] * rng.uniform(0.25, 1.75, (n, n_categories)), 0.0)
    scale = np.maximum(1.0, shares.sum(axis=1, keepdims=True) / 0.9)
    topic_counts = rng.binomial(lengths[:, None], shares / scale)

    doc_parts, word_parts = [], []
    for c in range(n_categories):
        version = np.zeros(n, dtype=np.int64) + c
        if categories[c] in shifted:
            uses_new = rng.random(n) < new_share[batch_of_doc]
            version[uses_new] = n_categories + shifted.index(categories[c])
        for topic in np.unique(version[topic_counts[:, c] > 0]):
            docs = np.flatnonzero((version == topic) & (topic_counts[:, c] > 0))
            counts = topic_counts[docs, c]
            doc_parts.append(np.repeat(docs, counts))
            word_parts.append(topic_sets[topic][rng.choice(topic_words, size=counts.sum(), p=topic_weights)])
    # independent binomials may draw more topic tokens than the length: such a document is all topic
    background_counts = np.maximum(0, lengths - topic_counts.sum(axis=1))
    doc_parts.append(np.repeat(np.arange(n), background_counts))
    word_parts.append(rng.choice(vocabulary_size, size=background_counts.sum(), p=background))
    docs = np.concatenate(doc_parts)
    words = np.concatenate(word_parts)
    order = np.lexsort((rng.random(len(docs)), docs))
    words, bounds = words[order], np.searchsorted(docs[order], np.arange(n + 1))

    vocabulary = _vocabulary(vocabulary_size)
    texts = [" ".join(map(vocabulary.__getitem__, words[bounds[i] : bounds[i + 1]].tolist())) for i in range(n)]
    labels = [frozenset(categories[c] for c in np.flatnonzero(row)) for row in member]
    splits = np.where(rng.random(n) < a["test_fraction"], "test", "train")
    timestamps = None
    if a["n_batches"] is not None:
        first_of_batch = -(-batch_of_doc * n_docs // a["n_batches"])  # the first document of each one's batch
        seconds = (np.arange(lo, hi) - first_of_batch) * 60
        timestamps = (_start_day(a["start"]) + batch_of_doc.astype("timedelta64[D]")).astype(
            "datetime64[s]"
        ) + seconds.astype("timedelta64[s]")
    width = len(str(n_docs - 1))
    name = f"synthetic-{n_docs}x{n_categories}-seed{a['seed']}" + (f"-{a['shift']}" if a["shift"] else "")
    ids = np.array([f"doc{i:0{width}d}" for i in range(lo, hi)])
    return RawPart(Corpus(ids=ids, texts=texts, labels=labels, name=name, timestamps=timestamps, splits=splits), n)


def _settings(
    *,
    n_docs: int,
    n_categories: int,
    seed: int,
    n_batches: int | None,
    shift: str | None,
    shift_batch: int | None,
    shift_width: int | None,
    shifted_categories: int | list[str],
    vocabulary_size: int,
    mean_length: float,
    topic_words: int,
    signal: float,
    max_prevalence: float,
    category_skew: float,
    test_fraction: float,
    start: str,
) -> dict:
    """All of `make_synthetic`'s arguments (its signature states their defaults), checked
    (UserError naming the first bad one)."""
    settings = dict(locals())
    _check_int("n_docs", n_docs, 1)
    _check_int("n_categories", n_categories, 1)
    _check_int("seed", seed, 0)
    _check_int("vocabulary_size", vocabulary_size, 100)
    _check_int("topic_words", topic_words, 1)
    _check_real("mean_length", mean_length, 1.0, None)
    _check_real("signal", signal, 0.0, 1.0)
    _check_real("max_prevalence", max_prevalence, 0.0, 1.0)
    _check_real("category_skew", category_skew, 0.0, None)
    _check_real("test_fraction", test_fraction, 0.0, 1.0)
    _check_size(n_docs, n_categories, vocabulary_size, mean_length)
    _start_day(start)
    categories = [f"cat{c:02d}" for c in range(n_categories)]
    _batches(n_docs, n_batches, shift, shift_batch, shift_width, 0, 0)
    shifted = _shifted(shifted_categories, categories) if shift else []
    n_topic_sets = n_categories + len(shifted)
    if n_topic_sets * topic_words > vocabulary_size - _TOPIC_RANKS_FROM:
        raise UserError(
            f"{vocabulary_size} words are too few for {n_topic_sets} sets of {topic_words} topic words",
            key="vocabulary_size",
        )
    return settings


@functools.lru_cache(maxsize=4)
def _background(vocabulary_size: int) -> np.ndarray:
    """Background word probabilities (vocabulary_size,): Zipf-Mandelbrot over the ranks."""
    ranks = np.arange(vocabulary_size, dtype=np.float64)
    background = (ranks + 2.7) ** -1.1
    return background / background.sum()


@functools.lru_cache(maxsize=4)
def _vocabulary(vocabulary_size: int) -> list[str]:
    """The pseudo-words of ranks 0..vocabulary_size-1 (made once per process and size)."""
    return [_pseudo_word(k) for k in range(vocabulary_size)]


def _batches(
    n_docs: int, n_batches, shift, shift_batch, shift_width, lo: int, hi: int
) -> tuple[np.ndarray, np.ndarray]:
    """Batch index of documents lo..hi-1 of n_docs (hi - lo,) and the share of documents using the
    new topic words per batch (n_batches,); UserError for an impossible schedule."""
    if n_batches is None:
        if shift is not None:
            raise UserError("a concept shift needs n_batches", key="shift")
        return np.zeros(hi - lo, dtype=np.int64), np.zeros(1)
    _check_int("n_batches", n_batches, 1)
    if n_batches > n_docs:
        raise UserError(f"{n_batches} batches for {n_docs} documents", key="n_batches")
    batch_of_doc = np.arange(lo, hi) * n_batches // n_docs
    batches = np.arange(n_batches)
    if shift is None:
        return batch_of_doc, np.zeros(n_batches)
    if shift not in SHIFTS:
        raise UserError(f"{one_of(shift, SHIFTS)} (or none)", key="shift")
    if n_batches < 2:
        raise UserError("a concept shift needs at least 2 batches", key="n_batches")
    k = n_batches // 2 if shift_batch is None else shift_batch
    _check_int("shift_batch", k, 1)
    if k >= n_batches:
        raise UserError(f"must be < n_batches ({n_batches}), got {k}", key="shift_batch")
    width = (
        shift_width
        if shift_width is not None
        else (n_batches - k if shift == "gradual" else max(1, (n_batches - k) // 2))
    )
    _check_int("shift_width", width, 1)
    if shift == "abrupt":
        share = (batches >= k).astype(float)
    elif shift == "gradual":
        share = np.clip((batches - k + 1) / width, 0.0, 1.0)
    else:
        share = ((batches >= k) & (batches < k + width)).astype(float)
    return batch_of_doc, share


def _shifted(shifted_categories, categories: list[str]) -> list[str]:
    if isinstance(shifted_categories, numbers.Integral) and not isinstance(shifted_categories, bool):
        if not 1 <= shifted_categories <= len(categories):
            raise UserError(
                f"must be between 1 and {len(categories)}, got {shifted_categories}", key="shifted_categories"
            )
        return categories[:shifted_categories]
    if isinstance(shifted_categories, str) or not isinstance(shifted_categories, (list, tuple)):
        raise UserError(
            f"expected a count or a list of category names, got {shifted_categories!r}", key="shifted_categories"
        )
    unknown = [name for name in shifted_categories if name not in categories]
    if unknown or not shifted_categories:
        raise UserError(
            f"unknown categories {unknown} (known: {categories[0]}..{categories[-1]})", key="shifted_categories"
        )
    return list(dict.fromkeys(shifted_categories))


def _check_size(n_docs: int, n_categories: int, vocabulary_size: int, mean_length: float) -> None:
    """UserError for corpora too large to generate (a block at a time), naming the product that is."""
    block = min(n_docs, PART_DOCUMENTS)
    if n_docs > MAX_DOCUMENTS:
        raise UserError(f"must be at most {MAX_DOCUMENTS:,}, got {n_docs:,}", key="n_docs")
    if block * mean_length > MAX_TOKENS:
        raise UserError(
            f"blocks of {block:,} documents of mean_length {mean_length:g} are about "
            f"{block * mean_length:,.0f} words, more than {MAX_TOKENS:,}",
            key="mean_length",
        )
    if block * n_categories > MAX_CELLS:
        raise UserError(
            f"blocks of {block:,} documents x {n_categories:,} categories are more than {MAX_CELLS:,} label draws",
            key="n_categories",
        )
    if vocabulary_size > MAX_VOCABULARY:
        raise UserError(f"must be at most {MAX_VOCABULARY:,}, got {vocabulary_size:,}", key="vocabulary_size")


def _start_day(start) -> np.datetime64:
    try:
        day = np.datetime64(start, "D") if isinstance(start, str) else None
    except ValueError:
        day = None
    if day is None or np.isnat(day):
        raise UserError(f'must be a date like "2000-01-01", got {start!r}', key="start")
    return day


def _pseudo_word(k: int) -> str:
    """A distinct letters-only word for every k >= 0 (base-70 digits of k as syllables)."""
    parts = []
    k += len(_SYLLABLES)
    while k:
        k, digit = divmod(k, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "".join(reversed(parts))


def _check_int(field: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise UserError(f"must be an integer >= {minimum}, got {value!r}", key=field)


def _check_real(field: str, value, low: float, high: float | None) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (value >= low and (high is None or value <= high))
    ):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise UserError(f"must be a number {bound}, got {value!r}", key=field)


SYNTHETIC_PARTS = PartedLoader(synthetic_parts, read_synthetic_part)
