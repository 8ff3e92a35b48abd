"""Typed access to a TOML table that remembers which keys were read, for path-naming errors."""

from __future__ import annotations

import re

from xialpha.errors import UserError

_MISSING = object()
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


class Table:
    """One TOML table at a dotted `path`; call `done()` after reading to reject unknown keys."""

    def __init__(self, raw: dict, path: str):
        self.raw = raw
        self.path = path
        self._read: set[str] = set()

    def _key(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, default, required: bool):
        self._read.add(key)
        if key in self.raw:
            return self.raw[key]
        if required:
            raise UserError(f"{self._key(key)}: is required")
        return default

    def table(self, key: str, required: bool = False) -> "Table":
        value = self._get(key, {}, required)
        if not isinstance(value, dict):
            raise UserError(f"{self._key(key)}: must be a table")
        return Table(value, self._key(key))

    def table_list(self, key: str, default: list) -> list[tuple[str, "Table"]]:
        value = self._get(key, default, False)
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise UserError(f"{self._key(key)}: must be a list of tables")
        return [(f"{self._key(key)}[{i}]", Table(v, f"{self._key(key)}[{i}]")) for i, v in enumerate(value)]

    def str(self, key: str, default=_MISSING, required: bool = False):
        value = self._get(key, None if default is _MISSING else default, required or default is _MISSING)
        if value is not None and not isinstance(value, str):
            raise UserError(f"{self._key(key)}: must be a string, got {value!r}")
        return value

    def str_list(self, key: str, default: list) -> list[str]:
        value = self._get(key, default, False)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UserError(f"{self._key(key)}: must be a list of strings")
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str | None) -> str | None:
        value = self.str(key, default)
        if value not in options and not (value is None and default is None):
            raise UserError(f"{self._key(key)}: must be one of {', '.join(options)}, got {value!r}")
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self._get(key, default, False)
        if not isinstance(value, bool):
            raise UserError(f"{self._key(key)}: must be true or false, got {value!r}")
        return value

    def int(self, key: str, default, minimum: int | None = None):
        value = self._get(key, default, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserError(f"{self._key(key)}: must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise UserError(f"{self._key(key)}: must be >= {minimum}, got {value}")
        return value

    def float(self, key: str, default: float, positive: bool = False) -> float:
        return self._number(self._key(key), self._get(key, default, False), positive)

    def float_list(self, key: str, default: list, positive: bool = False) -> list[float]:
        value = self._get(key, default, False)
        values = value if isinstance(value, list) else [value]
        if not values:
            raise UserError(f"{self._key(key)}: must not be empty")
        out = [self._number(f"{self._key(key)}[{i}]", v, positive) for i, v in enumerate(values)]
        if len(set(out)) != len(out):
            raise UserError(f"{self._key(key)}: has duplicate values")
        return out

    def bytes(self, key: str, default):
        """A size: an integer number of bytes or a string like "8GiB"."""
        value = self._get(key, default, False)
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            return value
        match = re.fullmatch(r"\s*([0-9.]+)\s*([a-zA-Z]*)\s*", str(value))
        if not match or match.group(2).lower() not in _UNITS:
            raise UserError(f"{self._key(key)}: must be a size like 8GiB or 500MB, got {value!r}")
        return int(float(match.group(1)) * _UNITS[match.group(2).lower()])

    def rest(self) -> dict:
        """All keys not read yet (and marks them read), e.g. a loader's keyword arguments."""
        out = {k: v for k, v in self.raw.items() if k not in self._read}
        self._read.update(out)
        return out

    def done(self) -> None:
        unknown = [k for k in self.raw if k not in self._read]
        if unknown:
            raise UserError(f"{self._key(unknown[0])}: unknown key")

    @staticmethod
    def _number(path: str, value, positive: bool) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserError(f"{path}: must be a number, got {value!r}")
        if value != value or value in (float("inf"), float("-inf")):
            raise UserError(f"{path}: must be finite, got {value!r}")
        if positive and value <= 0:
            raise UserError(f"{path}: must be > 0, got {value!r}")
        return float(value)
