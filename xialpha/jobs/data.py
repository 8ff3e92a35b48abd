"""The corpus and its features on the cluster: read in parts by tasks, vectorised in parallel, kept
on the workers. The driver gets only what planning needs (part descriptors, split sizes, category
counts, fingerprints), never the documents, in either direction.

Loading (`load_on_cluster`): one task plans the parts (file names, sizes), one per file cuts it
into parts (record starts of text files, Parquet row groups), one per part reads it; the parts'
censuses (rows, split sizes) come back to the driver, which numbers rows and has a worker draw a
carved validation split; one task per part then finishes it (the final chunk stays on its
worker), and reductions on the workers give the summary, the fingerprints and the duplicate-id
check. Futures, not dask.bag or dask.dataframe: the loaders' own strict parsers (a bad line is
named by file and line) read the parts, and each part's result must stay a future that the
features, fits and retries of the same graph depend on.

Features (`submit_features`): per part the term counts in its own vocabulary; the document
frequencies of the training rows reduced in a tree to one vocabulary (`Preprocessing.fit_frequencies`);
per part its rows weighted in that vocabulary (`xialpha.features.blocks`). A preprocessing's blocks
are stacked once per worker that fits on it, on that worker (`graph.submit_training_data`).

Every result is a task's result, never scattered data, so a part lost with its worker is
recomputed from the files (Dask's lineage), and nothing stored depends on which worker read what.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from distributed import Client, Future, wait
from toolz import identity

from xialpha.corpora.corpus import check_carving, no_such_split
from xialpha.corpora.loading import HOMES, parted
from xialpha.corpora.parted import check_parts, plan_parts, read_part, refine_part
from xialpha.corpora.parts import (
    WHOLE,
    Census,
    Part,
    PartSummary,
    carve_positions,
    census,
    duplicate_id_position,
    fingerprints_and_duplicates,
    finish,
    finishes,
    held_bytes,
    memory_parts,
    merge_summaries,
    number_parts,
    on_planned_file,
    part_digests,
    stamped,
    summarize,
)
from xialpha.errors import UserError
from xialpha.features.blocks import count_part, feature_block, frequencies_of, stem_part
from xialpha.features.preprocessing import DocumentFrequencies, stable_id
from xialpha.jobs.memory import memory_limit, refuse_beyond
from xialpha.spec.corpus import corpus_errors

if TYPE_CHECKING:
    from xialpha.features.preprocessing import Preprocessing
    from xialpha.spec.corpus import CorpusSpec

FAN_IN = 16  # document frequencies merged per reduction task


@dataclass
class ClusterCorpus:
    """A corpus whose final chunks are futures on the workers, in corpus order, and what the driver
    knows of it: the parts read, the summary (split sizes, category counts) and the fingerprint
    of each split (WHOLE: every document)."""

    chunks: list[Future]
    parts: list[Part]
    summary: PartSummary
    fingerprints: dict[str, str]

    def fingerprint(self, split: str | None) -> str:
        """The fingerprint of split `split` (None: the whole corpus); KeyError for an unknown split."""
        return self.fingerprints[WHOLE if split is None else split]

    def check_split(self, name: str | None, key: str | None = None, *, parameter: str = "") -> None:
        """UserError naming the spec's `key` (or the Python `parameter`) when the corpus has no split
        `name` (None: no split asked for)."""
        names = self.summary.split_names
        if name is None or name in names:
            return
        raise UserError(no_such_split(name, names), key=key, parameter=parameter or ())


def load_spec_corpus(
    client: Client, corpus_spec: CorpusSpec, run_id: str, splits: dict[str, str | None]
) -> ClusterCorpus:
    """`load_on_cluster` with a loader's errors named by the spec's keys (`corpus_errors`), and a
    UserError naming the spec file and the key of each split of `splits` ({spec key: split name
    or None}) that the corpus does not have. Sweeps, drift checks and refits read their corpus so."""
    with corpus_errors(corpus_spec.source):
        corpus = load_on_cluster(client, corpus_spec, run_id)
    for key, name in splits.items():
        try:
            corpus.check_split(name, key)
        except UserError as exc:
            raise exc.within(file=corpus_spec.source or None) from None
    return corpus


def load_on_cluster(client: Client, corpus_spec: CorpusSpec, run_id: str) -> ClusterCorpus:
    """`corpus_spec` (an `xialpha.spec.corpus.CorpusSpec`) read by tasks into chunks on the workers.

    UserError for a bad corpus: the first part (in corpus order) that fails names its file and
    line; then what only all parts show (an empty file, duplicate ids, a validation split that
    cannot be carved). Nothing is stored and no fit started before this returns.
    """
    if corpus_spec.data is not None:  # given in memory by the caller: its parts are sent once
        raws = [
            client.submit(identity, raw, key=f"given-{i}-{run_id}", pure=False)
            for i, raw in enumerate(memory_parts(corpus_spec.data))
        ]
        parts = [
            Part("(in memory)", f"part {i + 1} of the corpus given in memory", {}, index=i) for i in range(len(raws))
        ]
    else:
        parts = _planned_parts(client, corpus_spec, run_id)
        raws = [
            client.submit(on_planned_file, read_part, part, key=f"read-{part.index}-{run_id}", pure=False)
            for part in parts
        ]
    censuses: list[Census] = _results(
        client.map(census, raws, key=[f"census-{i}-{run_id}" for i in range(len(raws))], pure=False)
    )
    if parts[0].loader in HOMES:
        check_parts(parts, censuses)
    train_split = corpus_spec.train_split
    validation = _carved(client, corpus_spec, censuses, run_id)
    hows = finishes(parts, censuses, train_split)
    chunks = [
        client.submit(
            finish, raw, how, None if validation is None else validation[i], key=f"part-{i}-{run_id}", pure=False
        )
        for i, (raw, how) in enumerate(zip(raws, hows))
    ]
    del raws  # released once their chunks exist: a lost chunk is recomputed through them
    summary = merge_summaries(
        _results(client.map(summarize, chunks, key=[f"summary-{i}-{run_id}" for i in range(len(chunks))], pure=False))
    )
    digests = client.map(part_digests, chunks, key=[f"digests-{i}-{run_id}" for i in range(len(chunks))], pure=False)
    wanted = [WHOLE, *summary.split_names]
    found = client.submit(
        fingerprints_and_duplicates, digests, summary.kind, wanted, key=f"fingerprint-{run_id}", pure=False
    ).result()
    fingerprints, duplicate = found
    if duplicate is not None:
        part, position = duplicate
        value = client.submit(duplicate_id_position, chunks[part], position, pure=False).result()
        raise UserError(f"corpus {summary.name!r}: document id {value!r} occurs more than once")
    return ClusterCorpus(chunks, parts, summary, fingerprints)


def _planned_parts(client: Client, corpus_spec: CorpusSpec, run_id: str) -> list[Part]:
    """The parts to read, planned and (per file) refined on workers: the driver reads no corpus file
    (it need not even see them: on a cluster the files are where the workers are). UserError naming
    the loader's argument when the planned corpus cannot fit in the workers' memory
    (`xialpha.jobs.memory`), before any part is read."""
    coarse = client.submit(_plan, corpus_spec, key=f"plan-{run_id}", pure=False).result()
    if (held := held_bytes(coarse)) is not None:  # before a byte is read or generated
        advice = "use fewer documents" if held.key == "n_docs" else "use a smaller corpus"
        what = f"the corpus ({held.how})"
        refuse_beyond(held.bytes, memory_limit(client), what, held.key, f"{advice}, or a cluster with more memory")
    if parted(corpus_spec.loader).refine is not None:
        refined = _results(
            [
                client.submit(on_planned_file, refine_part, part, key=f"refine-{i}-{run_id}", pure=False)
                for i, part in enumerate(coarse)
            ]
        )
        coarse = [piece for pieces in refined for piece in pieces]
    return number_parts(coarse)


def _plan(corpus_spec: CorpusSpec) -> list[Part]:
    """A worker's check that the spec's local corpus paths exist (naming how to fetch Reuters), and
    the loader's parts, each stamped with its file as it is now (`stamped`): they are read as planned."""
    corpus_spec.check_paths()
    return [stamped(part) for part in plan_parts(corpus_spec.loader, corpus_spec.args)]


def _carved(client: Client, corpus_spec: CorpusSpec, censuses: list[Census], run_id: str) -> list[Future] | None:
    """Futures of each part's positions that the validation carving moves (drawn on a worker), or None."""
    if corpus_spec.validation_fraction is None:
        return None
    split = corpus_spec.train_split
    assert split is not None  # parse_corpus requires train_split with validation_fraction
    names = sorted({name for c in censuses for name in c.split_sizes if name != WHOLE})
    train_sizes = [c.split_sizes.get(split, 0) for c in censuses]
    check_carving(names, sum(train_sizes), split, corpus_spec.validation_fraction, corpus_spec.source or "<spec>")
    drawn = client.submit(
        carve_positions,
        train_sizes,
        corpus_spec.validation_fraction,
        corpus_spec.validation_seed,
        key=f"carve-{run_id}",
        pure=False,
    )
    return [
        client.submit(operator.getitem, drawn, i, key=f"carved-{i}-{run_id}", pure=False) for i in range(len(censuses))
    ]


def _results(futures: list[Future]) -> list:
    """The futures' results in order; the first failed one (in this order) raises its error."""
    wait(futures)
    return [future.result() for future in futures]


@dataclass
class ClusterFeatures:
    """One preprocessing's features on the workers: a `FeatureBlock` future per part (corpus order)
    and the fitted preprocessing's future (None for feature vectors)."""

    blocks: list[Future]
    fitted: Future | None


def submit_features(
    client: Client,
    corpus: ClusterCorpus,
    preprocessing: Preprocessing,
    train_split: str | None,
    test_split: str | None,
    categories: list[str],
    run_id: str,
    within: Sequence[Future | None] | None = None,
    counted: dict | None = None,
) -> ClusterFeatures:
    """Vectorise the corpus's parts with `preprocessing` (fitted on the training rows of all parts).
    within: per part, a future of a bool mask over its training rows keeping only some of them.
    counted: {(analyzer id, the splits' id): the parts' term-count futures (of their training and
    test_split rows only)}, shared by the calls of one graph, so preprocessings that split texts
    alike count them once, and those that differ only in stemming tokenise them once (the stemmed
    counts are the unstemmed ones' terms stemmed: `stem_part`)."""
    name = f"{preprocessing.id}-{run_id}"
    chunks = corpus.chunks
    within = within or [None] * len(chunks)
    if corpus.summary.kind != "texts":
        blocks = [
            client.submit(
                feature_block,
                chunk,
                train_split,
                test_split,
                categories,
                None,
                None,
                mask,
                key=f"block-{i}-{name}",
                pure=False,
            )
            for i, (chunk, mask) in enumerate(zip(chunks, within))
        ]
        return ClusterFeatures(blocks, None)
    counted = {} if counted is None else counted
    base = preprocessing.unstemmed()  # tokenised once for every stemming
    rows = stable_id({"train_split": train_split, "test_split": test_split})  # the rows counted
    if (base.analyzer_id, rows) not in counted:
        counted[base.analyzer_id, rows] = [
            client.submit(
                count_part,
                chunk,
                base,
                train_split,
                mask,
                test_split,
                key=f"count-{i}-{base.analyzer_id}-{rows}-{run_id}",
            )
            for i, (chunk, mask) in enumerate(zip(chunks, within))
        ]
    analyzer = preprocessing.analyzer_id
    if (analyzer, rows) not in counted:
        counted[analyzer, rows] = [
            client.submit(stem_part, count, preprocessing.stemming, key=f"count-{i}-{analyzer}-{rows}-{run_id}")
            for i, count in enumerate(counted[base.analyzer_id, rows])
        ]
    counts = counted[analyzer, rows]
    frequencies = [
        client.submit(frequencies_of, count, key=f"frequencies-{i}-{name}", pure=False)
        for i, count in enumerate(counts)
    ]
    level = 0
    while len(frequencies) > 1:  # a tree of merges on the workers
        frequencies = [
            client.submit(
                DocumentFrequencies.merge, frequencies[i : i + FAN_IN], key=f"merge-{level}-{i}-{name}", pure=False
            )
            for i in range(0, len(frequencies), FAN_IN)
        ]
        level += 1
    fitted = client.submit(preprocessing.fit_frequencies, frequencies[0], key=f"vocabulary-{name}", pure=False)
    blocks = [
        client.submit(
            feature_block,
            chunk,
            train_split,
            test_split,
            categories,
            count,
            fitted,
            mask,
            key=f"block-{i}-{name}",
            pure=False,
        )
        for i, (chunk, count, mask) in enumerate(zip(chunks, counts, within))
    ]
    return ClusterFeatures(blocks, fitted)
