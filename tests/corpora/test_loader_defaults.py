"""Each corpus loader's defaults are written once, in its function's signature (`xialpha.corpora.loading`,
which the spec reference shows), and its parts' plan takes them from there (issue 50.4: the synthetic
and table loaders' 16 + 12 defaults were written twice)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from xialpha.corpora.loading import HOMES, LOADERS
from xialpha.corpora.parted import plan_parts


@pytest.mark.parametrize("kind", sorted(HOMES))
def test_no_function_of_a_loaders_module_states_a_default_of_its_arguments(kind):
    module = importlib.import_module(f"xialpha.corpora.{HOMES[kind][0]}")
    arguments = set(inspect.signature(LOADERS[kind]).parameters)
    found = [
        f"{function.__name__}({name}=...)"
        for function in vars(module).values()
        if inspect.isfunction(function) and function.__module__ == module.__name__
        for name, parameter in inspect.signature(function).parameters.items()
        if name in arguments and parameter.default is not inspect.Parameter.empty
    ]
    assert not found, f"{kind}: {found} restate defaults that the loader's signature states"


def test_a_planned_part_has_every_default_of_the_loaders_signature():
    (part,) = plan_parts("synthetic", {"n_docs": 50})
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(LOADERS["synthetic"]).parameters.items()
        if name != "n_docs"
    }
    assert {name: part.args[name] for name in defaults} == defaults and part.args["n_docs"] == 50
