"""The Parquet result store: results, per-example indicators, selections, drift, certifications.

`ResultStore(uri)` opens a store on a local path or a pyarrow/fsspec URI; `config_key(...)`
names a configuration; `RESULT_COLUMNS` / `results_schema()` define the results dataset.
Only this package reads or writes Parquet. Which row of a key wins (write order from the store,
"ok" before failed) is `xialpha.storage.reading`; which files reads skip, `xialpha.storage.files`.
"""

from xialpha.storage.bits import pack_bits, unpack_bits
from xialpha.storage.keys import config_key
from xialpha.storage.schema import (
    DATASETS,
    ESTIMATORS,
    EXAMPLE_COLUMNS,
    RESULT_COLUMNS,
    SCHEMA_VERSION,
    examples_schema,
    results_schema,
)
from xialpha.errors import StoreWarning
from xialpha.storage.store import ResultStore
from xialpha.storage.validate import check_sweep_id

__all__ = [
    "DATASETS",
    "ESTIMATORS",
    "EXAMPLE_COLUMNS",
    "RESULT_COLUMNS",
    "SCHEMA_VERSION",
    "ResultStore",
    "StoreWarning",
    "check_sweep_id",
    "config_key",
    "examples_schema",
    "pack_bits",
    "unpack_bits",
    "results_schema",
]
