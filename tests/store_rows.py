"""Store rows written by hand, for the store's and the report's tests: a valid results row, the
results of a report's sweep (holdout and LOO), a certification of a saved selection."""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd

from xialpha.estimators.metrics import Estimate
from xialpha.selection.bounds import Confusion
from xialpha.selection.certification import certification_frame, certification_rows
from xialpha.storage.contract import StoreQueries
from xialpha.storage.rows import Certification, config_key
from xialpha.storage.schema import estimate_values

T0 = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
CATEGORIES = ("earn", "acq", "<grain&co>")


def result_row(i: int, sweep_id: str = "sweep-1", **overrides) -> dict:
    """A valid results row for config number `i`; `overrides` replace or add columns."""
    row = {
        "sweep_id": sweep_id,
        "run_id": "run-1",
        "config_key": config_key(i=i),
        "status": "ok",
        "data_fingerprint": "fp-1",
        "category": ("earn", "acq", "grain")[i % 3],
        "preprocessing_id": "pp-1",
        "pp_lowercase": True,
        "pp_min_df": 2,
        "kernel": "linear",
        "kernel_id": "linear",
        "C": 0.5 * (1 + i % 4),
        "j": 1.0,
        "rho": 2.0,
        "n": 100,
        "n_pos": 10,
        "xa_d_pos": 3,
        "xa_d_neg": 1,
        "xa_error": 0.04,
        "xa_recall": 0.7,
    }
    row.update(overrides)
    return row


def data_files(store_dir) -> list:
    return sorted(p for p in store_dir.rglob("*.parquet") if not p.name.startswith((".", "_")))


def linear_result(
    sweep_id: str, category: str, preprocessing_id: str, C: float, rho: float, xa: Estimate, held: Estimate, **more
) -> dict:
    """One ok result row of a linear config: 1000 training documents (100 positive), `xa` its
    xi-alpha estimate, `held` its held-out one on 500 documents (50 positive); `more` columns besides."""
    return {
        "sweep_id": sweep_id,
        "run_id": "run1",
        "status": "ok",
        "data_fingerprint": "fp",
        "category": category,
        "preprocessing_id": preprocessing_id,
        "kernel": "linear",
        "kernel_id": "lin",
        "C": C,
        "j": 1.0,
        "rho": rho,
        "n": 1000,
        "n_pos": 100,
        "n_sv": int(100 + 10 * C),
        **estimate_values(xa),
        "xa_d": int(xa.d),
        **estimate_values(held),
        "holdout_n": 500,
        "holdout_n_pos": 50,
        **more,
    }


def result_rows(sweep_id: str = "r1") -> list[dict]:
    """Hand-built results: 3 categories x 2 preprocessings x 4 C x rho 1 and 2, with holdout and LOO."""
    rng = np.random.default_rng(0)
    rows = []
    for category in CATEGORIES:
        for pp in ("pp-aaaa", "pp-bbbb"):
            for C in (0.1, 1.0, 10.0, 100.0):
                d_pos, d_neg = int(rng.integers(5, 40)), int(rng.integers(0, 30))
                for rho in (1.0, 2.0):
                    scale = 1 if rho == 1.0 else 2
                    estimate = Estimate("xa", 1000, 100, min(100, d_pos * scale), d_neg * scale)
                    held = Estimate("holdout", 500, 50, d_pos // 2, d_neg // 2)
                    rows.append(
                        linear_result(
                            sweep_id,
                            category,
                            pp,
                            C,
                            rho,
                            estimate,
                            held,
                            config_key=f"{category}-{pp}-{C}-{rho}",
                            loo_retrains=int(estimate.d) - 3,
                        )
                    )
    return rows


def certify_by_hand(
    store: StoreQueries, selection: pd.DataFrame, certification_id: str = "cert-hand", forced: bool = False
) -> None:
    """Store a certification of `selection` as `xialpha certify` would (`forced`: with --force, after
    one before it on the split), from made-up test-set counts."""
    counts = {c: Confusion(tp=40 + i, fp=5, fn=10, tn=445 - i) for i, c in enumerate(selection["category"])}
    frame = certification_frame(counts, dict(zip(selection["category"], selection["config_key"])), draws=1000)
    identity = Certification(
        certification_id=certification_id,
        sweep_id="r1",
        selection_id=selection["selection_id"].iloc[0],
        test_split="test",
        test_fingerprint="tfp",
        n_test=500,
        confidence=0.95,
        draws=1000,
        forced=forced,
        previous_certifications=int(forced),
        independent=True,
    )
    store.add_certification(certification_rows(frame, identity))


def saved_selections(store: StoreQueries) -> pd.DataFrame:
    return store.datasets.read("selections").to_pandas()
