"""What a new user meets first, said so it can be acted on: a spec whose Reuters-21578 path is
missing while a fetched copy is elsewhere names that copy (and never suggests downloading again),
the tests can be pointed at a fetched copy, they start Dask's commands from the interpreter
they run in, whether or not its virtual environment is activated, and a user's own CSV corpus is
walked from its first spec to a planned sweep by errors each naming the key to set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sweep_processes import DASK

from xialpha.cli import main

TESTS = Path(__file__).resolve().parents[1]
SPEC = '[sweep]\nid = "r"\n[corpus]\nloader = "reuters21578"\npath = "{path}"\ntrain_split = "train"\n'


def _spec(tmp_path: Path, path: str) -> Path:
    (tmp_path / "config").mkdir()
    spec = tmp_path / "config" / "reuters.toml"
    spec.write_text(SPEC.format(path=path), encoding="utf-8")
    return spec


def test_a_missing_reuters_path_names_the_copy_fetched_elsewhere(tmp_path, monkeypatch, capsys):
    """`xialpha fetch reuters21578 --dest data/` in the checkout, the spec's path relative to config/."""
    spec = _spec(tmp_path, "../../shared/corpora/reuters21578")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "reut2-000.sgm").write_text("<REUTERS></REUTERS>")
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "does not exist (a relative path in a spec is relative to the spec file)" in err
    assert f'a fetched copy is in {(tmp_path / "data").resolve()}: set path = "../data" in [corpus]' in err
    assert "xialpha fetch" not in err and len(err.strip().splitlines()) == 1


def test_without_a_copy_it_says_how_to_fetch_one(tmp_path, monkeypatch, capsys):
    spec = _spec(tmp_path, "corpora/reuters21578")
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert (
        f"`xialpha fetch reuters21578 --dest {tmp_path / 'config' / 'corpora' / 'reuters21578'}` downloads it there"
        in err
    )
    assert "relative to the spec file" in err


def test_fetch_says_the_path_a_spec_reads_it_with(tmp_path, monkeypatch, capsys):
    from xialpha.corpora import reuters_files

    data = b'<REUTERS NEWID="1">one</REUTERS>\n'
    monkeypatch.setattr(reuters_files, "SGML_SHA256", {"reut2-000.sgm": reuters_files.hashlib.sha256(data).hexdigest()})
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "reut2-000.sgm").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert main(["fetch", "reuters21578", "--from", "copy", "--dest", "data"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[-1] == f'a spec reads it with path = "{tmp_path / "data"}" (a relative path is relative to the spec file)'
    )


def test_the_tests_read_reuters_from_xialpha_reuters(tmp_path):
    """$XIALPHA_REUTERS names the copy the Reuters tests read (and skip without)."""
    code = "import conftest; print(conftest.REUTERS_DIR)"
    env = {**os.environ, "XIALPHA_REUTERS": str(tmp_path / "fetched")}
    done = subprocess.run([sys.executable, "-c", code], cwd=TESTS, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "fetched")


def test_dask_starts_from_this_interpreter_without_an_activated_environment():
    """The tests that start `dask scheduler` and `dask worker` do it as `python -m dask`: with no
    virtual environment on PATH (before: `exec of "dask" failed`)."""
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run([*DASK, "scheduler", "--help"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--dashboard-address" in done.stdout


USER_CSV = (
    "id,text,labels,split\n1,rates rise sharply,finance,train\n2,flu season early,health,train\n"
    "3,hospital bonds sold,finance;health,train\n4,loan losses grow,finance,test\n5,vaccine trial ends,health,test\n"
)


@pytest.mark.parametrize(
    "keys, message",
    [
        (
            'trian_split = "train"\nvalidaton_fraction = 0.2',
            "corpus.trian_split: unknown key for corpus loader 'table'; did you mean train_split?",
        ),
        (
            'train_split = "train"',
            "corpus.label_column: {csv} has no column 'label'; did you mean labels? (columns: id, text, labels, split)",
        ),
        (
            'label_column = "labels"\ntrain_split = "train"',
            "corpus.label_separator: 1 of 5 labels in column 'labels' of {csv} hold ';' (e.g. 'finance;health'): set "
            'label_separator = ";" if they are several labels, or label_separator = "" if each is one label',
        ),
        (
            'label_column = "labels"\nlabel_separator = ";"\ntrain_split = "train"',
            "corpus.train_split: the corpus has no split 'train': it has no splits at all (a table corpus gets them "
            "from "
            'split_column, or from one file per split: path = {{train = "a.csv", test = "b.csv"}})',
        ),
        ('label_column = "labels"\nlabel_separator = ";"\nsplit_column = "split"\ntrain_split = "train"', None),
    ],
    ids=["typo", "label-column", "multi-label", "no-splits", "planned"],
)
def test_a_users_own_csv_is_walked_to_a_planned_sweep_by_errors_naming_the_key(
    tmp_path, monkeypatch, capsys, keys, message
):
    """Issue 34: each of these was an error naming no key (or the wrong one), or no error at all
    (multi-label rows read as categories of their own)."""
    csv = tmp_path / "news.csv"
    csv.write_text(USER_CSV, encoding="utf-8")
    spec = tmp_path / "news.toml"
    spec.write_text(f'[sweep]\nid = "news"\n[corpus]\nloader = "table"\npath = "news.csv"\n{keys}\n', encoding="utf-8")
    code = main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--dry-run"])
    out, err = capsys.readouterr()
    if message is None:
        assert code == 0 and "2 categories, 3 training documents" in out, err
    else:
        assert code == 2 and err.splitlines() == [f"xialpha sweep: error: {spec}: {message.format(csv=csv)}"], err


def test_help_says_in_one_line_what_the_tool_does(capsys):
    """issue 34e: `xialpha --help` began with "a thin dispatcher to the modules in xialpha.commands"."""
    with pytest.raises(SystemExit):
        main(["--help"])
    description = capsys.readouterr().out.split("\n\n")[1]
    assert "\n" not in description and "SVM" in description and "dispatcher" not in description
