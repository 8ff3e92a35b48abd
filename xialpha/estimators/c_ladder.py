"""The C ladder of `svm.C = "auto"`: a starting C from the data, then C x FACTOR until the solution
stops changing (LIBLINEAR's -C does the same from its own starting C).

Starting C: with every alpha at its bound C * c_i (c_i = j for a positive, 1 else) the weight vector
is w = C s, s = sum_i y_i c_i x_i, and example i keeps alpha_i at its bound while its margin
y_i w.x_i = C y_i x_i.s stays below 1 (the bias aside). So below C = 1 / max_i |x_i.s| the solution
is (nearly) every example at its bound: nothing is learned yet, and the ladder starts there, rounded
down to a power of two. It is never below LIBLINEAR's 1 / (n max_i ||x_i||^2 max_i c_i), as
|x_i.s| <= n max ||x||^2 max c_i.

Settled: the solution stops changing when a fit has no bounded support vector left (a hard margin:
a larger C changes nothing), or when its training errors and ||w|| moved less than SETTLED_CHANGE
(relative) since the previous C.

Pure numpy; no Dask, no files. The jobs layer runs the fits (`ladder` takes the fitting as a function).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xialpha.estimators.svm import SVMFit

FACTOR = 2.0  # C grows by this factor along the ladder
SETTLED_CHANGE = 0.01  # relative change of training errors and ||w|| under which a solution has settled


@dataclass(frozen=True)
class LadderPoint:
    """What the ladder reads of one fit at C: its bounded support vectors, training errors
    (examples with y_i f(x_i) <= 0) and the norm of its weight vector ||w|| (in feature space)."""

    C: float
    n_bounded_sv: int
    training_errors: int
    w_norm: float

    @classmethod
    def of(cls, fit: SVMFit, C: float) -> LadderPoint:
        """The point of `fit` trained at `C`; ||w||^2 = sum_i alpha_i y_i (f(x_i) - b) on any kernel."""
        w_squared = float(np.dot(fit.alpha * fit.y, fit.decision - fit.b))
        errors = int((fit.y * fit.decision <= 0).sum())
        return cls(float(C), fit.n_bounded_sv, errors, math.sqrt(max(w_squared, 0.0)))


def starting_C(X, y: np.ndarray, j: float = 1.0) -> float:
    """The ladder's first C for features X ((n, d), dense or sparse) and labels y ((n,), in {-1, +1})
    at cost factor j: 1 / max_i |x_i . s|, s = sum_i y_i c_i x_i, rounded down to a power of two (the
    module docstring says why). ValueError when that is undefined (s orthogonal to every x_i)."""
    y = np.asarray(y, dtype=np.float64)
    weights = y * np.where(y > 0, j, 1.0)
    s = np.asarray(X.T @ weights, dtype=np.float64).ravel()
    largest = float(np.abs(np.asarray(X @ s, dtype=np.float64).ravel()).max(initial=0.0))
    if not largest > 0 or not math.isfinite(largest):
        raise ValueError("X, y: no starting C (the labels' weighted sum of examples is orthogonal to every example)")
    return 2.0 ** math.floor(math.log2(1.0 / largest))


def settled(before: LadderPoint, after: LadderPoint, change: float = SETTLED_CHANGE) -> bool:
    """Whether the solution stopped changing from `before` to `after` (the next C): `after` has no
    bounded support vector, or its training errors and ||w|| moved by less than `change` (relative)."""
    if after.n_bounded_sv == 0:
        return True
    errors_moved = abs(after.training_errors - before.training_errors) > change * max(before.training_errors, 1)
    norm_moved = abs(after.w_norm - before.w_norm) > change * max(before.w_norm, np.finfo(float).tiny)
    return not errors_moved and not norm_moved


def ladder(
    fit_at: Callable[[float], LadderPoint], start: float, limit: int, factor: float = FACTOR
) -> list[LadderPoint]:
    """The points of C = start, start x factor, ... (`fit_at(C)` fits one; ascending, so it may warm
    start), until the solution has settled (`settled`) or `limit` C were fitted."""
    if limit < 1 or not start > 0 or not factor > 1:
        raise ValueError(f"ladder: needs limit >= 1, start > 0, factor > 1 (got {limit}, {start}, {factor})")
    points = [fit_at(start)]
    while len(points) < limit and not (len(points) > 1 and settled(points[-2], points[-1])):
        points.append(fit_at(points[-1].C * factor))
    return points
