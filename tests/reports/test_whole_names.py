"""Issue 43.2: tables keep names whole. A 40-character category name (and a 40-character sweep id)
appears whole in select, compare, report and store ls at 80 columns, and in the sweep's summary,
whose configurations stay aligned (before: `comp.sys.ibm.pc`/`.hardware.mothe`/`rboards.ex`)."""

from __future__ import annotations

import random
import re

import pytest
from swept import fill_store

from xialpha.cli import main
from xialpha.spec.sweep import load_spec
from xialpha.storage.opening import open_store

LONG = "comp.sys.ibm.pc.hardware.motherboards.ex"  # 40 characters
SWEEP = "a-sweep-id-of-forty-characters-long-0001"  # 40 characters
WORDS = {
    LONG: ["board", "chip", "bios", "slot", "ram"],
    "talk.politics.guns": ["law", "vote", "rifle", "court"],
    "sci.med": ["flu", "dose", "virus"],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A sweep of a table corpus with the long category, under the long id, and two saved selections."""
    root = tmp_path_factory.mktemp("whole-names")
    rng = random.Random(0)
    lines = ["text,label,split"]
    for i in range(240):
        category = list(WORDS)[i % 3]
        pools = (WORDS[category], ["the", "of", "day"])
        words = [rng.choice(pools[rng.random() < 0.5]) for _ in range(12)]
        lines.append(f"{' '.join(words)},{category},{'train' if i % 4 else 'test'}")
    (root / "docs.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "spec.toml").write_text(
        f'[sweep]\nid = "{SWEEP}"\n[corpus]\nloader = "table"\npath = "docs.csv"\nsplit_column = "split"\n'
        'train_split = "train"\ntest_split = "test"\n[[preprocessing]]\nmin_df = [1, 2]\n'
        "[svm]\nC = [0.1, 1.0, 10.0]\n[estimators]\nholdout = true\n",
        encoding="utf-8",
    )
    spec = load_spec(root / "spec.toml")
    store = open_store(str(root / "store"), create=True, writable=True)
    fill_store(spec, store)
    ids = []
    for extra in ([], ["--no-smooth", "--metric", "error"]):
        assert main(["select", str(root / "store"), "--save", "--format", "csv", *extra]) == 0
        ids.append(store.datasets.read("selections").to_pandas()["selection_id"].iloc[-1])
    return {"root": root, "store": str(root / "store"), "spec": spec, "selections": ids}


def _output(capsys, monkeypatch, *argv: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", "80")
    capsys.readouterr()
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out.splitlines()


def _check_whole(lines: list[str], names: tuple[str, ...]) -> None:
    text = "\n".join(lines)
    for name in names:
        assert name in text, text
        for line in lines:  # a line holding the start of a name holds all of it
            if name[:12] in line:
                assert name in line, text


@pytest.mark.parametrize(
    "command",
    [
        lambda w: ["select", w["store"]],
        lambda w: ["select", w["store"], "--wide"],
        lambda w: ["compare", *w["selections"], "--store", w["store"]],
        lambda w: ["report", w["store"]],
        lambda w: ["store", "ls", w["store"]],
        lambda w: ["store", "ls", w["store"], "--wide"],
    ],
    ids=["select", "select-wide", "compare", "report", "store-ls", "store-ls-wide"],
)
def test_a_long_name_appears_whole_at_80_columns(world, capsys, monkeypatch, command):
    lines = _output(capsys, monkeypatch, *command(world))
    names = (SWEEP,) if command(world)[0] == "store" else (LONG, "talk.politics.guns")
    _check_whole(lines, names)
    if command(world)[0] == "store":  # a time on one line (before: "last run" wrapped over 2 lines)
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", "\n".join(lines)), lines


def test_the_sweep_summary_aligns_names_of_any_length(world, capsys):
    from xialpha.commands.sweep import _print_best

    _print_best(world["spec"], open_store(world["store"], create=True, writable=True))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ") and "f1=" in line]
    assert len(lines) == 3 and any(LONG in line for line in lines)
    starts = {line.index("min_df=") for line in lines}  # each config label starts in the same column
    assert len(starts) == 1, lines
