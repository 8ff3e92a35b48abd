"""docs/spec-reference.md is generated from the code that reads each spec key (issue 34): it is out of
date, or a key has no description, and these tests fail."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

from xialpha.corpora import loading
from xialpha.errors import UserError
from xialpha.spec import reference
from xialpha.spec.drift import parse_drift_spec
from xialpha.spec.sweep import parse_spec

REFERENCE = REPO / "docs" / "spec-reference.md"


def documented() -> set[str]:
    """The key names of the committed reference's tables."""
    return set(re.findall(r"^\| `([^`]+)` \|", REFERENCE.read_text(encoding="utf-8"), flags=re.M))


def test_the_committed_reference_is_what_the_generator_writes():
    assert REFERENCE.read_text(encoding="utf-8") == reference.generate(), (
        "docs/spec-reference.md is out of date: python -m xialpha.spec.reference > docs/spec-reference.md"
    )


def test_every_key_a_spec_parser_names_is_in_the_reference():
    """Keys read only on some branch (kind = "slurm", a drift spec's windows) are caught from the
    source: every string a Table reader is called with in xialpha/spec/ is a documented key."""
    readers = {*reference.READERS, "table", "table_list"}
    named = set()
    for path in (REPO / "xialpha" / "spec").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in readers
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                named.add(node.args[0].value)
    tables = {
        "sweep",
        "corpus",
        "categories",
        "preprocessing",
        "kernels",
        "svm",
        "estimators",
        "cluster",
        "security",
        "drift",
        "batches",
    }
    assert named - tables - documented() == set()


@pytest.mark.parametrize("spec", sorted((REPO / "config").glob("*.toml")), ids=lambda path: path.name)
def test_every_key_of_the_shipped_specs_is_in_the_reference(spec: Path):
    parse = parse_drift_spec if "drift" in spec.name else parse_spec
    with reference._recording() as calls:
        try:
            parse(spec.read_text(encoding="utf-8"), source=str(spec), base_dir=spec.parent)
        except UserError:
            pass  # a corpus path missing here (Reuters): the keys read up to there are checked
    loader_arguments = {
        name
        for parameters in map(loading.inspect.signature, loading.LOADERS.values())
        for name in parameters.parameters
    }
    assert {name for _, name in calls} - {
        "corpus",
        "sweep",
        "svm",
        "estimators",
        "cluster",
        "security",
        "categories",
        "drift",
        "batches",
        "kernels",
        "preprocessing",
    } <= documented()
    assert loader_arguments <= documented()


def test_a_key_without_a_description_stops_the_generator(monkeypatch):
    monkeypatch.delitem(reference.DESCRIPTIONS, "svm.tol")
    with pytest.raises(UserError, match="'svm.tol'"):
        reference.generate()


def test_a_new_loader_argument_stops_the_generator_until_it_is_described(monkeypatch):
    def load_new(path: str, dialect: str = "plain"):
        """A loader with an argument nobody described."""

    monkeypatch.setitem(loading.LOADERS, "new", load_new)
    monkeypatch.setitem(reference.DESCRIPTIONS, "loader.new.path", "a file")
    with pytest.raises(UserError, match="'loader.new.dialect'"):
        reference.generate()
    monkeypatch.setitem(reference.DESCRIPTIONS, "loader.new.dialect", "how it is written")
    assert '| `dialect` | string | `"plain"` | how it is written |' in reference.generate()
