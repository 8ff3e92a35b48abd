"""One sweep id, one experiment: a sweep resumed under its id must be the sweep it was.

A sweep's experiment is its grid of stored keys: every preprocessing x kernel x category x C x j
x rho of its spec, on its training data (the data fingerprint is part of every key). Running a
spec under an id whose newest recorded run had other data or another grid would mix two
experiments in one sweep, which select would then rank together; it is refused unless the run
is forced to be a new run of the id (`force_new_run`), which the run's record then shows. One change
is the same experiment: a grid that only grew in C (every C of the recorded run and more, all else
alike) resumes, fitting the new C; its run's record then holds the grown grid. The grids it grew
from stay the same experiment: a spec holding every C of a run that the newest run grew from (the
original spec, or it with other C added) reruns too. A grid that drops a C of all of them (a C
swapped, or removed) is another grid.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from xialpha.errors import UserError
from xialpha.planning.plan import experiment_keys
from xialpha.spec.sweep import SweepSpec, parse_spec

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus
    from xialpha.storage.contract import StoreQueries
    from xialpha.storage.rows import RunRow

NEW_RUN = "use a new sweep id, or force_new_run=True to run it under this id and record the change"


def joined_categories(categories: list[str]) -> str:
    """The run record's `categories`: the names joined by commas, or (a name holding a comma) a JSON list."""
    return json.dumps(list(categories)) if any("," in name for name in categories) else ",".join(categories)


def recorded_categories(text: str) -> list[str]:
    """The category names of a run record's `categories` (`joined_categories`' inverse)."""
    if text.startswith("["):
        try:
            names = json.loads(text)
        except ValueError:
            names = None
        if isinstance(names, list) and all(isinstance(name, str) for name in names):
            return names
    return [name for name in text.split(",") if name]


def check_same_experiment(spec: SweepSpec, store: StoreQueries, categories: list[str], fingerprint: str) -> None:
    """UserError when the newest recorded run in `store` of the sweep with spec's id was on other training data
    (corpus=) or had another grid of configurations (sweep.id=) than `spec` on `categories` and `fingerprint`."""
    newest = store.newest_run(spec.id)
    if newest is None:
        return
    if newest.data_fingerprint != fingerprint:
        raise UserError(
            f"the training documents of sweep {spec.id!r} changed since its run "
            f"{newest.run_id} (data fingerprint {str(newest.data_fingerprint)[:12]} then, "
            f"{fingerprint[:12]} now), and its stored rows are of the old ones; {NEW_RUN}",
            key="corpus",
            mentions="force_new_run=True",
        )
    then_categories = recorded_categories(str(newest.categories))
    if then_categories != list(categories):
        raise UserError(
            f"sweep {spec.id!r} was run on categories {', '.join(then_categories)}, "
            f"this spec chooses {', '.join(categories)}; {NEW_RUN}",
            key="corpus.categories",
            mentions="force_new_run=True",
        )
    recorded = _recorded_spec(newest, spec.corpus.data)
    now = experiment_keys(spec, categories, fingerprint)
    # a recorded spec that no longer parses: the stored rows must be of this spec's grid
    then = experiment_keys(recorded, categories, fingerprint) if recorded else store.stored_keys(spec.id) | now
    extended = recorded is not None and _C_extension(spec, recorded, store, categories, fingerprint, then)
    if then != now and not extended:
        raise UserError(
            f"sweep {spec.id!r} was run with another grid ({len(then - now)} of its rows are "
            f"not in this spec's, {len(now - then)} of this spec's are new); {NEW_RUN}",
            key="sweep.id",
            mentions="force_new_run=True",
        )


def _C_extension(
    spec: SweepSpec, recorded: SweepSpec, store: StoreQueries, categories: list[str], fingerprint: str, then: set[str]
) -> bool:
    """True when `spec` is the sweep's experiment with C values added: its C holds every C of the
    newest run's spec `recorded` (whose keys are `then`) and more, or every C of an earlier run of
    the id that the newest run grew from in C (`_grown_from`), and with `recorded`'s C it plans
    exactly `then`: all else alike."""
    if experiment_keys(replace(spec, C=recorded.C), categories, fingerprint) != then:
        return False
    if set(recorded.C) < set(spec.C):
        return True
    return not spec.C_auto and any(
        set(earlier.C) <= set(spec.C) for earlier in _grown_from(store, spec, recorded, then)
    )


def _grown_from(store: StoreQueries, spec: SweepSpec, recorded: SweepSpec, then: set[str]) -> list[SweepSpec]:
    """The specs of the recorded runs of spec's id that the newest run's spec `recorded` (whose keys
    are `then`) grew from in C: each of fixed C, every one of them in `recorded`'s C, and with
    `recorded`'s C planning exactly `then` on the run's own categories and data."""
    grown = []
    for run in store.recorded_runs(spec.id):
        earlier = _recorded_spec(run, spec.corpus.data)
        if earlier is None or earlier.C_auto or not set(earlier.C) <= set(recorded.C):
            continue
        run_categories = recorded_categories(str(run.categories))
        if experiment_keys(replace(earlier, C=recorded.C), run_categories, str(run.data_fingerprint)) == then:
            grown.append(earlier)
    return grown


def missing_rows(store: StoreQueries, sweep_id: str, *, listing: bool = False) -> tuple[int, int] | None:
    """(rows not stored, rows planned) by the newest recorded run of `sweep_id`: a sweep still
    running or interrupted misses some; None when no run is recorded or its spec no longer parses.
    The stored keys are read from the rows, but for a `listing`, where the sweep's summary
    answers while its files are unchanged: a summary re-stamped over rewritten rows would pass
    (see `xialpha.storage.summary`), so no decision rests on it."""
    newest = store.newest_run(sweep_id)
    recorded = None if newest is None else _recorded_spec(newest)
    if newest is None or recorded is None:
        return None
    categories = recorded_categories(str(newest.categories))
    planned = experiment_keys(recorded, categories, str(newest.data_fingerprint))
    stored = store.sweep_summary(sweep_id) if listing else None
    if stored is not None and stored.holds_exactly(planned):
        return 0, len(planned)
    return len(planned - store.stored_keys(sweep_id)), len(planned)


def _recorded_spec(run: RunRow, corpus: Corpus | None = None) -> SweepSpec | None:
    """The spec recorded with `run` (over the in-memory `corpus` it was given), or None when its
    text no longer parses (a corpus file moved since, ...)."""
    spec_dir = run.spec_dir
    try:
        return parse_spec(
            str(run.spec_toml),
            source="the recorded spec",
            corpus=corpus,
            base_dir=spec_dir if isinstance(spec_dir, str) and spec_dir else None,
        )
    except UserError:
        return None
