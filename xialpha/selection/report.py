"""What a sweep report shows, as DataFrames: estimate-vs-C curves, the best C per group with
the held-out value beside it, and how many examples xi-alpha flags as LOO candidates.

A "group" is one (category, preprocessing, kernel, j): its rows differ only in C.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xialpha.selection.labels import ConfigLabels, sweep_labels
from xialpha.selection.objective import Objective, estimator_counts, metric_values

GROUP = ("category", "preprocessing_id", "kernel_id", "j")
BOUND_RHO = 2.0  # xi-alpha with rho = 2 bounds the LOO error: its flagged examples are the LOO candidates


def estimate_curves(results: pd.DataFrame, objective: Objective, labels: ConfigLabels | None = None) -> pd.DataFrame:
    """One row per result at the objective's rho: GROUP, label (the group's, from `labels`;
    default: the labels of `results`), C, estimate, held_out (the holdout metric, NaN where not
    computed), n_sv; sorted by group and C."""
    labels = labels or sweep_labels(results)
    rows = results[np.isclose(results["rho"].astype(float), objective.rho, rtol=0, atol=1e-9)]
    curves = rows[list(GROUP) + ["C"]].copy()
    curves["label"] = [labels.group(p, k, j) for p, k, j in zip(rows["preprocessing_id"], rows["kernel_id"], rows["j"])]
    curves["estimate"] = objective.values(objective.counts(rows))
    curves["held_out"] = metric_values(estimator_counts(rows, "holdout"), objective.metric,
                                       objective.cost_fn, objective.cost_fp)
    curves["n_sv"] = rows["n_sv"].to_numpy() if "n_sv" in rows else np.nan
    return curves.sort_values([*GROUP, "C"]).reset_index(drop=True)


def best_per_group(curves: pd.DataFrame, maximise: bool) -> pd.DataFrame:
    """Per group: its label, the C with the best estimate (ties: smaller C), its estimate and held-out
    value, and the best held-out value over the group's C values (NaN without holdout)."""
    out = []
    for key, group in curves.groupby(list(GROUP), sort=True):
        ranked = group.dropna(subset=["estimate"])
        if ranked.empty:
            continue
        scores = ranked["estimate"] if maximise else -ranked["estimate"]
        best = ranked.loc[scores.round(12).sort_values(ascending=False, kind="mergesort").index[0]]
        held = group["held_out"].dropna()
        out.append({**dict(zip(GROUP, key)), "label": best["label"], "best_C": best["C"],
                    "estimate": best["estimate"], "held_out": best["held_out"],
                    "best_held_out": (held.max() if maximise else held.min()) if len(held) else np.nan})
    return pd.DataFrame(out, columns=[*GROUP, "label", "best_C", "estimate", "held_out", "best_held_out"])


def loo_candidates(results: pd.DataFrame) -> pd.DataFrame:
    """Per category: training examples n, the mean and max over configs of xa_d at rho = 2
    (examples that may be LOO errors, the retrainings an exact LOO needs at most) and, where
    exact LOO ran, the mean retrainings it actually made."""
    out = []
    for category, rows in results.groupby("category", sort=True):
        bound = pd.to_numeric(rows.loc[np.isclose(rows["rho"].astype(float), BOUND_RHO), "xa_d"], errors="coerce").dropna()
        retrains = pd.to_numeric(rows.get("loo_retrains", pd.Series(dtype=float)), errors="coerce").dropna()
        out.append({"category": category, "n": int(rows["n"].max()), "configs": int(len(bound)),
                    "candidates_mean": float(bound.mean()) if len(bound) else np.nan,
                    "candidates_max": float(bound.max()) if len(bound) else np.nan,
                    "loo_retrains_mean": float(retrains.mean()) if len(retrains) else np.nan})
    return pd.DataFrame(out, columns=["category", "n", "configs", "candidates_mean", "candidates_max", "loo_retrains_mean"])
