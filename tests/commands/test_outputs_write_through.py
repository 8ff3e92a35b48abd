"""Files xialpha writes for the user go where the path points (issue 35, finding 2): a device, a
FIFO, a terminal or `-` is written through, never replaced by a regular file; a symbolic link is
followed into its regular file (the link kept) or refused in one line; the artefact `predict`
reads and its --input are never written; regular files keep the atomic rename and their mode.

No test here touches a real device node: devices are made in tmp_path (mknod, skipped where not
permitted) or are a pseudo-terminal, where the old code's temporary file cannot be created."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from test_resilience_artifacts import _predict, _trained

from xialpha.errors import UserError
from xialpha.outputs import write_file


@pytest.fixture
def artifact(tmp_path) -> Path:
    from xialpha.models.artifact import save_artifact

    (tmp_path / "docs.txt").write_text("wheat\noil\n")
    return save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})


def _argv(artifact: Path, output) -> list[str]:
    return [str(artifact), "--input", str(artifact.parent / "docs.txt"), "--output", str(output)]


def test_a_fifo_is_written_through_not_replaced(tmp_path, artifact, capsys):
    fifo = tmp_path / "labels.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the writer's open does not wait for a reader
    try:
        code, _, err = _predict(_argv(artifact, fifo), capsys)
        assert code == 0, err
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
        assert os.read(reader, 1 << 16).decode().startswith("id,categories,decision_grain")
    finally:
        os.close(reader)


def test_a_terminal_is_written_through(artifact, capsys):
    import pty

    leader, follower = pty.openpty()  # the old code's /dev/pts/.N.tmp cannot be created: nothing replaced
    try:
        name = os.ttyname(follower)
        code, _, err = _predict(_argv(artifact, name), capsys)
        assert code == 0 and stat.S_ISCHR(os.stat(name).st_mode), err
        assert b"decision_grain" in os.read(leader, 1 << 16)
    finally:
        os.close(follower)
        os.close(leader)


def test_a_full_device_is_one_line_and_stays_a_device(tmp_path, artifact, capsys):
    """`--output /dev/full` (as root) turned /dev/full into a regular file; here on a copy of the node."""
    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here ({exc.strerror})")
    code, out, err = _predict(_argv(artifact, full), capsys)
    assert code == 2 and err == f"xialpha predict: error: --output: cannot write {full}: No space left on device\n", err
    assert stat.S_ISCHR(os.lstat(full).st_mode), "the device node was replaced by a regular file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.txt", "full", "model"]


def test_dash_is_standard_output(artifact, capsys, monkeypatch):
    monkeypatch.chdir(artifact.parent)
    code, out, err = _predict(_argv(artifact, "-"), capsys)
    assert code == 0 and out.startswith("id,categories,decision_grain"), err
    assert not (artifact.parent / "-").exists()


def test_a_link_is_followed_into_its_regular_file_and_kept(tmp_path, artifact, capsys):
    real = tmp_path / "results" / "labels.csv"
    real.parent.mkdir()
    real.write_text("an older result\n")
    real.chmod(0o640)
    link = tmp_path / "labels.csv"
    link.symlink_to(real)
    code, _, err = _predict(_argv(artifact, link), capsys)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real), "the link was replaced by a regular file"
    assert real.read_text().startswith("id,categories") and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert [p.name for p in real.parent.iterdir()] == ["labels.csv"]


def test_a_link_to_nothing_is_refused_in_one_line(tmp_path, artifact, capsys):
    link = tmp_path / "labels.csv"
    link.symlink_to(tmp_path / "elsewhere" / "labels.csv")
    code, _, err = _predict(_argv(artifact, link), capsys)
    assert code == 2 and err.count("\n") == 1 and "--output:" in err and "symbolic link" in err, err
    assert link.is_symlink() and not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("inside", ["model.json", "manifest.json", "arrays.npz", "."])
def test_predict_never_writes_into_the_artefact_it_reads(artifact, capsys, inside):
    before = {p.name: p.read_bytes() for p in artifact.iterdir()}
    code, _, err = _predict(_argv(artifact, artifact / inside), capsys)
    assert code == 2 and err.count("\n") == 1 and f"ARTIFACT {artifact}" in err, err
    assert {p.name: p.read_bytes() for p in artifact.iterdir()} == before


def test_predict_never_writes_over_its_input_even_through_a_hard_link(tmp_path, artifact, capsys):
    docs = artifact.parent / "docs.txt"
    os.link(docs, tmp_path / "same.txt")
    for output in (docs, tmp_path / "same.txt"):
        code, _, err = _predict(_argv(artifact, output), capsys)
        assert code == 2 and "--input" in err and err.count("\n") == 1, err
    assert docs.read_text() == "wheat\noil\n"


def test_a_regular_file_is_still_replaced_whole_or_not_at_all(tmp_path):
    out = tmp_path / "page.html"
    out.write_text("old page\n")

    def fail(stream):
        stream.write("half a pa")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(UserError, match=r"^html=: cannot write .*page.html: No space left on device$"):
        write_file(out, fail, "html")
    assert out.read_text() == "old page\n" and [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_the_html_page_goes_through_a_fifo_and_a_directory_is_refused(tmp_path):
    from xialpha.reports.html import write_page

    fifo = tmp_path / "page.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_page(fifo, "<html></html>\n")
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.read(reader, 100) == b"<html></html>\n"
    finally:
        os.close(reader)
    with pytest.raises(UserError, match=r"^html=: .* is a directory; give a file name$"):
        write_page(tmp_path, "<html></html>\n")


def test_an_artefact_honours_the_umask_and_a_link_target_is_refused(tmp_path):
    """`select --refit` wrote its directory 0700 whatever the umask: no one else could load it."""
    from xialpha.models.artifact import save_artifact

    previous = os.umask(0o022)
    try:
        target = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in target.iterdir())
    link = tmp_path / "linked"
    link.symlink_to(tmp_path / "absent")
    with pytest.raises(UserError, match=r"^refit=: .*linked is a symbolic link"):
        save_artifact(link, _trained(), {"sweep_id": "s"})
    assert link.is_symlink() and not (tmp_path / "absent").exists()


def test_fetch_refuses_a_dest_that_is_a_link(tmp_path, capsys):
    """A link to an empty directory (or to nothing) would be replaced by the files, not filled."""
    from xialpha.cli import main

    (tmp_path / "empty").mkdir()
    for name, points_to in (("to-empty", tmp_path / "empty"), ("to-nothing", tmp_path / "absent")):
        (tmp_path / name).symlink_to(points_to)
        capsys.readouterr()
        code = main(["fetch", "reuters21578", "--dest", str(tmp_path / name), "--from", str(tmp_path / "absent")])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "--dest:" in err and "symbolic link" in err, err
        assert (tmp_path / name).is_symlink()
    assert (tmp_path / "empty").is_dir()


def test_report_never_writes_its_page_into_the_store_it_reads(tmp_path, capsys):
    """Found by bench/campaign.py's output_targets family: `report STORE --html STORE/x.html` put a
    foreign file into the store (read back as a skipped file by every later command)."""
    from store_rows import result_rows
    from swept import tree_digest

    from xialpha.cli import main
    from xialpha.storage.opening import open_store

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    before = tree_digest(tmp_path / "store")
    for page in (tmp_path / "store" / "page.html", tmp_path / "store" / "_xialpha_store.json"):
        capsys.readouterr()
        code = main(["report", str(tmp_path / "store"), "--html", str(page)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and f"inside STORE {tmp_path / 'store'}" in err, err
    assert tree_digest(tmp_path / "store") == before
