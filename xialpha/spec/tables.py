"""Spec files as TOML tables: reading the text (`read_spec_text`), parsing it (`parse_toml`),
typed access to a table that remembers which keys were read, for path-naming errors; the
checks every spec value passes (64-bit integers, finite floats) and byte sizes.

A spec is untrusted input: it is read only up to MAX_SPEC_BYTES and its tables and arrays may nest
MAX_SPEC_DEPTH levels deep (the deepest real spec nests 3: `[cluster.options.env]`); beyond either
it is refused in one line naming the file, before anything walks it. The nesting its headers,
dotted keys, arrays and inline tables state is counted on the text before it is parsed
(`_nesting_in_text`, one linear scan): tomllib records every prefix of a dotted key, so a key of
50,000 parts would cost it gigabytes and minutes before any check of the parsed tables."""

from __future__ import annotations

import builtins
import math
import re
import tomllib
from pathlib import Path
from typing import Any, overload

from xialpha.errors import UserError, did_you_mean, one_of

_MISSING = object()
INT64_MAX = 2**63 - 1
MAX_SPEC_BYTES = 4 * 2**20  # a spec's size at most: a list of 100,000 C values or category names takes ~1 MiB
MAX_SPEC_DEPTH = 16  # tables and arrays nested at most this deep (`[a.b]` is 2, `x = [[1]]` is 2 under its table)

# TOML's pieces as `_nesting_in_text` scans them: every regex is linear (possessive quantifiers,
# alternatives that start with different characters), so no text makes the scan backtrack
_PART = r"[A-Za-z0-9_-]++" r'|"(?:[^"\\\n]|\\[^\n])*+"' r"|'[^'\n]*+'"  # a key's part: bare, "basic", 'literal'
_KEY = re.compile(rf"(?:{_PART})(?:[ \t]*+\.[ \t]*+(?:{_PART}))*+")
_KEY_PART = re.compile(_PART)
_BLANKS = re.compile(r"(?:[ \t]++|#[^\n]*+)*+")  # blanks, and a comment up to the end of its line
_IN_ARRAY = re.compile(r"(?:[^\[\]{}\"'#=]++|#[^\n]*+)++")  # scalars, commas, blanks, comments, lines' ends
_HEADER_END = re.compile(r"[ \t]*+(\]\]?)")
_KEY_END = re.compile(r"[ \t]*+=")
_VALUE_TOKEN = re.compile(
    r"(?P<blank>[ \t]++|#[^\n]*+|\r?\n)"
    r'|"{3}(?:[^"\\]|\\.|"{1,2}(?!"))*+"{3,5}'  # a """multi-line basic string"""
    r"|'{3}(?:[^']|'{1,2}(?!'))*+'{3,5}"  # a '''multi-line literal string'''
    r"""|(?P<unclosed>"{3}|'{3})"""  # a multi-line string never closed: the scan stops
    r'|"(?:[^"\\\n]|\\[^\n])*+"'
    r"|'[^'\n]*+'"
    r"|(?P<open>[\[{])|(?P<close>[\]}])|(?P<comma>,)"
    r"""|[^ \t\r\n#"'\[\]{},=]++""",  # a number, date, true or false
    re.DOTALL,
)


class Table:
    """One TOML table at a dotted `path`; call `done()` after reading to reject unknown keys."""

    def __init__(self, raw: dict, path: str):
        self.raw = raw
        self.path = path
        self._read: set[str] = set()

    def _key(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, default: object, required: bool) -> Any:
        """The raw TOML value at `key` (any TOML type), else `default`."""
        self._read.add(key)
        if key in self.raw:
            return self.raw[key]
        if required:
            raise UserError(f"{self._key(key)}: is required")
        return default

    def table(self, key: str, required: bool = False) -> Table:
        value = self._get(key, {}, required)
        if not isinstance(value, dict):
            raise UserError(f"{self._key(key)}: must be a table")
        return Table(value, self._key(key))

    def table_list(self, key: str, default: list) -> list[tuple[str, Table]]:
        value = self._get(key, default, False)
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise UserError(f"{self._key(key)}: must be a list of tables")
        return [(f"{self._key(key)}[{i}]", Table(v, f"{self._key(key)}[{i}]")) for i, v in enumerate(value)]

    @overload
    def str(self, key: builtins.str, default: builtins.str = ..., required: builtins.bool = False) -> builtins.str: ...
    @overload
    def str(self, key: builtins.str, default: None, required: builtins.bool = False) -> builtins.str | None: ...

    def str(
        self, key: builtins.str, default: object = _MISSING, required: builtins.bool = False
    ) -> builtins.str | None:
        value = self._get(key, None if default is _MISSING else default, required or default is _MISSING)
        if value is not None and not isinstance(value, str):
            raise UserError(f"{self._key(key)}: must be a string, got {value!r}")
        return value

    def str_list(self, key: builtins.str, default: list) -> list[builtins.str]:
        value = self._get(key, default, False)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UserError(f"{self._key(key)}: must be a list of strings")
        return value

    @overload
    def choice(self, key: builtins.str, options: tuple[builtins.str, ...], default: builtins.str) -> builtins.str: ...
    @overload
    def choice(self, key: builtins.str, options: tuple[builtins.str, ...], default: None) -> builtins.str | None: ...

    def choice(
        self, key: builtins.str, options: tuple[builtins.str, ...], default: builtins.str | None
    ) -> builtins.str | None:
        value = self.str(key, default)
        if value not in options and not (value is None and default is None):
            raise UserError(f"{self._key(key)}: {one_of(value, options)}")
        return value

    def bool(self, key: builtins.str, default: builtins.bool) -> builtins.bool:
        value = self._get(key, default, False)
        if not isinstance(value, bool):
            raise UserError(f"{self._key(key)}: must be true or false, got {value!r}")
        return value

    @overload
    def int(
        self,
        key: builtins.str,
        default: builtins.int,
        minimum: builtins.int | None = None,
        maximum: builtins.int | None = None,
    ) -> builtins.int: ...
    @overload
    def int(
        self, key: builtins.str, default: None, minimum: builtins.int | None = None, maximum: builtins.int | None = None
    ) -> builtins.int | None: ...

    def int(
        self,
        key: builtins.str,
        default: builtins.int | None,
        minimum: builtins.int | None = None,
        maximum: builtins.int | None = None,
    ) -> builtins.int | None:
        value = self._get(key, default, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserError(f"{self._key(key)}: must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise UserError(f"{self._key(key)}: must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise UserError(f"{self._key(key)}: must be <= {maximum:,}, got {value:,}")
        return value

    def float(
        self,
        key: builtins.str,
        default: builtins.float,
        positive: builtins.bool = False,
        within: tuple[builtins.float, builtins.float] | None = None,
    ) -> builtins.float:
        """A finite number (> 0 if `positive`, inside the closed interval `within` if given)."""
        value = self._number(self._key(key), self._get(key, default, False), positive)
        if within is not None and not within[0] <= value <= within[1]:
            raise UserError(f"{self._key(key)}: must be between {within[0]:g} and {within[1]:g}, got {value:g}")
        return value

    def float_list(self, key: builtins.str, default: list, positive: builtins.bool = False) -> list[builtins.float]:
        value = self._get(key, default, False)
        values = value if isinstance(value, list) else [value]
        if not values:
            raise UserError(f"{self._key(key)}: must not be empty")
        out = [self._number(f"{self._key(key)}[{i}]", v, positive) for i, v in enumerate(values)]
        if len(set(out)) != len(out):
            raise UserError(f"{self._key(key)}: has duplicate values")
        return out

    @overload
    def bytes(self, key: builtins.str, default: builtins.int | builtins.str) -> builtins.int: ...
    @overload
    def bytes(self, key: builtins.str, default: None) -> builtins.int | None: ...

    def bytes(self, key: builtins.str, default: builtins.int | builtins.str | None) -> builtins.int | None:
        """A size: an integer number of bytes or a string like "8GiB" (see `parse_size`)."""
        value = self._get(key, default, False)
        return None if value is None else parse_size(self._key(key), value)

    def rest(self) -> dict:
        """All keys not read yet (and marks them read), e.g. a loader's keyword arguments."""
        out = {k: v for k, v in self.raw.items() if k not in self._read}
        self._read.update(out)
        return out

    def done(self) -> None:
        unknown = [k for k in self.raw if k not in self._read]
        if unknown:
            raise UserError(
                f"{self._key(unknown[0])}: unknown "
                f"key{did_you_mean(unknown[0], sorted(self._read), listing='keys', list_when_close=False)}"
            )

    @staticmethod
    def _number(path: builtins.str, value: object, positive: builtins.bool) -> builtins.float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserError(f"{path}: must be a number, got {value!r}")
        if value != value or value in (float("inf"), float("-inf")):
            raise UserError(f"{path}: must be finite, got {value!r}")
        if positive and value <= 0:
            raise UserError(f"{path}: must be > 0, got {value!r}")
        return float(value)


def parse_size(path: str, value: object) -> int:
    """Bytes (> 0, < 2**63) of a size like "8GiB", "500 MB" or a number, read as Dask reads memory
    limits (`dask.utils.parse_bytes`, whose grammar `_bytes` follows without importing Dask:
    tests/spec/test_spec_light.py compares them); UserError naming `path` otherwise."""
    size = 0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        size = int(value) if math.isfinite(value) else 0  # what parse_bytes gives a number
    elif isinstance(value, str) and value.strip():
        try:
            size = _bytes(value)
        except (ValueError, OverflowError):
            size = 0
    if not 0 < size <= INT64_MAX:
        raise UserError(f"{path}: must be a size like 8GiB or 500MB, got {_short(value)}")
    return int(size)


_BYTE_UNITS = {
    "": 1,
    "b": 1,
    **{f"{prefix}{suffix}": 1000**power for power, prefix in enumerate("kmgtp", 1) for suffix in ("", "b")},
    **{f"{prefix}i{suffix}": 1024**power for power, prefix in enumerate("kmgtp", 1) for suffix in ("", "b")},
}


def _bytes(text: str) -> int:
    """Bytes of "100", "5.4 kB", "1kiB", "1e6 kB" or "MB" (one of the unit): a number, then a unit
    of _BYTE_UNITS in any case, spaces ignored; ValueError otherwise."""
    text = text.replace(" ", "")
    if not any(char.isdigit() for char in text):
        text = f"1{text}"
    number = text.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    unit = text[len(number) :].lower()
    if unit not in _BYTE_UNITS:
        raise ValueError(f"not a byte unit: {unit!r}")
    return int(float(number) * _BYTE_UNITS[unit])


def check_values(value: object, path: str = "") -> None:
    """Refuse integers beyond 64 bits (TOML's range) and infinite or NaN floats anywhere in a
    parsed spec, naming the key path: no field takes them, and they break arithmetic later."""
    if isinstance(value, dict):
        for key, item in value.items():
            check_values(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_values(item, f"{path}[{index}]")
    elif isinstance(value, int) and not isinstance(value, bool) and not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise UserError(f"{path}: integer out of range (TOML integers are 64-bit), got {_short(value)}")
    elif isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise UserError(f"{path}: must be a finite number, got {value!r}")


def _short(value: object) -> str:
    """repr(value) for messages; a huge integer as its size, other long reprs cut to 40 characters."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def read_spec_text(path: Path) -> str:
    """The text of the spec file at `path`: UserError when it is not a regular file, over
    MAX_SPEC_BYTES (only that much is read) or not UTF-8."""
    if not path.is_file():
        raise UserError(f"{path}: spec file not found")
    with path.open("rb") as file:
        data = file.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise UserError(f"{path}: larger than {MAX_SPEC_BYTES // 2**20} MiB, the most a spec may be; is it a spec?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save the spec as UTF-8"
        ) from None


def parse_toml(text: str, source: str) -> Table:
    """The root table of TOML `text`, every value checked by `check_values`; errors name `source`:
    also text over MAX_SPEC_BYTES and tables or arrays nested deeper than MAX_SPEC_DEPTH."""
    if len(text) > MAX_SPEC_BYTES:  # characters: at least as many bytes
        raise UserError(f"{source}: larger than {MAX_SPEC_BYTES // 2**20} MiB, the most a spec may be")
    if (stated := _nesting_in_text(text)) is not None:
        raise UserError(
            f"{source}: line {stated[0]}: tables or arrays nested more than {MAX_SPEC_DEPTH} levels deep "
            f"(at {_short_path(stated[1])})"
        )
    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, and integers of more than 4300 digits
        raise UserError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise UserError(f"{source}: not valid TOML: arrays or tables nested too deeply") from None
    if (deep := _too_deep(data)) is not None:
        raise UserError(
            f"{source}: tables or arrays nested more than {MAX_SPEC_DEPTH} levels deep (at {_short_path(deep)})"
        )
    try:
        check_values(data)
    except UserError as exc:
        raise exc.within(file=source) from None
    return Table(data, "")


def _nesting_in_text(text: str) -> tuple[int, list[str]] | None:
    """(line, key path) of the first table or array TOML `text` states nested deeper than
    MAX_SPEC_DEPTH (by a header, a dotted key, an array or inline table in a value), or None; in
    one linear scan of the text, without parsing it. Counts as `_too_deep` does ("[]" stands for
    an array's element, the table of an array-of-tables header `[[a.b]]` one of them); where the
    text is not TOML, or not TOML this scan knows, it stops there, and tomllib names the error."""
    line, at = 1, 0
    table: list[str] = []  # the path of the table the last header opened
    open_: list[tuple[str, list[str]]] = []  # the arrays "[" and inline tables "{" open, with their paths
    while (at := _BLANKS.match(text, at).end()) < len(text):  # type: ignore[union-attr]  # it matches ""
        if text.startswith(("\n", "\r\n"), at):  # a line without a key
            at, line = text.index("\n", at) + 1, line + 1
        elif not open_ and text[at] == "[":  # a header: [table] or [[array of tables]]
            double = text.startswith("[[", at)
            key = _KEY.match(text, _BLANKS.match(text, at + 1 + double).end())  # type: ignore[union-attr]
            closing = None if key is None else _HEADER_END.match(text, key.end())
            if key is None or closing is None or len(closing[1]) != 1 + double:
                return None
            table = _parts(key[0]) + ["[]"] * double
            if len(table) > MAX_SPEC_DEPTH:
                return line, table
            at = closing.end()
        elif open_ and text[at] == "}":  # an inline table ends: the value it is in goes on
            stated, at, line = _value(text, at, line, open_[-1][1], open_)
            if stated is not None or at < 0:
                return stated
        else:  # key = value, in the table of the last header or in an inline table
            key = _KEY.match(text, at)
            equals = None if key is None else _KEY_END.match(text, key.end())
            if key is None or equals is None:
                return None
            path = (open_[-1][1] if open_ else table) + _parts(key[0])
            if len(path) - 1 > MAX_SPEC_DEPTH:  # the tables of its dotted key
                return line, path[:-1]
            stated, at, line = _value(text, equals.end(), line, path, open_)
            if stated is not None or at < 0:
                return stated
    return None


def _value(
    text: str, at: int, line: int, path: list[str], open_: list[tuple[str, list[str]]]
) -> tuple[tuple[int, list[str]] | None, int, int]:
    """Scan the value at `at` of the key at `path` up to where the next key may start: past the
    end of its line, an inline table's "{" or its comma. (line and path of an array or inline
    table nested deeper than MAX_SPEC_DEPTH, or None; where the scan goes on, -1 where it stops;
    its line). `open_` holds the arrays and inline tables open, as the scan leaves them."""
    element = path  # the path of the next value
    while at < len(text):
        if open_ and open_[-1][0] == "[" and (run := _IN_ARRAY.match(text, at)):  # the bulk of a long array
            at, line = run.end(), line + run[0].count("\n")
            continue
        token = _VALUE_TOKEN.match(text, at)
        if token is None or token["unclosed"]:
            return None, -1, line
        at = token.end()
        if token["open"]:
            if len(element) > MAX_SPEC_DEPTH:
                return (line, element), -1, line
            open_.append((token[0], element))
            if token[0] == "{":
                return None, at, line
            element = [*element, "[]"]
        elif token["close"]:
            if not open_ or open_.pop()[0] != ("{" if token[0] == "}" else "["):
                return None, -1, line
            element = [*open_[-1][1], "[]"] if open_ and open_[-1][0] == "[" else element
        elif token["comma"]:
            if open_ and open_[-1][0] == "{":  # the inline table's next key
                return None, at, line
        else:  # a blank, a comment, a line's end, a string or a scalar
            line += token[0].count("\n")
            if not open_ and token[0].endswith("\n"):
                return None, at, line
    return None, at, line


def _parts(key: str) -> list[str]:
    """The parts of a dotted TOML key as written (quoted ones with their quotes)."""
    return _KEY_PART.findall(key)


def _too_deep(data: dict) -> list[str] | None:
    """The key path of a table or array nested deeper than MAX_SPEC_DEPTH in `data`, or None;
    walked with a stack, not recursion (a dotted header `[a.a.a...]` nests without bound). A
    value that is neither is no level: `[t0. ... .t15] x = 1` nests 16 deep."""
    stack: list[tuple[object, list[str]]] = [(data, [])]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_SPEC_DEPTH and isinstance(value, (dict, list)):
            return path
        if isinstance(value, dict):
            stack.extend((item, [*path, str(key)]) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, [*path, f"[{index}]"]) for index, item in enumerate(value))
    return None


def _short_path(path: list[str]) -> str:
    """A deep key path for a message: its first keys, the depth, its last key."""
    dotted = ".".join(path[:3])
    return f"{_short_key(dotted)}... ({len(path)} levels) ...{_short_key(path[-1])}"


def _short_key(key: str) -> str:
    return key if len(key) <= 40 else f"{key[:40]}..."
