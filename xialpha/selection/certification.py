"""Certifying a selection once on a sealed test split, and remembering that it was used.

The "certifications" dataset gets one row per category plus the micro and macro averages
(category "(micro)" / "(macro)", scope "micro" / "macro"), all with the test split's
fingerprint. A test set is certified on once: a second certification on the same fingerprint
is refused unless forced, because testing repeatedly and keeping what looks best biases the
estimates upward and voids the nominal confidence (Webber et al. 2013, seed 003).

The first certification of a test set claims its fingerprint in the store (`ResultStore.claim`)
before storing its rows, so of two certifications running at once only one is stored and
shown; the other fails and stores nothing. On a local store exactly one succeeds. Object stores
(S3, GCS) offer pyarrow no exclusive create, so there the claim is write-then-list: still never
two, but two started within the same instant can both fail (run the certification again).
"""

from __future__ import annotations

import datetime
import functools
import operator
import secrets

import numpy as np
import pandas as pd

from xialpha import __version__
from xialpha.errors import UserError
from xialpha.selection.bounds import (
    CONFIDENCE,
    DRAWS,
    Confusion,
    binomial_bounds,
    f1_lower_bound,
    macro_bounds,
    point_metrics,
)
from xialpha.selection.objective import metric_values
from xialpha.selection.records import read_if_stored
from xialpha.storage import typed_table
from xialpha.storage.schema import METRICS

DATASET = "certifications"
SEQUENTIAL_WARNING = (
    "warning: this test split was already used by {count} certification(s) ({ids}). Testing again and keeping "
    "the better result biases effectiveness estimates upward (sequential testing, Webber et al. 2013): the bounds "
    "below are not valid {confidence:.0%} bounds."
)


def new_certification_id() -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
    return f"cert-{now}-{secrets.token_hex(3)}"


def previous_certifications(store, test_fingerprint: str) -> list[str]:
    """Ids of the certifications already made on a test set with this fingerprint (stored, or
    claimed by one that has not stored its rows: running, or ended before it could)."""
    table = read_if_stored(store, DATASET, [("test_fingerprint", "=", test_fingerprint)])
    ids = set() if table is None else set(table["certification_id"].to_pylist())
    claim = store.claimed(DATASET, _claim_name(test_fingerprint))
    if claim is not None:
        ids.add(str(claim.get("certification_id", "(unnamed claim)")))
    return sorted(ids)


def store_certification(store, table: pa.Table, test_fingerprint: str, certification_id: str, *, first: bool) -> None:
    """Store a certification's rows; the `first` on a test set claims it before.

    UserError, with nothing stored, when another certification claimed the test set meanwhile.
    If the rows cannot be stored the claim is withdrawn.
    """
    claim = None
    if first:
        claim = store.claim(DATASET, _claim_name(test_fingerprint), {"certification_id": certification_id})
        if claim is None:
            holder = (store.claimed(DATASET, _claim_name(test_fingerprint)) or {}).get("certification_id", "another one")
            raise UserError(
                f"--test-split: certification {holder} used this test set while this one ran; nothing was stored. A "
                "second certification on it biases the result (sequential testing); use a fresh test set, or --force"
            )
    try:
        store.append(DATASET, table)
    except BaseException:
        if claim is not None:
            store.withdraw(claim)
        raise


def _claim_name(test_fingerprint: str) -> str:
    return f"test-set-{test_fingerprint}"


def check_sealed(previous: list[str], force: bool) -> str | None:
    """None for a fresh test set; the sequential-testing warning when forced; else UserError."""
    if not previous:
        return None
    if not force:
        raise UserError(
            f"--test-split: this test set was already used for certification {', '.join(previous)}; a second "
            "certification on it biases the result (sequential testing); use a fresh test set, or --force"
        )
    return SEQUENTIAL_WARNING.format(count=len(previous), ids=", ".join(previous), confidence=CONFIDENCE)


def confusions(trained, test_corpus) -> dict[str, Confusion]:
    """Each category's counts of the trained models on the test corpus."""
    decision = trained.decision_values(texts=test_corpus.texts, X=test_corpus.X)
    return {
        category: Confusion.from_predictions(test_corpus.y(category) > 0, decision[:, column] > 0)
        for column, category in enumerate(trained.categories)
    }


def certification_frame(counts: dict[str, Confusion], config_keys: dict[str, str], *,
                        confidence: float = CONFIDENCE, draws: int = DRAWS, seed: int = 0) -> pd.DataFrame:
    """Per-category rows, then "(micro)" and "(macro)": counts, METRICS and bounds. The macro
    averages complete undefined per-category metrics as `xialpha.selection.objective` does."""
    rows = []
    for category, c in counts.items():
        rows.append({"category": category, "scope": "category", "config_key": config_keys[category],
                     **_counts(c), **point_metrics(c), **binomial_bounds(c, confidence),
                     "f1_lower": f1_lower_bound(c, confidence, draws, seed)})
    if counts:
        pooled = functools.reduce(operator.add, counts.values())
        rows.append({"category": "(micro)", "scope": "micro", "config_key": None, **_counts(pooled),
                     **point_metrics(pooled), **binomial_bounds(pooled, confidence),
                     "f1_lower": f1_lower_bound(pooled, confidence, draws, seed)})
        as_counts = pd.DataFrame([{"n": c.n, "n_pos": c.tp + c.fn, "d_pos": c.fn, "d_neg": c.fp} for c in counts.values()])
        rows.append({"category": "(macro)", "scope": "macro", "config_key": None,
                     **dict.fromkeys(("tp", "fp", "fn", "tn"), None),
                     **{m: float(np.mean(metric_values(as_counts, m))) for m in METRICS},
                     **macro_bounds(list(counts.values()), confidence, draws, seed)})
    return pd.DataFrame(rows)


def _counts(c: Confusion) -> dict:
    return {"tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn}


def certification_table(frame: pd.DataFrame, identity: dict):
    """The frame with `identity` columns (certification_id, sweep_id, ...) as rows typed by the
    store (`xialpha.storage.schema.CERTIFICATION_COLUMNS`)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return typed_table(DATASET, [{**identity, **row, "xialpha_version": __version__, "created_at": now}
                                 for row in frame.to_dict("records")])
