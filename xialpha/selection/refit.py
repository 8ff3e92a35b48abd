"""Training the selected configurations on all training data: one SVM per category.

Each chosen row names a preprocessing, a kernel, C and j. As in the sweep, the corpus is read and
vectorised on the sweep's cluster (`xialpha.jobs.refit`): the preprocessing is fitted once on
the training texts and serves every category that uses it, so the refitted SVM is the one the
sweep estimated. The models are `xialpha.selection.models.KernelModel`s.
"""

from __future__ import annotations

import pandas as pd

from xialpha.errors import UserError
from xialpha.selection.context import sweep_spec
from xialpha.selection.models import TrainedSelection


def refit_selection(store, chosen: pd.DataFrame, spec_path: str | None = None, parameter: str = "selection=",
                    corpus=None, client=None) -> TrainedSelection:
    """Train the selection rows `chosen` (one sweep of `store`) on the sweep's cluster (its stored
    spec, or the spec file at `spec_path`; `corpus`: the in-memory corpus the sweep was given;
    `client`: a running distributed.Client to use instead); UserError naming `parameter` when
    the rows come from several training sets."""
    from xialpha.jobs.refit import refit_session

    fingerprints = chosen["data_fingerprint"].unique()
    if len(fingerprints) != 1:
        raise UserError(f"{parameter}: the chosen configs come from {len(fingerprints)} different training sets")
    spec = sweep_spec(store, str(chosen["sweep_id"].iloc[0]), str(fingerprints[0]), spec_path, corpus)
    with refit_session(spec, str(fingerprints[0]), client=client) as session:
        return session.train(chosen)[0]
