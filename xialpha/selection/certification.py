"""Certifying a selection once on a sealed test split, and remembering that it was used.

The "certifications" dataset gets one row per category plus the micro and macro averages
(category "(micro)" / "(macro)", scope "micro" / "macro"), all with the test split's
fingerprint. A test set is certified on once: a second certification on the same fingerprint
is refused unless forced, because testing repeatedly and keeping what looks best biases the
estimates upward and voids the nominal confidence (Webber et al. 2013).

The first certification of a test set claims its fingerprint in the store (`store.claims.claim_test_set`)
before it trains, so of two certifications running at once only one is stored and shown; the
other fails and stores nothing. On a local store exactly one succeeds. Object stores (S3, GCS)
offer pyarrow no exclusive create, so there the claim is write-then-list: still never two, but
two started within the same instant can both fail (run the certification again). A
certification that fails before it stores its rows withdraws its claim; one killed meanwhile
leaves it pending, and certifying the same selection again resumes it with the claim's id,
confidence, draws and seed once it has provably ended (`xialpha.selection.claims`): the stored
rows are those the killed one would have stored, and the test set is used once.
"""

from __future__ import annotations

import datetime
import functools
import operator
import secrets
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators import registry
from xialpha.estimators.registry import HELD_OUT
from xialpha.selection.bounds import (
    CONFIDENCE,
    DRAWS,
    DRAWS_SEED,
    Confusion,
    binomial_bounds,
    f1_lower_bound,
    macro_bounds,
    point_metrics,
)
from xialpha.selection.claims import claim_content, holder_ended
from xialpha.selection.objective import metric_values
from xialpha.storage.rows import Certification, CertificationRow
from xialpha.storage.schema import (
    CERTIFICATION_BOUNDS,
    METRICS,
    CertificationColumn,
    CertificationScope,
    ResultColumn,
    SelectionColumn,
)
from xialpha.version import __version__

if TYPE_CHECKING:
    from xialpha.spec.sweep import SweepSpec
    from xialpha.storage.contract import StoreQueries

DATASET = "certifications"
Cert = CertificationColumn
MICRO, MACRO = "(micro)", "(macro)"  # the category of the rows of the averages
SEQUENTIAL_WARNING = (
    "warning: this test split was already used by {count} certification(s) ({ids}). Testing again and keeping "
    "the better result biases effectiveness estimates upward (sequential testing, Webber et al. 2013): the bounds "
    "below are not valid {confidence:.0%} bounds."
)


def new_certification_id() -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    return f"cert-{now}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Run:
    """How a certification runs: its id and draws (a resumed one's are those of the claim it
    resumes), the certifications on its test set before it (when forced), and the path of the
    claim it made (None when forced or resuming: it then withdraws nothing)."""

    certification_id: str
    confidence: float
    draws: int
    seed: int
    previous: list[str]
    claim: str | None


def start_run(
    store: StoreQueries,
    rows: pd.DataFrame,
    test_split: str,
    test_fingerprint: str,
    *,
    force: bool,
    confidence: float,
    draws: int,
    seed: int,
) -> Run:
    """Claim the test set for a new certification of the selection `rows`, or resume the one whose
    claim stands without rows when it has ended (see `xialpha.selection.claims`) and certified the
    same selection. UserError when the test set was used (unless forced), or is being used now."""
    stored = store.certifications(test_fingerprint=test_fingerprint)
    previous = set() if stored.empty else set(stored[Cert.CERTIFICATION_ID])
    claim = store.claims.test_set_claim(test_fingerprint)
    holder = None if claim is None else str(claim.get(Cert.CERTIFICATION_ID, "(unnamed claim)"))
    if claim is not None and holder is not None and holder not in previous:
        ended = holder_ended(claim, store.claims.test_set_beat(test_fingerprint))
        if not force:
            _check_pending(claim, holder, ended, str(rows[SelectionColumn.SELECTION_ID].iloc[0]))
            warnings.warn(
                f"resuming certification {holder}, which claimed this test set and ended before it stored "
                f"its rows ({ended}): with its confidence, draws and seed",
                UserWarning,
                stacklevel=4,
            )
            store.claims.beat_test_set(test_fingerprint, None)  # the ended one's last heartbeat
            return Run(holder, float(claim[Cert.CONFIDENCE]), int(claim[Cert.DRAWS]), int(claim["seed"]), [], None)
        previous.add(holder)
    warning = check_sealed(sorted(previous), force)
    if warning:
        warnings.warn(warning.removeprefix("warning: "), UserWarning, stacklevel=4)
        return Run(new_certification_id(), confidence, draws, seed, sorted(previous), None)
    certification_id = new_certification_id()
    content = claim_content(
        certification_id,
        str(rows[SelectionColumn.SELECTION_ID].iloc[0]),
        test_split,
        confidence=confidence,
        draws=draws,
        seed=seed,
    )
    path = store.claims.claim_test_set(test_fingerprint, content)
    if path is None:
        holder = (store.claims.test_set_claim(test_fingerprint) or {}).get(Cert.CERTIFICATION_ID, "another one")
        raise UserError(
            f"certification {holder} used this test set while this one started; nothing was stored; {SECOND_USE}",
            parameter="test_split",
            mentions="force=True",
        )
    return Run(certification_id, confidence, draws, seed, [], path)


SECOND_USE = "a second certification on it biases the result (sequential testing); use a fresh test set, or force=True"


def _check_pending(claim: dict, holder: str, ended: str | None, selection_id: str) -> None:
    """UserError unless the pending claim's certification has ended and was of `selection_id`."""
    if ended is None:
        where = f" (process {claim['pid']} on {claim['host']})" if "pid" in claim and "host" in claim else ""
        raise UserError(
            f"certification {holder}{where} used this test set and has not stored its rows: "
            f"it is still running, or it cannot be told that it ended; {SECOND_USE}",
            parameter="test_split",
            mentions="force=True",
        )
    if claim.get(Cert.SELECTION_ID) != selection_id or not {Cert.CONFIDENCE, Cert.DRAWS, "seed"} <= claim.keys():
        raise UserError(
            f"certification {holder} of selection {claim.get(Cert.SELECTION_ID)} claimed this "
            f"test set and ended before it stored its rows ({ended}); certify selection "
            f"{claim.get(Cert.SELECTION_ID)} on it again to resume it with the same draws, or force=True",
            parameter="test_split",
            mentions="force=True",
        )


def store_certification(store: StoreQueries, rows: list[CertificationRow], run: Run) -> None:
    """Store a certification's rows; if they cannot be stored, the claim `run` made is withdrawn."""
    try:
        store.add_certification(rows)
    except BaseException:
        if run.claim is not None:
            store.claims.withdraw(run.claim)
        raise


def check_sealed(previous: list[str], force: bool) -> str | None:
    """None for a fresh test set; the sequential-testing warning when forced; else UserError."""
    if not previous:
        return None
    if not force:
        raise UserError(
            f"this test set was already used for certification {', '.join(previous)}; {SECOND_USE}",
            parameter="test_split",
            mentions="force=True",
        )
    return SEQUENTIAL_WARNING.format(count=len(previous), ids=", ".join(previous), confidence=CONFIDENCE)


def certification_frame(
    counts: dict[str, Confusion],
    config_keys: dict[str, str],
    *,
    confidence: float = CONFIDENCE,
    draws: int = DRAWS,
    seed: int = DRAWS_SEED,
) -> pd.DataFrame:
    """Per-category rows, then "(micro)" and "(macro)": counts, METRICS and bounds. The macro
    averages complete undefined per-category metrics as `xialpha.selection.objective` does."""
    rows = []
    for category, c in counts.items():
        rows.append(
            {
                Cert.CATEGORY: category,
                Cert.SCOPE: CertificationScope.CATEGORY,
                Cert.CONFIG_KEY: config_keys[category],
                **_counts(c),
                **point_metrics(c),
                **binomial_bounds(c, confidence),
                Cert.F1_LOWER: f1_lower_bound(c, confidence, draws, seed),
            }
        )
    if counts:
        pooled = functools.reduce(operator.add, counts.values())
        rows.append(
            {
                Cert.CATEGORY: MICRO,
                Cert.SCOPE: CertificationScope.MICRO,
                Cert.CONFIG_KEY: None,
                **_counts(pooled),
                **point_metrics(pooled),
                **binomial_bounds(pooled, confidence),
                Cert.F1_LOWER: f1_lower_bound(pooled, confidence, draws, seed),
            }
        )
        as_counts = pd.DataFrame(
            [
                {ResultColumn.N: c.n, ResultColumn.N_POS: c.tp + c.fn, "d_pos": c.fn, "d_neg": c.fp}
                for c in counts.values()
            ]
        )
        rows.append(
            {
                Cert.CATEGORY: MACRO,
                Cert.SCOPE: CertificationScope.MACRO,
                Cert.CONFIG_KEY: None,
                **dict.fromkeys((Cert.TP, Cert.FP, Cert.FN, Cert.TN), None),
                **{m: float(np.mean(metric_values(as_counts, m))) for m in METRICS},
                **macro_bounds(list(counts.values()), confidence, draws, seed),
            }
        )
    return pd.DataFrame(rows)


def _counts(c: Confusion) -> dict:
    return {Cert.TP: c.tp, Cert.FP: c.fp, Cert.FN: c.fn, Cert.TN: c.tn}


def certification_rows(frame: pd.DataFrame, certification: Certification) -> list[CertificationRow]:
    """The rows of `frame` (`certification_frame`) of `certification`, as the store takes them."""
    now = datetime.datetime.now(datetime.UTC)
    return [
        CertificationRow(
            certification=certification,
            category=str(row[Cert.CATEGORY]),
            scope=CertificationScope(row[Cert.SCOPE]),
            config_key=_optional(row[Cert.CONFIG_KEY]),
            **{name: _optional(row[name], int) for name in (Cert.TP, Cert.FP, Cert.FN, Cert.TN)},
            metrics={name: float(row[name]) for name in METRICS},
            bounds={name: float(row[name]) for name in CERTIFICATION_BOUNDS},
            xialpha_version=__version__,
            created_at=now,
        )
        for row in frame.to_dict("records")
    ]


def _optional(value: object, kind: Callable[[Any], Any] = str) -> Any:
    """`value` as `kind`, None where it is missing."""
    return None if value is None or pd.isna(value) else kind(value)


def check_split(spec: SweepSpec, name: str, estimator: str, force: bool) -> bool:
    """Refuse (UserError naming test_split) the split `name` of `spec`'s corpus when the sweep trained on
    it, or selected on it by the `estimator` (unless `force`); warn where held-out values were computed.
    Returns whether the split is an independent test: no estimate of the sweep was scored on it.
    `xialpha.jobs.certify.certify_selection` checks a split with it before any training."""
    train_split = spec.corpus.train_split
    if train_split is None:
        raise UserError(
            f"sweep {spec.id!r} trained on the whole corpus (no corpus.train_split); no split of it is sealed: "
            'give the corpus a split column (test and train), set split_column, train_split = "train" and '
            "validation_fraction, and sweep again, then certify on the test split (docs/spec.md, "
            '"A corpus without splits")',
            parameter="test_split",
        )
    if name == train_split:
        raise UserError(f"{name!r} is the sweep's training split", parameter="test_split")
    if name == spec.held_out_split:
        if registry.estimator(estimator).needs == HELD_OUT and not force:
            raise UserError(
                f"the selection was made with the {estimator} estimator on {name!r}; it is "
                "not sealed (use another split, or force=True)",
                parameter="test_split",
                mentions="force=True",
            )
        warnings.warn(
            f"the sweep computed held-out estimates on {name!r}: this certification is no independent test (it is "
            "marked so in the store, `xialpha store ls` and the report); its bounds hold only if no choice was based "
            "on those estimates (testing on a split seen before biases them upward, Webber et al. 2013)",
            UserWarning,
            stacklevel=4,
        )
        return False
    return True
