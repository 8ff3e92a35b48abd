"""Issue 43.6's smaller items, each as a new user met it: a dry run of `C = "auto"` said
"0 fit batches", `report --watch` waited on "sweep=: store ... holds no sweep yet", and certify of
a sweep without a training split said why but not how to make one."""

from __future__ import annotations

import pytest

from xialpha.cli import main
from xialpha.errors import UserError
from xialpha.spec.sweep import parse_spec

AUTO = """
[sweep]
id = "auto"
[corpus]
loader = "synthetic"
n_docs = 200
n_categories = 3
seed = 1
train_split = "train"
[corpus.categories]
top_k = 2
[[preprocessing]]
min_df = [1, 2]
[svm]
C = "auto"
[cluster]
workers = 1
"""


def test_a_dry_run_of_c_auto_states_its_first_round(tmp_path, capsys):
    spec = tmp_path / "auto.toml"
    spec.write_text(AUTO, encoding="utf-8")
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "first round: 16 fits (4 C on each of 4 paths); at most 64 fits in all" in out, out
    assert "fit batches" not in out and "2 categories" in out


def test_watching_a_store_without_a_sweep_says_what_it_waits_for(tmp_path):
    from xialpha.reports.watching import watch_report

    said, calls = [], []

    def read():
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        raise UserError("store s holds no sweep yet (run `xialpha sweep SPEC --store s`)", parameter="sweep")

    with pytest.raises(KeyboardInterrupt):
        watch_report(read, tmp_path / "page.html", 0.01, said.append)
    assert said == ["waiting: store s holds no sweep yet (run `xialpha sweep SPEC --store s`)"]


def test_certify_of_a_sweep_without_a_training_split_says_how_to_make_one():
    from xialpha.selection.certification import check_split

    spec = parse_spec('[corpus]\nloader = "synthetic"\n[svm]\nC = [1.0]\n')
    with pytest.raises(UserError) as raised:
        check_split(spec, "test", "span", force=False)
    message = str(raised.value)
    assert "no split of it is sealed" in message and "split_column" in message and "docs/spec.md" in message


@pytest.mark.parametrize("value", ["1e308", "86401", "0", "nan", "ten"])
def test_a_store_timeout_out_of_range_is_refused_where_it_is_read(monkeypatch, value):
    """Issue 48.9: XIALPHA_STORE_TIMEOUT=1e308 passed the check, then every corpus call failed with
    an OverflowError (a thread's wait cannot be that long)."""
    from xialpha.time_limits import remote_timeout

    monkeypatch.setenv("XIALPHA_STORE_TIMEOUT", value)
    with pytest.raises(UserError, match=rf"^\$XIALPHA_STORE_TIMEOUT: must be .* at most 86400, got '{value}'$"):
        remote_timeout()
    monkeypatch.setenv("XIALPHA_STORE_TIMEOUT", "86400")
    assert remote_timeout() == 86400


def test_a_store_whose_only_file_is_unreadable_is_not_said_to_hold_no_sweep_yet(tmp_path, capsys):
    """Issue 48.9: `select` of a store whose one results file was damaged said "holds no sweep yet"."""
    from store_rows import data_files, result_rows

    from xialpha.storage.opening import open_store

    open_store(str(tmp_path / "store"), create=True, writable=True).datasets.write_results(result_rows())
    (only,) = data_files(tmp_path / "store")
    only.write_bytes(only.read_bytes()[:100])
    assert main(["select", str(tmp_path / "store")]) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert "holds no sweep yet" not in error
    assert error.endswith(
        f"holds no readable sweep (1 unreadable file(s) skipped; `xialpha store check {tmp_path / 'store'}` names them)"
    ), error
