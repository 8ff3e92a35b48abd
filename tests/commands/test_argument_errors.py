"""Issue 43.5: argument errors are one line naming the command, the flag and what to do (argparse
printed 10 lines of usage first, and `xialpha: error: unrecognized arguments: --format` named
neither the command nor what it takes); `--help` still prints the usage."""

from __future__ import annotations

import pytest

from xialpha.cli import main


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["report", "--format", "csv"],
            "xialpha report: error: --format: not an option of report (it writes --html; store, select, certify, "
            "compare and predict take --format); usage: xialpha report --help",
        ),
        (
            ["select", "--metrics", "f1"],
            "xialpha select: error: --metrics: not an option of select; did you mean --metric? "
            "Usage: xialpha select --help",
        ),
        (
            ["select", "--runners-up", "x"],
            "xialpha select: error: --runners-up: invalid int value: 'x'; usage: xialpha select --help",
        ),
        (
            ["store", "lss"],
            "xialpha store: error: ACTION: must be one of ls, check, compact, got 'lss'; did you mean ls? "
            "Usage: xialpha store --help",
        ),
        (
            ["selcet"],
            "xialpha: error: selcet: not a command; did you mean select? (commands: sweep, fetch, compile, store, "
            "select, certify, report, compare, predict, drift); usage: xialpha --help",
        ),
        (["select", "a", "b"], "xialpha select: error: unexpected argument 'b'; usage: xialpha select --help"),
    ],
    ids=["other-commands-option", "misspelt-option", "bad-int", "misspelt-action", "misspelt-command", "extra"],
)
def test_an_argument_mistake_is_one_line(argv, line, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [line], err


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["report", "--help"])
    assert exited.value.code == 0 and "usage: xialpha report" in capsys.readouterr().out
