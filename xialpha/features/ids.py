"""Stable ids of frozen settings: equal across processes, machines and Python versions."""

from __future__ import annotations

import hashlib
import json


def stable_id(params: dict) -> str:
    """16 hex digits of the sha256 of the canonical JSON of `params` (keys sorted)."""
    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
