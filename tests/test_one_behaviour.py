"""Issue 43.6 and 41.6: one behaviour everywhere. The command line states no selection default of
its own (`SelectionOptions` holds them), refuses a choice exactly as the Python API does (the same
message, with the flag for the parameter and "did you mean"), and modes are enums."""

from __future__ import annotations

import pytest
from store_rows import result_rows

import xialpha
from xialpha.cli import build_parser, main
from xialpha.errors import UserError
from xialpha.jobs.progress import Progress, ProgressMode
from xialpha.selection.options import SelectionOptions
from xialpha.storage.opening import open_store

OPTIONS = (
    "metric",
    "estimator",
    "rho",
    "smooth",
    "per_category",
    "average",
    "cost_fn",
    "cost_fp",
    "runners_up",
    "alpha",
)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("one") / "store")
    open_store(uri, create=True, writable=True).datasets.write_results(result_rows("r1"))
    return uri


def test_select_takes_its_defaults_from_the_selection_options():
    from xialpha.commands.select import options_of

    args = build_parser(("select",)).parse_args(["select"])
    assert not set(OPTIONS) & set(vars(args))  # none restated: a flag left out is left out
    assert options_of(args) == SelectionOptions()
    given = build_parser(("select",)).parse_args(["select", "--runners-up", "5", "--alpha", "0.01", "--global"])
    assert options_of(given) == SelectionOptions(runners_up=5, alpha=0.01, per_category=False)


@pytest.mark.parametrize(
    "parameter, value, said",
    [
        ("estimator", "apparent", "'apparent' is stored for contrast, never chosen by; use one of"),
        ("estimator", "nope", "must be one of xa, loo, holdout, kfold, bootstrap, span, xa_ext, got 'nope'"),
        ("metric", "F1", "must be one of f1, recall, precision, error, cost, got 'F1'; did you mean f1?"),
        ("average", "Micro", "did you mean micro?"),
    ],
)
def test_a_refused_choice_reads_the_same_from_the_command_line_and_python(store, capsys, parameter, value, said):
    with pytest.raises(UserError) as raised:
        xialpha.select(store, **{parameter: value})
    assert said in str(raised.value) and str(raised.value).startswith(f"{parameter}=: ")
    assert main(["select", store, f"--{parameter}", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"xialpha select: error: {str(raised.value).replace(f'{parameter}=', f'--{parameter}', 1)}"


def test_modes_are_enums():
    assert Progress.mode_for(True) is ProgressMode.QUIET
    assert Progress(None, "plain").mode is ProgressMode.PLAIN
    with pytest.raises(ValueError):
        Progress(None, "loud")


def test_each_public_function_declares_its_parameter_checks_in_one_place():
    """41.6: `@checked(...)` above each function of the workflow, no check call in its body."""
    import ast
    import inspect

    import xialpha.api as api

    tree = ast.parse(inspect.getsource(api))
    called = [node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    assert not [name for name in called if name.startswith("check_")]
    for name in ("sweep", "results", "select", "refit", "certify", "report", "compare", "drift"):
        checks = getattr(api, name).checks
        assert checks.get("store") is not None, name
        assert set(checks) <= set(inspect.signature(getattr(api, name)).parameters), name
