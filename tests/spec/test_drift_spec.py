"""Drift specs parse with path-naming errors; corpora split into stable, time-ordered batches."""

from __future__ import annotations

import numpy as np
import pytest

from xialpha.corpora import Corpus
from xialpha.errors import UserError
from xialpha.spec.drift import BatchSpec, Period, load_drift_spec, parse_drift_spec, parse_period, split_batches

MINIMAL = """
[batches]
period = "7D"
[corpus]
loader = "synthetic"
n_docs = 100
"""


def test_minimal_spec_defaults():
    spec = parse_drift_spec(MINIMAL, default_id="news")
    assert spec.id == "news" and spec.store is None
    assert spec.batches == BatchSpec("time", Period(7, "D"))
    assert spec.windows is None and spec.margin_points == 2.0 and spec.alpha == 0.05 and spec.rho == 1.0
    assert spec.C == (1.0,) and spec.j == (1.0,) and [k.name for k in spec.kernels] == ["linear"]
    assert spec.cluster.kind == "local"


def test_C_auto_is_refused_naming_svm_C():
    with pytest.raises(UserError, match=r'svm.C: "auto" is for sweeps; a drift check needs its C values'):
        parse_drift_spec(MINIMAL + '[svm]\nC = "auto"\n')


def test_window_sizes_always_end_with_the_full_memory():
    every = parse_drift_spec(MINIMAL)
    assert every.window_sizes(5) == [1, 2, 3, 4, 5]
    capped = parse_drift_spec(MINIMAL + "[drift]\nwindows = [8, 1, 2, 4]\n")
    assert capped.windows == (1, 2, 4, 8)
    assert capped.window_sizes(5) == [1, 2, 4, 5]
    assert capped.window_sizes(20) == [1, 2, 4, 8, 20]
    assert capped.window_sizes(1) == [1]


def test_config_files_parse():
    assert load_drift_spec("config/drift.toml").id == "demo-drift"
    reuters = load_drift_spec("config/drift_reuters.toml")
    assert reuters.batches.period == Period(7, "D") and reuters.corpus.loader == "reuters21578"


@pytest.mark.parametrize(
    "extra, message",
    [
        ("[drift]\nwindows = [0, 2]\n", "drift.windows[0]: must be > 0"),
        ("[drift]\nwindows = [1.5]\n", 'drift.windows: must be "all" or a list of whole numbers'),
        ('[drift]\nwindows = "some"\n', "drift.windows: must be one of all"),
        ("[drift]\nmargin = -1\n", "drift.margin: must be in [0, 100]"),
        ("[drift]\nalpha = 0\n", "drift.alpha: must be in (0, 1]"),
        ('[drift]\nid = "a b"\n', "drift.id: must be 1-64"),
        ("[drift]\nwindow = 3\n", "drift.window: unknown key"),
        ('[batches]\nby = "week"\n', "batches.by: must be one of time, split"),
        ("[svm]\nC = [0]\n", "svm.C[0]: must be > 0"),
    ],
)
def test_bad_keys_name_their_path(extra, message):
    text = MINIMAL.replace('[batches]\nperiod = "7D"\n', "") if extra.startswith("[batches]") else MINIMAL
    with pytest.raises(
        UserError, match=message.replace("[", r"\[").replace("(", r"\(").replace("]", r"\]").replace(")", r"\)")
    ):
        parse_drift_spec(text + extra, source="d.toml")


@pytest.mark.parametrize(
    "text, message",
    [
        ('[corpus]\nloader = "synthetic"\n', "batches.period: is required"),
        ('[batches]\nby = "split"\nperiod = "1D"\n[corpus]\nloader = "synthetic"\n', "batches.period: only applies"),
        ('[batches]\nperiod = "7 days"\n[corpus]\nloader = "synthetic"\n', "batches.period: must be a positive count"),
        (
            '[batches]\nperiod = "0D"\n[corpus]\nloader = "synthetic"\n',
            "batches.period: the count must be between 1 and 100,000",
        ),
        (MINIMAL + 'test_split = "test"\n', "corpus.test_split: a drift check has no test split"),
        (
            '[batches]\nby = "split"\n[corpus]\nloader = "synthetic"\ntrain_split = "train"\n',
            "corpus.train_split: cannot",
        ),
    ],
)
def test_batch_and_corpus_errors(text, message):
    with pytest.raises(UserError, match=f"^d.toml: {message}"):
        parse_drift_spec(text, source="d.toml")


def test_identity_ignores_where_it_runs_but_not_what_it_checks():
    base = parse_drift_spec(MINIMAL)
    elsewhere = parse_drift_spec(
        MINIMAL + '[cluster]\nkind = "address"\naddress = "tcp://h:8786"\n[drift]\nstore = "s3://b/x"\n'
    )
    stricter = parse_drift_spec(MINIMAL + "[drift]\nalpha = 0.01\n")
    assert base.identity() == elsewhere.identity()
    assert base.identity() != stricter.identity()


@pytest.mark.parametrize(
    "period, moments, labels",
    [
        ("7D", ["1970-01-01", "1970-01-07", "1970-01-08"], ["1970-01-01", "1970-01-01", "1970-01-08"]),
        ("W", ["1987-03-01T23:00", "1987-03-02", "1987-03-08"], ["1987-02-23", "1987-03-02", "1987-03-02"]),
        ("1M", ["1987-02-28", "1987-03-01", "1987-03-31"], ["1987-02", "1987-03", "1987-03"]),
        ("2M", ["1987-02-28", "1987-03-01", "1987-03-31"], ["1987-01", "1987-03", "1987-03"]),
        ("Y", ["1986-12-31", "1987-06-01"], ["1986", "1987"]),
        ("6h", ["1987-03-02T05:59", "1987-03-02T06:00"], ["1987-03-02T00", "1987-03-02T06"]),
    ],
)
def test_period_bins_are_calendar_aligned(period, moments, labels):
    parsed = parse_period(period)
    bins = parsed.bins(np.array(moments, dtype="datetime64[s]"))
    assert [parsed.label(int(b)) for b in bins] == labels
    assert list(bins) == sorted(bins)


def _corpus(times=None, splits=None, n=6) -> Corpus:
    return Corpus(
        ids=[f"d{i}" for i in range(n)],
        texts=[f"text {i}" for i in range(n)],
        labels=[{"a"} if i % 2 else set() for i in range(n)],
        name="tiny",
        timestamps=None if times is None else np.array(times, dtype="datetime64[s]"),
        splits=splits,
    )


def test_split_batches_by_time_orders_documents_and_drops_undated_ones():
    times = ["2000-01-03", "2000-01-01", "NaT", "2000-01-02", "2000-01-01", "2000-01-03"]
    stream = split_batches(_corpus(times), BatchSpec("time", parse_period("1D")))
    assert stream.batch_ids == ("2000-01-01", "2000-01-02", "2000-01-03")
    assert stream.starts.tolist() == [0, 2, 3, 5]
    assert stream.corpus.ids.tolist() == ["d1", "d4", "d3", "d0", "d5"]  # stable within a batch
    assert stream.n_dropped == 1
    assert stream.batch_labels().tolist() == ["2000-01-01"] * 2 + ["2000-01-02"] + ["2000-01-03"] * 2


def test_split_batches_by_split_label_sorts_digit_runs_by_value():
    splits = ["b10", "b2", "b1", "b2", "b10", "b1"]
    stream = split_batches(_corpus(splits=splits), BatchSpec("split"))
    assert stream.batch_ids == ("b1", "b2", "b10")
    assert stream.corpus.ids.tolist() == ["d2", "d5", "d1", "d3", "d0", "d4"]


def test_split_batches_keeps_only_the_train_split_when_asked():
    times = ["2000-01-01", "2000-01-02"] * 3
    splits = ["train", "train", "train", "test", "test", "test"]
    stream = split_batches(_corpus(times, splits), BatchSpec("time", parse_period("1D")), train_split="train")
    assert sorted(stream.corpus.ids.tolist()) == ["d0", "d1", "d2"]


@pytest.mark.parametrize(
    "corpus, batches, message",
    [
        (_corpus(), BatchSpec("time", Period(1, "D")), 'batches.by: "time" needs timestamps'),
        (_corpus(["NaT"] * 6), BatchSpec("time", Period(1, "D")), "batches.by: no document .* has a timestamp"),
        (_corpus(["2000-01-01"] * 6), BatchSpec("time", Period(1, "D")), "batches: the corpus falls into 1 batch"),
        (_corpus(), BatchSpec("split"), 'batches.by: "split" needs split labels'),
    ],
)
def test_split_batches_errors(corpus, batches, message):
    with pytest.raises(UserError, match=message):
        split_batches(corpus, batches)


@pytest.mark.parametrize(
    "extra, message",
    [
        ("[drift]\nwindows = [1, %s]\n" % ("9" * 400), "drift.windows[1]: integer out of range"),
        ("[drift]\nwindows = [inf]\n", "drift.windows[0]: must be a finite number"),
        ("[drift]\nmargin = nan\n", "drift.margin: must be a finite number"),
        ("[drift]\nalpha = -inf\n", "drift.alpha: must be a finite number"),
        ("[drift]\nrho = %s\n" % ("1" + "0" * 400), "drift.rho: integer out of range"),
        ("[[preprocessing]]\nmin_df = inf\n", "preprocessing[0].min_df: must be a finite number"),
        (
            "[drift]\nmax_configs = 10\n[svm]\nC = [1, 2, 3, 4]\nj = [1, 2, 3]\n",
            "drift.max_configs: the grid has 12 configurations",
        ),
        ('[drift]\ngram_memory_limit = "1..5kB"\n', "drift.gram_memory_limit: must be a size like 8GiB"),
        ("[cluster]\nworkers = 5000\n", "cluster.workers: 5,000 workers is more than cluster.max_workers = 1,024"),
    ],
)
def test_numbers_no_field_takes_are_refused(extra, message):
    with pytest.raises(UserError) as info:
        parse_drift_spec(MINIMAL + extra, source="d.toml")
    assert str(info.value).startswith(f"d.toml: {message}") and "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["99999999999999999999999D", "100001h", "9" * 5000 + "W"])
def test_periods_beyond_100000_units_are_refused(text):
    # before: a count beyond int64 overflowed (a traceback) when the documents were binned
    with pytest.raises(UserError, match="batches.period: the count must be between 1 and 100,000"):
        parse_period(text, "batches.period")
    assert parse_period("0007D") == Period(7, "D")


@pytest.mark.timeout(20)  # "^\s*(\d*)\s*..." split a run of blanks two ways: minutes for 100,000 of them
def test_a_period_of_many_blanks_is_refused_at_once():
    """Issue 48, item 2: no pattern applied to a spec's text backtracks."""
    with pytest.raises(UserError, match="period: must be a positive count and a unit"):
        parse_period(" " * 100_000 + "x")
    assert parse_period(" 7 D \n") == parse_period("7D")
