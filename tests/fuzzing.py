"""The harness of the generated-case tests (test_fuzz_*.py): run the CLI in-process with a time
bound, write TOML, generate hostile values, and a store for dry runs (tests/test_fuzz_harness.py
checks the harness itself; `swept.tree_digest` hashes a store tree).

Every generated case must end with exit code 0, 1, 2 or 3, no traceback and no "internal error"
on stderr (XIALPHA_DEBUG unset), the store byte-for-byte unchanged whenever the exit code is 2,
and an answer within the time bound (a hang raises `Hang`, which the CLI cannot swallow).
"""

from __future__ import annotations

import contextlib
import datetime
import io
import math
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from xialpha.cli import main
from xialpha.estimators.metrics import Estimate
from xialpha.storage.opening import open_store
from xialpha.storage.schema import estimate_values

EXIT_CODES = {0, 1, 2, 3}
CASE_SECONDS = 30  # far above what any case needs (a dry run takes well under a second)
FUZZ_SETTINGS = settings(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))


class Hang(BaseException):
    """A case did not answer in time (BaseException: `except Exception` in the CLI cannot catch it)."""


@dataclass
class Outcome:
    argv: list[str]
    code: int
    out: str
    err: str


@contextlib.contextmanager
def time_bound(seconds: int, what: object):
    """Raise Hang in the main thread when the block runs longer than `seconds` (SIGALRM)."""

    def hang(signum, frame):
        raise Hang(f"no answer within {seconds} s: {what}")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(argv: list[str], seconds: int = CASE_SECONDS) -> Outcome:
    """main(argv) with stdout/stderr captured; argparse's SystemExit becomes its code; Hang after `seconds`."""
    out, err = io.StringIO(), io.StringIO()
    with time_bound(seconds, argv), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return Outcome(argv, code, out.getvalue(), err.getvalue())


def swept_store(root: Path, spec_text: str) -> Path:
    """root/store holding the sweep of `spec_text` (root/spec.toml), run by a real `xialpha sweep` process."""
    spec = root / "spec.toml"
    spec.write_text(spec_text)
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(root / "store"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    return root / "store"


def check_outcome(outcome: Outcome, store_before: str | None = None, store_after: str | None = None) -> None:
    """The invariants every generated case must keep."""
    where = f"{outcome.argv!r} -> exit {outcome.code}\n{outcome.err[-2000:]}"
    assert outcome.code in EXIT_CODES, where
    assert "Traceback" not in outcome.err and "internal error" not in outcome.err, where
    if outcome.code != 0:
        assert outcome.err.strip(), where
    if outcome.code == 2:
        first = outcome.err.splitlines()[0]
        assert first.startswith(("usage: ", f"xialpha {outcome.argv[0]}: error: ")), where
        if not first.startswith("usage: "):
            assert outcome.err.count("\n") == 1, where
        assert store_before == store_after, f"the store changed: {where}"


@pytest.fixture
def no_debug(monkeypatch):
    monkeypatch.delenv("XIALPHA_DEBUG", raising=False)


# -- TOML writing ---------------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_value(value) -> str:
    """A TOML literal for a str, bool, int, float (inf and nan too), date, list or dict (inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        escaped = "".join(
            f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else "\\\\" if c == "\\" else '\\"' if c == '"' else c
            for c in value
        )
        return f'"{escaped}"'
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_value(key)


def toml_dumps(document: dict) -> str:
    """A TOML document: top-level tables as [name], lists of tables as [[name]], other values inline."""
    lines = [
        f"{toml_key(k)} = {toml_value(v)}" for k, v in document.items() if not _is_table(v) and not _is_table_list(v)
    ]
    for name, value in document.items():
        if _is_table(value):
            lines += [f"[{toml_key(name)}]", *(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())]
        elif _is_table_list(value):
            for table in value:
                lines += [f"[[{toml_key(name)}]]", *(f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


def _is_table(value) -> bool:
    return isinstance(value, dict)


def _is_table_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


# -- hostile values -------------------------------------------------------------------------------------------

SPECIAL_NUMBERS = [
    0,
    1,
    -1,
    2,
    2**31,
    2**53 + 1,
    2**63 - 1,
    -(2**63),
    2**63,
    10**18,
    10**400,
    -(10**400),
    0.5,
    -0.0,
    1e-320,
    1e308,
    -1e308,
    math.inf,
    -math.inf,
    math.nan,
]
SPECIAL_TEXT = [
    "",
    " ",
    "8GiB",
    "1..5kB",
    "1e999GB",
    "auto",
    "all",
    "none",
    "linear",
    "rbf",
    "poly",
    "porter",
    "english",
    "train",
    "test",
    "(",
    "\\",
    "$^$",
    "../x",
    "a" * 300,
    "\u00e9t\u00e9",
    "tcp://127.0.0.1:9",
    "s3://nope",
    "99999999999999999999D",
    "7D",
]
scalars = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from(SPECIAL_NUMBERS),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(SPECIAL_TEXT),
    st.booleans(),
    st.dates(),
)
hostile = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.text(max_size=6), scalars, max_size=3),
    st.lists(st.lists(scalars, max_size=2), min_size=1, max_size=2),
)


def corrupt(text: str, data: st.DataObject) -> bytes:
    """`text` as UTF-8, maybe cut short, with bytes inserted (NUL, 0xff, quotes, brackets) or lines doubled."""
    raw = text.encode("utf-8")
    kind = data.draw(st.sampled_from(["none"] * 6 + ["truncate", "insert", "double", "garbage"]), label="corruption")
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, len(raw)), label="cut")]
    if kind == "insert":
        at = data.draw(st.integers(0, len(raw)), label="at")
        junk = data.draw(
            st.sampled_from([b"\x00", b"\xff\xfe", b'"', b"[", b"]]", b"=", b"\n[corpus]\n", b"\r"]), label="junk"
        )
        return raw[:at] + junk + raw[at:]
    if kind == "double":
        lines = raw.splitlines(keepends=True)
        index = data.draw(st.integers(0, max(0, len(lines) - 1)), label="line")
        return b"".join(lines[: index + 1] + lines[index:])
    if kind == "garbage":
        return data.draw(st.binary(max_size=200), label="garbage")
    return raw


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store holding two hand-made result rows (no cluster needed)."""
    root = tmp_path_factory.mktemp("fuzz-specs") / "store"
    rows = [
        {
            "sweep_id": "other",
            "run_id": "r",
            "status": "ok",
            "data_fingerprint": "fp",
            "config_key": f"k{C}",
            "category": "a",
            "preprocessing_id": "pp",
            "kernel": "linear",
            "kernel_id": "lin",
            "C": C,
            "j": 1.0,
            "rho": 1.0,
            "n": 10,
            "n_pos": 2,
            "n_sv": 3,
            **estimate_values(Estimate("xa", 10, 2, 1, 0)),
        }
        for C in (1.0, 2.0)
    ]
    open_store(str(root), create=True, writable=True).datasets.write_results(rows)
    return root
