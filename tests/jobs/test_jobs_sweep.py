"""The sweep job end to end: real Dask processes, real Parquet files, resume, failures."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from distributed import Client
from store_rows import result_row

from xialpha.cli import main
from xialpha.errors import DataFailure, StoreWarning, StoreWriteError
from xialpha.estimators.svm import SVMParameters, TrainingProblem
from xialpha.features.blocks import FeatureBlock
from xialpha.jobs import sweep, tasks
from xialpha.jobs.cluster import connect
from xialpha.jobs.sweep import PHASES, prepare, run_sweep
from xialpha.planning.experiment import missing_rows
from xialpha.planning.plan import Batch, FitJob
from xialpha.spec.sweep import parse_spec
from xialpha.storage.location import Location
from xialpha.storage.opening import open_store
from xialpha.storage.rows import BatchColumns, FailedRow, result_columns

SPEC = """
[sweep]
id = "{id}"
[corpus]
loader = "synthetic"
n_docs = 400
n_categories = 4
seed = 3
train_split = "train"
test_split = "test"
[corpus.categories]
top_k = 3
[[preprocessing]]
stemming = {stemming}
[[kernels]]
name = "linear"
{rbf}
[svm]
C = {C}
[estimators]
rho = [1.0, 2.0]
holdout = true
exact_loo = {loo}
[cluster]
workers = 2
"""
RBF = '[[kernels]]\nname = "rbf"\ngamma = 1.0'


def spec_text(sweep_id: str = "t", C=(0.5, 2.0), full: bool = True) -> str:
    """full: 2 preprocessings x 2 kernels with exact LOO; else 1 preprocessing, linear, no LOO."""
    return SPEC.format(
        id=sweep_id,
        C=list(C),
        stemming='["none", "porter"]' if full else '"none"',
        rbf=RBF if full else "",
        loo="true" if full else "false",
    )


def spec_for(sweep_id: str = "t", C=(0.5, 2.0), full: bool = True):
    return parse_spec(spec_text(sweep_id, C, full))


@pytest.fixture(scope="module")
def full_sweep(tmp_path_factory):
    """The full test spec swept once on a 2-worker LocalCluster: (spec, store, summary)."""
    spec = spec_for()
    store = open_store(str(tmp_path_factory.mktemp("sweep") / "store"), create=True, writable=True)
    return spec, store, run_sweep(spec, store)


def test_sweep_on_local_cluster_stores_every_key_once(full_sweep):
    spec, store, summary = full_sweep
    expected = 2 * 2 * 3 * 2 * 2  # preprocessings x kernels x categories x C x rho
    assert (summary.n_keys, summary.ok, summary.failed, summary.skipped) == (expected, expected, 0, 0)
    table = store.datasets.read_results(spec.id)
    assert table.num_rows == expected
    assert len(set(table.column("config_key").to_pylist())) == expected
    assert set(table.column("status").to_pylist()) == {"ok"}
    assert set(table.column("kernel").to_pylist()) == {"linear", "rbf"}
    df = table.to_pandas()
    # rho=2 flags at least as many examples as rho=1 for the same training
    merged = df[df.rho == 1.0].merge(df[df.rho == 2.0], on=["preprocessing_id", "kernel_id", "category", "C"])
    assert (merged.xa_d_x <= merged.xa_d_y).all()
    # the exact LOO error never exceeds the rho=2 bound on stable solutions (Lemma 1)
    stable = df[(df.rho == 2.0) & df.stable]
    assert (stable.loo_d_pos + stable.loo_d_neg <= stable.xa_d).all()
    assert df.holdout_error.notna().all() and (df.holdout_n > 0).all()
    # per-example indicators are stored for paired tests
    key = df.config_key.iloc[0]
    indicators = store.read_examples([key], estimator="xa", sweep_id=spec.id)
    assert indicators[key].shape == (df.n.iloc[0],)
    assert int(indicators[key].sum()) == int(df.xa_d.iloc[0])


def test_the_fixed_cost_is_the_wall_beyond_the_fits_path_split_into_its_phases(full_sweep):
    _, _, summary = full_sweep
    assert summary.threads == 2 and 0 < summary.fit_task_seconds <= summary.task_seconds
    assert summary.fixed_seconds == pytest.approx(summary.wall_seconds - summary.fit_task_seconds / 2)
    assert list(summary.phases) == list(PHASES)
    assert sum(summary.phases.values()) == pytest.approx(summary.fixed_seconds)
    # intervals between the driver's marks and the tasks' (one machine's clock: 10 ms for rounding)
    assert all(seconds >= -0.01 for seconds in summary.phases.values()), summary.phases
    assert summary.phases["cluster_start"] > 0 and summary.phases["corpus_load"] > 0


def test_an_ended_sweep_is_one_file_per_dataset_and_a_summary_of_its_rows(full_sweep):
    spec, store, summary = full_sweep
    root = Path(store.datasets.location.root)
    for dataset in ("results", "examples", "sweeps"):
        assert len(list((root / dataset / f"sweep_id={spec.id}").glob("*.parquet"))) == 1, dataset
    stored = open_store(store.uri, create=True, writable=True).sweep_summary(spec.id)
    assert stored is not None and stored == store._summarise(spec.id)
    assert (stored.rows_ok, stored.stored_keys) == (summary.ok, summary.n_keys)
    assert missing_rows(store, spec.id) == (0, summary.n_keys)


def test_a_store_that_cannot_be_compacted_at_the_end_is_a_warning(tmp_path, monkeypatch):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    for i in range(2):  # two files to merge
        store.datasets.write_results([result_row(i, sweep_id="t")])

    def full_disk(*args):
        raise StoreWriteError("no space left on device")

    monkeypatch.setattr(Location, "write_row_groups", full_disk)  # the merged file
    with pytest.warns(StoreWarning, match=r"^sweep 't': every row is stored, but its files were not compacted"):
        sweep._finish_meanwhile(store, "t")()
    assert store.done_keys("t") == {result_row(i)["config_key"] for i in range(2)}


def test_stored_numbers_equal_a_single_process_run(full_sweep, tmp_path):
    spec, store, _ = full_sweep
    stored = store.datasets.read_results(spec.id).to_pandas().set_index("config_key")
    with Client(processes=False) as client:  # the plan as the sweep made it, its corpus read by threads
        _, plan = prepare(spec, open_store(str(tmp_path / "empty"), create=True, writable=True), client, "again")
    corpus = spec.corpus.load()  # and the corpus read here in one piece
    for batch in plan.batches:
        features = tasks.vectorize(corpus, spec.preprocessings[batch.preprocessing], "train", "test", plan.categories)
        data = tasks.training_data(features, spec.kernels[batch.kernel], True, None)
        rows, _ = tasks.fit_batch(data, batch, BatchColumns(spec.id, "again", "", {}), spec.estimators, spec.tol)
        for row in map(result_columns, rows):
            got = stored.loc[row["config_key"]]
            for column in ("n_sv", "xa_d_pos", "xa_d_neg", "loo_d_pos", "loo_d_neg", "holdout_d_pos", "holdout_d_neg"):
                assert got[column] == row[column], column
            assert got["r_delta2"] == pytest.approx(row["r_delta2"], rel=1e-12)


def test_rerun_computes_only_missing_keys(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    # the four runs share one cluster of the spec's: what is skipped is the store's to say, not the cluster's
    with connect(spec_for("resume", full=False).cluster) as client:
        first = run_sweep(spec_for("resume", C=[0.5], full=False), store, client=client)
        # a larger grid
        second = run_sweep(spec_for("resume", C=[0.5, 2.0], full=False), store, force_new_run=True, client=client)
        assert second.skipped == first.ok and second.ok == first.ok
        third = run_sweep(spec_for("resume", C=[0.5, 2.0], full=False), store, client=client)
        assert (third.ok, third.skipped, third.fits) == (0, 2 * first.ok, 0)
        keys = [
            k
            for f in sorted((tmp_path / "store").rglob("*.parquet"))
            if "results" in f.parts
            for k in pq.read_table(f, columns=["config_key"]).column("config_key").to_pylist()
        ]
        assert len(keys) == len(set(keys)) == 2 * first.ok  # every key written exactly once
        forced = run_sweep(
            spec_for("resume", C=[0.5], full=False), store, force=True, force_new_run=True, client=client
        )
    assert forced.ok == first.ok and store.datasets.read_results("resume").num_rows == 2 * first.ok


@pytest.mark.parametrize("path", ["gram", "linear"])
def test_a_config_without_positive_examples_is_stored_as_failed(path):
    y = {"empty": -np.ones(20, dtype=np.int8)}
    data = (
        tasks.TrainingData(1.0, y, {}, gram=np.eye(20))
        if path == "gram"
        else tasks.TrainingData(1.0, y, {}, X=sp.identity(20, format="csr"))
    )
    batch = Batch(0, 0, (FitJob("empty", 1.0, 1.0, ((1.0, "k1"),)),))
    rows, examples = tasks.fit_batch(
        data, batch, BatchColumns("s", "r", "", {}), spec_for().estimators.__class__(), 1e-3
    )
    assert isinstance(rows[0], FailedRow) and "single class" in rows[0].error_message
    assert rows[0].config_key == "k1" and examples == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.cluster
def test_sweep_against_a_real_scheduler_and_two_workers(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                ":0",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        address,
                        "--nthreads",
                        "1",
                        "--memory-limit",
                        "2GiB",
                    ],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            assert len(client.scheduler_info()["workers"]) == 2
        spec_file = tmp_path / "real.toml"
        # the small spec (1 preprocessing, linear, 12 rows): the full one's Grams and exact LOO run on
        # worker processes in full_sweep and test_kernel_path_fits_run_where_their_gram_lives already
        spec_file.write_text(spec_text("real", full=False))
        code = main(["sweep", str(spec_file), "--store", str(tmp_path / "store"), "--scheduler", address, "--quiet"])
        assert code == 0
        table = open_store(str(tmp_path / "store"), create=True, writable=True).datasets.read_results("real")
        assert table.num_rows == 12
        # the work ran in the two worker processes started above (the stored `worker` is only a host name)
        with Client(address, timeout="30s") as client:
            executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
        assert len(executed) == 2 and sum(executed.values()) > 0, executed
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)


def test_cli_dry_run_and_bad_spec(tmp_path, capsys):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(spec_text("dry"))
    assert main(["sweep", str(spec_file), "--store", str(tmp_path / "store"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    # issue 34c: configs (candidates per category), fits (trainings) and rows (stored) named apart
    assert "8 configs x 3 categories = 24 fits, stored as 48 rows (2 rho values per fit)" in out
    assert "to run: 24 fits (0 of 48 rows already stored)" in out and "Gram memory" in out
    assert "400 documents in 1 part, read and vectorised by the workers" in out and "features: about" in out
    assert not list((tmp_path / "store").rglob("*.parquet"))
    spec_file.write_text(spec_text("dry", C=[0.5, -2.0]))
    assert main(["sweep", str(spec_file), "--store", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "svm.C[1]: must be > 0" in err


def test_kernel_path_fits_run_where_their_gram_lives(tmp_path):
    # Each preprocessing's Grams and the fits reading them go to one worker, so a worker holds
    # the Grams of its own preprocessings, not every Gram of the sweep.
    from distributed import get_task_stream, wait

    from xialpha.jobs.graph import submit_plan
    from xialpha.jobs.sweep import batch_columns

    text = spec_text("homes", C=(0.25, 0.5, 1.0, 2.0)).replace('[[kernels]]\nname = "linear"\n', "", 1)
    # without exact LOO (where a fit runs does not depend on what it estimates; it took most of the time)
    text = text.replace("exact_loo = true", "exact_loo = false", 1)
    spec = parse_spec(text.replace("[sweep]\n", "[sweep]\nbatch_size = 1\n", 1))
    assert spec.estimators["exact_loo"] is False
    assert {k.name for k in spec.kernels} == {"rbf"}
    assert (spec.cluster.workers, spec.cluster.threads_per_worker) == (2, 1)
    # the spec's own local cluster, as a sweep starts it: 2 worker processes forked from the fork
    # server (issue 43.7: a LocalCluster spawning its workers took 20-120 s to start under load)
    with connect(spec.cluster) as client:
        corpus, plan = prepare(spec, open_store(str(tmp_path / "store"), create=True, writable=True), client, "r")
        columns = [batch_columns(spec, plan, batch, "r") for batch in plan.batches]
        with get_task_stream(client) as stream:
            wait(list(submit_plan(client, plan, corpus, columns, "r")))
    where = {task["key"]: task["worker"] for task in stream.data}
    grams, fits = {}, {}
    for key, worker in where.items():
        if key.startswith("gram-"):
            pre = next(p for p, pre in enumerate(spec.preprocessings) if pre.id in key)
            grams.setdefault(pre, set()).add(worker)
        elif key.startswith("fit-batch-"):
            fits.setdefault(plan.batches[int(key.split("-")[2])].preprocessing, []).append(worker)
    assert len(plan.batches) >= 8
    assert all(len(workers) == 1 for workers in grams.values()), grams  # each Gram is made at its home
    assert grams[0] != grams[1]
    # the placement is loose (a dead worker's tasks run elsewhere), so on a loaded machine work
    # stealing may move a few fits, each copying its Gram; most stay where the Gram lives
    at_home = [worker in grams[pre] for pre, workers in fits.items() for worker in workers]
    assert sum(at_home) >= 0.75 * len(at_home), fits


def test_an_empty_vocabulary_is_named_on_both_paths():
    y = np.where(np.arange(20) < 5, 1, -1).astype(np.int8)[:, None]
    empty = FeatureBlock(sp.csr_matrix((20, 0)), None, y, y[:0], ("c",))
    with pytest.raises(DataFailure, match="vocabulary is empty after preprocessing"):
        tasks.linear_data(empty)
    with pytest.raises(DataFailure, match="vocabulary is empty after preprocessing"):
        tasks.linear_gram(empty, False, None)


def _data_failures():
    """What a sweep's data can fail (each a DataFailure), as calls of the checks that find it."""
    from xialpha.estimators.baselines import kfold
    from xialpha.estimators.svm import fit_svm
    from xialpha.features.gram import check_gram_fits
    from xialpha.features.preprocessing import Preprocessing

    y = np.array([1, 1, -1, -1, -1, -1])
    return {
        "no positive example": lambda: fit_svm(TrainingProblem(-np.ones(6), gram=np.eye(6)), SVMParameters(1.0)),
        "k-fold beyond the smaller class": lambda: kfold(TrainingProblem(y, gram=np.eye(6)), SVMParameters(1.0), k=3),
        "an empty vocabulary": lambda: Preprocessing(min_df=100).fit(["a b", "b c"]),
        "a Gram over the limit": lambda: check_gram_fits(100, 100, 1000),
    }


@pytest.mark.parametrize(
    "failure",
    ["no positive example", "k-fold beyond the smaller class", "an empty vocabulary", "a Gram over the limit"],
)
def test_what_the_data_can_fail_is_a_data_failure(failure):
    # before: each was a ValueError like any bug's, so a sweep could not tell them from a bug
    with pytest.raises(DataFailure):
        _data_failures()[failure]()


@pytest.fixture
def threaded_scheduler():
    """A scheduler and one worker thread in this process (reached over TCP like any scheduler),
    so a fault planted here with monkeypatch runs in the sweep's fit tasks; one thread runs the
    batches one after another, in plan order."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def _planted_sweep(tmp_path, monkeypatch, capsys, scheduler: str, fault: BaseException):
    """`xialpha sweep` (in this process) of 3 categories x 2 C on the linear path, one batch per
    category, with `fault` raised by the solver for the plan's last category: (exit code, stderr
    lines, {category: statuses stored}, the keys of the last category)."""
    spec_file = tmp_path / "planted.toml"
    spec_file.write_text(spec_text("planted", full=False))
    spec = parse_spec(spec_file.read_text())
    with Client(scheduler) as client:
        corpus, plan = prepare(spec, open_store(str(tmp_path / "plan"), create=True, writable=True), client, "plan")
    positives = corpus.summary.counts(spec.corpus.train_split)
    last = plan.categories[-1]
    assert [positives[c] for c in plan.categories].count(positives[last]) == 1  # tells the solver's y apart
    solver = tasks.fit_svm

    def planted(problem, parameters, **options):
        if int((problem.y > 0).sum()) == positives[last]:
            raise fault
        return solver(problem, parameters, **options)

    monkeypatch.setattr(tasks, "fit_svm", planted)
    capsys.readouterr()
    code = main(["sweep", str(spec_file), "--store", str(tmp_path / "store"), "--scheduler", scheduler, "--quiet"])
    err = capsys.readouterr().err
    stored = open_store(str(tmp_path / "store"), create=False, writable=True).read_results_df(
        "planted", include_failed=True
    )
    statuses = {category: sorted(set(group)) for category, group in stored.groupby("category")["status"]}
    return code, err.splitlines(), statuses, last


@pytest.mark.parametrize(
    "bug",
    [
        ValueError("operands could not be broadcast together with shapes (3,) (4,)"),
        IndexError("index 7 is out of bounds for axis 0 with size 7"),
    ],
)
def test_a_bug_in_a_fit_stops_the_sweep_keeping_what_was_stored(tmp_path, monkeypatch, capsys, threaded_scheduler, bug):
    # before: the bug's configs were stored as "failed" rows, the sweep went on and exited 1 with
    # "failed:" lines, and selection chose among the rest as if nothing were wrong
    code, err, statuses, last = _planted_sweep(tmp_path, monkeypatch, capsys, threaded_scheduler, bug)
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"xialpha sweep: internal error: {type(bug).__name__}: {bug}"), err
    assert last not in statuses  # nothing of the failing batch is stored
    assert statuses and set(map(tuple, statuses.values())) == {("ok",)}  # the batches stored before it are kept


def test_a_bug_in_a_fit_shows_its_traceback_under_xialpha_debug(tmp_path, monkeypatch, capsys, threaded_scheduler):
    monkeypatch.setenv("XIALPHA_DEBUG", "1")
    with pytest.raises(IndexError, match="planted"):
        _planted_sweep(tmp_path, monkeypatch, capsys, threaded_scheduler, IndexError("planted"))


def test_a_data_failure_in_a_fit_is_stored_as_failed_and_the_sweep_goes_on(
    tmp_path, monkeypatch, capsys, threaded_scheduler
):
    from xialpha.errors import DataFailure

    code, err, statuses, last = _planted_sweep(
        tmp_path, monkeypatch, capsys, threaded_scheduler, DataFailure("y: no positive example (planted)")
    )
    assert code == 1
    assert statuses.pop(last) == ["failed"] and len(statuses) == 2
    assert set(map(tuple, statuses.values())) == {("ok",)}  # every other category is stored
    failed = [line for line in err if line.startswith("  failed: ")]  # one a row: 2 C x 2 rho
    assert len(failed) == 2 * 2 and all(f"{last} C=" in line and "(planted)" in line for line in failed), err
