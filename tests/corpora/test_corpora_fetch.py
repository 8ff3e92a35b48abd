"""`xialpha fetch reuters21578`: copies and archives are verified file by file, failures leave nothing
behind, and no network is one line with exit code 2."""

from __future__ import annotations

import hashlib
import random
import tarfile

import pytest

from xialpha.cli import main
from xialpha.corpora import load_reuters, reuters_files

FAKE = {"reut2-000.sgm": b'<REUTERS NEWID="1">one</REUTERS>\n', "reut2-001.sgm": b'<REUTERS NEWID="2">two</REUTERS>\n'}


@pytest.fixture
def fake_manifest(monkeypatch):
    """A two-file distribution whose digests stand in for the real manifest."""
    monkeypatch.setattr(
        reuters_files, "SGML_SHA256", {name: hashlib.sha256(data).hexdigest() for name, data in FAKE.items()}
    )


def write_copy(folder, files=FAKE):
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "README.txt").write_text("readme")
    return folder


def test_fetch_from_a_directory_and_again(tmp_path, fake_manifest, capsys):
    source = write_copy(tmp_path / "copy")
    dest = tmp_path / "data" / "reuters21578"
    assert main(["fetch", "reuters21578", "--from", str(source), "--dest", str(dest)]) == 0
    assert sorted(p.name for p in dest.iterdir()) == ["README.txt", "reut2-000.sgm", "reut2-001.sgm"]
    assert "2 SGML files verified" in capsys.readouterr().out
    assert main(["fetch", "reuters21578", "--from", str(source), "--dest", str(dest)]) == 0
    assert "already present and verified" in capsys.readouterr().out
    assert sorted(p.name for p in dest.parent.iterdir()) == ["reuters21578"]  # no staging folder left


def test_fetch_from_an_archive_with_a_wrapping_folder(tmp_path, fake_manifest):
    source = write_copy(tmp_path / "copy")
    archive = tmp_path / "reuters21578.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, arcname="reuters21578")
    dest = tmp_path / "out"
    assert main(["fetch", "reuters21578", "--from", str(archive), "--dest", str(dest)]) == 0
    assert (dest / "reut2-001.sgm").read_bytes() == FAKE["reut2-001.sgm"]


@pytest.mark.parametrize(
    "files, message",
    [
        ({**FAKE, "reut2-001.sgm": b"tampered"}, "reut2-001.sgm: SHA-256 differs"),
        ({"reut2-000.sgm": FAKE["reut2-000.sgm"]}, "reut2-001.sgm is missing"),
    ],
)
def test_a_bad_copy_is_refused_and_leaves_nothing(tmp_path, fake_manifest, capsys, files, message):
    source = write_copy(tmp_path / "copy", files)
    dest = tmp_path / "data" / "reuters21578"
    assert main(["fetch", "reuters21578", "--from", str(source), "--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert list(dest.parent.iterdir()) == []


def test_an_unverified_dest_is_not_touched(tmp_path, fake_manifest, capsys):
    dest = write_copy(tmp_path / "dest", {"notes.txt": b"mine"})
    source = write_copy(tmp_path / "copy")
    assert main(["fetch", "reuters21578", "--from", str(source), "--dest", str(dest)]) == 2
    assert "is not a verified Reuters-21578 copy" in capsys.readouterr().err
    assert sorted(p.name for p in dest.iterdir()) == ["README.txt", "notes.txt"]


def test_no_network_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(reuters_files, "REUTERS_URL", "http://127.0.0.1:9/reuters21578.tar.gz")
    dest = tmp_path / "data" / "reuters21578"
    assert main(["fetch", "reuters21578", "--dest", str(dest), "--timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xialpha fetch: error: cannot download http://127.0.0.1:9/") and err.count("\n") == 1
    assert "--from PATH" in err
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_missing_source(tmp_path, capsys):
    assert main(["fetch", "reuters21578", "--from", str(tmp_path / "nope.tar.gz"), "--dest", str(tmp_path / "d")]) == 2
    assert "--from: " in capsys.readouterr().err


@pytest.mark.reuters
def test_fetch_the_real_copy_verifies_against_the_embedded_manifest(reuters_dir, tmp_path):
    dest = tmp_path / "reuters21578"
    assert main(["fetch", "reuters21578", "--from", str(reuters_dir), "--dest", str(dest)]) == 0
    assert len(load_reuters(dest)) == 12_902


@pytest.mark.parametrize("timeout", ["nan", "inf", "0", "-1", "1e308", "1e10", "86401"])
def test_a_timeout_that_is_no_duration_is_refused_before_any_download(tmp_path, monkeypatch, capsys, timeout):
    """1e308 (and 1e10) passed the check, then the socket's wait overflowed: an internal error."""
    monkeypatch.setattr(reuters_files, "REUTERS_URL", "http://127.0.0.1:9/reuters21578.tar.gz")  # no DNS first
    assert main(["fetch", "reuters21578", "--dest", str(tmp_path / "dest"), "--timeout", timeout]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xialpha fetch: error: --timeout: must be a number of seconds > 0 and at most 86400, got ")
    assert err.count("\n") == 1 and list(tmp_path.iterdir()) == []


def test_file_digest_gives_the_chunked_digest(tmp_path):
    """hashlib.file_digest replaced a 1 MiB chunk loop: the same hex digest, chunk boundaries included."""
    from corpora_before import file_sha256_before

    rng = random.Random(0)
    for size in (0, 1, 2**20 - 1, 2**20, 2**20 + 1, 3 * 2**20 + 17):
        path = tmp_path / f"{size}.bin"
        path.write_bytes(rng.randbytes(size))
        assert (
            reuters_files.file_sha256(path) == file_sha256_before(path) == hashlib.sha256(path.read_bytes()).hexdigest()
        )


def test_a_full_disk_is_one_line_naming_dest_and_leaves_nothing(tmp_path, fake_manifest, capsys, monkeypatch):
    """ENOSPC while copying used to end in "internal error: OSError ... please report it"."""
    import errno
    import shutil

    source = write_copy(tmp_path / "copy")
    dest = tmp_path / "data" / "reuters21578"

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copyfile", full)
    assert main(["fetch", "reuters21578", "--from", str(source), "--dest", str(dest)]) == 2
    assert capsys.readouterr().err == f"xialpha fetch: error: --dest: cannot write {dest}: No space left on device\n"
    assert list((tmp_path / "data").iterdir()) == []


@pytest.mark.parametrize("data_filter", [True, False], ids=["data-filter", "python-before-3.11.4"])
def test_an_archive_member_leaving_the_destination_is_refused(
    tmp_path, fake_manifest, capsys, monkeypatch, data_filter
):
    """A member named ../escaped.sgm: refused with one line, nothing written outside --dest, on a
    Python with tarfile's "data" filter and on one without it (3.11.0-3.11.3, which a fetch once
    failed on with "internal error: TypeError")."""
    import io

    if not data_filter:  # as Python 3.11.0-3.11.3: no data_filter, and extractall takes no filter=
        extractall = tarfile.TarFile.extractall

        def without_filter(self, path=".", members=None, *, numeric_owner=False, **kwargs):
            if kwargs:
                raise TypeError(f"TarFile.extractall() got an unexpected keyword argument {next(iter(kwargs))!r}")
            return extractall(self, path, members, numeric_owner=numeric_owner)

        monkeypatch.delattr(tarfile, "data_filter", raising=False)
        monkeypatch.setattr(tarfile.TarFile, "extractall", without_filter)
    archive = tmp_path / "evil.tar"
    with tarfile.open(archive, "w") as tar:
        for name, data in {**FAKE, "../escaped.sgm": b"x"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "deep").mkdir()
    assert main(["fetch", "reuters21578", "--from", str(archive), "--dest", str(tmp_path / "deep" / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a readable tar archive" in err, err
    assert not list(tmp_path.rglob("escaped.sgm"))
