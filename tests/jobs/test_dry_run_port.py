"""A dry run's thread cluster listens on any free port: with Dask's default 8787 taken (another
cluster on the machine), it used to print Dask's five-line "Port 8787 is already in use" warning."""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_dry_run_beside_another_dashboard_prints_no_port_warning(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[sweep]\nid = "d"\n[corpus]\nloader = "synthetic"\nn_docs = 200\nn_categories = 2\n'
        "[svm]\nC = [1.0]\n[cluster]\nworkers = 1\n",
        encoding="utf-8",
    )
    holder = socket.socket()
    try:
        try:
            holder.bind(("", 8787))  # taken now, by us or by whoever holds it already
            holder.listen()
        except OSError as exc:
            assert exc.errno == errno.EADDRINUSE
        done = subprocess.run(
            [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(tmp_path / "st"), "--dry-run"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        holder.close()
    assert done.returncode == 0, done.stderr
    assert "already in use" not in done.stderr and done.stderr == "", done.stderr
