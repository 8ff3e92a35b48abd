"""Issue 36 item 2: a sweep with svm.C = "auto" runs in rounds: a starting C from the data, then one C
more where the default selection's choice sits at its C range's edge, until it is interior (or the
estimate is flat, the solution settled, the path at its cap: said); every C fitted is a stored row, and
a sweep interrupted between rounds resumes without fitting a stored C again."""

from __future__ import annotations

import pytest
from distributed import Client

from xialpha.cli import main
from xialpha.jobs import auto
from xialpha.jobs.graph import SweepData
from xialpha.jobs.sweep import run_sweep
from xialpha.planning.plan import make_plan
from xialpha.selection.c_extension import CAP, FLAT, INTERIOR, SETTLED
from xialpha.selection.options import SelectionOptions
from xialpha.selection.workflow import select_sweep
from xialpha.spec.grid import AUTO_C_FACTOR, AUTO_C_START
from xialpha.spec.sweep import parse_spec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.opening import open_store

SPEC = """
[sweep]
id = "auto"
[corpus]
loader = "synthetic"
n_docs = 300
n_categories = 4
seed = 3
signal = 0.5
train_split = "train"
test_split = "test"
[corpus.categories]
top_k = 4
[svm]
C = "auto"
[cluster]
workers = 1
"""


def _sweep(store: StoreQueries):
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as client:
        return run_sweep(parse_spec(SPEC, source="spec"), store, client=client)


def _stored(store: StoreQueries) -> dict[str, tuple[float, ...]]:
    rows = store.read_results_df("auto", include_failed=True)
    return {category: tuple(sorted(group["C"])) for category, group in rows.groupby("category")}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    store = open_store(str(tmp_path_factory.mktemp("auto") / "store"), create=True, writable=True)
    return store, _sweep(store)


def test_an_auto_sweep_grows_each_ladder_until_its_choice_is_interior_or_says_why_not(swept):
    store, summary = swept
    assert summary.auto.rounds >= 2  # some ladder grew after the first round
    assert set(summary.auto.stops) == {"cat00", "cat01", "cat02", "cat03"}
    assert set(summary.auto.stops.values()) <= {INTERIOR, SETTLED, FLAT, CAP}
    frame = select_sweep(store, "auto", SelectionOptions()).frame.set_index("category")
    for category, why in summary.auto.stops.items():
        hard_margin = frame.loc[category, "n_bounded_sv"] == 0  # settled at the top: select says no edge
        said = frame.loc[category, "at_edge"] is not None
        assert said == (why == CAP or (why == SETTLED and not hard_margin)), (category, why)
    for C in summary.auto.ladders.values():
        assert len(C) >= AUTO_C_START
        assert all(b / a == pytest.approx(AUTO_C_FACTOR) for a, b in zip(C, C[1:]))  # one ladder, no gap


def test_every_C_an_auto_sweep_fitted_is_a_stored_row(swept):
    store, summary = swept
    ladders = {category: C for (_, _, category, _), C in summary.auto.ladders.items()}
    assert _stored(store) == ladders
    assert summary.fits == summary.ok == summary.n_keys == sum(len(C) for C in ladders.values())
    assert summary.skipped == 0 and summary.failed == 0


def test_a_ladder_at_its_cap_stops_there_and_is_said(tmp_path, monkeypatch, swept):
    grown = [category for (_, _, category, _), C in swept[1].auto.ladders.items() if len(C) > AUTO_C_START]
    monkeypatch.setattr(auto, "AUTO_C_LIMIT", AUTO_C_START)
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    summary = _sweep(store)
    assert summary.auto.rounds == 1
    assert grown and all(summary.auto.stops[category] == CAP for category in grown)
    frame = select_sweep(store, "auto", SelectionOptions()).frame.set_index("category")
    assert all(frame.loc[category, "at_edge"] is not None for category in grown)


def test_an_interrupted_auto_sweep_resumes_fitting_only_the_C_not_stored(tmp_path, monkeypatch, swept):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    with monkeypatch.context() as patched:
        patched.setattr(auto, "AUTO_C_ROUNDS", 1)  # stopped after its first round, as by an interruption
        first = _sweep(store)
    assert first.fits == 4 * AUTO_C_START
    second = _sweep(store)
    assert second.fits == swept[1].fits - first.fits  # nothing stored is fitted again
    assert second.skipped == first.fits
    assert _stored(store) == _stored(swept[0])
    assert _sweep(store).fits == 0


def test_the_command_line_says_what_auto_does_before_and_after(tmp_path, capsys, swept):
    spec = tmp_path / "auto.toml"
    spec.write_text(SPEC)
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--dry-run"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the rule is wrapped to 80 columns
    assert "the C values are found from the data as the sweep runs" in out
    assert f'svm.C = "auto": per category x preprocessing x kernel x j, {AUTO_C_START} C' in out
    assert "at most 16 C a path" in out
    assert main(["sweep", str(spec), "--store", str(swept[0].uri), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f": 0 rows stored, {swept[1].n_keys} skipped (already stored), 0 failed" in out, out
    sizes = sorted(len(C) for C in swept[1].auto.ladders.values())
    assert f'C "auto": 1 round (all stored), {sizes[0]}-{sizes[-1]} C per path; chosen C ' in out


RBF = SPEC.replace("[svm]", '[[kernels]]\nname = "rbf"\ngamma = 1.0\n\n[svm]')


def test_an_auto_sweep_on_the_kernel_path_starts_from_its_gram_and_keeps_its_batches_by_it(tmp_path):
    spec = parse_spec(RBF, source="spec")
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as client:
        summary = run_sweep(spec, open_store(str(tmp_path / "store"), create=True, writable=True), client=client)
    assert summary.failed == 0 and summary.ok == summary.n_keys >= 4 * AUTO_C_START
    ladders = {(category, C) for (_, _, category, _), C in summary.auto.ladders.items()}
    assert len(ladders) == 4
    plan = make_plan(spec, ["cat00", "cat01"], "fp", 220, 0, set(), ladders={(0, 0, "cat00", 1.0): (1.0, 4.0)})
    data = SweepData.__new__(SweepData)
    data.futures = {(0, 0, "w1"): None}  # its Gram was made on w1 (for the starting C, say)
    assert auto._homes(plan, data, ["w0", "w1"]) == ["w1"] * len(plan.batches)


def test_a_later_rounds_fit_warm_starts_from_the_nearest_C_fitted_before(tmp_path, monkeypatch, swept):
    from xialpha.jobs import tasks

    found = []

    def nearest(warm_ends, path, C, data):
        fit = original(warm_ends, path, C, data)
        found.append((path, C, fit is not None))
        return fit

    original = tasks._nearest
    monkeypatch.setattr(tasks, "_nearest", nearest)
    summary = _sweep(open_store(str(tmp_path / "store"), create=True, writable=True))
    grown = {(category, C[i]) for (_, _, category, _), C in summary.auto.ladders.items() for i in (0, -1)}
    warmed = {(category, C) for (category, _), C, warm in found if warm}
    assert warmed and warmed <= grown  # the C beyond the first rung, each from its neighbour's fit
    assert summary.auto.ladders == swept[1].auto.ladders
