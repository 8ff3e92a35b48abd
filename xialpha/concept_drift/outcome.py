"""A drift check's outcome: its rows for the store's "drift" dataset and the `DriftReport` of a run.

A check's rows (`xialpha.storage.rows.DriftRow`: the columns of `xialpha.storage.arrow_schema.DRIFT_COLUMNS`)
go to the store in one write, so a stored check is always complete; the report holds them typed,
those made now and those the store gives back (`xialpha.storage.rows.drift_row`) alike.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from xialpha.concept_drift.windows import GroupCheck
from xialpha.spec.drift import DriftSpec, StreamLayout
from xialpha.storage.rows import DriftRow, config_key
from xialpha.storage.schema import DriftColumn, DriftVerdict, estimate_values

D = DriftColumn

EXIT_NO_DRIFT, EXIT_FAILED, EXIT_DRIFT = 0, 1, 3


@dataclass
class DriftReport:
    """One `xialpha drift` run: the check's identity and its stored rows (one per config x category x window).

    skipped: the newest batch was already checked with this spec and data, `rows` are the stored ones.
    """

    drift_id: str
    check_key: str
    newest_batch: str
    n_batches: int
    n_documents: int
    n_dropped: int
    rows: list[DriftRow] = field(default_factory=list)
    skipped: bool = False
    run_id: str | None = None
    wall_seconds: float = 0.0

    def verdicts(self) -> dict[tuple, DriftRow]:
        """{`group_key` of a config x category: the row of its chosen window, or any row if failed}."""
        out: dict[tuple, DriftRow] = {}
        for row in self.rows:
            key = group_key(row)
            if key not in out or row.chosen:
                out[key] = row
        return out

    @property
    def n_drift(self) -> int:
        return sum(row.verdict is DriftVerdict.DRIFT for row in self.verdicts().values())

    @property
    def n_failed(self) -> int:
        return sum(row.verdict is DriftVerdict.FAILED for row in self.verdicts().values())

    def next_step(self, newest_selection: str | None) -> str | None:
        """With drift, what to do next, ending in the `xialpha compare` command that shows what a
        new selection changed against `newest_selection` (the id of the newest saved per-category
        selection of the checked categories, named in the command as that; None: there is none, and
        the sentence says what to give instead); None without drift."""
        if not self.n_drift:
            return None
        if newest_selection is None:
            command = (
                "`xialpha compare OLD NEW` (OLD: a saved selection of the data before, `xialpha store ls` lists them"
            )
        else:
            command = (
                f"`xialpha compare {newest_selection} NEW` ({newest_selection}: the newest saved per-category "
                "selection of these categories"
            )
        return (
            "next: sweep the recent batches again and `xialpha select --save`; then "
            f"{command}; NEW: the id select --save prints) shows per category what changed and whether it matters"
        )

    @property
    def exit_code(self) -> int:
        """1 if any check failed, else 3 if any drift, else 0."""
        return EXIT_FAILED if self.n_failed else EXIT_DRIFT if self.n_drift else EXIT_NO_DRIFT


def group_key(row: DriftRow) -> tuple[str, str, str, float, float]:
    """(category, preprocessing_id, kernel_id, C, j): the config x category whose windows `row` is one of."""
    return (row.category, row.preprocessing_id, row.kernel_id, row.C, row.j)


def check_rows(
    spec: DriftSpec,
    layout: StreamLayout,
    checks: list[GroupCheck],
    positives: dict[str, int],
    *,
    check_key: str,
    run_id: str,
    fingerprint: str,
    checked_at: datetime.datetime,
) -> list[DriftRow]:
    """Rows of the drift dataset: one per config x category x window, the verdict repeated on each.
    positives: {category: positive documents of the newest batch}."""
    rows = []
    n_newest = int(layout.starts[-1] - layout.starts[-2])
    for check in checks:
        decision = check.decision
        for result in check.windows:
            job = result.job
            pre, kernel = spec.preprocessings[job.preprocessing], spec.kernels[job.kernel]
            window = {D.CATEGORY: job.category, D.C: job.C, D.J: job.j, D.WINDOW: job.window}  # its key's fields
            rows.append(
                DriftRow(
                    check_id=config_key(check_key=check_key, preprocessing=pre.id, kernel=kernel.id, **window),
                    **window,
                    check_key=check_key,
                    sweep_id=spec.id,
                    run_id=run_id,
                    checked_at=checked_at,
                    data_fingerprint=fingerprint,
                    newest_batch=layout.batch_ids[job.newest],
                    n_batches=job.newest + 1,
                    preprocessing_id=pre.id,
                    kernel=kernel.name,
                    kernel_id=kernel.id,
                    rho=spec.rho,
                    window_first_batch=layout.batch_ids[job.newest + 1 - job.window],
                    full_memory=job.window == job.newest + 1,
                    status=result.status,
                    error_message=result.message,
                    n=result.n,
                    n_pos=result.n_pos,
                    n_sv=result.n_sv,
                    r_delta2=result.r_delta2,
                    n_newest=n_newest,
                    n_newest_pos=positives[job.category],
                    estimate=estimate_values(result.estimate, "xa"),
                    chosen=decision is not None and result is decision.chosen,
                    verdict=(
                        DriftVerdict.FAILED
                        if decision is None
                        else DriftVerdict.DRIFT
                        if decision.drift
                        else DriftVerdict.NO_DRIFT
                    ),
                    check_error=check.error,
                    chosen_window=None if decision is None else decision.chosen.job.window,
                    chosen_error=None if decision is None else decision.chosen.estimate.error,
                    full_error=None if decision is None else decision.full.estimate.error,
                    full_worse=None if decision is None else decision.full_worse,
                    chosen_worse=None if decision is None else decision.chosen_worse,
                    p_value=None if decision is None else decision.p_value,
                    margin_points=spec.margin_points,
                    alpha=spec.alpha,
                )
            )
    return rows
