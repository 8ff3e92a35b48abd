"""A drift check's outcome: its rows for the store's "drift" dataset and the `DriftReport` of a run.

A check's rows (columns: `xialpha.storage.schema.DRIFT_COLUMNS`) go to the store in one write, so a
stored check is always complete.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from xialpha.concept_drift.windows import GroupCheck
from xialpha.spec.drift import DriftSpec, StreamLayout
from xialpha.storage.keys import config_key
from xialpha.storage.schema import ResultColumn, estimate_values

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
    rows: list[dict] = field(default_factory=list)
    skipped: bool = False
    run_id: str | None = None
    wall_seconds: float = 0.0

    def verdicts(self) -> dict[tuple, dict]:
        """{(category, preprocessing_id, kernel_id, C, j): the row of the chosen window, or any row if failed}."""
        out: dict[tuple, dict] = {}
        for row in self.rows:
            key = (
                row[ResultColumn.CATEGORY],
                row[ResultColumn.PREPROCESSING_ID],
                row[ResultColumn.KERNEL_ID],
                row[ResultColumn.C],
                row[ResultColumn.J],
            )
            if key not in out or row["chosen"]:
                out[key] = row
        return out

    @property
    def n_drift(self) -> int:
        return sum(row["verdict"] == "drift" for row in self.verdicts().values())

    @property
    def n_failed(self) -> int:
        return sum(row["verdict"] == "failed" for row in self.verdicts().values())

    @property
    def exit_code(self) -> int:
        """1 if any check failed, else 3 if any drift, else 0."""
        return EXIT_FAILED if self.n_failed else EXIT_DRIFT if self.n_drift else EXIT_NO_DRIFT


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
) -> list[dict]:
    """Rows of the drift dataset: one per config x category x window, the verdict repeated on each.
    positives: {category: positive documents of the newest batch}."""
    rows = []
    n_newest = int(layout.starts[-1] - layout.starts[-2])
    for check in checks:
        decision = check.decision
        summary = {
            "verdict": "failed" if decision is None else "drift" if decision.drift else "no drift",
            "check_error": check.error,
            "chosen_window": None if decision is None else decision.chosen.job.window,
            "chosen_error": None if decision is None else decision.chosen.estimate.error,
            "full_error": None if decision is None else decision.full.estimate.error,
            "full_worse": None if decision is None else decision.full_worse,
            "chosen_worse": None if decision is None else decision.chosen_worse,
            "p_value": None if decision is None else decision.p_value,
        }
        for result in check.windows:
            job = result.job
            pre, kernel = spec.preprocessings[job.preprocessing], spec.kernels[job.kernel]
            rows.append(
                {
                    "check_id": config_key(
                        check_key=check_key,
                        preprocessing=pre.id,
                        kernel=kernel.id,
                        category=job.category,
                        C=job.C,
                        j=job.j,
                        window=job.window,
                    ),
                    "check_key": check_key,
                    ResultColumn.SWEEP_ID: spec.id,
                    ResultColumn.RUN_ID: run_id,
                    "checked_at": checked_at,
                    ResultColumn.DATA_FINGERPRINT: fingerprint,
                    "newest_batch": layout.batch_ids[job.newest],
                    "n_batches": job.newest + 1,
                    ResultColumn.CATEGORY: job.category,
                    ResultColumn.PREPROCESSING_ID: pre.id,
                    ResultColumn.KERNEL: kernel.name,
                    ResultColumn.KERNEL_ID: kernel.id,
                    ResultColumn.C: job.C,
                    ResultColumn.J: job.j,
                    ResultColumn.RHO: spec.rho,
                    "window": job.window,
                    "window_first_batch": layout.batch_ids[job.newest + 1 - job.window],
                    "full_memory": job.window == job.newest + 1,
                    ResultColumn.STATUS: result.status,
                    ResultColumn.ERROR_MESSAGE: result.message,
                    ResultColumn.N: result.n,
                    ResultColumn.N_POS: result.n_pos,
                    ResultColumn.N_SV: result.n_sv,
                    ResultColumn.R_DELTA2: result.r_delta2,
                    "n_newest": n_newest,
                    "n_newest_pos": positives[job.category],
                    **estimate_values(result.estimate, "xa"),
                    "chosen": decision is not None and result is decision.chosen,
                    **summary,
                    "margin_points": spec.margin_points,
                    "alpha": spec.alpha,
                }
            )
    return rows
