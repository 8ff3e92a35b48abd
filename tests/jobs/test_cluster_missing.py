"""A SLURM spec where SLURM's sbatch is not installed (issue 25): before, a tornado traceback and a
sweep that waited forever after writing its run record; now one line naming sbatch, exit 2, and
no store."""

from __future__ import annotations

import shutil

from swept import small_spec

from xialpha.cli import main


def test_a_slurm_sweep_without_sbatch_is_one_line_and_stores_nothing(tmp_path, capsys, monkeypatch):
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "sbatch" else which(name, *a, **k))
    spec = tmp_path / "slurm.toml"
    spec.write_text(
        small_spec("slurm").replace(
            "[cluster]\nworkers = 1", '[cluster]\nkind = "slurm"\nworkers = 1\nmemory_limit = "1GiB"'
        )
    )
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sbatch is not on PATH" in err, err
    assert not (tmp_path / "store").exists()
