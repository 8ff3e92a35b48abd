"""The store's small JSON files (its marker, the sweeps' summaries, claims and heartbeats), read
within limits: regular files only (`Location.read_small`), at most a given number of bytes, and
nested at most a given depth, checked before parsing (Python's parser recurses, so a file of
"[[[[..." would otherwise end in a RecursionError). A file over a limit, not UTF-8, not JSON, or
reached through a symbolic link leading outside the store (not read) is `DamagedJson`, with the
reason in one line; the caller decides what a damaged file means.
"""

from __future__ import annotations

import json

import numpy as np

from xialpha.storage.location import LinkedOutside, Location

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_STEPS = np.zeros(256, np.int8)  # by byte: +1 opens an array or object, -1 closes one
_STEPS[list(b"[{")], _STEPS[list(b"]}")] = 1, -1
SCAN_BYTES = 1 << 20  # `nesting_depth` scans this many bytes at a time: its arrays stay at a few MB


class DamagedJson(Exception):
    """A store's JSON file is over its size or depth limit, not UTF-8, or not JSON (the reason)."""


def read_json(location: Location, path: str, *, max_bytes: int, max_depth: int) -> object:
    """The JSON value in the regular file at `path`. FileNotFoundError when it is absent,
    `NotRegularFile` (a UserError) for a FIFO, device or socket, `DamagedJson` otherwise (also
    for a file a symbolic link leads to outside the store, which is not read)."""
    try:
        data = location.read_small(path, max_bytes)
    except LinkedOutside:
        raise DamagedJson("a symbolic link leads outside the store to it: not read") from None
    if len(data) > max_bytes:
        raise DamagedJson(f"over {max_bytes:,} bytes")
    return parse_json(data, max_depth)


def parse_json(data: bytes, max_depth: int) -> object:
    """The JSON value in `data`, nested at most `max_depth` arrays or objects deep; `DamagedJson`
    otherwise."""
    depth = nesting_depth(data)
    if depth > max_depth:
        raise DamagedJson(f"nested {depth} levels deep, over the {max_depth} this file has")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DamagedJson("not UTF-8 text") from None
    except ValueError as exc:
        raise DamagedJson(f"not JSON ({exc})") from None


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in the JSON text `data` (0 for a scalar): the brackets
    outside strings counted in one linear pass, SCAN_BYTES at a time in compiled code (numpy),
    carrying from one piece to the next whether it ends inside a string, the backslashes it ends
    with and the depth. A quote starts or ends a string unless an odd run of backslashes precedes
    it. Where `data` is not JSON the count may differ from a parser's only after the first byte
    the parser refuses, where it stops: the parser never nests deeper than this count."""
    codes = np.frombuffer(data, np.uint8)
    deepest = depth = 0
    inside = False  # the piece starts inside a string
    backslashes = 0  # the run of backslashes the pieces before end with
    for start in range(0, len(codes), SCAN_BYTES):
        piece = codes[start : start + SCAN_BYTES]
        quotes, backslashes = _unescaped_quotes(piece, backslashes)
        steps = _STEPS[piece]
        brackets = np.flatnonzero(steps)
        outside = (np.searchsorted(quotes, brackets) + inside) % 2 == 0  # an even number of quotes before it
        if outside.any():
            levels = depth + np.cumsum(steps[brackets[outside]], dtype=np.int64)
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        inside ^= len(quotes) % 2 == 1
    return deepest


def _unescaped_quotes(piece: np.ndarray, backslashes: int) -> tuple[np.ndarray, int]:
    """The places in `piece` (bytes) of the quotes no odd run of backslashes precedes, the bytes
    before it ending with `backslashes` of them; and the run of backslashes `piece` ends with."""
    quotes = np.flatnonzero(piece == _QUOTE)
    slashes = np.flatnonzero(piece == _BACKSLASH)
    odd = np.zeros(len(piece) + 1, bool)  # at each place: right after an odd run of backslashes
    odd[0] = backslashes % 2 == 1
    if not len(slashes):
        return quotes[~odd[quotes]], 0
    breaks = np.flatnonzero(np.diff(slashes) != 1)
    lasts = np.concatenate([breaks, [len(slashes) - 1]])  # each run's last backslash, as an index of `slashes`
    lengths = np.diff(lasts, prepend=-1)
    if slashes[0] == 0:  # the first run continues the one before the piece
        lengths[0] += backslashes
        odd[0] = False
    odd[slashes[lasts] + 1] = lengths % 2 == 1
    trailing = int(lengths[-1]) if slashes[-1] == len(piece) - 1 else 0
    return quotes[~odd[quotes]], trailing
