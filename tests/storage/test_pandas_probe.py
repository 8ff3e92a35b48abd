"""`skip_pandas_probe`: pyarrow starts without pandas in a process that asks for no DataFrame
(`xialpha store ls`), and still gives DataFrames, and reads pandas objects as such, once asked."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from xialpha.storage.pandas_probe import skip_pandas_probe
skip_pandas_probe()
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset
filtered = pa.table({"a": [1, 2]}).filter(pc.field("a") == 2)  # a Python value converted: no probe again
print("pandas" in sys.modules, filtered.num_rows)
frame = pa.table({"a": [1.5, None]}).to_pandas()  # asked for a DataFrame: pandas imported
series = pa.array(frame["a"], from_pandas=True)  # a pandas object read as one again (NaN is null)
print("pandas" in sys.modules, frame["a"].isna().tolist(), series.null_count)
"""


def test_pyarrow_starts_without_pandas_and_imports_it_when_asked_for_a_dataframe():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False 1", "True [False, True] 1"]
