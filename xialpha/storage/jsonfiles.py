"""The store's small JSON files (its marker, the sweeps' summaries, claims and heartbeats), read
within limits: regular files only (`Location.read_small`), at most a given number of bytes, and
nested at most a given depth, checked before parsing (Python's parser recurses, so a file of
"[[[[..." would otherwise end in a RecursionError). A file over a limit, not UTF-8 or not JSON is
`DamagedJson`, with the reason in one line; the caller decides what a damaged file means.
"""

from __future__ import annotations

import json
import re

import numpy as np

from xialpha.storage.location import Location

# a JSON string (its escapes included): brackets inside one do not nest
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENING = np.frombuffer(b"[{", np.uint8)
_CLOSING = np.frombuffer(b"]}", np.uint8)


class DamagedJson(Exception):
    """A store's JSON file is over its size or depth limit, not UTF-8, or not JSON (the reason)."""


def read_json(location: Location, path: str, *, max_bytes: int, max_depth: int) -> object:
    """The JSON value in the regular file at `path`. FileNotFoundError when it is absent,
    `NotRegularFile` (a UserError) for a FIFO, device or socket, `DamagedJson` otherwise."""
    data = location.read_small(path, max_bytes)
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
    """How deep arrays and objects nest in the JSON text `data` (0 for a scalar), in one pass of
    compiled code: strings are removed first, then the brackets counted."""
    codes = np.frombuffer(_STRING.sub(b"", data), np.uint8)
    steps = np.isin(codes, _OPENING).astype(np.int64) - np.isin(codes, _CLOSING)
    return int(np.cumsum(steps).max(initial=0))
