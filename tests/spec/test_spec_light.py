"""Issue 43.1: the spec layer and the error module import no numpy, scipy, pandas, scikit-learn,
numba, pyarrow or Dask (a drift spec: numpy only, for its batches), so a spec's mistake is answered
before any of them is loaded; sizes are read as Dask reads them, without importing Dask."""

from __future__ import annotations

import subprocess
import sys

import pytest
from dask.utils import parse_bytes

from xialpha.errors import UserError
from xialpha.spec.tables import parse_size

HEAVY = ("numpy", "scipy", "pandas", "sklearn", "numba", "pyarrow", "dask", "distributed")


@pytest.mark.parametrize(
    "modules, allowed",
    [
        (("xialpha.errors", "xialpha.spec.sweep", "xialpha.spec.stored", "xialpha.spec.reference"), ()),
        (("xialpha.spec.drift",), ("numpy",)),
    ],
)
def test_the_spec_layer_imports_nothing_heavy(modules, allowed):
    code = (
        f"import sys\nimport {', '.join(modules)}\n"
        f"print(sorted(m for m in {HEAVY!r} if m not in {allowed!r} and m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


@pytest.mark.parametrize(
    "text", ["100", "100 MB", "100M", "5kB", "5.4 kB", "1kiB", "1e6", "1e6 kB", "MB", "8GiB", " 2 Ti ", "1.5pb", "3B"]
)
def test_a_size_is_read_as_dask_reads_it(text):
    assert parse_size("sweep.gram_memory_limit", text) == parse_bytes(text)


@pytest.mark.parametrize("text", ["5 foos", "abc1", "1..2kB", "kB1", "1e", "inf", "", "0", "-1 GB", True, [1]])
def test_what_is_no_size_is_refused_naming_the_key(text):
    with pytest.raises(UserError, match=r"^cluster.memory_limit: must be a size like 8GiB or 500MB"):
        parse_size("cluster.memory_limit", text)
