"""The drift check in this process: window fits on one Gram, the decision rule, and its behaviour on
synthetic streams with and without a known concept shift."""

from __future__ import annotations

import datetime
from dataclasses import replace

import numpy as np
import pytest
from streams import relevance_stream

from xialpha.concept_drift.outcome import EXIT_DRIFT, EXIT_FAILED, EXIT_NO_DRIFT, DriftReport, check_rows
from xialpha.concept_drift.windows import WindowJob, WindowResult, decide, fit_window, window_jobs
from xialpha.corpora import Corpus
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha_indicator
from xialpha.jobs.drift_check import check_stream, stream_data
from xialpha.spec.drift import parse_drift_spec, split_batches
from xialpha.storage.arrow_schema import DRIFT_COLUMNS
from xialpha.storage.rows import drift_columns, drift_row
from xialpha.storage.schema import DriftVerdict

SPEC = """
[drift]
margin = 2.0
alpha = 0.05
[batches]
period = "1D"
[corpus]
loader = "synthetic"
[corpus.categories]
names = ["relevant"]
[[preprocessing]]
min_df = 2
"""


def verdict_at(spec, corpus: Corpus, newest: int):
    """The decision of the check whose newest batch is `newest` (the stream cut after it)."""
    full = split_batches(corpus, spec.batches)
    stream = split_batches(full.corpus.subset(np.arange(full.starts[newest + 1])), spec.batches)
    (check,) = check_stream(spec, stream, ["relevant"])
    return check.decision


def test_known_shift_is_reported_at_the_shift_and_not_before():
    spec = parse_drift_spec(SPEC)
    corpus = relevance_stream(n_docs=800, n_batches=10, seed=1, shift_batch=6)
    before = [verdict_at(spec, corpus, t) for t in range(1, 6)]
    assert [d.drift for d in before] == [False] * 5
    at_shift = verdict_at(spec, corpus, 6)
    assert at_shift.drift
    assert at_shift.chosen.job.window == 1  # only the batch after the shift
    after = verdict_at(spec, corpus, 7)
    assert after.drift and after.chosen.job.window <= 2


def test_streams_without_shift_rarely_raise_false_alarms():
    spec = parse_drift_spec(SPEC)
    alarms = [verdict_at(spec, relevance_stream(480, 6, seed, None), 5).drift for seed in range(20)]
    assert sum(alarms) <= 2, f"false alarms for seeds {np.flatnonzero(alarms).tolist()}"


@pytest.fixture(scope="module")
def small_stream():
    spec = parse_drift_spec(SPEC + "[svm]\nC = [0.5, 2.0]\n")
    stream = split_batches(relevance_stream(n_docs=300, n_batches=5, seed=4, shift_batch=None), spec.batches)
    return spec, stream, stream_data(spec, stream, ["relevant"], 0, 0)


def test_window_fit_equals_a_fit_on_the_window_alone(small_stream):
    spec, stream, data = small_stream
    job = WindowJob(0, 0, "relevant", 0.5, 1.0, newest=3, window=2)
    result = fit_window(data, stream.starts, job, rho=1.0, tol=1e-6)
    begin, first_new, end = stream.starts[2], stream.starts[3], stream.starts[4]
    window = data.X[begin:end]  # the linear path: the window's own rows, no Gram
    y = data.y_train["relevant"][begin:end]
    alone = fit_svm(TrainingProblem(y, X=window), SVMParameters(0.5, tol=1e-6))
    r_delta2 = r_delta_squared(X=window)
    expected = xi_alpha_indicator(alone.alpha, alone.xi, r_delta2)[first_new - begin :]
    assert result.status == "ok" and result.n == end - begin and result.r_delta2 == pytest.approx(r_delta2)
    assert result.estimate.n == end - first_new
    assert np.array_equal(result.estimate.indicator, expected)


def test_window_fit_can_count_real_errors_on_the_next_batch(small_stream):
    spec, stream, data = small_stream
    job = WindowJob(0, 0, "relevant", 2.0, 1.0, newest=2, window=3)
    result = fit_window(data, stream.starts, job, rho=1.0, tol=1e-3, evaluate_on=3)
    assert result.next_estimate.n == stream.starts[4] - stream.starts[3]
    assert 0.0 <= result.next_estimate.error < 0.5


def test_a_single_class_window_is_skipped_not_fitted(small_stream):
    spec, stream, data = small_stream
    y = data.y_train["relevant"].copy()
    y[stream.starts[3] : stream.starts[4]] = -1
    no_positives = type(data)(data.r_delta2, {"relevant": y}, {}, X=data.X)
    result = fit_window(no_positives, stream.starts, WindowJob(0, 0, "relevant", 1.0, 1.0, 3, 1), 1.0, 1e-3)
    assert result.status == "skipped" and result.estimate is None


def test_window_jobs_cover_configs_categories_and_windows(small_stream):
    spec, stream, _ = small_stream
    jobs = window_jobs(spec, ["relevant"], newest=4)
    assert len(jobs) == 2 * 5
    assert sorted({job.window for job in jobs}) == [1, 2, 3, 4, 5]
    assert {job.newest for job in jobs} == {4}


def _window(h: int, indicator: list[bool], full: int = 4) -> WindowResult:
    y = np.ones(len(indicator), dtype=np.int8)
    job = WindowJob(0, 0, "c", 1.0, 1.0, newest=full - 1, window=h)
    return WindowResult(job, "ok", estimate=Estimate.from_indicator("xa", y, np.array(indicator)))


def test_decide_prefers_the_larger_window_on_ties():
    same = [True, False, False, False]
    decision = decide([_window(1, same), _window(2, same), _window(4, [True, True, False, False])], 2.0, 0.05)
    assert decision.chosen.job.window == 2 and decision.full.job.window == 4


def test_decide_needs_margin_and_significance():
    full = _window(20, [True] * 12 + [False] * 88, full=20)
    better = _window(1, [False] * 100, full=20)
    assert decide([better, full], 2.0, 0.05).drift  # 12 points, p = 0.5**12
    assert not decide([better, full], 15.0, 0.05).drift  # within the margin
    slightly = _window(1, [True] * 9 + [False] * 91, full=20)
    decision = decide([_window(1, [False] * 97 + [True] * 3, full=20), full], 2.0, 0.05)
    assert (
        decision.full_worse == 12 and decision.chosen_worse == 3 and decision.p_value == pytest.approx(0.0176, abs=1e-3)
    )
    assert decision.drift
    assert not decide([slightly, full], 2.0, 0.05).drift  # 3 points but p = 0.5**3 > 0.05


def test_decide_without_a_full_memory_fit_raises():
    broken = WindowResult(WindowJob(0, 0, "c", 1.0, 1.0, 3, 4), "skipped", "the window holds a single class")
    with pytest.raises(ValueError, match="full memory"):
        decide([_window(1, [False] * 4), broken], 2.0, 0.05)


def test_rows_and_exit_codes_follow_the_verdicts(small_stream):
    spec, stream, _ = small_stream
    checks = check_stream(spec, stream, ["relevant"])
    newest = slice(int(stream.starts[-2]), int(stream.starts[-1]))
    positives = {"relevant": int((stream.corpus.y("relevant")[newest] > 0).sum())}
    typed = check_rows(
        spec,
        stream,
        checks,
        positives,
        check_key="k",
        run_id="r",
        fingerprint="f",
        checked_at=datetime.datetime.now(datetime.UTC),
    )
    rows = [drift_columns(row) for row in typed]
    assert len(rows) == 2 * 5 and len({row["check_id"] for row in rows}) == 10
    assert all(sorted(row) == sorted(c.name for c in DRIFT_COLUMNS) for row in rows)
    assert sum(row["chosen"] for row in rows) == 2
    assert {row["newest_batch"] for row in rows} == {stream.batch_ids[-1]}
    assert sorted(row["window_first_batch"] for row in rows if row["C"] == 0.5) == sorted(stream.batch_ids)
    assert [drift_row(row) for row in rows] == typed  # what the store gives back reads as what was written
    report = DriftReport("d", "k", stream.batch_ids[-1], 5, len(stream.corpus), 0, rows=typed)
    assert report.exit_code == EXIT_NO_DRIFT
    report.rows = [replace(row, verdict=DriftVerdict.DRIFT) if row.C == 0.5 else row for row in report.rows]
    assert report.n_drift == 1 and report.exit_code == EXIT_DRIFT
    report.rows = [replace(row, verdict=DriftVerdict.FAILED) if row.C == 2.0 else row for row in report.rows]
    assert report.n_failed == 1 and report.exit_code == EXIT_FAILED


def test_the_window_checking_imports_no_dask_and_shares_the_selection_sign_test():
    """The decision rule lives outside xialpha/jobs (no Dask) and tests with xialpha.stats, the
    implementation the selection's significance tests use: one sign test, not two."""
    import subprocess
    import sys

    code = (
        "import sys, xialpha.concept_drift.windows, xialpha.concept_drift.outcome, "
        "xialpha.selection.significance as s; "
        "assert xialpha.concept_drift.windows.micro_sign_test is s.micro_sign_test; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed') "
        "or m.startswith('xialpha.jobs')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_drift_p_value_is_the_one_sided_sign_test_on_discordant_examples():
    full = _window(4, [True] * 12 + [False] * 88)
    better = _window(1, [False] * 100)
    decision = decide([better, full], 2.0, 0.05)
    assert (decision.full_worse, decision.chosen_worse) == (12, 0)
    assert decision.p_value == pytest.approx(0.5**12)
