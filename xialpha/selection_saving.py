"""Storing a selection made from a stored sweep, after training its configurations on all
training data into a deployable artefact when asked: what `xialpha select --save / --refit DIR`
and `xialpha.select(save=True / refit=DIR)` both do.

The selection is stored last, so a refit that fails (a target that is not an empty directory, a
training error) leaves the store as it was; an artefact saved before the store refused the rows
is removed.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from xialpha.reports.labels import ConfigLabels
from xialpha.selection.workflow import SweepSelection
from xialpha.storage.schema import ResultColumn, SelectionColumn


@dataclass(frozen=True)
class Stored:
    """What `store_selection` did: the artefact's path and its number of models (None, 0 without a
    refit), and whether the rows were stored now (False: the same selection was stored already)."""

    artifact: Path | None
    n_models: int
    stored: bool


def store_selection(
    store, chosen: SweepSelection, labels: ConfigLabels, *, refit=None, spec: str | None = None, client=None
) -> Stored:
    """Train `chosen`'s configurations into an artefact at `refit` (a directory path, checked
    before the training starts) when given, on the sweep's cluster (its stored spec, or the spec
    file `spec`; `client`: a running distributed.Client), then store its rows unless the same
    selection is stored already."""
    artifact, n_models = (None, 0) if refit is None else _refit(store, chosen, labels, refit, spec, client)
    if not chosen.to_store:
        return Stored(artifact, n_models, False)
    try:
        store.add_selection(chosen.selection.typed_rows())
    except BaseException:
        if artifact is not None:
            shutil.rmtree(artifact, ignore_errors=True)
        raise
    return Stored(artifact, n_models, True)


def _refit(store, chosen: SweepSelection, labels: ConfigLabels, refit, spec, client) -> tuple[Path, int]:
    """Train the chosen configs on all training data and save the artefact to `refit`: (its path,
    models). The manifest names each category's config by its label and explains the labels."""
    from xialpha.jobs.refit import refit_selection  # Dask, for a refit only
    from xialpha.models.artifact import check_target, save_artifact  # scipy.sparse, for a refit only

    check_target(refit)
    rows = chosen.frame
    named = dict(zip(chosen.selection.categories, labels.column(chosen.selection.rows)))
    trained = refit_selection(store, chosen.selection, spec, "refit", client=client, labels=named)
    first = rows.iloc[0]
    provenance = {
        SelectionColumn.SWEEP_ID: chosen.selection.sweep_id,
        SelectionColumn.SELECTION_ID: chosen.selection.selection_id,
        "store": store.uri,
        ResultColumn.DATA_FINGERPRINT: str(first[ResultColumn.DATA_FINGERPRINT]),
        SelectionColumn.MODE: str(chosen.selection.mode),
        "labels": labels.key(rows).to_dict("records"),
    }
    return save_artifact(refit, trained, provenance), len(trained.models)
