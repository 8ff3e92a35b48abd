"""A sweep's plots as matplotlib figures: the panels its HTML report draws (`xialpha report --html`,
as inline SVG), for Python:

    import xialpha
    xialpha.plot.curves("my-store")        # estimate vs C: one panel per category
    xialpha.plot.calibration("my-store")   # estimates against held-out values: one panel per estimator

A notebook draws the figure a cell returns inline; elsewhere `fig.savefig("curves.png")`. The
store, sweep, selection and what is shown are chosen as for `xialpha.report`: the selection
(its choices starred or ringed) is a saved selection's id, by default the newest per-category one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from xialpha.errors import UserError
from xialpha.parameters import Names, checked
from xialpha.reports.contents import NO_HELD_OUT, VIEW_CONSTRAINTS, VIEW_ESTIMATOR, Report, report_of
from xialpha.reports.plots import as_typed, calibration_figure, curves_figure
from xialpha.storage.naming import store_location
from xialpha.storage.opening import open_store
from xialpha.storage.schema import ResultColumn

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CATEGORIES = Names("category names")  # a list of a sweep's categories, or None: all


@checked(**VIEW_CONSTRAINTS, estimator=VIEW_ESTIMATOR, categories=CATEGORIES)
def curves(
    store: str | os.PathLike[str] | None = None,
    *,
    sweep: str | None = None,
    selection: str | None = None,
    metric: str | None = None,
    estimator: str | None = None,
    rho: float | None = None,
    categories: list[str] | None = None,
) -> Figure:
    """The estimate of `metric` by `estimator` (at `rho`) against C, solid, and the held-out value,
    dashed, where the sweep scored one: one panel per category, a line per preprocessing, kernel
    and j, a star at the selection's choice. metric, estimator and rho default to the selection's
    (else f1, the sweep's default estimator, 1). categories: the categories to draw (default all).
    Returns a matplotlib Figure."""
    view = _stored_report(store, sweep, selection, metric=metric, estimator=estimator, rho=rho)
    unknown = sorted(set(categories or ()) - set(view.curves[ResultColumn.CATEGORY]))
    if unknown:
        raise UserError(f"not categories of the sweep: {', '.join(map(repr, unknown))}", parameter="categories")
    with as_typed():
        return curves_figure(view.curves, view.selection, view.what, categories)


@checked(**VIEW_CONSTRAINTS)
def calibration(
    store: str | os.PathLike[str] | None = None,
    *,
    sweep: str | None = None,
    selection: str | None = None,
    metric: str | None = None,
    rho: float | None = None,
) -> Figure:
    """Each estimator's estimate of `metric` (x) against the value on the held-out split (y), one
    point per category and configuration at `rho`, one panel per estimator, the selection's
    choices ringed: on the diagonal an estimate was honest. Returns a matplotlib Figure; UserError
    when the sweep scored no held-out split."""
    view = _stored_report(store, sweep, selection, metric=metric, rho=rho)
    if view.calibration.empty:
        raise UserError(f"sweep {view.sweep_id!r} {NO_HELD_OUT}", parameter="sweep")
    with as_typed():
        return calibration_figure(view.calibration, view.selection, view.metric)


def _stored_report(
    store: str | os.PathLike[str] | None, sweep: str | None, selection: str | None, **view: Any
) -> Report:
    """The Report (`xialpha.reports.contents`) of `store` (a location as `xialpha.report` takes it)."""
    return report_of(open_store(store_location(store), create=False, writable=False), sweep, selection, None, **view)
