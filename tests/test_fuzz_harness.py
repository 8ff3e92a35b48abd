"""Checks of the generated-case tests' harness (tests/fuzzing.py): the TOML writer round-trips, a hang
is reported, outcomes are checked, a store digest sees every change."""

from __future__ import annotations

import json
import math
import tomllib

import pytest
from fuzzing import FUZZ_SETTINGS, Hang, Outcome, check_outcome, run_cli, scalars, toml_dumps, toml_value
from hypothesis import given
from hypothesis import strategies as st
from swept import tree_digest

# -- checks of the harness ------------------------------------------------------------------------------------

toml_documents = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.one_of(
        st.dictionaries(st.text(min_size=1, max_size=6), st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=4),
        st.lists(
            st.dictionaries(st.text(min_size=1, max_size=6), scalars, min_size=1, max_size=3), min_size=1, max_size=2
        ),
    ),
    max_size=4,
)


def _same(a, b) -> bool:
    """Equality that takes nan as equal to nan."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@FUZZ_SETTINGS
@given(toml_documents)
def test_the_toml_writer_round_trips(document):
    assert _same(tomllib.loads(toml_dumps(document)), document)


def test_a_hang_is_reported_not_waited_for(monkeypatch):
    monkeypatch.setattr("xialpha.cli.build_parser", lambda commands: _SleepingParser())
    with pytest.raises(Hang):
        run_cli(["sweep"], seconds=1)


class _SleepingParser:
    def parse_known_args(self, argv):
        import time

        time.sleep(5)


def test_check_outcome_catches_tracebacks_and_changed_stores():
    check_outcome(Outcome(["sweep"], 2, "", "xialpha sweep: error: bad\n"), "a", "a")
    with pytest.raises(AssertionError, match="the store changed"):
        check_outcome(Outcome(["sweep"], 2, "", "xialpha sweep: error: bad\n"), "a", "b")
    with pytest.raises(AssertionError):
        check_outcome(Outcome(["sweep"], 1, "", "Traceback (most recent call last):\n"))
    with pytest.raises(AssertionError):
        check_outcome(Outcome(["sweep"], 130, "", "interrupted\n"))


def test_tree_digest_sees_every_change(tmp_path):
    (tmp_path / "store" / "results").mkdir(parents=True)
    (tmp_path / "store" / "results" / "a.parquet").write_bytes(b"1")
    before = tree_digest(tmp_path / "store")
    (tmp_path / "store" / "results" / "a.parquet").write_bytes(b"2")
    changed = tree_digest(tmp_path / "store")
    (tmp_path / "store" / "new").mkdir()
    assert len({before, changed, tree_digest(tmp_path / "store")}) == 3
    assert tree_digest(tmp_path / "nothing") is None
    assert json.dumps(toml_value('a"b\\c\n')) and toml_value(float("nan")) == "nan"
