"""Storing a selection made from a stored sweep, after training its configurations on all
training data into a deployable artefact when asked: what `xialpha select --save / --refit DIR`
and `xialpha.select(save=True / refit=DIR)` both do.

The selection is stored last, so a refit that fails (a target that is not an empty directory, a
training error) leaves the store as it was; an artefact saved before the store refused the rows
is removed.

A selection is stored under one id however many saves of it run at once: the first save claims
its id in the store by what the selection is (`xialpha.selection.records.selection_digest`,
`Claims.claim_selection`); a save that finds the claim taken (another save beside it, or one that
ended before it stored its rows) stores the same rows under the claimed id, and reads keep one row
per id and category. A save that fails withdraws the claim it made.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from xialpha.reports.labels import ConfigLabels
from xialpha.selection.records import selection_digest
from xialpha.selection.selected import Selection
from xialpha.selection.workflow import SweepSelection
from xialpha.storage.schema import ResultColumn, SelectionColumn

SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")  # a claimed id is used only when it is safe as a name


@dataclass(frozen=True)
class Stored:
    """What `store_selection` did: the id the selection is stored under, the artefact's path and
    its number of models (None, 0 without a refit), and whether the rows were stored now (False:
    the same selection was stored already)."""

    selection_id: str
    artifact: Path | None
    n_models: int
    stored: bool


def store_selection(
    store, chosen: SweepSelection, labels: ConfigLabels, *, refit=None, spec: str | None = None, client=None
) -> Stored:
    """Train `chosen`'s configurations into an artefact at `refit` (a directory path, checked
    before the training starts) when given, on the sweep's cluster (its stored spec, or the spec
    file `spec`; `client`: a running distributed.Client), then store its rows unless the same
    selection is stored already (under the id claimed for it: see the module docstring)."""
    if not chosen.to_store:
        artifact, n_models = _refit(store, chosen, chosen.selection, labels, refit, spec, client)
        return Stored(chosen.selection.selection_id, artifact, n_models, False)
    selection, claim = _claimed(store, chosen.selection)
    artifact = None
    try:
        artifact, n_models = _refit(store, chosen, selection, labels, refit, spec, client)
        store.add_selection(selection.typed_rows())
    except BaseException:
        if artifact is not None:
            shutil.rmtree(artifact, ignore_errors=True)
        if claim is not None:
            store.claims.withdraw(claim)
        raise
    return Stored(selection.selection_id, artifact, n_models, True)


def _claimed(store, selection: Selection) -> tuple[Selection, str | None]:
    """`selection` under its own id and the claim made for it, or under the id a claim of the
    same selection holds already (and None)."""
    digest = selection_digest(selection)
    claim = store.claims.claim_selection(digest, {SelectionColumn.SELECTION_ID: selection.selection_id})
    if claim is not None:
        return selection, claim
    claimed = (store.claims.selection_claim(digest) or {}).get(SelectionColumn.SELECTION_ID)
    if isinstance(claimed, str) and SAFE_ID.fullmatch(claimed):
        return selection.with_id(claimed), None
    return selection, None  # a damaged claim: the selection's own id


def _refit(
    store, chosen: SweepSelection, selection: Selection, labels: ConfigLabels, refit, spec, client
) -> tuple[Path | None, int]:
    """Train the chosen configs on all training data and save the artefact to `refit`: (its path,
    models), (None, 0) when `refit` is None. The manifest names `selection` and each category's
    config by its label, and explains the labels."""
    if refit is None:
        return None, 0
    from xialpha.jobs.refit import refit_selection  # Dask, for a refit only
    from xialpha.models.artifact import check_target, save_artifact  # scipy.sparse, for a refit only

    directory = store.local_directory()
    read = [] if directory is None else [("STORE", directory)]  # the selection's store is never written into
    check_target(refit, read)
    rows = chosen.frame
    named = dict(zip(chosen.selection.categories, labels.column(chosen.selection.rows)))
    trained = refit_selection(store, chosen.selection, spec, "refit", client=client, labels=named)
    first = rows.iloc[0]
    provenance = {
        SelectionColumn.SWEEP_ID: selection.sweep_id,
        SelectionColumn.SELECTION_ID: selection.selection_id,
        "store": store.uri,
        ResultColumn.DATA_FINGERPRINT: str(first[ResultColumn.DATA_FINGERPRINT]),
        SelectionColumn.MODE: str(selection.mode),
        "labels": labels.key(rows).to_dict("records"),
    }
    return save_artifact(refit, trained, provenance, read), len(trained.models)
