"""rho's default is stated once, as `xialpha.estimators.DEFAULT_RHO` (issue 50.4: 1.0 was
written in 5 places): no parameter, field or spec key named rho or rhos in xialpha/ has a number of
its own as its default."""

from __future__ import annotations

import ast
from pathlib import Path

import xialpha

NAMES = {"rho", "rhos"}


def _numbers(node: ast.AST | None) -> bool:
    """Whether `node` is a number, or a tuple or list of numbers, written out."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_numbers(item) for item in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def written_defaults(source: str) -> list[int]:
    """The lines of `source` that give rho or rhos a default written as a number."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            positional = arguments.posonlyargs + arguments.args
            pairs = list(zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults))
            pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults))
            found += [node.lineno for argument, default in pairs if argument.arg in NAMES and _numbers(default)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in NAMES:
            found += [node.lineno] if _numbers(node.value) else []
        elif isinstance(node, ast.Call) and len(node.args) >= 2:  # a spec table's reader: t.float("rho", 1.0)
            key, default = node.args[0], node.args[1]
            if isinstance(key, ast.Constant) and key.value in NAMES and _numbers(default):
                found.append(node.lineno)
    return found


def test_no_module_writes_a_default_rho_of_its_own():
    root = Path(xialpha.__file__).parent
    found = [
        f"{path.relative_to(root)}:{line}"
        for path in sorted(root.rglob("*.py"))
        for line in written_defaults(path.read_text(encoding="utf-8"))
    ]
    assert not found, f"rho defaults written as numbers (use DEFAULT_RHO): {found}"


def test_the_check_finds_each_kind_of_written_default():
    source = (
        "def f(x, rho=1.0): pass\n"
        "def g(*, rhos=(1.0,)): pass\n"
        "class A:\n    rho: float = 1.0\n"
        "t.float_list('rho', [1.0])\n"
        "xi_alpha(a, rho=2.0)\n"  # a call's argument, not a default
        "def h(rho=DEFAULT_RHO): pass\n"
    )
    assert written_defaults(source) == [1, 2, 4, 5]
