"""A library error about a parameter reaches the command line as that parameter's flag.

The library raises `UserError(..., parameter="sweep")` (and `mentions="metric="` for a parameter
its text names); the Python API shows "sweep=: ...", each command "--sweep: ...", from those
fields alone (issue 32, item 3): the message text is never searched for parameter names.
"""

from __future__ import annotations

import pytest

from xialpha.cli import main
from xialpha.errors import UserError


@pytest.fixture
def empty_store(tmp_path):
    from xialpha.storage.opening import open_store

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.create_if_absent()
    return store.uri


def _error(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    return captured.err.strip()


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["select", "{store}"], "xialpha select: error: --sweep: store {store} holds no sweep yet"),
        (["report", "{store}"], "xialpha report: error: --sweep: store {store} holds no sweep yet"),
        (
            ["certify", "{store}", "--selection", "sel-x", "--test-split", "test"],
            "xialpha certify: error: --selection: no selection 'sel-x' in store {store}",
        ),
        (
            ["select", "{store}", "--cost-fn", "5", "--metric", "f1"],  # a parameter, and one its text mentions
            "xialpha select: error: --cost-fn: applies to --metric cost only, not f1",
        ),
    ],
)
def test_each_command_names_the_flag_of_the_parameter_an_error_carries(empty_store, capsys, argv, shown):
    err = _error(capsys, [a.format(store=empty_store) for a in argv])
    assert err.startswith(shown.format(store=empty_store)), err


def test_the_same_errors_name_the_parameter_in_python(empty_store):
    import xialpha

    with pytest.raises(UserError, match=r"^sweep=: store .* holds no sweep yet") as raised:
        xialpha.select(empty_store)
    assert raised.value.parameters == ("sweep",)
    with pytest.raises(UserError, match=r"^cost_fn=: applies to metric= cost only, not f1$") as raised:
        xialpha.select(empty_store, cost_fn=5, metric="f1")
    assert raised.value.parameters == ("cost_fn",) and raised.value.mentions == ("metric=",)


def test_the_flag_comes_from_the_fields_not_from_the_text(empty_store, capsys, monkeypatch):
    """A planted error whose text names a parameter is shown as written; the same error with the
    parameter as a field is shown with the command's flag."""
    import xialpha.commands.select as select

    def fails(error):
        def run(args):
            raise error

        return run

    monkeypatch.setattr(select, "run", fails(UserError("rho=: must be > 0, or force=True")))
    assert _error(capsys, ["select", empty_store]) == "xialpha select: error: rho=: must be > 0, or force=True"
    monkeypatch.setattr(
        select, "run", fails(UserError("must be > 0, or save=True", parameter="rho", mentions="save=True"))
    )
    assert _error(capsys, ["select", empty_store]) == "xialpha select: error: --rho: must be > 0, or --save"
