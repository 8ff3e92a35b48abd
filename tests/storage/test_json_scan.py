"""The store's JSON files are checked for nesting in linear time (issue 48, item 2): the string
stripping regex `"(?:[^"\\]|\\.)*"` backtracked in O(n^2) on a quote followed by many escaped
quotes and no closing one (a 60 KB marker: 51 s on every command). Now one scan, whose count
agrees with a byte-by-byte reading of the text, carried across the pieces it scans."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xialpha.storage.jsonfiles as jsonfiles
from xialpha.storage.jsonfiles import DamagedJson, nesting_depth, parse_json
from xialpha.storage.location import CLAIM_BYTES
from xialpha.storage.marker import MARKER_BYTES


def _depth_byte_by_byte(data: bytes) -> int:
    """The brackets outside strings, where a backslash makes the byte after it no quote (and no
    backslash): what `nesting_depth` counts, one byte at a time."""
    depth = deepest = 0
    inside = escaped = False
    for byte in data:
        if escaped:
            escaped = False
            if byte in b'"\\':
                continue
        if byte == ord("\\"):
            escaped = True
        elif byte == ord('"'):
            inside = not inside
        elif not inside and byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not inside and byte in b"]}":
            depth -= 1
    return deepest


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=40).map(lambda raw: bytes(b'"\\[]{}a'[byte % 7] for byte in raw)),
    piece=st.sampled_from([1, 2, 3, 5, 1 << 20]),
)
def test_the_depth_is_the_byte_by_byte_count_in_pieces_of_any_size(data, piece):
    original = jsonfiles.SCAN_BYTES
    jsonfiles.SCAN_BYTES = piece
    try:
        assert nesting_depth(data) == _depth_byte_by_byte(data), data
    finally:
        jsonfiles.SCAN_BYTES = original


@settings(max_examples=100, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.text(alphabet='"\\[]{}ab', max_size=6),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='"\\[{a', max_size=4), inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_the_depth_of_json_is_its_nesting(value):
    def nesting(item: object) -> int:
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        return 0 if children is None else 1 + max(map(nesting, children), default=0)

    assert nesting_depth(json.dumps(value).encode()) == nesting(value)


@pytest.mark.timeout(30)  # the regex took 51 s on a 60 KB marker, and hours on a 1 MiB claim
@pytest.mark.parametrize("limit", [MARKER_BYTES, CLAIM_BYTES], ids=["marker", "claim"])
def test_the_worst_text_at_a_size_limit_is_scanned_at_once(limit):
    unclosed = b'"' + b'\\"' * ((limit - 1) // 2)  # a quote, then escaped quotes, never closed
    assert nesting_depth(unclosed) == 0
    with pytest.raises(DamagedJson, match="not JSON"):
        parse_json(unclosed, 1)
    assert nesting_depth(b'["' + b'\\"' * ((limit - 4) // 2) + b'"]') == 1
