"""`skip_pandas_probe`: let a process that hands pyarrow no pandas objects start without pandas.

pyarrow asks once per process whether pandas is installed, by importing it (0.4-0.5 s, most of
`xialpha store ls`'s start-up), the first time it converts a Python value (a scalar of a filter
expression, or the one `pyarrow.dataset` makes as it is imported): to tell a pandas object from
other values. A process that hands pyarrow no pandas objects can let that first probe find no
pandas. pyarrow still imports pandas the first time it is asked for a DataFrame (`to_pandas`,
`from_pandas`), and from then on treats pandas objects as usual; until then it converts a pandas
object given to `pa.array` as a sequence of its values.
"""

from __future__ import annotations

import sys


class _NoPandas:
    """A finder of `sys.meta_path` that refuses the import of pandas (an ImportError: pyarrow's
    probe reads it as "not installed") and leaves every other module to the next finder."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "pandas":
            raise ImportError("pandas is not imported by this process's first pyarrow conversion")
        return None


def skip_pandas_probe() -> None:
    """Make pyarrow's probe for pandas now, finding none, unless pandas is imported already (then
    the probe costs nothing). Call it before `pyarrow.dataset` is imported."""
    if "pandas" in sys.modules:
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        import pyarrow as pa

        pa.scalar(0)  # the probe
    finally:
        sys.meta_path.remove(finder)
