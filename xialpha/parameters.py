"""Checks of the Python API's parameters: a value of the wrong type is named before anything runs.

`xialpha.sweep(store=123)` would otherwise create a store named "123", `select(save="false")`
would save, and `select(rho="1")` would end in a NumPy error. Each check raises
`ParameterTypeError` (a `TypeError` and a `UserError`) naming the parameter as `name=`.
"""

from __future__ import annotations

import numbers
import os
from typing import Any, Literal, NoReturn, overload

from xialpha.errors import UserError


class ParameterTypeError(UserError, TypeError):
    """A Python API parameter of the wrong type (the command line shows it as its flag, exit 2)."""


def _refuse(name: str, value: object, wanted: str) -> NoReturn:
    shown = repr(value) if isinstance(value, (str, numbers.Number)) else ""
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    raise ParameterTypeError(f"must be {wanted}, got {type(value).__name__} {shown}".rstrip(), parameter=name)


def check_flag(name: str, value: object) -> bool:
    """`value` is True or False (not "false", not 0)."""
    if not isinstance(value, bool):
        _refuse(name, value, "True or False")
    return value


@overload
def check_number(name: str, value: object, *, optional: Literal[False] = False) -> float: ...
@overload
def check_number(name: str, value: object, *, optional: bool) -> float | None: ...


def check_number(name: str, value: object, *, optional: bool = False) -> float | None:
    """`value` is a real number (not a string or bool); None too when `optional`."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _refuse(name, value, "a number")
    return float(value)


def check_int(name: str, value: object) -> int:
    """`value` is a whole number of type int (not a string, float or bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _refuse(name, value, "a whole number")
    return int(value)


def check_text(name: str, value: object, *, optional: bool = True) -> str | None:
    """`value` is a str (None too when `optional`)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        _refuse(name, value, "a str" + (" or None" if optional else ""))
    return value


def check_path(name: str, value: object, *, optional: bool = True) -> str | os.PathLike[str] | None:
    """`value` is a non-empty path or URI (str or os.PathLike; None too when `optional`)."""
    if value is None and optional:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        _refuse(name, value, "a path or URI (str or os.PathLike)")
    return value


def check_client(value: object) -> Any:
    """`value` is None or a running distributed.Client (not its address)."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) or not callable(getattr(value, "submit", None)):
        _refuse("client", value, "a running distributed.Client (for an address: distributed.Client(address))")
    return value
