"""`config_key`: a stable identifier of one trained configuration, used to resume and deduplicate."""

from __future__ import annotations

import hashlib
import json
import numbers

import numpy as np

from xialpha.errors import UserError

KEY_HEX_CHARS = 32


def config_key(**fields: object) -> str:
    """Return the first 32 hex chars of sha256 over a canonical JSON of `fields`.

    Key order is irrelevant. Every real number (int, float, numpy scalar; not bool) is
    normalised to a float, so C=1, C=1.0 and C=np.float32(1) agree; -0.0 counts as 0.0.
    Values may be None, bool, str, numbers, and lists/tuples/dicts of those.
    """
    canonical = {name: _canonical(value, name) for name, value in fields.items()}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_HEX_CHARS]


def _canonical(value: object, path: str) -> object:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Real):  # includes numpy integers and floats
        return float(value) + 0.0  # -0.0 + 0.0 == 0.0; json writes floats with repr
    if isinstance(value, (list, tuple)):
        return [_canonical(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): _canonical(v, f"{path}.{k}") for k, v in value.items()}
    raise UserError(
        f"config_key field {path!r}: unsupported type {type(value).__name__} (use str, number, bool, None, list or "
        "dict)"
    )
