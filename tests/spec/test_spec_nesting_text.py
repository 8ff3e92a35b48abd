"""Spec nesting is counted on the text, before tomllib parses it (issue 48, item 7): tomllib
records every prefix of a dotted key, so a spec of one 50,000-part key reached 6 GB, and a
`[t0. ... .t99999]` header was refused only after 60 s. Counted as docs/spec.md counts: tables and
arrays, so `[t0. ... .t15] x = 1` nests 16 levels deep, within the limit."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

import xialpha.spec.tables as tables
from xialpha.errors import UserError
from xialpha.spec.sweep import load_spec
from xialpha.spec.tables import MAX_SPEC_DEPTH, parse_toml

MINIMAL = '[sweep]\nid = "t"\n[corpus]\nloader = "synthetic"\n'


def _dotted(parts: int) -> str:
    return ".".join(f"t{index}" for index in range(parts))


@pytest.fixture
def unparsed(monkeypatch):
    """tomllib's parse fails the test: a refusal must come before it."""

    def parse(text: str) -> dict:
        raise AssertionError("tomllib parsed a spec that the scan of its text refuses")

    monkeypatch.setattr(tables.tomllib, "loads", parse)


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("text", "line", "levels"),
    [
        (f"x = 1\n{_dotted(50_000)} = 1\n", 2, 49_999),  # a key: its 49,999 tables
        (f"x = 1\n\n[{_dotted(100_000)}]\nx = 1\n", 3, 100_000),
        (f"[{_dotted(17)}]\nx = 1\n", 1, 17),
        (f'a = """\n[x]\n"""\n[[{_dotted(16)}]]\n', 4, 17),  # its element table is the 17th level
        ("x = [\n  1,\n  " + "[" * 17 + "]" * 17 + "]\n", 3, 17),
        ("x = {a = 1, " + "b = {" * 16 + "}" * 17 + "\n", 1, 17),
    ],
    ids=["dotted-key", "header", "header-17", "array-of-tables", "arrays", "inline-tables"],
)
def test_nesting_over_the_limit_is_refused_from_the_text_naming_file_and_line(unparsed, text, line, levels):
    with pytest.raises(UserError) as raised:
        parse_toml(text, "deep.toml")
    message = str(raised.value)
    assert message.startswith(f"deep.toml: line {line}: tables or arrays nested more than 16 levels deep"), message
    assert f"({levels} levels)" in message and "\n" not in message and len(message) < 200, message


def test_the_depth_counts_tables_and_arrays_as_the_docs_do(tmp_path):
    """`[t0. ... .t15] x = 1` nests 16 deep (the message said 17, and refused it)."""
    spec = tmp_path / "deep.toml"
    for within in (f"[{_dotted(16)}]\nx = 1\n", f"{_dotted(17)} = 1\n", "x = " + "[" * 15 + "]" * 15 + "\n"):
        assert parse_toml(within, "deep.toml").raw
    spec.write_text(MINIMAL + f"[{_dotted(17)}]\nx = 1\n")
    with pytest.raises(
        UserError, match=r"deep.toml: line 5: .* 16 levels deep \(at t0.t1.t2... \(17 levels\) ...t16\)"
    ):
        load_spec(spec)


_NAMES = st.sampled_from(["a", "b", '"q.r"', "'s t'", "c-1"])
_KEYS = st.lists(_NAMES, min_size=1, max_size=4).map(".".join)


def _values(depth: int) -> st.SearchStrategy[str]:
    scalar = st.sampled_from(["1", "2.5", '"x[y]"', "'{'", '"""m\n["""', "true", "1979-05-27"])
    if depth == 0:
        return scalar
    inner = _values(depth - 1)
    return st.one_of(
        scalar,
        st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(_KEYS, inner), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{key} = {value}" for key, value in pairs) + "}"
        ),
    )


_LINES = st.one_of(
    _KEYS.map(lambda key: f"[{key}]"),
    _KEYS.map(lambda key: f"[[{key}]]"),
    st.tuples(_KEYS, _values(4)).map(lambda pair: f"{pair[0]} = {pair[1]}  # [c"),
    st.just(""),
)


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(_LINES, max_size=6), limit=st.integers(1, 4))
def test_the_text_is_refused_only_where_the_parsed_tables_nest_too_deep(lines, limit):
    """With a low limit, over TOML of headers, dotted keys, arrays, inline tables and strings
    holding brackets: the scan never refuses what the parsed tables allow, and (without an
    array-of-tables header, whose later headers may extend its element) refuses all they do not."""
    text = "\n".join(lines) + "\n"
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assume(False)
    tables.MAX_SPEC_DEPTH = limit
    try:
        stated, deep = tables._nesting_in_text(text), tables._too_deep(parsed)
    finally:
        tables.MAX_SPEC_DEPTH = MAX_SPEC_DEPTH
    assert stated is None or deep is not None, (text, stated)
    if "[[" not in text:
        assert (stated is None) == (deep is None), (text, stated, deep)
    event(f"refused: {stated is not None}")
