"""Shared test fixtures: where ../shared is, and skips when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REUTERS_DIR = SHARED / "corpora" / "reuters21578"


@pytest.fixture(scope="session")
def reuters_dir() -> Path:
    """The Reuters-21578 SGML directory under ../shared; skips the test where it is absent."""
    if not (REUTERS_DIR / "reut2-000.sgm").is_file():
        pytest.skip(f"Reuters-21578 not found at {REUTERS_DIR} (../shared is absent)")
    return REUTERS_DIR
