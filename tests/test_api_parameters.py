"""The Python API names a parameter of the wrong type before anything runs or is written (issue 25):
`sweep(store=123)` used to create ./123, `select(save="false")` saved, `select(rho="1")` ended in a
NumPy error and `client="tcp://..."` failed after a run record was written."""

from __future__ import annotations

import pandas as pd
import pytest

import xialpha
from xialpha.errors import UserError
from xialpha.parameters import ParameterTypeError

SPEC = {
    "sweep": {"id": "types"},
    "corpus": {"loader": "synthetic", "n_docs": 60, "n_categories": 2},
    "svm": {"C": [1.0]},
    "cluster": {"workers": 1},
}


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: xialpha.sweep(SPEC, store=123),
            r"^store=: must be a path or URI \(str or os.PathLike\), got int 123$",
        ),
        (lambda: xialpha.sweep(SPEC, store=["a", "b"]), r"^store=: must be a path or URI .*, got list$"),
        (lambda: xialpha.sweep(SPEC, store=0), r"^store=: must be a path or URI .*, got int 0$"),
        (
            lambda: xialpha.sweep(SPEC, store="s", client="tcp://127.0.0.1:8786"),
            r"^client=: must be a running distributed.Client .*, got str 'tcp://127.0.0.1:8786'$",
        ),
        (lambda: xialpha.select("s", rho="1"), r"^rho=: must be a number, got str '1'$"),
        (lambda: xialpha.select("s", alpha="0.05"), r"^alpha=: must be a number, got str '0.05'$"),
        (lambda: xialpha.select("s", save="false"), r"^save=: must be True or False, got str 'false'$"),
        (lambda: xialpha.select("s", runners_up=2.5), r"^runners_up=: must be a whole number, got float 2.5$"),
        (
            lambda: xialpha.certify("s", selection="sel-x", test_split="test", draws="many"),
            r"^draws=: must be a whole number, got str 'many'$",
        ),
        (
            lambda: xialpha.report("s", selection=pd.DataFrame({"selection_id": ["x"]})),
            r"^selection=: must be a str or None, got DataFrame$",
        ),
    ],
)
def test_a_parameter_of_the_wrong_type_is_named_and_nothing_is_written(call, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterTypeError, match=message) as caught:
        call()
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, UserError)
    assert list(tmp_path.iterdir()) == []


def test_a_selection_frame_without_its_columns_is_named(tmp_path, monkeypatch):
    from store_rows import result_row

    from xialpha.storage.opening import open_store

    open_store(str(tmp_path / "store"), create=True, writable=True).datasets.write_results([result_row(0)])
    frame = pd.DataFrame({"selection_id": ["sel-1"], "sweep_id": ["s"], "category": ["a"]})
    with pytest.raises(
        UserError,
        match=r"^selection=: not a selection select\(\) returned: it has no column\(s\) "
        r".*'data_fingerprint'",
    ):
        xialpha.refit(tmp_path / "store", selection=frame, client=object.__new__(_FakeClient))


class _FakeClient:
    def submit(self):  # never called: the selection is refused first
        raise AssertionError


def test_a_fifo_store_a_corpus_of_nones_and_a_cyclic_spec_are_named(tmp_path, monkeypatch):
    """Issue 48.9: a FIFO as the store raised a bare NotADirectoryError, corpus=(None, None, None) a
    TypeError naming nothing, a spec dict holding itself a RecursionError."""
    import os

    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UserError, match=r"^store .*fifo: is a special file \(a FIFO, socket or device\)"):
        xialpha.results(tmp_path / "fifo")
    with pytest.raises(UserError, match=r"^corpus=: its texts must be an iterable .* got NoneType$"):
        xialpha.sweep(SPEC, store="s", corpus=(None, None, None))
    with pytest.raises(UserError, match=r"^corpus=: its label_sets must be an iterable .* got str$"):
        xialpha.sweep(SPEC, store="s", corpus=(["a text"], "label"))
    cyclic: dict = {"sweep": {"id": "cycle"}}
    cyclic["sweep"]["again"] = cyclic
    with pytest.raises(UserError, match=r"^spec: cannot be written as TOML: a table holds itself"):
        xialpha.sweep(cyclic, store="s")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["fifo"]
