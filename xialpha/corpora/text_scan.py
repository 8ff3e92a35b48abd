"""Where a text file can be cut into parts: record starts about every `step` bytes, found in one
pass over the bytes (compiled with numba when a file is first cut: importing this module, as the
spec's corpus checks do, imports no numba) without parsing the records.

A record ends at a line end (\\n, \\r\\n or a lone \\r, as Python's csv module and universal
newlines read them; only \\n for svmlight files, which are read as bytes) outside a quoted field; with `quotes`
(CSV's default dialect: `"` opens a
quoted field at the start of a field, `""` inside one is a quote, and a quote elsewhere is a
plain character) a line end inside a quoted field belongs to the field. Lines are counted
physically, as csv's `line_num` counts them, so a part knows the number of its first line.

This reads bytes, so it is right for encodings in which the bytes of `\\n`, `\\r`, `,`, `\\t` and
`"` never occur inside another character: UTF-8, Latin-1 and the other ASCII-compatible ones
(`byte_scannable` checks); other files are read as one part.
"""

from __future__ import annotations

import codecs
from functools import cache

import numpy as np

from xialpha.corpora.sources import read_range

CHUNK_BYTES = 64 * 2**20  # bytes scanned per call, the state carried between calls
_PROBE = '\n\r,\t"ab'

# states of the record automaton
_RECORD_START, _FIELD_START, _IN_FIELD, _IN_QUOTES, _QUOTE_IN_QUOTES = 0, 1, 2, 3, 4


def byte_scannable(encoding: str) -> bool:
    """Whether a file in `encoding` can be cut by looking at bytes (see the module docstring)."""
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        return False
    if codec.name in ("utf-8", "utf-8-sig", "latin-1", "iso8859-1", "ascii", "cp1252", "iso8859-15"):
        return True
    try:
        return _PROBE.encode(codec.name) == _PROBE.encode("ascii")
    except (UnicodeError, LookupError):
        return False


def cut_points(
    file, size: int, step: int, *, quotes: bool = False, delimiter: str = ",", lone_cr_ends_lines: bool = True
) -> list[tuple[int, int | None, int]]:
    """(start, stop, first line) of the blocks `file` (`size` bytes, local or URI) is cut into: one
    from each record start at or after a multiple of `step` to the next (stop None: the end)."""
    scanner = Scanner(step, quotes, delimiter, lone_cr_ends_lines)
    for start in range(0, size, CHUNK_BYTES):
        scanner.feed(read_range(file, start, min(start + CHUNK_BYTES, size)))
    cuts = [(0, 1)] + [cut for cut in scanner.cuts if cut[0] > 0]
    return [(start, stop, line) for (start, line), (stop, _) in zip(cuts, cuts[1:] + [(None, None)])]


class Scanner:
    """Feeds a file's bytes chunk by chunk; `cuts` are (byte offset, line number) of the record
    starts chosen as part boundaries: the first record start at or after each multiple of `step`."""

    def __init__(self, step: int, quotes: bool, delimiter: str = ",", lone_cr_ends_lines: bool = True):
        self.step, self.quotes, self.delimiter, self.lone_cr = step, quotes, ord(delimiter), lone_cr_ends_lines
        # state, skip a \n (the second half of \r\n), a record ended at the last byte seen, line, next target
        self.carry = np.array([_RECORD_START, 0, 0, 1, step], dtype=np.int64)
        self.offset = 0
        self.cuts: list[tuple[int, int]] = []

    def feed(self, data: bytes) -> None:
        buffer = np.frombuffer(data, dtype=np.uint8)
        out = np.empty((len(data) // max(self.step, 1) + 2, 2), dtype=np.int64)
        scan = _compiled_scan()
        found = scan(buffer, self.offset, self.quotes, self.delimiter, self.lone_cr, self.step, self.carry, out)
        self.cuts.extend((int(position), int(line)) for position, line in out[:found])
        self.offset += len(data)


@cache
def _compiled_scan():
    """`_scan` compiled by numba (from its on-disk cache after the first time)."""
    from numba import njit

    return njit(cache=True, nogil=True)(_scan)


def _scan(buffer, offset, quotes, delimiter, lone_cr, step, carry, out):  # pragma: no cover - compiled
    """Advance the automaton over `buffer` (its first byte at file offset `offset`); write the
    cuts found into `out` (rows: offset, line) and return how many; `carry` holds the state.
    lone_cr: a \r ends a line (text files); else only \n does (svmlight files, read as bytes)."""
    state, skip_lf, ended, line, target = carry[0], carry[1], carry[2], carry[3], carry[4]
    found = 0
    for i in range(buffer.shape[0]):
        byte = buffer[i]
        position = offset + i
        if ended == 1:  # the record ended before this byte: it starts here, unless this is \r\n's \n
            if not (skip_lf == 1 and byte == 10):
                ended = 0
                if position >= target:
                    out[found, 0] = position
                    out[found, 1] = line
                    found += 1
                    target = (position // step + 1) * step
        if skip_lf == 1 and byte == 10:
            skip_lf = 0
            continue
        skip_lf = 0
        if byte == 10 or (byte == 13 and lone_cr):
            line += 1
            if byte == 13:
                skip_lf = 1
            if state != _IN_QUOTES:
                state = _RECORD_START
                ended = 1
            continue
        if not quotes:
            state = _IN_FIELD
        elif state == _RECORD_START or state == _FIELD_START:
            state = _IN_QUOTES if byte == 34 else _FIELD_START if byte == delimiter else _IN_FIELD
        elif state == _IN_FIELD:
            if byte == delimiter:
                state = _FIELD_START
        elif state == _IN_QUOTES:
            if byte == 34:
                state = _QUOTE_IN_QUOTES
        else:  # a quote inside quotes: an escaped quote, the field's end, or (malformed) text after it
            state = _IN_QUOTES if byte == 34 else _FIELD_START if byte == delimiter else _IN_FIELD
    carry[0], carry[1], carry[2], carry[3], carry[4] = state, skip_lf, ended, line, target
    return found
