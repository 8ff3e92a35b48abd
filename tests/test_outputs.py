"""Where a command may write (`xialpha.outputs.check_output`): never into a store, whichever
command, flag or function the path comes from; and no writer in the source skips the rule."""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path

import pytest
from store_rows import result_rows
from test_house import _modules, _planted, write_violations

from xialpha.cli import main
from xialpha.errors import UserError
from xialpha.outputs import check_output, write_file
from xialpha.storage.opening import open_store

# Modules outside xialpha/storage (the store writes itself) that write, and why they may.
CHECKED_WRITERS = {  # they write a user's path, after `check_output` (which they must call)
    "xialpha/outputs.py": "the rule itself and `write_file`",
    "xialpha/models/artifact.py": "an artefact directory (`check_target`)",
    "xialpha/commands/fetch.py": "fetch --dest",
}
OTHER_WRITERS = {  # they write no path a user names
    "xialpha/selection_saving.py": "removes the artefact it saved when the store refuses the rows",
    "xialpha/cli.py": "opens /dev/null for a closed standard output",
    "xialpha/jobs/worker_processes.py": "opens /dev/null for the resource tracker's stderr",
    "xialpha/jobs/cluster.py": "a temporary job script in the temporary directory",
}
REPLACES = {"replace", "rename", "renames", "link", "symlink"}  # os.* that write a name over another


@pytest.fixture
def store(tmp_path) -> Path:
    """A store with a sweep's results (r1) and its sweeps row, as `xialpha sweep` leaves it."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    store.datasets.append(
        "sweeps",
        [{"sweep_id": "r1", "run_id": "run1", "spec_toml": "[sweep]\nid = 'r1'\n", "data_fingerprint": "fp"}],
    )
    return tmp_path / "store"


def _digests(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _results_file(store: Path) -> Path:
    return next((store / "results").rglob("*.parquet"))


def test_report_watch_refuses_a_page_over_the_store_marker(store, capsys):
    before = _digests(store)
    assert main(["report", str(store), "--html", str(store / "_xialpha_store.json"), "--watch", "0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("xialpha report: error: --html: ") and f"inside STORE {store}," in err and "\n" not in err
    assert _digests(store) == before


def test_the_api_report_refuses_a_page_over_a_results_file(store):
    import xialpha

    before, results = _digests(store), _results_file(store)
    with pytest.raises(UserError, match=r"^html=: .* is inside store .*store, which this command reads") as caught:
        xialpha.report(store, sweep="r1", html=results)
    assert "\n" not in str(caught.value) and _digests(store) == before


def test_select_refit_refuses_a_directory_inside_the_store(store, capsys):
    before = _digests(store)
    code = main(["select", str(store), "--estimator", "xa", "--refit", str(store / "models")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("xialpha select: error: --refit: ") and f"inside STORE {store}," in err[-1]
    assert _digests(store) == before and not (store / "models").exists()


def test_a_link_into_a_store_and_a_store_without_its_marker_yet_are_refused(store, tmp_path):
    link = tmp_path / "page.html"
    link.symlink_to(_results_file(store))
    with pytest.raises(UserError, match="inside the xialpha store"):
        write_file(link, lambda stream: stream.write("x"), "html")
    linked_directory = tmp_path / "elsewhere"
    linked_directory.symlink_to(store / "results")
    with pytest.raises(UserError, match="inside the xialpha store"):
        check_output(linked_directory / "models", "refit")
    new_store = tmp_path / "new-store"  # the store in use, created by its first write
    with pytest.raises(UserError, match=r"^html=: .* is inside STORE .*new-store"):
        write_file(new_store / "page.html", lambda stream: stream.write("x"), "html", [("STORE", new_store)])
    assert not new_store.exists() and link.is_symlink()


def test_outside_a_store_a_page_a_device_and_standard_output_are_written(store, tmp_path):
    write_file(tmp_path / "page.html", lambda stream: stream.write("page"), "html")
    write_file(os.devnull, lambda stream: stream.write("page"), "html")
    assert (tmp_path / "page.html").read_text() == "page" and Path(os.devnull).is_char_device()
    assert check_output("-", "html") == Path("-")


def _writers(modules) -> dict[str, list[str]]:
    """{module: its writes}: what `write_violations` finds, and os.replace/rename/link."""
    found: dict[str, list[str]] = {}
    for violation in write_violations(modules):
        found.setdefault(violation.split(":")[0], []).append(violation)
    for path, tree in modules:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "os"
                and node.func.attr in REPLACES
            ):
                found.setdefault(path, []).append(f"{path}:{node.lineno} os.{node.func.attr}()")
    return found


def _unchecked(modules) -> list[str]:
    """The writes of modules outside xialpha/storage that are neither known writers that call
    `check_output` nor known writers of no user path."""
    modules = list(modules)
    calls = {
        path: {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        for path, tree in modules
    }
    bad = []
    for path, writes in _writers(modules).items():
        if path.startswith("xialpha/storage/") or path in OTHER_WRITERS:
            continue
        if path not in CHECKED_WRITERS or "check_output" not in calls[path]:
            bad += writes
    return bad


def test_every_writer_of_a_users_path_calls_the_one_rule():
    modules = list(_modules())
    assert _unchecked(modules) == []
    assert {path for path, _ in modules} >= {*CHECKED_WRITERS, *OTHER_WRITERS}  # no stale entry


@pytest.mark.parametrize(
    "source", ['open(path, "w").write(page)', "os.replace(temp, path)", "Path(p).write_text(s)", "os.rename(a, b)"]
)
def test_the_writer_rule_catches_a_planted_write(source):
    assert len(_unchecked(_planted(source))) == 1
    checked = [("xialpha/commands/fetch.py", ast.parse(f"check_output(path, 'dest')\n{source}"))]
    assert _unchecked(checked) == []
    assert len(_unchecked([("xialpha/commands/fetch.py", ast.parse(source))])) == 1
