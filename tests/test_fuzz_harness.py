"""The harness of the generated-case tests (test_fuzz_*.py): run the CLI in-process with a time
bound, hash a store tree, write TOML, generate hostile values; and checks of the harness itself.

Every generated case must end with exit code 0, 1, 2 or 3, no traceback and no "internal error"
on stderr (XIALPHA_DEBUG unset), the store byte-for-byte unchanged whenever the exit code is 2,
and an answer within the time bound (a hang raises `Hang`, which the CLI cannot swallow).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import io
import json
import math
import os
import re
import signal
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xialpha.cli import main

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
    import subprocess
    import sys

    spec = root / "spec.toml"
    spec.write_text(spec_text)
    done = subprocess.run([sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(root / "store"), "--quiet"],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return root / "store"


def tree_digest(root: Path) -> str:
    """SHA-256 over every entry under `root` (relative path, kind, bytes of files); "absent" if none."""
    if not os.path.lexists(root):
        return "absent"
    digest = hashlib.sha256()
    for path in sorted([root, *root.rglob("*")]) if root.is_dir() else [root]:
        mode = path.lstat().st_mode
        digest.update(f"{path.relative_to(root) if path != root else '.'}|{stat.S_IFMT(mode)}|".encode())
        if stat.S_ISREG(mode):
            digest.update(path.read_bytes())
    return digest.hexdigest()


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
        escaped = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else "\\\\" if c == "\\" else '\\"'
                          if c == '"' else c for c in value)
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
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in document.items() if not _is_table(v) and not _is_table_list(v)]
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

SPECIAL_NUMBERS = [0, 1, -1, 2, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**63, 10**18, 10**400, -(10**400),
                   0.5, -0.0, 1e-320, 1e308, -1e308, math.inf, -math.inf, math.nan]
SPECIAL_TEXT = ["", " ", "8GiB", "1..5kB", "1e999GB", "auto", "all", "none", "linear", "rbf", "poly", "porter",
                "english", "train", "test", "(", "\\", "$^$", "../x", "a" * 300, "\u00e9t\u00e9", "tcp://127.0.0.1:9",
                "s3://nope", "99999999999999999999D", "7D"]
scalars = st.one_of(
    st.integers(), st.integers(min_value=-(2**80), max_value=2**80), st.sampled_from(SPECIAL_NUMBERS),
    st.floats(), st.text(max_size=12), st.sampled_from(SPECIAL_TEXT), st.booleans(), st.dates(),
)
hostile = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(st.text(max_size=6), scalars, max_size=3),
                    st.lists(st.lists(scalars, max_size=2), min_size=1, max_size=2))


def corrupt(text: str, data: st.DataObject) -> bytes:
    """`text` as UTF-8, maybe cut short, with bytes inserted (NUL, 0xff, quotes, brackets) or lines doubled."""
    raw = text.encode("utf-8")
    kind = data.draw(st.sampled_from(["none"] * 6 + ["truncate", "insert", "double", "garbage"]), label="corruption")
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, len(raw)), label="cut")]
    if kind == "insert":
        at = data.draw(st.integers(0, len(raw)), label="at")
        junk = data.draw(st.sampled_from([b"\x00", b"\xff\xfe", b'"', b"[", b"]]", b"=", b"\n[corpus]\n", b"\r"]), label="junk")
        return raw[:at] + junk + raw[at:]
    if kind == "double":
        lines = raw.splitlines(keepends=True)
        index = data.draw(st.integers(0, max(0, len(lines) - 1)), label="line")
        return b"".join(lines[: index + 1] + lines[index:])
    if kind == "garbage":
        return data.draw(st.binary(max_size=200), label="garbage")
    return raw


# -- checks of the harness ------------------------------------------------------------------------------------

toml_documents = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.one_of(st.dictionaries(st.text(min_size=1, max_size=6), st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=4),
              st.lists(st.dictionaries(st.text(min_size=1, max_size=6), scalars, min_size=1, max_size=3), min_size=1, max_size=2)),
    max_size=4,
)


def _same(a, b) -> bool:
    """Equality that takes nan as equal to nan."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@FUZZ_SETTINGS
@given(toml_documents)
def test_the_toml_writer_round_trips(document):
    assert _same(tomllib.loads(toml_dumps(document)), document)


def test_a_hang_is_reported_not_waited_for(monkeypatch):
    monkeypatch.setattr("xialpha.cli.build_parser", lambda: _SleepingParser())
    with pytest.raises(Hang):
        run_cli(["sweep"], seconds=1)


class _SleepingParser:
    def parse_args(self, argv):
        import time

        time.sleep(5)


def test_check_outcome_catches_tracebacks_and_changed_stores():
    check_outcome(Outcome(["sweep"], 2, "", "xialpha sweep: error: bad\n"), "a", "a")
    with pytest.raises(AssertionError, match="the store changed"):
        check_outcome(Outcome(["sweep"], 2, "", "xialpha sweep: error: bad\n"), "a", "b")
    with pytest.raises(AssertionError):
        check_outcome(Outcome(["sweep"], 1, "", "Traceback (most recent call last):\n"))
    with pytest.raises(AssertionError):
        check_outcome(Outcome(["sweep"], 130, "", "interrupted\n"))


def test_tree_digest_sees_every_change(tmp_path):
    (tmp_path / "store" / "results").mkdir(parents=True)
    (tmp_path / "store" / "results" / "a.parquet").write_bytes(b"1")
    before = tree_digest(tmp_path / "store")
    (tmp_path / "store" / "results" / "a.parquet").write_bytes(b"2")
    changed = tree_digest(tmp_path / "store")
    (tmp_path / "store" / "new").mkdir()
    assert len({before, changed, tree_digest(tmp_path / "store")}) == 3
    assert tree_digest(tmp_path / "nothing") == "absent"
    assert json.dumps(toml_value("a\"b\\c\n")) and toml_value(float("nan")) == "nan"
