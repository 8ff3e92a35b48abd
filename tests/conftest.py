"""Shared test fixtures: where ../shared is, where Reuters-21578 is, and skips when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# $XIALPHA_REUTERS: a Reuters-21578 SGML directory (`xialpha fetch reuters21578 --dest DIR`), else ../shared's
REUTERS_DIR = Path(os.environ.get("XIALPHA_REUTERS") or SHARED / "corpora" / "reuters21578").expanduser()


@pytest.fixture(scope="session")
def reuters_dir() -> Path:
    """The Reuters-21578 SGML directory ($XIALPHA_REUTERS, else under ../shared); skips the test where it is absent."""
    if not (REUTERS_DIR / "reut2-000.sgm").is_file():
        pytest.skip(
            f"Reuters-21578 not found at {REUTERS_DIR} (set XIALPHA_REUTERS to a copy that "
            "`xialpha fetch reuters21578 --dest DIR` made)"
        )
    return REUTERS_DIR
