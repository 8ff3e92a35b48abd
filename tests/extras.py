"""The heavy test dependencies (an S3 server, Kubernetes' schemas and client, a browser driver) are in
the `test-full` extra, which CI installs, not in `test`, which the README's test command installs:
a test that needs one skips without it, saying how to install it (issue 49.8)."""

from __future__ import annotations

import pytest

FULL_EXTRA = "pip install -e '.[test-full]'"


def needs(module: str):
    """`module` imported, else the test skips naming the extra that installs it."""
    return pytest.importorskip(module, reason=f"{module} is not installed (the test-full extra: {FULL_EXTRA})")
