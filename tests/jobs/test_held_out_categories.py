"""A category with training documents but none in the held-out split is swept like the others: its
held-out error is computed, its held-out recall, precision and F1 are empty, and the sweep says so
once (before, every config of the sweep failed: "category: 'onlytrain' is not a category of corpus")."""

from __future__ import annotations

import warnings

import pytest
from distributed import Client

import xialpha


def _corpus(path) -> None:
    rows = []
    for i in range(400):
        split = "test" if i % 5 == 0 else "train"
        labels = "grain" if i % 2 else "crude"
        if i % 7 == 0 and split == "train":
            labels += ";onlytrain"
        rows.append(
            f'n{i},"story {i} about {"wheat" if i % 2 else "oil"} {"rain" if "onlytrain" in labels else ""}",'
            f"{labels},{split}"
        )
    path.write_text("id,text,labels,split\n" + "\n".join(rows) + "\n")


def _spec(path) -> str:
    return (
        f'[sweep]\nid = "held"\n[corpus]\nloader = "table"\npath = "{path}"\nid_column = "id"\n'
        'label_column = "labels"\nlabel_separator = ";"\nsplit_column = "split"\ntrain_split = "train"\n'
        'test_split = "test"\n[corpus.categories]\nnames = ["grain", "crude", "onlytrain"]\n'
        "[svm]\nC = [0.5, 2.0]\n[estimators]\nholdout = true\n"
    )


def test_a_category_without_held_out_documents_is_swept_and_said_once(tmp_path):
    _corpus(tmp_path / "news.csv")
    with (
        Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        swept = xialpha.sweep(_spec(tmp_path / "news.csv"), store=tmp_path / "store", client=client, quiet=True)
    said = [str(w.message) for w in caught if "held-out" in str(w.message)]
    assert said == [
        "no positive document in the held-out split for onlytrain: swept, with held-out error but "
        "empty held-out recall, precision and F1"
    ]
    rows = swept.results.set_index(["category", "C"])
    assert (rows["status"] == "ok").all() and len(rows) == 6
    only = rows.loc["onlytrain"]
    assert (
        (only["holdout_n_pos"] == 0).all() and only["holdout_f1"].isna().all() and only["holdout_error"].notna().all()
    )
    assert rows.loc["grain", "holdout_f1"].notna().all()


@pytest.mark.cluster
def test_the_command_line_says_it_in_one_line(tmp_path, capsys):
    from xialpha.cli import main

    _corpus(tmp_path / "news.csv")
    spec = tmp_path / "s.toml"
    spec.write_text(_spec(tmp_path / "news.csv"))
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("no positive document in the held-out split for onlytrain") == 1, err
