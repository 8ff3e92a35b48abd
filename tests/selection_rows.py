"""Hand-built result rows whose estimates are xi-alpha counts, for the selection tests, and what a
selection chose."""

from __future__ import annotations

from xialpha.estimators.metrics import Estimate
from xialpha.storage.schema import estimate_values


def result_row(
    category, C, d_pos, d_neg, *, n=1000, n_pos=100, pp="pp1", kernel="lin", j=1.0, rho=1.0, n_sv=50, n_bounded_sv=10
):
    counts = estimate_values(Estimate("xa", n, n_pos, d_pos, d_neg))
    return {
        "sweep_id": "s1",
        "config_key": f"{category}-{pp}-{kernel}-C{C}-j{j}-rho{rho}",
        "category": category,
        "data_fingerprint": "fp",
        "preprocessing_id": pp,
        "kernel": "linear",
        "kernel_id": kernel,
        "C": float(C),
        "j": float(j),
        "rho": float(rho),
        "n": n,
        "n_pos": n_pos,
        "n_sv": n_sv,
        "n_bounded_sv": n_bounded_sv,
        "stable": True,
        **counts,
        "xa_d": d_pos + d_neg,
    }


def chosen(selection, column: str = "C") -> dict:
    """{category: the chosen configuration's `column`} of a Selection."""
    rows = selection.rows
    return dict(zip(rows["category"], rows[column].astype(float) if column == "C" else rows[column]))
