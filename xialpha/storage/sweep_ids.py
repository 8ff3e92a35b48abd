"""What may name a sweep (or a drift check): a part of the store's paths, checked by the spec layer
and the store alike, importing nothing."""

from __future__ import annotations

import re
from typing import TypeGuard

_SWEEP_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SWEEP_ID_RULE = "1-64 letters, digits, '-', '_' or '.' (not '.' or '..' alone)"


def valid_sweep_id(value: object) -> TypeGuard[str]:
    """Whether `value` may name a sweep (or drift check): SWEEP_ID_RULE, safe as a path part."""
    return isinstance(value, str) and bool(_SWEEP_ID.fullmatch(value)) and value not in (".", "..")
