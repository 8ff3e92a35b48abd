"""Generated command lines for every command against a real store (a finished sweep, a selection
and an artefact): every one ends with exit 0-3, no traceback, within the time bound, and the
store unchanged whenever the exit code is 2.

Arguments are drawn from each command's grammar with hostile values: numbers that are not
numbers, NaN, infinities, huge integers, paths that are missing, files, directories, symbolic
link loops or FIFOs, and ids that do not exist. `fetch` always gets --from (no network).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fuzzing import FUZZ_SETTINGS, check_outcome, no_debug, run_cli, swept_store  # noqa: F401 (fixtures)
from hypothesis import event, given, settings
from hypothesis import strategies as st
from swept import tree_digest

SPEC = """
[sweep]
id = "args"
[corpus]
loader = "synthetic"
n_docs = 120
n_categories = 2
seed = 7
train_split = "train"
[svm]
C = [0.5, 2.0]
[cluster]
workers = 1
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """A store with sweep "args" (run by a real `xialpha sweep` process), a selection, an artefact,
    and the odd paths the generators pick from."""
    root = tmp_path_factory.mktemp("fuzz-args")
    swept_store(root, SPEC)
    selected = run_cli(["select", str(root / "store"), "--sweep", "args", "--refit", str(root / "model")], seconds=120)
    assert selected.code == 0, selected.err
    (root / "docs.txt").write_text("some words\nother words\n")
    (root / "docs.csv").write_text('text,doc\n"some words",d1\n')
    (root / "a-file").write_text("not a store")
    (root / "loop").symlink_to(root / "loop")
    os.mkfifo(root / "fifo")
    (root / "empty").mkdir()
    return {
        "root": root,
        "store": root / "store",
        "spec": root / "spec.toml",
        "model": root / "model",
        "selection": next(w for w in selected.out.split() if w.startswith("sel-")),
    }


NUMBERS = ["0", "1", "-1", "2", "0.5", "1000", "40000", "nan", "inf", "-inf", "1e400", str(10**30), "abc", "", "1_000"]


def _paths(world: dict, *extra: str) -> st.SearchStrategy[str]:
    root = world["root"]
    return st.sampled_from(
        [str(root / name) for name in ("store", "nowhere", "a-file", "loop", "fifo", "empty", *extra)]
        + ["memory://fuzz-store", ""]
    )


@st.composite
def command_lines(draw, world: dict) -> list[str]:
    store = draw(st.one_of(st.just(str(world["store"])), _paths(world)), label="store")
    number = st.sampled_from(NUMBERS)
    sweep_id = st.sampled_from(["args", "nope", "..", ""])
    flags = []

    def maybe(flag: str, values) -> None:
        if draw(st.booleans(), label=flag):
            flags.extend([flag, draw(values, label=f"{flag} value")] if values is not None else [flag])

    command = draw(
        st.sampled_from(["store", "select", "report", "certify", "predict", "sweep", "drift", "fetch"]), label="command"
    )
    if command == "store":
        return ["store", draw(st.sampled_from(["ls", "compact", "check", "rm"]), label="action"), store]
    if command in ("select", "report"):
        maybe("--metric", st.sampled_from(["f1", "error", "cost", "auc"]))
        maybe("--estimator", st.sampled_from(["xa", "span", "loo", "kfold", "nope"]))
        maybe("--rho", number)
        if command == "select":
            for flag in ("--cost-fn", "--cost-fp", "--runners-up", "--alpha"):
                maybe(flag, number)
            maybe("--global", None)
            maybe("--refit", _paths(world, "new-model", "model"))
            maybe("--spec", _paths(world, "spec.toml"))
        else:
            maybe("--html", _paths(world, "page.html"))
        return [command, store, "--sweep", draw(sweep_id, label="sweep"), *flags]
    if command == "certify":
        for flag in ("--confidence", "--draws", "--seed"):
            maybe(flag, number)
        maybe("--force", None)
        selection = draw(st.sampled_from([world["selection"], "sel-nope", ""]), label="selection")
        split = draw(st.sampled_from(["test", "train", "nope"]), label="split")
        return ["certify", store, "--selection", selection, "--test-split", split, *flags]
    if command == "predict":
        maybe("--text-column", st.sampled_from(["text", "doc", "nope"]))
        maybe("--id-column", st.sampled_from(["doc", "text", "nope"]))
        maybe("--format", st.sampled_from(["csv", "jsonl", "xml"]))
        maybe("--output", _paths(world, "out.jsonl"))
        maybe("--allow-pickle", None)
        artifact = draw(st.one_of(st.just(str(world["model"])), _paths(world)), label="artifact")
        docs = draw(
            st.sampled_from([str(world["root"] / "docs.txt"), str(world["root"] / "docs.csv")]) | _paths(world),
            label="input",
        )
        return ["predict", artifact, "--input", docs, *flags]
    spec = draw(st.sampled_from([str(world["spec"])]) | _paths(world), label="spec")
    if command == "fetch":
        maybe("--timeout", number)
        return [
            "fetch",
            "reuters21578",
            "--dest",
            draw(_paths(world, "dest"), label="dest"),
            "--from",
            draw(_paths(world), label="from"),
            *flags,
        ]
    maybe("--workers", number)
    maybe("--scheduler", st.sampled_from(["tcp://127.0.0.1:9", "nonsense", "tls://127.0.0.1:9"]))
    maybe("--force", None)
    if command == "drift":  # a drift check has no dry run: only specs that are not drift specs
        return ["drift", draw(_paths(world), label="drift spec"), "--store", store, *flags]
    return ["sweep", spec, "--store", store, "--dry-run", *flags]


@settings(FUZZ_SETTINGS, max_examples=80)
@given(data=st.data())
def test_generated_command_lines_end_cleanly(data, world, no_debug, monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")
    argv = data.draw(command_lines(world), label="argv")
    before = tree_digest(world["store"])
    outcome = run_cli(argv)
    check_outcome(outcome, before, tree_digest(world["store"]))
    event(f"{argv[0]}: exit {outcome.code}")
    if not Path(world["model"]).is_dir():  # a failed command never removes the artefact
        pytest.fail(f"{argv}: the artefact is gone")
