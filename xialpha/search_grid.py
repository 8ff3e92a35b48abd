"""The grids `xialpha.search.XiAlphaSearchCV` searches: each candidate checked before anything is
fitted (its SVM one xialpha trains, its parameters ones the training takes), the grids split into
those of fixed C and those of C = "auto", and candidates grouped into C neighbourhoods.

Errors are ValueError or TypeError (scikit-learn's kinds) whose text starts with where the fault is:
`estimator`, `param_grid` or `param_grid[i]`, then the parameter as set_params names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from xialpha.errors import did_you_mean, one_of
from xialpha.estimators import KERNELS, LINEAR
from xialpha.estimators.validation import check_positive, check_tolerance
from xialpha.spec.grid import AUTO_C

SVC_KERNELS = (*KERNELS, "precomputed")  # the SVC kernels XiAlphaSearchCV trains: xialpha's and a Gram


def check_model(where: str, model, params: dict | None = None) -> None:
    """ValueError naming `where` (estimator, or param_grid with the candidate's `params`) unless the
    SVM of `model` (itself, or a Pipeline's last step) is one xialpha trains (an SVC of a kernel in
    SVC_KERNELS, or a LinearSVC with the hinge loss, the l2 penalty and an intercept) with public
    parameters its training takes: C, class_weight, and an SVC's tol, cache_size, max_iter and
    kernel parameters, each named as set_params names it (`svc__C` in a pipeline). Checked before
    any fit; a pipeline's other steps check their own parameters as they fit."""
    svm = model[-1] if isinstance(model, Pipeline) else model
    prefix = f"{model.steps[-1][0]}__" if isinstance(model, Pipeline) else ""
    candidate = f" (candidate {params})" if params else ""
    if isinstance(svm, LinearSVC):
        wanted = {"loss": "hinge", "penalty": "l2", "fit_intercept": True}
        bad = {key: getattr(svm, key) for key, value in wanted.items() if getattr(svm, key) != value}
        if bad:
            raise ValueError(
                f"{where}: LinearSVC must have loss='hinge', penalty='l2', fit_intercept=True (the "
                f"estimates are derived for the hinge-loss SVM with threshold), got {bad}{candidate}"
            )
    elif svm.kernel not in SVC_KERNELS:
        raise ValueError(f"{where}: SVC kernel: {one_of(svm.kernel, SVC_KERNELS)}{candidate}")
    try:
        check_svm_parameters(svm)
    except ValueError as exc:
        raise ValueError(f"{where}: {prefix}{exc}{candidate}") from None


def check_svm_parameters(svm) -> None:
    """ValueError naming the first parameter of `svm` (an SVC or LinearSVC) its training cannot take."""
    check_positive(svm.C, "C")
    weights = svm.class_weight
    if not (
        weights is None
        or (isinstance(weights, str) and weights == "balanced")
        or (isinstance(weights, Mapping) and all(_positive(w) for w in weights.values()))
    ):
        raise ValueError(f'class_weight: must be None, "balanced" or a dict of class: weight > 0, got {shown(weights)}')
    if isinstance(svm, LinearSVC):
        return
    check_tolerance(svm.tol, "tol")
    check_positive(svm.cache_size, "cache_size")
    if (
        isinstance(svm.max_iter, bool)
        or not isinstance(svm.max_iter, Integral)
        or svm.max_iter < -1
        or svm.max_iter == 0
    ):
        raise ValueError(f"max_iter: must be -1 (no limit) or an integer > 0, got {shown(svm.max_iter)}")
    if svm.kernel in (LINEAR, "precomputed"):
        return
    if not (isinstance(svm.gamma, str) and svm.gamma in ("scale", "auto")):
        check_positive(svm.gamma, "gamma")
    if svm.kernel == "poly" and (
        isinstance(svm.degree, bool) or not isinstance(svm.degree, Integral) or svm.degree < 0
    ):
        raise ValueError(f"degree: must be an integer >= 0, got {shown(svm.degree)}")
    if isinstance(svm.coef0, bool) or not _real(svm.coef0):
        raise ValueError(f"coef0: must be a finite number, got {shown(svm.coef0)}")


def _real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and bool(np.isfinite(value))


def _positive(value) -> bool:
    return _real(value) and value > 0


def grids_of(param_grid) -> list[tuple[str, Mapping]]:
    """[(how errors name it, grid)] of param_grid (a dict, or a non-empty list of dicts)."""
    if isinstance(param_grid, Mapping):
        return [("param_grid", param_grid)]
    if not param_grid:
        raise ValueError(
            'param_grid: is an empty list, which has no candidate; give a dict of parameter lists (None: C "auto")'
        )
    for index, grid in enumerate(param_grid):
        if not isinstance(grid, Mapping):
            raise TypeError(f"param_grid[{index}]: must be a dict of parameter lists, got {type(grid).__name__}")
    return [(f"param_grid[{index}]", grid) for index, grid in enumerate(param_grid)]


def check_grid_values(where: str, name: object, values: object, known: Mapping, estimator: str) -> None:
    """ValueError or TypeError naming `where` and `name` unless `name` is one of the estimator's
    parameters (`known`) and `values` a non-empty list of them (C's: numbers > 0, or "auto" alone)."""
    if not isinstance(name, str) or name not in known:
        raise ValueError(
            f"{where}: {name!r} is not a parameter of {estimator}{did_you_mean(str(name), known, listing=None)}"
        )
    if is_C(name) and isinstance(values, str):
        return  # "auto", or refused with its value by split_grid
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{where}: {name} must be a list of values, got {shown(values)}; wrap one value in a list")
    if len(values) == 0:
        raise ValueError(f"{where}: {name} is an empty list, which leaves the grid no candidate")
    if is_C(name):
        for value in values:
            if isinstance(value, str) or isinstance(value, bool) or not isinstance(value, Real):
                alone = '; "auto" stands alone, not in a list' if value == AUTO_C else ""
                raise TypeError(f"{where}: {name} must be a list of numbers > 0, got {shown(value)} in it{alone}")
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: {name} must be a list of numbers > 0, got {shown(value)} in it")


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def split_grid(param_grid, estimator) -> tuple[list[dict], list[tuple[dict, str]]]:
    """(the grids of fixed C, [(a grid without C, the name of its C parameter)] of C = "auto"):
    param_grid None is C = "auto" alone; a grid whose C (`C` or `<step>__C`) is "auto" is the other
    parameters' grid with a C ladder each."""
    if param_grid is None:
        return [], [({}, f"{estimator.steps[-1][0]}__C" if isinstance(estimator, Pipeline) else "C")]
    fixed, auto = [], []
    for grid in [param_grid] if isinstance(param_grid, Mapping) else param_grid:
        names = [name for name, value in grid.items() if is_C(name) and isinstance(value, str)]
        if not names:
            fixed.append(grid)
            continue
        if grid[names[0]] != AUTO_C:
            raise ValueError(f'param_grid: {names[0]} must be a list of numbers or "auto", got {grid[names[0]]!r}')
        auto.append(({name: value for name, value in grid.items() if name != names[0]}, names[0]))
    return fixed, auto


def is_C(name: str) -> bool:
    return name == "C" or name.endswith("__C")


def without(params: dict, name: str) -> dict:
    return {key: value for key, value in params.items() if key != name}


def c_neighbourhoods(candidates: list[dict]) -> tuple[list[str], list[float]]:
    """(group, C) of each candidate: candidates that differ only in their C parameter (`C` or
    `<step>__C`) share a group; one without a C parameter is a group of its own (C = 0)."""
    groups, values = [], []
    for index, params in enumerate(candidates):
        names = [name for name in params if is_C(name)]
        others = sorted((name, repr(value)) for name, value in params.items() if name not in names)
        groups.append(repr(others) if names else f"#{index}")
        values.append(float(params[names[0]]) if names else 0.0)
    return groups, values
