"""`Kernel`: a frozen kernel spec with a stable id, whose Gram is derived from a linear Gram and
squared row norms without recomputing dot products (scikit-learn's conventions):

linear <x,y>; rbf exp(-gamma*||x-y||^2); poly (gamma*<x,y> + coef0)^degree; sigmoid tanh(gamma*<x,y> + coef0).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from xialpha.errors import UserError, one_of
from xialpha.estimators import KERNEL_PARAMETERS, LINEAR  # the one table (kernel names and their parameters)
from xialpha.features.preprocessing import stable_id

if TYPE_CHECKING:  # numpy is imported where a Gram is computed: a spec's kernels are checked without it
    import numpy as np

DEFAULT_GRAM_LIMIT_BYTES = 4 * 2**30  # bytes of one Gram matrix at most (a spec's gram_memory_limit)
_DEFAULTS = {"gamma": 1.0, "degree": 3, "coef0": 0.0}


@dataclass(frozen=True)
class Kernel:
    """name: linear/rbf/poly/sigmoid. gamma (> 0, default 1.0; scikit-learn's "scale" needs X, not a
    Gram), degree (integer >= 1, default 3) and coef0 (default 0.0) apply to the kernels that use them
    and must be left None for the others."""

    name: str = LINEAR
    gamma: float | None = None
    degree: int | None = None
    coef0: float | None = None

    def __post_init__(self) -> None:
        if self.name not in KERNEL_PARAMETERS:
            raise UserError(one_of(self.name, KERNEL_PARAMETERS), key="name")
        used = KERNEL_PARAMETERS[self.name]
        for parameter in ("gamma", "degree", "coef0"):
            value = getattr(self, parameter)
            if parameter not in used:
                if value is not None:
                    raise UserError(f"not a parameter of the {self.name} kernel", key=parameter)
                continue
            object.__setattr__(self, parameter, _checked(parameter, _DEFAULTS[parameter] if value is None else value))

    @property
    def id(self) -> str:
        """16 hex digits of the sha256 of params(): equal across processes and machines."""
        return stable_id(self.params())

    def params(self) -> dict:
        """{"name", "gamma", "degree", "coef0"}: flat and unprefixed; unused parameters are None."""
        return asdict(self)

    def svc_kwargs(self) -> dict:
        """Keyword arguments for sklearn.svm.SVC giving this kernel on a feature matrix."""
        return {
            "kernel": self.name,
            **{parameter: getattr(self, parameter) for parameter in KERNEL_PARAMETERS[self.name]},
        }

    def from_linear(
        self, G_lin: np.ndarray, sq_norms_rows: np.ndarray, sq_norms_cols: np.ndarray | None = None
    ) -> np.ndarray:
        """This kernel's Gram (float64, shape of G_lin) from the linear Gram G_lin = X·Yᵀ and the
        squared row norms of X (sq_norms_rows, (n_X,)) and Y (sq_norms_cols, (n_Y,); None: Y is X).

        The linear kernel returns G_lin itself; the others return a new array.
        """
        import numpy as np

        G_lin = np.asarray(G_lin, dtype=np.float64)
        if G_lin.ndim != 2:
            raise UserError(f"G_lin: expected a 2-d Gram matrix, got shape {G_lin.shape}")
        if self.name == LINEAR:
            return G_lin
        if self.name == "poly":
            out = G_lin * self._value("gamma")
            out += self._value("coef0")
            return np.power(out, self._value("degree"), out=out)
        if self.name == "sigmoid":
            out = G_lin * self._value("gamma")
            out += self._value("coef0")
            return np.tanh(out, out=out)
        return self._rbf(G_lin, sq_norms_rows, sq_norms_cols)

    def _value(self, parameter: str) -> float:
        """A parameter this kernel uses (never None once constructed: `__post_init__` sets its default)."""
        value = getattr(self, parameter)
        if value is None:
            raise UserError(f"not a parameter of the {self.name} kernel", key=parameter)
        return value

    def _rbf(self, G_lin: np.ndarray, sq_rows: np.ndarray, sq_cols: np.ndarray | None) -> np.ndarray:
        import numpy as np

        same = sq_cols is None
        sq_rows = _norms(sq_rows, G_lin.shape[0], "sq_norms_rows")
        sq_cols = sq_rows if sq_cols is None else _norms(sq_cols, G_lin.shape[1], "sq_norms_cols")
        if same and G_lin.shape[0] != G_lin.shape[1]:
            raise UserError(f"needed for a non-square Gram of shape {G_lin.shape}", key="sq_norms_cols")
        out = G_lin * -2.0
        out += sq_rows[:, None]
        out += sq_cols[None, :]
        np.maximum(out, 0.0, out=out)
        if same:
            np.fill_diagonal(out, 0.0)
        out *= -self._value("gamma")
        return np.exp(out, out=out)


def _checked(parameter: str, value: object) -> float | int:
    """A kernel parameter as a finite float (degree: int). Hand-written, not sklearn's check_scalar:
    that accepts True as a number and lets NaN/inf through its bounds, and a spec's degree = 3.0
    must pass as 3 where check_scalar(numbers.Integral) would refuse it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise UserError(f"must be a finite number, got {value!r}", key=parameter)
    if parameter == "degree":
        whole = int(float(value))
        if value != whole or value < 1:
            raise UserError(f"must be an integer >= 1, got {value!r}", key="degree")
        return whole
    if parameter == "gamma" and value <= 0:
        raise UserError(f"must be > 0, got {value!r}", key="gamma")
    return float(value)


def _norms(values: np.ndarray, expected: int, name: str) -> np.ndarray:
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    if values.shape != (expected,):
        raise UserError(f"expected shape ({expected},), got {values.shape}", key=name)
    return values
