"""Generated corpus files, well-formed and damaged, through `xialpha sweep SPEC --dry-run`: every one
ends with exit 0 or 2, one line and no traceback, within the time bound, the store unchanged.

The generators write CSV/TSV (quotes, separators, newlines and NUL bytes in cells; cut short),
JSON lines (nested and huge values), svmlight lines (huge indices, non-numbers), directory trees
(FIFOs, symbolic links out of the tree, to devices, in loops, dangling) and Reuters SGML (stories
cut short), and a [corpus] table with the loader's arguments, sometimes of the wrong type.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from fuzzing import FUZZ_SETTINGS, check_outcome, corrupt, hostile, no_debug, run_cli, store, toml_dumps  # noqa: F401 (fixtures)
from hypothesis import event, given, settings
from hypothesis import strategies as st
from swept import tree_digest

cell_text = st.lists(st.sampled_from(list("ab c,\"\t\n\r\0'\\xé;") + ["word ", "\u2028"]), max_size=20).map("".join)
json_values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10), st.sampled_from([10**4000, 1e308])
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)
labels = st.sampled_from(["a", "b", "a;b", "", " "])


def _table_rows(data) -> list[tuple[str, str]]:
    rows = data.draw(st.lists(st.tuples(cell_text, labels), min_size=0, max_size=12), label="rows")
    return rows + [("plain words here", "a"), ("other words there", "b")] * data.draw(
        st.integers(0, 4), label="padding"
    )


def write_csv(path: Path, data, delimiter: str) -> dict:
    buffer = io.StringIO()
    writer = csv.writer(
        buffer, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE, escapechar="\\"
    )
    writer.writerow(["text", "label"])
    for text, label in _table_rows(data):
        try:
            writer.writerow([text, label])
        except csv.Error:  # a cell the writer cannot write unquoted in TSV
            continue
    path.write_bytes(corrupt(buffer.getvalue(), data))
    return {"loader": "table", "path": str(path), "label_separator": ";"}


def write_jsonl(path: Path, data) -> dict:
    lines = []
    for text, label in _table_rows(data):
        row = {"text": text, "label": label}
        if data.draw(st.integers(0, 5), label="odd row") == 0:
            row[data.draw(st.sampled_from(["text", "label", "id"]), label="odd column")] = data.draw(
                json_values, label="odd value"
            )
        lines.append(json.dumps(row))
    if data.draw(st.integers(0, 6), label="deep") == 0:
        depth = data.draw(st.sampled_from([50, 900, 5000, 100_000]), label="depth")
        lines.append('{"text": "deep", "label": ' + "[" * depth + "]" * depth + "}")
    if data.draw(st.integers(0, 6), label="huge") == 0:
        lines.append('{"text": "huge", "label": ' + "9" * data.draw(st.sampled_from([400, 5000]), label="digits") + "}")
    path.write_bytes(corrupt("\n".join(lines) + "\n", data))
    return {"loader": "table", "path": str(path)}


def write_svmlight(path: Path, data) -> dict:
    odd = data.draw(st.booleans(), label="odd values")  # half the files have only well-formed lines
    index = st.one_of(st.integers(1, 30), st.sampled_from([0, 2**31, 2**63, 10**30, -1])) if odd else st.integers(1, 30)
    value = st.one_of(st.floats(allow_nan=True), st.sampled_from(["x", "1e999", ""])) if odd else st.floats(-9, 9)
    label = st.sampled_from(["1", "-1", "+1", "2,7", "1e999", "x", ""] if odd else ["1", "-1", "+1", "2,7"])
    lines = []
    for _ in range(data.draw(st.integers(0, 10), label="lines")):
        features = sorted(set(data.draw(st.lists(index, max_size=4), label="indices")))
        lines.append(
            " ".join([data.draw(label, label="label")] + [f"{i}:{data.draw(value, label='value')}" for i in features])
        )
    lines += ["1 1:0.5 3:1", "-1 2:0.25 4:1"] * 3
    path.write_bytes(corrupt("\n".join(lines) + "\n", data))
    return {"loader": "svmlight", "path": str(path)}


def write_tree(root: Path, data, outside: Path) -> dict:
    root.mkdir()
    for number in range(data.draw(st.integers(0, 8), label="files")):
        category = data.draw(st.sampled_from(["a", "b", "a", "b", "c/deeper", ".hidden"]), label="category")
        (root / category).mkdir(parents=True, exist_ok=True)
        content = st.sampled_from([b"some words here", b"other words there"]) | st.binary(max_size=40)
        (root / category / f"doc{number}").write_bytes(data.draw(content, label="content"))
    special = data.draw(
        st.sampled_from(["none", "none", "fifo", "out", "device", "loop", "dangling", "dir-in", "dir-out"]),
        label="special",
    )
    (root / "a").mkdir(exist_ok=True)
    place = root / "a" / "special"
    if special == "fifo":
        os.mkfifo(place)
    elif special == "out":
        place.symlink_to(outside)
    elif special == "device":
        place.symlink_to("/dev/zero")
    elif special == "loop":
        place.symlink_to(place)
    elif special == "dangling":
        place.symlink_to(root / "nowhere")
    elif special == "dir-in":
        place.symlink_to(root)
    elif special == "dir-out":
        place.symlink_to(outside.parent)
    args = {"loader": "directory", "path": str(root)}
    if data.draw(st.booleans(), label="follow"):
        args["follow_symlinks"] = True
    return args


STORY = (
    '<REUTERS TOPICS="YES" LEWISSPLIT="{split}" NEWID="{id}"><DATE>{date}</DATE><TOPICS>{topics}</TOPICS>\n'
    "<TEXT><TITLE>{title}</TITLE><BODY>{body}</BODY></TEXT>\n</REUTERS>\n"
)


def write_reuters(root: Path, data) -> dict:
    root.mkdir()
    for number in range(data.draw(st.integers(0, 2), label="sgml files")):
        stories = [
            STORY.format(
                split=data.draw(st.sampled_from(["TRAIN", "TEST", "NOT-USED"]), label="split"),
                id=i + 1,
                date=data.draw(st.sampled_from(["26-FEB-1987 15:01:01.79", "31-FEB-1987 99:99:99", ""]), label="date"),
                topics=data.draw(st.sampled_from(["<D>earn</D>", "<D>acq</D><D>earn</D>", ""]), label="topics"),
                title=data.draw(cell_text, label="title"),
                body=data.draw(cell_text, label="body"),
            )
            for i in range(data.draw(st.integers(0, 6), label="stories"))
        ]
        text = '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + "".join(stories)
        (root / f"reut2-{number:03d}.sgm").write_bytes(
            corrupt(text, data).decode("utf-8", "replace").encode("latin-1", "replace")
        )
    return {
        "loader": "reuters21578",
        "path": str(root),
        "split": data.draw(st.sampled_from(["modapte", "all", "lewis"]), label="split arg"),
    }


WRITERS = ["csv", "tsv", "jsonl", "svmlight", "directory", "reuters"]


@settings(FUZZ_SETTINGS, max_examples=80)
@given(kind=st.sampled_from(WRITERS), data=st.data())
def test_generated_corpora_dry_run_cleanly(kind, data, store, tmp_path_factory, no_debug):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "outside.txt").write_text("a secret outside the corpus")
    if kind in ("csv", "tsv"):
        corpus = write_csv(folder / f"docs.{kind}", data, "," if kind == "csv" else "\t")
    elif kind == "jsonl":
        corpus = write_jsonl(folder / "docs.jsonl", data)
    elif kind == "svmlight":
        corpus = write_svmlight(folder / "docs.svm", data)
    elif kind == "directory":
        corpus = write_tree(folder / "tree", data, folder / "outside.txt")
    else:
        corpus = write_reuters(folder / "reuters", data)
    if data.draw(st.integers(0, 4), label="odd argument") == 0:
        corpus[
            data.draw(
                st.sampled_from(
                    [
                        "path",
                        "split",
                        "layout",
                        "skip_empty",
                        "encoding",
                        "text_column",
                        "header",
                        "n_features",
                        "zero_based",
                        "column_names",
                    ]
                ),
                label="argument",
            )
        ] = data.draw(hostile)
    spec = folder / "spec.toml"
    spec.write_text(toml_dumps({"sweep": {"id": "fuzz-corpus"}, "corpus": corpus, "cluster": {"workers": 1}}))
    before = tree_digest(store)
    outcome = run_cli(["sweep", str(spec), "--store", str(store), "--dry-run"])
    check_outcome(outcome, before, tree_digest(store))
    assert outcome.code in (0, 2), outcome.err
    event(f"{kind}: exit {outcome.code}")
