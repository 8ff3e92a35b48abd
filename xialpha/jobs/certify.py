"""Certifying a stored selection on the sweep's cluster: `certify_selection` trains the chosen
configurations on the sweep's training split (`xialpha.jobs.refit.refit_session`), counts their
errors on the sealed test split once, and stores the certification's rows. What a certification
is, how a test set is claimed and its bounds computed, is `xialpha.selection.certification`'s;
this module only runs it, so that selection imports no `xialpha.jobs` module.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pandas as pd

from xialpha.parameters import Interval
from xialpha.selection.bounds import CONFIDENCE, DRAWS, DRAWS_SEED, Confusion
from xialpha.selection.certification import (
    DATASET,
    certification_frame,
    certification_rows,
    check_split,
    start_run,
    store_certification,
)
from xialpha.selection.claims import heartbeat
from xialpha.selection.selected import Selection
from xialpha.spec.stored import sweep_spec
from xialpha.storage.rows import Certification, certification_columns
from xialpha.storage.validate import typed_frame

if TYPE_CHECKING:
    from distributed import Client

    from xialpha.corpora.corpus import Corpus
    from xialpha.storage.contract import StoreQueries

MAX_DRAWS = 1_000_000  # each category's posterior keeps a few float64 arrays of this length
# The constraints of a certification's parameters (`xialpha.parameters`), which `xialpha.certify` declares too.
CONFIDENCE_LEVEL = Interval(0.5, 1, closed="left")  # a one-sided confidence level
DRAW_COUNT = Interval(1000, MAX_DRAWS, integer=True)  # Monte-Carlo draws for the F1 bounds
SEED = Interval(0, None, integer=True)  # the Monte-Carlo draws' random seed


def certify_selection(
    store: StoreQueries,
    selection: Selection,
    test_split: str,
    *,
    force: bool = False,
    confidence: float = CONFIDENCE,
    draws: int = DRAWS,
    seed: int = DRAWS_SEED,
    spec_path: str | None = None,
    corpus: Corpus | None = None,
    client: Client | None = None,
) -> pd.DataFrame:
    """Train the choices of `selection` (a stored one) on the sweep's training split, evaluate
    them once on `test_split`, store the certification's rows and return them as the store gives
    them back (a DataFrame). The training and the counting run on the sweep's cluster (`client`: a
    running distributed.Client to use instead), where the corpus is read.

    Warns (UserWarning) where the bounds are weakened: a forced second use of a test set, or a
    test split the sweep computed held-out estimates on (its rows then say `independent` False).
    UserError, nothing stored, for a split
    that is not sealed (the training split; the holdout estimator's split unless forced).
    """
    CONFIDENCE_LEVEL("confidence", confidence)
    DRAW_COUNT("draws", draws)
    SEED("seed", seed)
    sweep_id, selection_id = selection.sweep_id, selection.selection_id
    data_fingerprint = selection.data_fingerprints[0]
    spec = sweep_spec(store, sweep_id, data_fingerprint, spec_path, corpus)
    independent = check_split(spec, test_split, selection.objective.estimator, force)
    from xialpha.jobs.refit import refit_session  # Dask and the estimators: once the arguments are checked

    with refit_session(spec, data_fingerprint, client=client) as session:
        session.split_size(test_split)
        test_fingerprint = session.corpus.fingerprint(test_split)
        run = start_run(
            store,
            selection.rows,
            test_split,
            test_fingerprint,
            force=force,
            confidence=confidence,
            draws=draws,
            seed=seed,
        )
        try:
            with heartbeat(store, test_fingerprint) if run.claim else contextlib.nullcontext():
                _, held = session.train(selection, test_split)
        except BaseException:
            if run.claim is not None:
                store.claims.withdraw(run.claim)  # nothing of the test set was shown
            raise
    if held is None:  # train() counts on the held-out split it is given
        raise ValueError(f"no held-out counts on {test_split!r}")
    confusions = {category: Confusion(*counts) for category, counts in held.counts.items()}
    frame = certification_frame(
        confusions,
        selection.config_keys(),
        confidence=run.confidence,
        draws=run.draws,
        seed=run.seed,
    )
    certification = Certification(
        certification_id=run.certification_id,
        sweep_id=sweep_id,
        selection_id=selection_id,
        test_split=test_split,
        test_fingerprint=test_fingerprint,
        n_test=held.n_documents,
        confidence=run.confidence,
        draws=run.draws,
        forced=bool(run.previous),
        previous_certifications=len(run.previous),
        independent=independent,
    )
    certified = certification_rows(frame, certification)
    store_certification(store, certified, run)
    return typed_frame(DATASET, [certification_columns(row) for row in certified])
