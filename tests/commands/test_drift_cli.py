"""`xialpha drift` end to end on a real Dask LocalCluster: exit codes 0, 3, 1 and 2, the stored rows,
and that an already-checked newest batch is skipped unless --force."""

from __future__ import annotations

import json

import pytest
from streams import relevance_stream

from xialpha.cli import main
from xialpha.storage.opening import open_store
from xialpha.storage.schema import DriftVerdict

pytestmark = pytest.mark.cluster

SPEC = """
[drift]
id = "{id}"
[batches]
period = "1D"
[corpus]
loader = "table"
path = "{file}"
time_column = "time"
label_column = "labels"
[corpus.categories]
names = ["{category}"]
[[preprocessing]]
min_df = 2
"""


@pytest.fixture(scope="module")
def scheduler():
    from xialpha.jobs.cluster import connect
    from xialpha.spec.cluster import ClusterSpec

    # a local cluster of one worker process, started as a sweep starts it: forked from the fork
    # server (issue 43.7: a LocalCluster spawning its worker took 20 s and more to start under load)
    with connect(ClusterSpec(workers=1)) as client:
        assert client.scheduler.address.startswith("tcp://127.0.0.1:")
        yield client.scheduler.address


def write_spec(tmp_path, name: str, shift_batch: int | None, category: str = "relevant", seed: int = 1) -> str:
    corpus = relevance_stream(n_docs=640, n_batches=8, seed=seed, shift_batch=shift_batch)
    with open(tmp_path / f"{name}.jsonl", "w", encoding="utf-8") as out:
        for text, labels, time in zip(corpus.texts, corpus.labels, corpus.timestamps):
            labels = sorted(labels) + (["everything"] if category == "everything" else [])
            out.write(json.dumps({"text": text, "labels": labels, "time": str(time)}) + "\n")
    spec = tmp_path / f"{name}.toml"
    spec.write_text(SPEC.format(id=name, file=f"{name}.jsonl", category=category), encoding="utf-8")
    return str(spec)


def drift_files(store: str) -> list:
    location = open_store(store, create=True, writable=True).datasets.location
    return location.data_files(location.path("drift"))


def test_drift_exit_codes_rows_and_skip_unless_force(tmp_path, scheduler, capsys):
    store = str(tmp_path / "store")
    shifted = write_spec(tmp_path, "shifted", shift_batch=6)
    assert main(["drift", shifted, "--store", store, "--scheduler", scheduler]) == 3
    out = capsys.readouterr().out
    assert "DRIFT     relevant" in out and "exit 3" in out
    assert "pp=" not in out and max(len(line) for line in out.splitlines()) <= 80  # labels, not hashes; 80 columns
    assert "`xialpha compare OLD NEW` (OLD: a saved selection of the data before" in " ".join(out.split())  # next

    rows = open_store(store, create=True, writable=True).datasets.read("drift", sweep_id="shifted").to_pylist()
    assert len(rows) == 8  # one per window of the newest batch
    assert [row["window"] for row in rows if row["chosen"]] in ([1], [2])
    assert {row["verdict"] for row in rows} == {"drift"} and {row["newest_batch"] for row in rows} == {"2000-01-08"}
    first_run = {row["run_id"] for row in rows}

    assert main(["drift", shifted, "--store", store, "--scheduler", scheduler, "--quiet"]) == 3
    assert "stored verdict, use --force to recheck" in capsys.readouterr().out
    assert len(drift_files(store)) == 1

    assert main(["drift", shifted, "--store", store, "--scheduler", scheduler, "--force", "--quiet"]) == 3
    assert len(drift_files(store)) == 2
    rerun = open_store(store, create=True, writable=True).datasets.read("drift", sweep_id="shifted").to_pylist()
    assert len(rerun) == 8 and {row["run_id"] for row in rerun}.isdisjoint(first_run)

    steady = write_spec(tmp_path, "steady", shift_batch=None, seed=2)
    assert main(["drift", steady, "--store", store, "--scheduler", scheduler]) == 0
    out = capsys.readouterr().out
    assert "no drift  relevant" in out and "xialpha compare" not in out


def test_failed_checks_exit_1_and_are_retried(tmp_path, scheduler, capsys):
    store = str(tmp_path / "store")
    spec = write_spec(tmp_path, "everything", shift_batch=None, category="everything")
    assert main(["drift", spec, "--store", store, "--scheduler", scheduler]) == 1
    assert "FAILED    everything" in capsys.readouterr().out
    assert main(["drift", spec, "--store", store, "--scheduler", scheduler, "--quiet"]) == 1
    assert len(drift_files(store)) == 2  # a failed check is not skipped
    rows = open_store(store, create=True, writable=True).datasets.read("drift").to_pylist()
    assert {row["status"] for row in rows} == {"skipped"} and {row["verdict"] for row in rows} == {"failed"}


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text('[batches]\nperiod = "7 days"\n[corpus]\nloader = "synthetic"\n', encoding="utf-8")
    assert main(["drift", str(spec), "--store", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "batches.period: must be a positive count" in err
    assert main(["drift", str(spec), "--workers", "0"]) == 2


def test_a_check_on_a_cluster_of_many_parts_equals_the_check_in_one_process(tmp_path, monkeypatch):
    """The stream read in parts by a cluster's tasks, undated documents and a test split left out,
    gives every window the xi-alpha counts of the same check run on the corpus in memory."""
    from distributed import Client

    import xialpha
    import xialpha.corpora.table as table_module
    from xialpha.jobs.drift_check import check_stream
    from xialpha.spec.drift import load_drift_spec, split_batches

    corpus = relevance_stream(n_docs=640, n_batches=8, seed=3, shift_batch=6)
    with open(tmp_path / "parts.jsonl", "w", encoding="utf-8") as out:
        for i, (text, labels, time) in enumerate(zip(corpus.texts, corpus.labels, corpus.timestamps)):
            dated = "" if i % 37 == 0 else str(time)  # some documents without a time: left out of the stream
            out.write(
                json.dumps(
                    {"text": text, "labels": sorted(labels), "time": dated, "part": "test" if i % 11 == 0 else "train"}
                )
                + "\n"
            )
    spec_path = tmp_path / "parts.toml"
    spec_path.write_text(
        SPEC.format(id="parts", file="parts.jsonl", category="relevant").replace(
            'label_column = "labels"', 'label_column = "labels"\nsplit_column = "part"\ntrain_split = "train"'
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(table_module, "PART_BYTES", 8192)  # the workers are threads of this process
    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        report = xialpha.drift(str(spec_path), store=tmp_path / "store", client=client)
    spec = load_drift_spec(spec_path)
    stream = split_batches(spec.corpus.load(), spec.batches, spec.corpus.train_split)
    (check,) = check_stream(spec, stream, ["relevant"])
    expected = {result.job.window: (result.estimate.d_pos, result.estimate.d_neg) for result in check.windows}
    assert report.n_dropped == stream.n_dropped > 0 and report.n_documents == len(stream.corpus)
    assert {row.window: (row.estimate["xa_d_pos"], row.estimate["xa_d_neg"]) for row in report.rows} == expected
    assert {row.verdict for row in report.rows} == {
        DriftVerdict.DRIFT if check.decision.drift else DriftVerdict.NO_DRIFT
    }


@pytest.fixture
def threaded_scheduler():
    """A scheduler and one worker thread in this process, so a fault planted with monkeypatch runs
    in the check's window fits."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("fault", [IndexError("planted"), ValueError("planted shape mismatch")])
def test_a_bug_in_a_window_fit_stops_the_check_and_stores_nothing(
    tmp_path, monkeypatch, capsys, threaded_scheduler, fault
):
    """Only a data failure makes a failed window; a bug (any other error) stops the check in one
    line, exit 1, no verdict stored (before, every task error became a 'failed' window)."""
    from xialpha.concept_drift import windows

    def planted(*args, **kwargs):
        raise fault

    monkeypatch.setattr(windows, "fit_svm", planted)
    monkeypatch.delenv("XIALPHA_DEBUG", raising=False)
    store = tmp_path / "store"
    spec = write_spec(tmp_path, "planted", shift_batch=None)
    assert main(["drift", spec, "--store", str(store), "--scheduler", threaded_scheduler, "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "internal error" in err and "planted" in err, err
    assert not store.exists() or drift_files(str(store)) == []


def test_an_unknown_category_of_a_drift_spec_is_named_in_its_table(tmp_path, scheduler, capsys):
    spec = write_spec(tmp_path, "unknown", shift_batch=None, category="relevnat")
    assert main(["drift", spec, "--store", str(tmp_path / "store"), "--scheduler", scheduler, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "corpus.categories.names: " in err and "relevant" in err, err
