"""The names of the columns of the frames a report builds and shows, never stored: each member
equals its column's name, so `frame[ReportColumn.LABEL]` reads the label column. The stored
columns are `xialpha.storage.schema`'s; where a choice lies on its C grid, `EdgeColumn`'s
(`xialpha.selection.edges`).
"""

from __future__ import annotations

from enum import StrEnum


class ReportColumn(StrEnum):
    """The columns of the curves, best C, choices and calibration frames (`xialpha.reports.contents`,
    `xialpha.reports.calibration`), the leave-one-out candidates per category (`loo_candidates`)
    and the tidy frames' labels (`xialpha.reports.frames`)."""

    LABEL = "label"  # a configuration group's label (`xialpha.reports.labels`)
    ESTIMATOR = "estimator"  # the estimator (column prefix) of a calibration point or choice
    ESTIMATE = "estimate"  # the objective's estimate, a fraction 0..1 (or a cost)
    HELD_OUT = "held_out"  # the value on the held-out split; NaN where the sweep scored none
    BEST_C = "best_C"  # the C a selection would choose within its group
    BEST_HELD_OUT = "best_held_out"  # the best held-out value over the group's (category's) configurations
    CONFIGS = "configs"  # the configurations of a category at rho = 2
    CANDIDATES_MEAN = "candidates_mean"  # xi-alpha's leave-one-out candidates: mean over configurations
    CANDIDATES_MAX = "candidates_max"  # and their largest number
    LOO_RETRAINS_MEAN = "loo_retrains_mean"  # the retrainings exact LOO made, mean over configurations
    CONFIG = "config"  # a tidy row's configuration label
    RUNNER_UP_CONFIG = "runner_up_config"  # its first runner-up's label; None without one
    TIE = "tie"  # the first runner-up has the same estimate or was ranked equal (`frames.ties`)
    CHANGED = "changed"  # a comparison row: what changed between the two choices, as text ("C, kernel")
    CONFIG_A = "config_a"  # the label of selection A's choice
    CONFIG_B = "config_b"  # the label of selection B's choice
