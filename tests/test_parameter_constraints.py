"""Each public function of the Python API and of xialpha.plot declares a constraint for every
parameter once, types and values (issue 50.4): a wrong value is refused before the store is read,
as one `ParameterError` naming the parameter, and a deeper layer (SelectionOptions for the command
line, Objective, certify_selection) checks by the same constraint object."""

from __future__ import annotations

import inspect
import math

import pytest

import xialpha
import xialpha.plot
from xialpha.cli import ArgumentMistake, build_parser
from xialpha.parameters import (
    Interval,
    Options,
    ParameterError,
    ParameterTypeError,
    ParameterValueError,
    checked,
)

MISSING = "no-store-here"  # never created: a call that read the store first would fail naming it


@pytest.mark.parametrize(
    "call, parameter, message",
    [
        (lambda: xialpha.plot.curves(MISSING, categories=5), "categories", "give a list of category names, got int 5"),
        (
            lambda: xialpha.plot.curves(MISSING, categories="acq"),
            "categories",
            "give a list of category names, got the string 'acq'",
        ),
        (lambda: xialpha.plot.curves(MISSING, estimator="spam"), "estimator", "must be one of "),
        (lambda: xialpha.plot.calibration(MISSING, rho=-1), "rho", "must be a number > 0, got -1.0"),
        (lambda: xialpha.select(MISSING, rho=0), "rho", "must be a number > 0, got 0.0"),
        (lambda: xialpha.select(MISSING, rho=math.inf), "rho", "must be a number > 0, got inf"),
        (lambda: xialpha.select(MISSING, metric="f2"), "metric", "must be one of f1, recall, precision"),
        (lambda: xialpha.select(MISSING, runners_up=-1), "runners_up", "must be >= 0, got -1"),
        (lambda: xialpha.select(MISSING, cost_fp=-1), "cost_fp", "must be a number from 0 to 1e+12, got -1.0"),
        (
            lambda: xialpha.certify(MISSING, selection="sel-x", test_split="test", confidence=1.5),
            "confidence",
            "must be in [0.5, 1), got 1.5",
        ),
        (
            lambda: xialpha.certify(MISSING, selection="sel-x", test_split="test", draws=10),
            "draws",
            "must be between 1,000 and 1,000,000, got 10",
        ),
        (
            lambda: xialpha.certify(MISSING, selection="sel-x", test_split="test", seed=-1),
            "seed",
            "must be >= 0, got -1",
        ),
        (
            lambda: xialpha.refit(MISSING, selection=3),
            "selection",
            "give the DataFrame select() returned or a selection id, got int",
        ),
        (lambda: xialpha.report(MISSING, rho=0), "rho", "must be a number > 0, got 0.0"),
        (lambda: xialpha.report(MISSING, metric="F1"), "metric", "must be one of f1, "),
        (
            lambda: xialpha.report(MISSING, metric="cost"),
            "metric",
            "a report shows cost only for a saved selection by cost, with its costs; named alone it is the "
            "error at costs 1:1: ask for error",
        ),
        (lambda: xialpha.plot.curves(MISSING, metric="cost"), "metric", "a report shows cost only for a saved"),
        (lambda: xialpha.sweep(42, store=MISSING), "spec", "give a path to a TOML file, TOML text or a dict, got int"),
        (lambda: xialpha.drift({}, store=MISSING), "spec", "give a path to a TOML file or TOML text, got dict"),
    ],
)
def test_a_wrong_value_is_refused_naming_its_parameter_before_the_store_is_read(
    call, parameter, message, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError) as caught:
        call()
    assert caught.value.parameters == (parameter,)
    assert str(caught.value).startswith(f"{parameter}=: {message}") and "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_value_of_the_wrong_type_and_one_out_of_range_are_told_apart():
    with pytest.raises(ParameterTypeError, match=r"^rho=: must be a number, got str '1'$"):
        xialpha.select(MISSING, rho="1")
    with pytest.raises(ParameterValueError, match=r"^rho=: must be a number > 0, got nan$") as caught:
        xialpha.select(MISSING, rho=math.nan)
    assert not isinstance(caught.value, TypeError)


def _public_functions():
    """(name, function) of every public function of xialpha.api (the names xialpha exports) and of xialpha.plot."""
    for name in xialpha.API:
        yield f"xialpha.{name}", getattr(xialpha, name)
    for name, function in inspect.getmembers(xialpha.plot, inspect.isfunction):
        if not name.startswith("_") and function.__module__ == "xialpha.plot":
            yield f"xialpha.plot.{name}", function


PUBLIC = list(_public_functions())


# named by the function's name: an id holding its address would differ between xdist's workers
@pytest.mark.parametrize("name, function", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_every_public_function_declares_a_constraint_for_every_parameter(name, function):
    declared = getattr(function, "checks", None)
    assert declared is not None, f"{name} is not @checked"
    assert set(declared) == set(inspect.signature(function).parameters), name
    assert all(callable(constraint) for constraint in declared.values())


def test_the_plot_functions_are_among_those_checked():
    names = {name for name, _ in _public_functions()}
    assert {"xialpha.plot.curves", "xialpha.plot.calibration", "xialpha.select", "xialpha.as_corpus"} <= names


def test_a_function_with_a_parameter_without_a_constraint_is_refused_when_decorated():
    with pytest.raises(TypeError, match=r"parameter 'b' has no constraint"):

        @checked(a=Interval(0, 1))
        def f(a: float, b: float) -> None: ...


def test_a_rule_is_one_object_where_the_api_and_a_deeper_layer_both_check_it():
    """select and the command line's SelectionOptions (and the Objective), certify and
    certify_selection, report and plot: the same constraint, not two copies of its rule."""
    from xialpha.api import certify, report, select
    from xialpha.jobs import certify as certify_job
    from xialpha.selection import objective
    from xialpha.selection.options import CONSTRAINTS

    assert select.checks["rho"] is CONSTRAINTS["rho"] is objective.RHO
    assert select.checks["alpha"] is CONSTRAINTS["alpha"]
    assert certify.checks["confidence"] is certify_job.CONFIDENCE_LEVEL
    assert certify.checks["draws"] is certify_job.DRAW_COUNT
    assert report.checks["estimator"] == xialpha.plot.curves.checks["estimator"]
    # the metrics a report is asked for by name: the same in Python and on the command line (--metric)
    assert report.checks["metric"] == objective.SHOWN_METRIC.or_none() == xialpha.plot.curves.checks["metric"]
    parser = build_parser(["report"])
    for metric in objective.SHOWN_METRIC.choices:
        assert parser.parse_args(["report", "--metric", metric]).metric == metric
    with pytest.raises(ArgumentMistake, match="--metric: "):
        parser.parse_args(["report", "--metric", "cost"])


def test_selection_options_refuse_by_the_same_constraints_as_select():
    from xialpha.selection.options import SelectionOptions

    with pytest.raises(ParameterValueError, match=r"^alpha=: must be between 0 and 1, got 1.0$"):
        SelectionOptions(alpha=1.0)
    with pytest.raises(ParameterValueError, match=r"^estimator=: 'apparent' is stored for contrast"):
        SelectionOptions(estimator="apparent")


@pytest.mark.parametrize(
    "constraint, value, message",
    [
        (Interval(0.5, 1, closed="left"), 1.0, "must be in [0.5, 1), got 1.0"),
        (Interval(0, 1, closed="right"), 0, "must be in (0, 1], got 0.0"),
        (Interval(None, 10), 11, "must be a number <= 10, got 11.0"),
        (Interval(0, None, closed="neither", integer=True), 0, "must be > 0, got 0"),
        (Interval(0, 1, integer=True), True, "must be a whole number, got bool True"),
        (Options(("a", "b")), "c", "must be one of a, b, got 'c'"),
        (Options(("a", "b")), None, "must be a str, got NoneType"),
    ],
)
def test_the_constraints_say_what_is_wrong(constraint, value, message):
    with pytest.raises(ParameterError) as caught:
        constraint("x", value)
    assert str(caught.value) == f"x=: {message}"


def test_constraints_convert_and_allow_none_only_when_optional():
    assert Interval(0, 1)("x", 1) == 1.0 and isinstance(Interval(0, 1)("x", 1), float)
    assert Interval(0, 1).or_none()("x", None) is None
    assert Options(("a",)).or_none()("x", None) is None


def test_select_states_no_default_of_its_own_for_the_selection_options():
    """Each option's default is SelectionOptions' (the command line's too), not a copy of it."""
    import ast

    from xialpha import api
    from xialpha.selection.options import CONSTRAINTS

    function = next(
        node
        for node in ast.parse(inspect.getsource(api)).body
        if isinstance(node, ast.FunctionDef) and node.name == "select"
    )
    defaults = dict(zip((a.arg for a in function.args.kwonlyargs), function.args.kw_defaults))
    for name in CONSTRAINTS:
        default = defaults[name]
        assert isinstance(default, ast.Attribute) and ast.unparse(default) == f"SelectionOptions.{name}", name


def test_the_search_estimator_admits_the_rho_and_estimates_select_admits():
    """XiAlphaSearchCV declares scikit-learn's constraints (`_parameter_constraints`): the same
    rho values as select's RHO, and estimates select may choose by."""
    from xialpha.search import XiAlphaSearchCV
    from xialpha.selection.objective import RHO, SELECTABLE_ESTIMATOR

    constraints = XiAlphaSearchCV._parameter_constraints
    for value in (-1.0, 0.0, 1e-9, 1.0, 1e300, math.inf, math.nan):
        try:
            admitted = RHO("rho", value) is not None
        except ParameterValueError:
            admitted = False
        assert constraints["rho"][0].is_satisfied_by(value) == admitted, value
    assert set(constraints["estimate"][0].options) <= set(SELECTABLE_ESTIMATOR.choices)
