"""The C ladder of `svm.C = "auto"`: a starting C from the data, then C x FACTOR until the solution
stops changing (LIBLINEAR's -C does the same from its own starting C).

Starting C: the constraint sum_i y_i alpha_i = 0 lets at most m = min(j n_+, n_-) (in units of C) of
each class's alphas sit at their bounds together; with both classes' masses at their bounds spread
evenly, the weight vector is w = C s, s = m (mu_+ - mu_-) (the class means of the rows), and the bias
puts the threshold at their midpoint mu. Example i stays at its bound while its margin C |(x_i - mu).s|
is below 1; so below C = 1 / max_i |(x_i - mu).s| nothing is learned yet (every example on the wrong
side of the margin, the training errors those of predicting one class), and the ladder starts there,
rounded down to a power of two. On Reuters ModApte train (unit-norm TF-IDF, bench/c_ladder.py) it is
2^-9 for earn and 2^-7 to 2^-4 for the other nine of the ten largest categories, where the training
errors start falling; the same argument without the bias (s = sum_i y_i c_i x_i) starts at 2^-10 for
all ten, 3 to 6 doublings lower, and LIBLINEAR's 1 / (n max ||x||^2) at about 1e-4.

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


def starting_C(X, y: np.ndarray, j: float = 1.0, *, gram: np.ndarray | None = None) -> float:
    """The ladder's first C for features X ((n, d), dense or sparse) and labels y ((n,), in {-1, +1})
    at cost factor j: 1 / max_i |(x_i - mu).s|, s = min(j n_+, n_-) (mu_+ - mu_-), mu = (mu_+ + mu_-) / 2,
    rounded down to a power of two (the module docstring says why). With `gram` ((n, n) kernel values,
    X None) the same in the kernel's feature space: x_i.mu_c is the mean of row i's kernel values over
    class c. ValueError when y has one class only, or the class means are alike (s orthogonal to every
    x_i - mu)."""
    y = np.asarray(y, dtype=np.float64)
    positive = y > 0
    n_positive, n_negative = int(positive.sum()), int((~positive).sum())
    if n_positive == 0 or n_negative == 0:
        raise ValueError("y: no starting C from one class only")
    if gram is None:
        mean_positive = np.asarray(X[positive].mean(axis=0), dtype=np.float64).ravel()
        mean_negative = np.asarray(X[~positive].mean(axis=0), dtype=np.float64).ravel()
        to_positive = np.asarray(X @ mean_positive, dtype=np.float64).ravel()  # x_i . mu_+, (n,)
        to_negative = np.asarray(X @ mean_negative, dtype=np.float64).ravel()
    else:
        to_positive = np.asarray(gram[:, positive].mean(axis=1), dtype=np.float64).ravel()
        to_negative = np.asarray(gram[:, ~positive].mean(axis=1), dtype=np.float64).ravel()
    m = min(j * n_positive, n_negative)
    # (x_i - mu).s = m (x_i.mu_+ - x_i.mu_-) - m (|mu_+|^2 - |mu_-|^2) / 2
    squared_positive, squared_negative = to_positive[positive].mean(), to_negative[~positive].mean()
    margins = m * (to_positive - to_negative - (squared_positive - squared_negative) / 2)
    largest = float(np.abs(margins).max())
    if not largest > 0 or not math.isfinite(largest):
        raise ValueError("X, y: no starting C (the class means are alike)")
    return 2.0 ** math.floor(math.log2(1.0 / largest))


def first_rung(start: float, count: int, factor: float) -> list[float]:
    """The C of an auto ladder's first round: start x factor^0 .. factor^(count - 1), ascending."""
    return [start * factor**i for i in range(count)]


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
