"""The constraints of the Python API's parameters, declared once per public function: a value of the
wrong type, or out of its range or choices, is named before anything runs.

`xialpha.sweep(store=123)` would otherwise create a store named "123", `select(save="false")`
would save, `select(rho="1")` would end in a NumPy error and `certify(confidence=1.5)` would read
the store first. A public function declares a constraint for each of its parameters in one
place, `@checked(store=PATH, rho=RHO, ...)`, as scikit-learn's `_parameter_constraints` and
`validate_params` do. A constraint is any `Check`, a callable (parameter name, value) -> the value
(converted: a number to float); the vocabulary here is the types (`FLAG`, `TEXT`, `PATH`, ...,
`Instance`, `Names`), `Interval` (a number in a range) and `Options` (one of some names), each
`or_none()` to allow None too. A deeper layer that validates for its own callers
(`SelectionOptions` for the command line, `Objective`, `certify_selection`) calls the same
constraint object, so a rule is written once. (`xialpha.XiAlphaSearchCV`, a scikit-learn
estimator, declares scikit-learn's constraints; tests hold its rho to `RHO`.)

A refused value raises a `ParameterError` (a `UserError`) naming the parameter as its
`parameter` field, with what is wrong in one line: `ParameterTypeError` (also a `TypeError`) for a
value of the wrong type, `ParameterValueError` for one of the right type out of its range or choices.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypeVar, overload

from xialpha.errors import UserError, one_of

Function = TypeVar("Function", bound=Callable[..., Any])
Check = Callable[[str, Any], Any]  # (parameter name, value) -> the value, converted; or ParameterError


class ParameterError(UserError):
    """A Python API parameter refused by its constraint (the command line shows it as its flag, exit 2)."""


class ParameterTypeError(ParameterError, TypeError):
    """A Python API parameter of the wrong type."""


class ParameterValueError(ParameterError):
    """A Python API parameter of the right type out of its range or choices."""


def _shown(value: object) -> str:
    """`value` as an error shows it: a str or number as its repr (at most 40 characters), else nothing."""
    shown = repr(value) if isinstance(value, (str, numbers.Number)) else ""
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _refuse(name: str, value: object, wanted: str) -> NoReturn:
    raise ParameterTypeError(f"must be {wanted}, got {type(value).__name__} {_shown(value)}".rstrip(), parameter=name)


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


def check_client(name: str, value: object) -> Any:
    """`value` is None or a running distributed.Client (not its address)."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) or not callable(getattr(value, "submit", None)):
        _refuse(name, value, "a running distributed.Client (for an address: distributed.Client(address))")
    return value


FLAG: Check = check_flag
TEXT: Check = check_text  # a str or None
REQUIRED_TEXT: Check = functools.partial(check_text, optional=False)
PATH: Check = check_path  # a path or URI, or None
CLIENT: Check = check_client


@dataclass(frozen=True)
class Interval:
    """A real number (`integer`: a whole number, of type int) from `low` to `high` (None: unbounded),
    `closed` on the left, the right, both or neither side; finite; None too when `optional`.
    Refused as "must be a number > 0", "must be >= 0" (whole numbers), "must be between 0 and 1"
    (open), "must be a number from 0 to 1e+12" (closed), "must be in [0.5, 1)" (half-open), or
    "must be between 1,000 and 1,000,000" (whole numbers, closed)."""

    low: float | None = None
    high: float | None = None
    closed: Literal["neither", "left", "right", "both"] = "both"
    integer: bool = False
    optional: bool = False

    def __call__(self, name: str, value: object) -> Any:
        if value is None and self.optional:
            return None
        number: float = check_int(name, value) if self.integer else check_number(name, value)
        if not (math.isfinite(number) and self.admits(number)):
            raise ParameterValueError(
                f"must be {self.wanted()}, got {self._number(number, shown=True)}", parameter=name
            )
        return number

    def admits(self, number: float) -> bool:
        """Whether `number` lies within the interval's bounds."""
        left = self.closed in ("left", "both")
        right = self.closed in ("right", "both")
        above = self.low is None or (number >= self.low if left else number > self.low)
        below = self.high is None or (number <= self.high if right else number < self.high)
        return above and below

    def wanted(self) -> str:
        """What a value must be, as the error says it ("a number > 0", "between 0 and 1", ...)."""
        kind = "" if self.integer else "a number "
        left, right = self.closed in ("left", "both"), self.closed in ("right", "both")
        low, high = self._number(self.low), self._number(self.high)
        if self.high is None:
            return f"{kind}{'>=' if left else '>'} {low}"
        if self.low is None:
            return f"{kind}{'<=' if right else '<'} {high}"
        if self.closed == "neither" or (self.closed == "both" and self.integer):
            return f"between {low} and {high}"
        if self.closed == "both":
            return f"{kind}from {low} to {high}"
        return f"in {'[' if left else '('}{low}, {high}{']' if right else ')'}"

    def _number(self, number: float | None, *, shown: bool = False) -> str:
        """A bound (or, `shown`, the refused value) as the error writes it: 1,000 for a whole number;
        0.5 or 1e+12 for a bound, the repr (2.0, inf) for a value; "" for no bound."""
        if number is None:
            return ""
        if self.integer:
            return f"{int(number):,}"
        return repr(number) if shown else f"{number:g}"

    def or_none(self) -> Interval:
        """The same interval, None allowed too."""
        return dataclasses.replace(self, optional=True)


@dataclass(frozen=True)
class Options:
    """One of `choices` (str); None too when `optional`. A value among `reasons` (a refused name ->
    why, e.g. an estimator stored only for contrast) is refused with its reason, any other with the
    choices and the closest one (`xialpha.errors.one_of`)."""

    choices: tuple[str, ...]
    optional: bool = False
    reasons: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __call__(self, name: str, value: object) -> Any:
        if value is None and self.optional:
            return None
        text = check_text(name, value, optional=self.optional)
        if text not in self.choices:
            raise ParameterValueError(self.reasons.get(str(text)) or one_of(text, self.choices), parameter=name)
        return text

    def or_none(self) -> Options:
        """The same choices, None allowed too."""
        return dataclasses.replace(self, optional=True)


@dataclass(frozen=True)
class Instance:
    """An instance of one of `types`: refused as "<wanted>, got <its type>" (`wanted`, e.g. "give a
    path to a TOML file or TOML text", says what to give); None too when `optional`."""

    types: tuple[type, ...]
    wanted: str
    optional: bool = False

    def __call__(self, name: str, value: object) -> Any:
        if (value is None and self.optional) or isinstance(value, self.types):
            return value
        raise ParameterTypeError(f"{self.wanted}, got {type(value).__name__}", parameter=name)

    def or_none(self) -> Instance:
        """The same types, None allowed too."""
        return dataclasses.replace(self, optional=True)


@dataclass(frozen=True)
class Names:
    """A collection (list, tuple, set) of str, not one str: "give a list of <what>"; None too when
    `optional`. Returns it as a list."""

    what: str
    optional: bool = True

    def __call__(self, name: str, value: object) -> list[str] | None:
        if value is None and self.optional:
            return None
        if isinstance(value, str):
            raise ParameterTypeError(f"give a list of {self.what}, got the string {_shown(value)}", parameter=name)
        if not isinstance(value, Collection) or not all(isinstance(item, str) for item in value):
            raise ParameterTypeError(
                f"give a list of {self.what}, got {type(value).__name__} {_shown(value)}".rstrip(), parameter=name
            )
        return list(value)


def check_all(constraints: Mapping[str, Check], values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` (parameter name -> value), each checked and converted by its constraint in `constraints`."""
    return {name: constraints[name](name, value) for name, value in values.items()}


def checked(**constraints: Check) -> Callable[[Function], Function]:
    """A decorator: every parameter of the function is checked (and converted) by its constraint
    before the function runs, with the value the call gives it or its default. A function with a
    parameter without a constraint, or a constraint without a parameter, is refused (TypeError)
    when decorated; `function.checks` holds them, for readers and tests."""

    def decorate(function: Function) -> Function:
        signature = inspect.signature(function)
        unknown = sorted(set(constraints) - set(signature.parameters))
        if unknown:
            raise TypeError(f"checked: {function.__qualname__} has no parameter {unknown[0]!r}")
        missing = [name for name in signature.parameters if name not in constraints]
        if missing:
            raise TypeError(f"checked: {function.__qualname__}'s parameter {missing[0]!r} has no constraint")

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            bound.arguments.update(check_all(constraints, bound.arguments))
            return function(*bound.args, **bound.kwargs)

        call.checks = dict(constraints)  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return decorate
