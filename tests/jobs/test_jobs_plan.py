"""The sweep plan's C paths: cut into segments that run at once when worker threads outnumber them
(issue 36), whole and warm-started otherwise, with estimates equal to the whole path's."""

from __future__ import annotations

import pytest

from xialpha.jobs import tasks
from xialpha.planning.plan import FitJob, cut_paths, make_plan
from xialpha.spec.sweep import parse_spec
from xialpha.storage.rows import BatchColumns, result_columns

C_GRID = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
SPEC = f"""
[sweep]
id = "cut"
[corpus]
loader = "synthetic"
n_docs = 1500
n_categories = 3
seed = 1
[svm]
C = {C_GRID}
[estimators]
rho = [1.0]
"""


def path(n: int, category: str = "a") -> tuple[FitJob, ...]:
    return tuple(FitJob(category, float(c), 1.0, ((1.0, f"{category}{c}"),)) for c in range(n))


@pytest.mark.parametrize(
    ("lengths", "slots", "expected"),
    [
        ([16], 8, [[2] * 8]),  # one path, 8 threads: 8 segments of 2 C
        ([16], 32, [[1] * 16]),  # never more segments than C
        ([5, 5], 4, [[3, 2], [3, 2]]),  # ceil(4 / 2) = 2 each, nearly equal lengths
        ([8, 8, 8], 3, [[8], [8], [8]]),  # as many paths as threads: whole paths
        ([8] * 5, 2, [[8]] * 5),  # more paths than threads: whole paths
    ],
)
def test_paths_are_cut_into_contiguous_segments_only_when_threads_outnumber_them(lengths, slots, expected):
    paths = [path(n, f"c{i}") for i, n in enumerate(lengths)]
    cut = cut_paths(paths, slots)
    assert [[len(segment) for segment in segments] for segments in cut] == expected
    for whole, segments in zip(paths, cut):
        assert tuple(job for segment in segments for job in segment) == whole  # in order, nothing lost or repeated


@pytest.fixture(scope="module")
def swept():
    spec = parse_spec(SPEC)
    corpus = spec.corpus.load()
    categories = sorted({label for labels in corpus.labels for label in labels})[:2]
    features = tasks.vectorize(corpus, spec.preprocessings[0], spec.corpus.train_split, None, categories)
    return spec, categories, tasks.training_data(features, spec.kernels[0], False, None)


def test_a_plan_for_more_threads_than_paths_has_a_task_per_thread_and_says_why(swept):
    spec, categories, data = swept
    whole = make_plan(spec, categories, "f", data.n, 0, set(), threads=1)
    assert len(whole.batches) == 2 and whole.path_cut.segments == 2
    assert "each path one task, warm-started along C (1 worker thread for 2 paths)" in whole.path_cut.describe()
    split = make_plan(spec, categories, "f", data.n, 0, set(), threads=8)
    assert len(split.batches) == 8 and split.path_cut.segments == 8
    assert split.path_cut.describe() == (
        "2 C paths of up to 8 C cut into 8 segments that run at once (8 worker threads "
        "for 2 paths); each segment warm-starts along its C after a cold first C"
    )
    assert sorted(job.keys for b in split.batches for job in b.jobs) == sorted(
        job.keys for b in whole.batches for job in b.jobs
    )


def _rows(spec, categories, data, threads: int) -> dict[str, dict]:
    plan = make_plan(spec, categories, "f", data.n, 0, set(), threads=threads)
    columns = BatchColumns.of(spec.id, "run", plan.fingerprint, spec.preprocessings[0], spec.kernels[0])
    rows = {}
    for batch in plan.batches:
        batch_rows, _ = tasks.fit_batch(data, batch, columns, spec.estimators, spec.tol)
        rows.update({row["config_key"]: row for row in map(result_columns, batch_rows)})
    return rows


def test_segments_started_cold_give_the_whole_paths_estimates(swept):
    spec, categories, data = swept
    whole, split = _rows(spec, categories, data, 1), _rows(spec, categories, data, 16)
    assert whole.keys() == split.keys() and len(whole) == 16
    for key, row in whole.items():
        assert row["status"] == split[key]["status"] == "ok"
        for column in ("xa_error", "span_error", "xa_f1", "span_f1", "apparent_error"):
            # the solutions agree within the solver's tolerance: at most one borderline example moves
            assert split[key][column] == pytest.approx(row[column], abs=1.0 / row["n"] + 1e-12), (key, column)
        assert abs(split[key]["n_sv"] - row["n_sv"]) <= max(3, 0.02 * row["n_sv"])


def test_a_dry_run_on_four_workers_says_how_one_path_of_16_c_was_cut(tmp_path, capsys):
    from xialpha.cli import main

    spec = tmp_path / "one_path.toml"
    spec.write_text(
        SPEC.replace(f"C = {C_GRID}", f"C = {[c * s for c in C_GRID for s in (1, 2)]}")
        + "[corpus.categories]\ntop_k = 1\n[cluster]\nworkers = 4\n",
        encoding="utf-8",
    )
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "linear path: 16 fits on sparse features (no Gram matrix) in 4 fit tasks" in out
    assert "1 C path of up to 16 C cut into 4 segments that run at once (4 worker threads for 1 path)" in out
    assert not (tmp_path / "store").exists()
