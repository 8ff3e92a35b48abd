"""A fingerprint of what the linear path computes along C paths, to show a change to the solver's or
the span's mechanics leaves every result as it was.

`record` runs each category's C path as a sweep does (`fit_svm(TrainingProblem(y, X=X),
SVMParameters(C), warm_start=the previous C's fit, check_input=False)`, ascending C, the sweep's
default tol) and keeps per fit: the alphas, the threshold and the training decision values bit for
bit (as SHA-256 digests of their bytes, and b as float.hex), the xi-alpha calls at rho 1 and 2, and
the span calls (the examples span counts as leave-one-out errors), each as a digest of the packed
indicator with its count beside it for the reader.

The corpora: Reuters-21578 ModApte train (unit-norm TF-IDF, min_df = 3), when ../shared has it, and a
synthetic corpus that every checkout can build. Rewriting the record (only for a change meant to alter
these results, with the reason in its commit):

    PYTHONPATH=. python tests/estimators/solver_record.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

RECORD = Path(__file__).parent / "solver_record.json"
REUTERS_CATEGORIES = 5  # the most frequent ModApte categories
SYNTHETIC = {"n_docs": 3000, "n_categories": 3, "seed": 5}
GRID = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)  # config/reuters.toml's C
TOL = 1e-3  # the sweeps' default tolerance


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:32]


def calls(indicator: np.ndarray) -> dict:
    """An indicator (n,) bool as its count and the digest of its packed bits."""
    indicator = np.asarray(indicator, dtype=bool)
    return {"count": int(indicator.sum()), "sha": digest(np.packbits(indicator))}


def record(X, targets: dict[str, np.ndarray], grid=GRID, tol: float = TOL) -> list[dict]:
    """Per category and C (ascending, warm-started): the fit's fingerprint and its calls."""
    from xialpha.estimators.span import span_estimate
    from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
    from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha_indicator

    r_delta2 = r_delta_squared(X=X)
    rows = []
    for category, y in targets.items():
        previous = None
        for C in grid:
            fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=tol), check_input=False, warm_start=previous)
            rows.append(
                {
                    "category": category,
                    "C": C,
                    "n_sv": fit.n_sv,
                    "n_bounded_sv": fit.n_bounded_sv,
                    "alpha": digest(fit.alpha),
                    "b": float(fit.b).hex(),
                    "decision": digest(fit.decision),
                    "xa_rho1": calls(xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, 1.0)),
                    "xa_rho2": calls(xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, 2.0)),
                    "span": calls(span_estimate(fit).indicator),
                }
            )
            previous = fit
    return rows


def reuters_problem(reuters_dir: Path):
    """(X, {category: y}) of ModApte train, its REUTERS_CATEGORIES most frequent categories."""
    from xialpha.corpora import load_reuters
    from xialpha.features import Preprocessing

    train = load_reuters(reuters_dir, split="modapte").split("train")
    _, X = Preprocessing(min_df=3).fit_transform(train.texts)
    return X, {c: train.y(c) for c in train.choose_categories(top_k=REUTERS_CATEGORIES)}


def synthetic_problem():
    """(X, {category: y}) of make_synthetic(**SYNTHETIC)'s training split, every category."""
    from xialpha.corpora import make_synthetic
    from xialpha.features import Preprocessing

    corpus = make_synthetic(**SYNTHETIC)
    train = corpus.split("train")
    _, X = Preprocessing(min_df=2).fit_transform(train.texts)
    return X, {c: train.y(c) for c in train.choose_categories(top_k=SYNTHETIC["n_categories"])}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from conftest import REUTERS_DIR

    out = {"tol": TOL, "grid": list(GRID), "synthetic": record(*synthetic_problem())}
    if REUTERS_DIR.is_dir():
        out["reuters"] = record(*reuters_problem(REUTERS_DIR))
    RECORD.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {RECORD}: {', '.join(f'{k} {len(v)} fits' for k, v in out.items() if isinstance(v, list))}")


if __name__ == "__main__":
    main()
