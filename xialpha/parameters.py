"""Checks of the Python API's parameters: a value of the wrong type is named before anything runs.

`xialpha.sweep(store=123)` would otherwise create a store named "123", `select(save="false")`
would save, and `select(rho="1")` would end in a NumPy error. Each check raises
`ParameterTypeError` (a `TypeError` and a `UserError`) naming the parameter as `name=`.
A public function declares its checks in one place, `@checked(store=PATH, force=FLAG, ...)`,
as scikit-learn's `validate_params` does; what a value means (a metric among the metrics) is
checked where it is used (`xialpha.selection.options.SelectionOptions`, ...).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from collections.abc import Callable
from typing import Any, Literal, NoReturn, TypeVar, overload

from xialpha.errors import UserError

Function = TypeVar("Function", bound=Callable[..., Any])
Check = Callable[[str, Any], Any]  # (parameter name, value) -> the value, converted; or ParameterTypeError


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


FLAG: Check = check_flag
NUMBER: Check = check_number
OPTIONAL_NUMBER: Check = functools.partial(check_number, optional=True)
INT: Check = check_int
TEXT: Check = check_text  # a str or None
REQUIRED_TEXT: Check = functools.partial(check_text, optional=False)
PATH: Check = check_path  # a path or URI, or None


def CLIENT(name: str, value: object) -> Any:
    return check_client(value)


def checked(**checks: Check) -> Callable[[Function], Function]:
    """A decorator: each parameter named in `checks` is checked (and converted) by its check before
    the function runs, with the value the call gives it or its default."""

    def decorate(function: Function) -> Function:
        signature = inspect.signature(function)
        unknown = sorted(set(checks) - set(signature.parameters))
        if unknown:
            raise TypeError(f"checked: {function.__qualname__} has no parameter {unknown[0]!r}")

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            for name, check in checks.items():
                bound.arguments[name] = check(name, bound.arguments[name])
            return function(*bound.args, **bound.kwargs)

        call.checks = dict(checks)  # type: ignore[attr-defined]  # what is checked, for readers and tests
        return call  # type: ignore[return-value]

    return decorate
