"""The tour notebook (notebooks/tour.ipynb) runs in a real Jupyter kernel, as a user runs it:
a sweep from a dict with a live progress display, a saved selection, a plot drawn inline, the
saved selection certified once on the sealed test split, refit and predict. The README's
"From Python" section is that notebook's code, so the two cannot drift apart."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import xialpha
from xialpha.storage.opening import open_store

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "tour.ipynb"


def _code_cells(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_readme_python_section_is_the_notebooks_code():
    nbformat = pytest.importorskip("nbformat")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## From Python") :]
    section = section[: section.index("\n## ", 3)]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert block == "\n".join(_code_cells(nbformat.read(NOTEBOOK, as_version=4))) + "\n"
    assert "notebooks/tour.ipynb" in section


def test_the_tour_notebook_runs_in_a_jupyter_kernel(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)
    notebook = nbformat.read(tmp_path / NOTEBOOK.name, as_version=4)
    nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    sweep, selection, curves, certification, prediction = [c for c in notebook.cells if c.cell_type == "code"]
    assert "xialpha.sweep(" in sweep.source and "xialpha.refit(" in prediction.source
    for cell in notebook.cells:
        assert not [o for o in cell.get("outputs", []) if o.output_type == "error"], cell.outputs
    # the sweep's live display: one output updated in place, its final text the count of fits
    (display,) = [o for o in sweep.outputs if o.output_type == "display_data"]
    assert "<progress" in display.data["text/html"]
    assert re.fullmatch(r"\d+/\d+ fits in [0-9.]+ s", display.data["text/plain"]), display.data
    assert "<table" in _result(selection).data["text/html"]
    assert "image/png" in _result(curves).data  # the figure drawn inline
    assert "(macro)" in _result(certification).data["text/plain"]
    assert _result(prediction).data["text/plain"] in ("array([ True])", "array([False])")
    # the certification is stored for the selection saved in the store, and the report shows it
    store = open_store(str(tmp_path / "my-store"), create=False, writable=True)
    certified = store.certifications()
    assert len(certified) and set(certified["selection_id"]) == set(store.selections()["selection_id"])
    xialpha.report(tmp_path / "my-store", html=tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"Certification {certified['certification_id'].iloc[0]} on split test" in page


def _result(cell):
    """The cell's value (its execute_result output)."""
    (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    return result
