"""One sweep id, one experiment (issue 25): another grid or other training documents under a stored
sweep's id are refused with one sentence unless the run is forced to be a new one, and a selection
of a sweep that misses rows says so and is saved only when asked for as partial."""

from __future__ import annotations

import re

import pytest
from distributed import Client
from swept import fill_store, small_spec, tree_digest

from xialpha.cli import main
from xialpha.errors import UserError
from xialpha.jobs.sweep import prepare
from xialpha.planning.experiment import missing_rows
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store
from xialpha.storage.store import ResultStore


def _spec(**options):
    return parse_spec(small_spec("exp", splits=True, **options), source="spec")


def _prepare(spec, store, **options):
    with Client(processes=False) as client:
        return prepare(spec, store, client, "check", **options)[1]


@pytest.fixture
def swept(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(_spec(), store)
    return store


def test_another_grid_under_a_stored_sweeps_id_is_refused_unless_a_new_run_is_forced(swept):
    _prepare(_spec(), swept)  # the same experiment resumes
    with pytest.raises(
        UserError,
        match=r"^sweep.id: sweep 'exp' was run with another grid \(2 of its rows are not "
        r"in this spec's, 0 of this spec's are new\); use a new sweep id, or "
        r"force_new_run=True",
    ):
        _prepare(_spec(C="[0.5]"), swept)
    with pytest.raises(UserError, match=r"another grid \(2 of its rows are not in this spec's, 2 of"):
        _prepare(_spec(C="[0.5, 50.0]"), swept)
    assert _prepare(_spec(C="[0.5]"), swept, force_new_run=True).n_fits == 0


def test_a_grid_that_only_grew_in_C_resumes_and_fits_only_the_new_C(swept):
    plan = _prepare(_spec(C="[0.05, 0.5, 5.0, 50.0]"), swept)
    assert plan.n_skipped == 4
    assert sorted((job.category, job.C) for batch in plan.batches for job in batch.jobs) == sorted(
        (category, C) for category in plan.categories for C in (0.05, 50.0)
    )


def test_the_command_line_sweeps_a_grown_grid_under_its_id_and_stores_only_the_new_C(tmp_path, capsys):
    spec, store = tmp_path / "exp.toml", tmp_path / "store"
    spec.write_text(small_spec("exp", splits=True))
    assert main(["sweep", str(spec), "--store", str(store), "--quiet"]) == 0
    spec.write_text(small_spec("exp", splits=True, C="[0.5, 5.0, 50.0]"))
    capsys.readouterr()
    assert main(["sweep", str(spec), "--store", str(store), "--quiet"]) == 0, capsys.readouterr().err
    assert ": 2 rows stored, 4 skipped (already stored), 0 failed" in capsys.readouterr().out


def test_the_original_grid_reruns_after_its_C_grew_and_a_swapped_or_dropped_C_is_still_refused(swept):
    """Adding a C was accepted, after which the original spec was refused as another grid (issue 49.3):
    the grids a sweep grew from in C rerun, alone or with other C added; a C dropped from all of them,
    or any other change, is refused."""
    fill_store(_spec(C="[0.5, 5.0, 20.0]"), swept)  # the C grid extended: its run is the newest
    assert _prepare(_spec(), swept).n_fits == 0  # the original spec: nothing to fit, not refused
    assert _prepare(_spec(C="[0.5, 5.0, 50.0]"), swept).n_fits == 2  # the original with another C added
    min_df = parse_spec(small_spec("exp", splits=True) + "[[preprocessing]]\nmin_df = 2\n", source="spec")
    for changed in (_spec(C="[0.5, 20.0]"), _spec(C="[0.5]"), _spec(C="[5.0, 20.0, 50.0]"), min_df):
        with pytest.raises(UserError, match=r"^sweep.id: sweep 'exp' was run with another grid"):
            _prepare(changed, swept)


@pytest.mark.parametrize(
    "changed",
    [
        {"C": "[0.5, 5.0, 50.0]\nj = [2.0]"},  # more C, but another j
        {"C": "[0.5, 5.0, 50.0]", "rho": "[1.0, 2.0]"},  # more C, but another rho
        {"C": "[0.5, 5.0, 50.0]", "categories": "top_k = 3"},  # more C, but other categories
    ],
)
def test_a_grid_that_grew_in_C_and_changed_otherwise_is_refused(swept, changed):
    with pytest.raises(UserError, match=r"^(sweep.id|corpus.categories): sweep 'exp' was run "):
        _prepare(_spec(**changed), swept)


def test_a_sweep_whose_grid_grew_is_complete_by_its_grown_grid(tmp_path, capsys):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(_spec(), store)
    fill_store(_spec(C="[0.5, 5.0, 50.0]"), store, batches=1)  # one of the 2 new rows stored
    assert main(["select", store.uri]) == 0
    assert "note: sweep 'exp' is incomplete: 1 of its 6 rows are not stored" in capsys.readouterr().err


def test_a_grid_sweeps_id_refuses_an_auto_spec_as_another_grid(swept):
    with pytest.raises(UserError, match=r"^sweep.id: sweep 'exp' was run with another grid"):
        _prepare(_spec(C='"auto"'), swept)


def test_other_training_documents_under_a_stored_sweeps_id_are_named(swept):
    changed = parse_spec(small_spec("exp", splits=True).replace("seed = 3", "seed = 4"), source="spec")
    with pytest.raises(
        UserError,
        match=r"^corpus: the training documents of sweep 'exp' changed since its run \w+"
        r" \(data fingerprint \w{12} then, \w{12} now\)",
    ):
        _prepare(changed, swept)


def test_the_command_line_refuses_another_grid_in_one_line_and_changes_nothing(swept, tmp_path, capsys):
    spec = tmp_path / "exp.toml"
    spec.write_text(small_spec("exp", splits=True, C="[0.5, 50.0]"))
    before = tree_digest(tmp_path / "store")
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another grid" in err and "--force-new-run" in err, err
    assert tree_digest(tmp_path / "store") == before


def test_a_selection_of_a_sweep_that_misses_rows_is_saved_only_as_partial(tmp_path, capsys):
    store = tmp_path / "store"
    fill_store(_spec(), open_store(str(store), create=True, writable=True), batches=1)
    assert main(["select", str(store)]) == 0
    err = capsys.readouterr().err
    assert "note: sweep 'exp' is incomplete: 2 of its 4 rows are not stored" in err, err
    before = tree_digest(store)
    assert main(["select", str(store), "--save"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--save: sweep 'exp' is incomplete" in err and "--partial" in err, err
    assert tree_digest(store) == before
    assert main(["select", str(store), "--save", "--partial"]) == 0
    assert re.search(r"^stored selection sel-", capsys.readouterr().out, re.MULTILINE)


def test_a_category_name_with_a_comma_is_one_category_in_the_run_record(tmp_path, capsys):
    """The run record joined category names with commas, so a complete sweep with a category "oil, gas"
    looked incomplete (its --save refused) and a rerun under its id looked like another experiment."""
    corpus = tmp_path / "news.csv"
    labels = ("grain", '"oil, gas"')
    rows = [f"n{i},story {i},{labels[i % 2]},{'test' if i % 5 == 0 else 'train'}" for i in range(200)]
    corpus.write_text("id,text,labels,split\n" + "\n".join(rows) + "\n")
    spec = parse_spec(
        f'[sweep]\nid = "comma"\n[corpus]\nloader = "table"\npath = "{corpus}"\nid_column = "id"\n'
        'label_column = "labels"\nlabel_separator = ";"\nsplit_column = "split"\ntrain_split = "train"\n'
        'test_split = "test"\n[svm]\nC = [1.0]\n',
        source="spec",
    )
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(spec, store)
    assert main(["select", store.uri, "--save"]) == 0
    assert "incomplete" not in capsys.readouterr().err
    assert _prepare(spec, store).n_skipped == 2  # the same experiment: resumed, nothing to compute


def test_the_completeness_check_uses_the_summary_stored_at_the_sweeps_end(tmp_path, monkeypatch):
    """In a listing (`store ls`); select --save reads the keys (issue 48, item 6: test_summary_trust)."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(_spec(), store, batches=1)
    store.finish_sweep("exp")  # summarised while 2 of its 4 rows are missing: the summary says so
    assert missing_rows(open_store(store.uri, create=True, writable=True), "exp", listing=True) == (2, 4)
    fill_store(_spec(), store)
    store.finish_sweep("exp")
    complete = open_store(store.uri, create=True, writable=True)
    monkeypatch.setattr(ResultStore, "stored_keys", lambda *a: pytest.fail("read the stored keys"))
    assert missing_rows(complete, "exp", listing=True) == (0, 4)
