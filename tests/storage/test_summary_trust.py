"""The per-sweep summary is a cache validated against what it summarises, never the truth (issue
44, item 1; issue 42, item 4): a data file rewritten in place (fewer rows, a restore from another
copy, even of the same size and modification time), or a summary whose values are not of their
types, ranges and relations, is ignored with one warning naming it, and the rows are read; no
summary is parsed without a size and a depth limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
import warnings
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_server import s3_endpoint  # noqa: F401 (a fixture)
from store_rows import T0, result_row

import xialpha
import xialpha.storage.summary as summary_module
from xialpha.cli import main
from xialpha.errors import StoreWarning, UserError
from xialpha.spec.sweep import load_spec
from xialpha.storage.files import stamp
from xialpha.storage.opening import open_store
from xialpha.storage.store import ResultStore
from xialpha.storage.summary import SUMMARY_NAME

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path) -> ResultStore:
    """Sweep "g" ended (one compacted file of 24 rows, its summary) and sweep "other" ended."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    for f in range(6):
        store.datasets.write_results([result_row(4 * f + r, sweep_id="g", created_at=T0) for r in range(4)])
    store.datasets.write_results([result_row(i, sweep_id="other", C=4.0, created_at=T0) for i in range(3)])
    store.finish_sweep("g")
    store.finish_sweep("other")
    return store


def _partition(store: ResultStore, sweep_id: str = "g") -> Path:
    return Path(store.datasets.location.root) / "results" / f"sweep_id={sweep_id}"


def _data_file(store: ResultStore, sweep_id: str = "g") -> Path:
    (path,) = _partition(store, sweep_id).glob("*.parquet")
    return path


def _from_rows(store: ResultStore) -> pd.DataFrame:
    """What `sweeps()` answers with no summary at all."""
    for path in Path(store.datasets.location.root).glob(f"results/*/{SUMMARY_NAME}"):
        path.unlink()
    return open_store(store.uri, create=True, writable=True).sweeps()


def _sweeps_warned(store: ResultStore) -> tuple[pd.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = open_store(store.uri, create=True, writable=True).sweeps()
    return answer, [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]


def _rewrite_without_rows(path: Path, dropped: int) -> None:
    """A tool rewriting the compacted file in place: the same name and columns, fewer rows."""
    pq.write_table(pq.read_table(path).slice(dropped), path, compression="zstd")


def test_a_data_file_rewritten_in_place_with_fewer_rows_is_read_not_summarised(store):
    _rewrite_without_rows(_data_file(store), 10)
    answer, warned = _sweeps_warned(store)
    assert answer.set_index("sweep_id").loc["g", "rows_ok"] == 14
    pd.testing.assert_frame_equal(answer, _from_rows(store))
    assert len(warned) == 1 and f"ignored results/sweep_id=g/{SUMMARY_NAME}: part-" in warned[0], warned
    assert "it was summarised at" in warned[0] and "the rows are read instead" in warned[0]


def test_a_data_file_of_the_same_size_and_time_with_another_footer_is_read(store):
    """A restore that keeps the size and the modification time: the footer still tells."""
    path = _data_file(store)
    original, status = path.read_bytes(), path.stat()
    fewer = pq.read_table(path).slice(2)
    pq.write_table(fewer, path, compression="zstd")
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little") + 8
    assert len(data) < len(original)
    padded = data[:-footer] + b"\0" * (len(original) - len(data)) + data[-footer:]  # valid: pages keep their offsets
    path.write_bytes(padded)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert path.stat().st_size == status.st_size and path.stat().st_mtime_ns == status.st_mtime_ns
    assert pq.read_table(path).num_rows == 22
    answer, warned = _sweeps_warned(store)
    assert answer.set_index("sweep_id").loc["g", "rows_ok"] == 22
    assert len(warned) == 1 and "changed since it was summarised (its bytes differ)" in warned[0], warned


def _forge(store: ResultStore, change) -> None:
    path = _partition(store) / SUMMARY_NAME
    content = json.loads(path.read_text())
    other = json.loads((_partition(store, "other") / SUMMARY_NAME).read_text())
    changed = change(content, other)
    path.write_text(changed if isinstance(changed, str) else json.dumps(changed))


def _set(**values):
    return lambda content, other: {**content, **values}


FORGERIES = {
    "negative rows": (_set(rows_ok=-5, stored_keys=19), "rows_ok -5 is not a count"),
    "inf configs": (_set(configs="inf"), "configs 'inf' is not a count"),
    "float count": (_set(categories=3.0), "categories 3.0 is not a count"),
    "bool count": (_set(rows_failed=True), "rows_failed True is not a count"),
    "stored_keys 0 hiding the sweep": (_set(stored_keys=0, rows_ok=0), "stored_keys 0, but its files hold 24 rows"),
    "more rows than its files hold": (_set(stored_keys=90, rows_ok=90), "stored_keys 90, but its files hold 24 rows"),
    "another sweep's counts": (
        lambda content, other: {**other, "sweep_id": "g", "format": content["format"], "files": content["files"]},
        "stored_keys 3, but its files hold 24 rows",
    ),
    "another sweep's id": (_set(sweep_id="other"), "of sweep 'other', in the partition of 'g'"),
    "bad date": (_set(first_created_at="2026-13-45T99:00:00+00:00"), "first_created_at '2026-13-45T99:00:00+00:00'"),
    "naive date": (_set(last_created_at="2026-01-02T03:04:05"), "is not a UTC time in ISO 8601"),
    "dates the wrong way round": (
        _set(first_created_at="2027-01-01T00:00:00+00:00"),
        "first_created_at is after last_created_at",
    ),
    "beyond its rows' times": (
        _set(last_created_at="9999-01-01T00:00:00+00:00"),
        "created_at from 2026-01-02 03:04:05+00:00 to 9999-01-01 00:00:00+00:00, but its files hold",
    ),
    "beyond its rows' C": (
        lambda content, other: {**content, "grid": {**content["grid"], "C": [0.5, 1.0, 1.5, 20.0]}},
        "C from 0.5 to 20.0, but its files hold C from 0.5 to 2.0",
    ),
    "categories the grid does not hold": (_set(categories=2), "categories 2 but the grid holds 3"),
    "configs no grid holds": (_set(configs=17), "configs 17 is not what a grid of 1 x 1 x 4 x 1 holds"),
    "inf in the grid": (
        lambda content, other: json.dumps(content).replace('"C": [', '"C": [Infinity, '),
        "grid C is not a list of finite numbers",
    ),
    "digest not hex": (_set(stored_keys_digest="z" * 64), "stored_keys_digest is not a SHA-256 digest"),
    "a field more": (_set(extra=1), "fields ['extra'] are not a summary's"),
    "deeply nested": (
        lambda content, other: json.dumps(content).replace('"C": [', '"C": [' + "[" * 5000 + "]" * 5000 + ", "),
        "nested 5003 levels deep, over the 3 this file has",
    ),
    "a file entry of the wrong type": (
        lambda content, other: {**content, "files": [{**content["files"][0], "size": "big"}]},
        "holds values of the wrong type",
    ),
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_summary_whose_values_are_not_of_their_types_and_ranges_is_ignored_with_a_warning(store, forgery):
    change, reason = FORGERIES[forgery]
    expected = open_store(store.uri, create=True, writable=True).sweeps()
    _forge(store, change)
    answer, warned = _sweeps_warned(store)
    pd.testing.assert_frame_equal(answer, expected)  # from the rows
    assert len(warned) == 1 and f"ignored results/sweep_id=g/{SUMMARY_NAME}: " in warned[0], warned
    assert reason in warned[0], warned[0]
    assert open_store(store.uri, create=True, writable=True).sweep_ids() == ["g", "other"]


def test_a_summary_over_the_size_limit_is_not_read(store, monkeypatch):
    monkeypatch.setattr(summary_module, "SUMMARY_BYTES", 100)
    monkeypatch.setattr("xialpha.storage.datasets.SUMMARY_BYTES", 100)
    expected = _from_rows(store)
    store.finish_sweep("g")  # over the limit: not written
    assert not (_partition(store) / SUMMARY_NAME).exists()
    (_partition(store) / SUMMARY_NAME).write_text(" " * 200)
    answer, warned = _sweeps_warned(store)
    pd.testing.assert_frame_equal(answer, expected)
    assert len(warned) == 1 and "over 100 bytes" in warned[0]


@pytest.mark.parametrize(
    "forgery", ["deeply nested", "bad date", "negative rows", "stored_keys 0 hiding the sweep", "inf configs"]
)
def test_store_ls_on_a_forged_summary_lists_the_rows_with_one_line_of_warning(store, forgery):
    expected = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "store", "ls", store.uri, "--format", "csv"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    ).stdout
    _forge(store, FORGERIES[forgery][0])
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "store", "ls", store.uri, "--format", "csv"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert done.stderr.count("\n") == 1 and "ignored results/sweep_id=g/_summary.json" in done.stderr, done.stderr


def test_select_save_refuses_a_sweep_whose_compacted_file_lost_rows(tmp_path):
    """README: `select --save` refuses a sweep with rows missing unless partial. The summary of the
    complete sweep must not vouch for a file rewritten with fewer rows."""
    from swept import fill_store, small_spec

    spec_path = tmp_path / "g.toml"
    spec_path.write_text(small_spec("g", categories="top_k = 3", C="[0.5, 1.0, 5.0, 10.0]"))
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(load_spec(spec_path), store)
    store.finish_sweep("g")
    _rewrite_without_rows(_data_file(store), 2)
    with pytest.warns(StoreWarning, match="it was summarised at"):
        with pytest.raises(UserError, match=r"incomplete: 2 of its 12 rows are not stored"):
            xialpha.select(store.uri, sweep="g", save=True)


def _flip_bytes_in_a_data_page(path: Path) -> None:
    """Four bytes flipped in the middle of the status column's pages; the footer stays intact."""
    metadata = pq.ParquetFile(path).metadata
    chunk = metadata.row_group(0).column(metadata.schema.names.index("status"))
    start = chunk.data_page_offset + chunk.total_compressed_size // 2
    data = bytearray(path.read_bytes())
    data[start : start + 4] = bytes(byte ^ 0xFF for byte in data[start : start + 4])
    path.write_bytes(bytes(data))


def test_a_flipped_byte_in_a_data_page_is_listed_as_reads_return_it(store, capsys):
    """Issue 48, item 6: `store ls` listed the 24 rows of a file whose footer its summary stamped,
    while `select` could not decode a page of it ("no successful results stored")."""
    _flip_bytes_in_a_data_page(_data_file(store))
    answer, warned = _sweeps_warned(store)
    assert answer["sweep_id"].tolist() == ["other"], answer
    assert any(f"ignored results/sweep_id=g/{SUMMARY_NAME}" in w and "(its bytes differ)" in w for w in warned), warned
    assert any("skipped 1 unreadable or foreign file(s): results/sweep_id=g/part-" in w for w in warned), warned
    assert main(["store", "ls", store.uri, "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert [line.split(",")[1] for line in captured.out.splitlines()[1:]] == ["other"], captured.out
    assert "unreadable" in captured.err and "results/sweep_id=g/part-" in captured.err, captured.err


def test_select_save_refuses_a_sweep_whose_rewritten_file_was_re_stamped_into_its_summary(tmp_path):
    """Issue 48, item 6: a compacted file rewritten with 3 rows dropped and 3 duplicated (as many
    rows), then stamped into the summary again, passes every check of the summary; `select --save`
    trusted it without --partial. The summary answers listings only: select reads the keys."""
    from swept import fill_store, small_spec

    spec_path = tmp_path / "g.toml"
    spec_path.write_text(small_spec("g", categories="top_k = 3", C="[0.5, 1.0, 5.0, 10.0]"))
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(load_spec(spec_path), store)
    store.finish_sweep("g")
    path = _data_file(store)
    table = pq.read_table(path)
    pq.write_table(pa.concat_tables([table.slice(3), table.slice(3, 3)]), path, compression="zstd")
    summary = json.loads((_partition(store) / SUMMARY_NAME).read_text())
    location = store.datasets.location
    summary["files"] = [asdict(stamp(location, file)) for file in location.data_files(str(_partition(store)))]
    (_partition(store) / SUMMARY_NAME).write_text(json.dumps(summary))
    assert (
        open_store(store.uri, create=True, writable=True).sweep_summary("g") is not None
    )  # a re-stamp no check of the summary tells
    with pytest.raises(UserError, match=r"incomplete: 3 of its 12 rows are not stored"):
        xialpha.select(store.uri, sweep="g", save=True)


def test_on_s3_a_data_file_rewritten_in_place_is_read_not_summarised(s3_endpoint):
    uri = f"s3://xialpha/stores/{uuid.uuid4().hex}?endpoint_override={s3_endpoint}&scheme=http&allow_delayed_open=true"
    store = open_store(uri, create=True, writable=True)
    for f in range(3):
        store.datasets.write_results([result_row(4 * f + r, sweep_id="g", created_at=T0) for r in range(4)])
    store.finish_sweep("g")
    location = store.datasets.location
    (data,) = location.data_files(location.path("results", "sweep_id=g"))
    assert open_store(uri, create=True, writable=True).sweep_summary("g") is not None
    fewer = pq.read_table(data.path, filesystem=location.filesystem).slice(5)
    pq.write_table(fewer, data.path, filesystem=location.filesystem, compression="zstd")
    answer, warned = _sweeps_warned(store)
    assert answer.set_index("sweep_id").loc["g", "rows_ok"] == 7
    assert len(warned) == 1 and "it was summarised at" in warned[0], warned


def test_a_summary_of_categories_named_with_brackets_and_quotes_is_used(tmp_path, monkeypatch):
    """Brackets inside strings do not nest: a grid of such names is no deeper than any other."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    names = ["[[[[[[", '"]]]]"', "{{{\\", '\\"[', "[/]"]
    store.datasets.write_results([result_row(i, sweep_id="g", category=names[i % 5]) for i in range(10)])
    store.finish_sweep("g")
    expected = open_store(store.uri, create=True, writable=True).sweeps()
    reopened = open_store(store.uri, create=True, writable=True)
    monkeypatch.setattr(type(reopened.datasets), "read_results", lambda *a, **k: pytest.fail("read rows"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        pd.testing.assert_frame_equal(reopened.sweeps(), expected)
    assert sorted(reopened.sweep_summary("g").grid["category"]) == sorted(names)


def test_without_a_summary_a_damaged_page_of_a_column_the_counts_do_not_need_is_listed_as_reads_return_it(store):
    """Issue 48, item 6 (the campaign's tampered_data_pages, seed 11): with no summary, `store ls`
    counted a sweep from the few columns its counts need, so a page of another column that
    `select` could not decode went unnoticed (4 rows listed, "no successful results stored")."""
    from xialpha.storage.summary import SUMMARY_COLUMNS

    for path in _partition(store).glob(SUMMARY_NAME):
        path.unlink()
    path = _data_file(store)
    group = pq.ParquetFile(path).metadata.row_group(0)
    chunk = next(
        group.column(i)
        for i in range(group.num_columns)
        if group.column(i).path_in_schema not in (*SUMMARY_COLUMNS, "sweep_id", "config_key")
    )
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset + 12] ^= 0xFF  # inside the page header: thrift cannot decode it
    path.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        read = open_store(store.uri, create=True, writable=True).read_results_df("g", include_failed=True)
    answer, warned = _sweeps_warned(store)
    assert read.empty  # what select reads of sweep g: nothing
    assert answer["sweep_id"].tolist() == ["other"], answer
    assert any("skipped 1 unreadable or foreign file(s): results/sweep_id=g/part-" in w for w in warned), warned
