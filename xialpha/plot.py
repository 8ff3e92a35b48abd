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

from xialpha.errors import UserError
from xialpha.reports.plots import as_typed, calibration_figure, curves_figure
from xialpha.reports.report import NO_HELD_OUT, report_of
from xialpha.storage.naming import store_location
from xialpha.storage.opening import open_store
from xialpha.storage.schema import ResultColumn


def curves(
    store=None,
    *,
    sweep: str | None = None,
    selection: str | None = None,
    metric: str | None = None,
    estimator: str | None = None,
    rho: float | None = None,
    categories=None,
):
    """The estimate of `metric` by `estimator` (at `rho`) against C, solid, and the held-out value,
    dashed, where the sweep scored one: one panel per category, a line per preprocessing, kernel
    and j, a star at the selection's choice. metric, estimator and rho default to the selection's
    (else f1, the sweep's default estimator, 1). categories: the categories to draw (default all).
    Returns a matplotlib Figure."""
    if isinstance(categories, str):
        raise UserError(f"give a list of category names, got the string {categories!r}", parameter="categories")
    view = stored_report(store, sweep, selection, metric=metric, estimator=estimator, rho=rho)
    unknown = sorted(set(categories or ()) - set(view.curves[ResultColumn.CATEGORY]))
    if unknown:
        raise UserError(f"not categories of the sweep: {', '.join(map(repr, unknown))}", parameter="categories")
    with as_typed():
        return curves_figure(view.curves, view.selection, view.what, categories)


def calibration(
    store=None,
    *,
    sweep: str | None = None,
    selection: str | None = None,
    metric: str | None = None,
    rho: float | None = None,
):
    """Each estimator's estimate of `metric` (x) against the value on the held-out split (y), one
    point per category and configuration at `rho`, one panel per estimator, the selection's
    choices ringed: on the diagonal an estimate was honest. Returns a matplotlib Figure; UserError
    when the sweep scored no held-out split."""
    view = stored_report(store, sweep, selection, metric=metric, rho=rho)
    if view.calibration.empty:
        raise UserError(f"sweep {view.sweep_id!r} {NO_HELD_OUT}", parameter="sweep")
    with as_typed():
        return calibration_figure(view.calibration, view.selection, view.metric)


def stored_report(store, sweep: str | None, selection: str | None, compare: str | None = None, **view):
    """The Report (`xialpha.reports.report`) of `store` (a location as `xialpha.report` takes it)."""
    return report_of(open_store(store_location(store), create=False, writable=False), sweep, selection, compare, **view)
