"""A corpus or a plan that cannot fit in memory is refused before it is built, a dry run included,
with the estimate, the limit and where the limit comes from (issue 42 item 5: `corpus.n_docs =
100000000` in a `--dry-run` was killed by the kernel for memory, nothing estimated it first)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from xialpha.errors import UserError
from xialpha.jobs.dry_run import dry_run
from xialpha.jobs.memory import MEMORY_LIMIT_ENV, available_memory, memory_limit
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store


def _spec(tmp_path, corpus: str, svm: str = "C = [1.0]") -> str:
    path = tmp_path / "big.toml"
    path.write_text(f'[sweep]\nid = "big"\n[corpus]\n{corpus}\n[svm]\n{svm}\n[cluster]\nworkers = 1\n')
    return str(path)


def _dry_run(spec: str, store, env: dict | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "xialpha.cli", "sweep", spec, "--store", str(store), "--dry-run"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, env={**os.environ, **(env or {})})


def test_a_synthetic_corpus_beyond_this_machines_memory_is_refused_before_it_is_generated(tmp_path):
    """10^9 documents: at least 680 GiB held, refused in the time a dry run takes to start (before
    the fix it generated documents until the kernel killed it; not rerun on the old code here)."""
    done = _dry_run(_spec(tmp_path, 'loader = "synthetic"\nn_docs = 1000000000'), tmp_path / "store")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    message = done.stderr
    assert "big.toml: corpus.n_docs: the corpus (1,000,000,000 documents of about 730 bytes)" in message
    assert "would take at least 679.9 GiB of memory, more than this machine's available memory (" in message
    assert "use fewer documents" in message and f"${MEMORY_LIMIT_ENV} sets another limit" in message
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("n_docs, refused", [(200_000, True), (20_000, False)])
def test_the_limit_may_be_set_and_what_fits_in_it_runs(tmp_path, n_docs, refused):
    """$XIALPHA_MEMORY_LIMIT = 50MiB: 200,000 documents (at least 139 MiB) refused, 20,000 planned."""
    spec = _spec(tmp_path, f'loader = "synthetic"\nn_docs = {n_docs}')
    done = _dry_run(spec, tmp_path / "store", {MEMORY_LIMIT_ENV: "50MiB"})
    if refused:
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
        assert f"more than ${MEMORY_LIMIT_ENV} (50.0 MiB)" in done.stderr
    else:
        assert done.returncode == 0, done.stderr[-2000:]
        assert "documents in 2 parts, read and vectorised by the workers" in done.stdout, done.stdout


def test_a_corpus_file_beyond_the_limit_is_refused_naming_its_path(tmp_path, monkeypatch):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(f'{{"text": "stock bank rate {i}", "label": ["c{i % 2}"]}}\n' for i in range(40_000)))
    spec = parse_spec(f'[corpus]\nloader = "table"\npath = "{corpus}"\n', source="table.toml")
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "200kB")
    with pytest.raises(UserError) as raised:
        dry_run(spec, open_store(str(tmp_path / "store"), create=True, writable=True), workers=1)
    message = str(raised.value)
    assert message.startswith("table.toml: corpus.path: the corpus (1 file of 0.0 GiB, at least half of it)"), message
    assert "more than $XIALPHA_MEMORY_LIMIT (195.3 KiB)" not in message and "(0.2 MiB)" in message
    assert "use a smaller corpus" in message


def test_a_plan_beyond_the_limit_is_refused_before_its_rows_are_made(tmp_path, monkeypatch):
    """20 categories x 2,500 configurations x 2 rho = 100,000 rows, at least 21.9 MiB to plan."""
    C = ", ".join(f"{0.001 * 1.01**k:.6g}" for k in range(500))
    spec = parse_spec(
        '[corpus]\nloader = "synthetic"\nn_docs = 600\nn_categories = 20\ncategory_skew = 0.0\n'
        f"[svm]\nC = [{C}]\nj = [1.0, 2.0, 3.0, 4.0, 5.0]\n[estimators]\nrho = [1.0, 2.0]\n",
        source="grid.toml",
    )
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "10MiB")
    made = []
    monkeypatch.setattr("xialpha.planning.plan.config_key", lambda **key: made.append(key) or "k")
    with pytest.raises(UserError) as raised:
        dry_run(spec, open_store(str(tmp_path / "store"), create=True, writable=True), workers=1)
    message = str(raised.value)
    assert message.startswith(
        "grid.toml: the plan (100,000 rows: 5,000 per category x 20 categories) would take at least 21.9 MiB"
    ), message
    assert "sweep fewer categories ([corpus.categories] top_k) or a smaller grid" in message
    assert made == []


def test_the_limit_comes_from_the_variable_or_this_machine(monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "1.5GiB")
    assert memory_limit().bytes == 1.5 * 2**30 and memory_limit().source == f"${MEMORY_LIMIT_ENV}"
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "lots")
    with pytest.raises(UserError, match=rf"\${MEMORY_LIMIT_ENV}: must be a size like 8GiB or 500MB, got 'lots'"):
        memory_limit()
    monkeypatch.delenv(MEMORY_LIMIT_ENV)
    assert 0 < memory_limit().bytes == pytest.approx(available_memory(), rel=0.2)
