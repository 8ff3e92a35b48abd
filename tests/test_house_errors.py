"""The house rule of errors (issue 32, item 3): library code raises errors that carry the
parameter they are about as data, and the command line maps it to its flag from that data.

- `xialpha/cli.py` uses no regular expression: it finds no parameter in a message's text;
- outside the command line (`xialpha/cli.py`, `xialpha/commands/`) no `UserError` starts its
  message with a parameter ("metric=: ...") or a flag ("--refit: ..."): it gives
  `parameter="metric"`, which Python shows as "metric=: " and each command as its flag;
- a parameter such an error names inside its text ("or force=True", "pass ... as spec=") is
  listed in its `mentions`, so that the command line shows it as a flag too. Python spelled as a
  call ("select(save=True)", "(corpus=)") is not a mention.

Each rule is a function of parsed source, and the tests plant a violation of each.
"""

from __future__ import annotations

import ast
import re

import pytest
from conftest import REPO

PACKAGE = REPO / "xialpha"
COMMAND_LINE = ("xialpha/cli.py", "xialpha/commands/")
ERRORS = {"UserError", "DataFailure", "ParameterTypeError"}
# a parameter (or flag) leading a message: "metric=: ", "cost_fn=, ", "--refit: "
_LEADING = re.compile(r"([a-z][a-z_]*=|--[a-z][a-z-]*)[:,]")
# a parameter named in a message's text: "force=True", "spec=" before a space, punctuation or the end
_NAMED = re.compile(r"(?<![(\w])[a-z][a-z_]*=(?:True\b)?(?=[\s,;:)]|$)")


def _library_modules() -> dict[str, str]:
    return {
        path.relative_to(REPO).as_posix(): path.read_text()
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.relative_to(REPO).as_posix().startswith(COMMAND_LINE)
    }


def regex_uses(source: str) -> list[str]:
    """Imports of `re` (or `regex`) in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        found += [f"line {node.lineno}: import {name}" for name in names if name.split(".")[0] in ("re", "regex")]
    return found


def _text(node: ast.expr) -> str | None:
    """The literal text of a message: a string, or an f-string with each value as {}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return None


def _mentions(call: ast.Call) -> set[str]:
    for keyword in call.keywords:
        if keyword.arg == "mentions":
            value = ast.literal_eval(keyword.value)
            return {value} if isinstance(value, str) else set(value)
    return set()


def error_violations(modules: dict[str, str]) -> list[str]:
    """Errors raised in `modules` ({path: source}) that name a parameter in their text only."""
    found = []
    for path, source in modules.items():
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ERRORS and node.args):
                continue
            text = _text(node.args[0])
            if text is None:
                continue
            where = f"{path}:{node.lineno}"
            if leading := _LEADING.match(text):
                found.append(f"{where}: leads with {leading.group(1)!r}: give parameter=")
                continue
            for named in sorted(set(_NAMED.findall(text)) - _mentions(node)):
                found.append(f"{where}: names {named!r} in its text: list it in mentions=")
    return found


def test_the_command_line_uses_no_regular_expression():
    assert regex_uses((PACKAGE / "cli.py").read_text()) == []


def test_library_errors_carry_the_parameters_they_name():
    assert error_violations(_library_modules()) == []


def test_the_regex_rule_catches_a_planted_import():
    assert regex_uses("import os\nimport re\n") == ["line 2: import re"]
    assert regex_uses("def f():\n    from re import sub\n") == ["line 2: import re"]
    assert regex_uses("import reprlib\nimport os\n") == []


@pytest.mark.parametrize(
    ("source", "wanted"),
    [
        ('raise UserError(f"metric=: must be one of {names}")', "leads with 'metric='"),
        ('raise UserError("cost_fn=, cost_fp=: at least one")', "leads with 'cost_fn='"),
        ('raise UserError(f"--refit: {target} is a link")', "leads with '--refit'"),
        ('raise UserError("used; use a fresh set, or force=True", parameter="test_split")', "names 'force=True'"),
        ('raise DataFailure("pass its file as spec=")', "names 'spec='"),
    ],
)
def test_the_error_rule_catches_a_parameter_in_the_text(source, wanted):
    found = error_violations({"xialpha/planted.py": source})
    assert len(found) == 1 and wanted in found[0], found


@pytest.mark.parametrize(
    "source",
    [
        'raise UserError(f"must be one of {names}", parameter="metric")',
        'raise UserError("used; or force=True", parameter="test_split", mentions="force=True")',
        'raise UserError("no results at rho=0.5 (min_df=2)", parameter="rho")',  # values, not parameters
        'raise UserError("pass the DataFrame select(save=True) returned", parameter="selection")',
        'raise UserError("is given in memory (corpus=)", key="loader")',
    ],
)
def test_the_error_rule_lets_parameters_given_as_data_pass(source):
    assert error_violations({"xialpha/planted.py": source}) == []
