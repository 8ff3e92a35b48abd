"""The Parquet result store: results, per-example indicators, selections, drift, certifications.

`ResultStore(uri)` opens a store on a local path or a pyarrow/fsspec URI; `config_key(...)`
names a configuration; `xialpha.storage.schema` defines every dataset, the estimators and their
result columns (`estimate_values` turns an estimate into columns, `typed_table` rows of the
other datasets into typed tables). Only this package reads or writes Parquet. Which row of a key
wins (write order from the store, "ok" before failed) is `xialpha.storage.reading`; which files
reads skip, `xialpha.storage.files`.

The names below are imported on first use, so `import xialpha.storage.schema` (the column
registry, read by the command-line parser) does not load the store's reading machinery.
"""

import importlib

_EXPORTS = {
    "pack_bits": "bits", "unpack_bits": "bits", "config_key": "keys", "StoreWarning": "xialpha.errors",
    "ResultStore": "store", "check_sweep_id": "validate", "typed_table": "validate",
    **dict.fromkeys(("DATASETS", "ESTIMATORS", "EXAMPLE_COLUMNS", "RESULT_COLUMNS", "SCHEMA_VERSION",
                     "estimate_columns", "estimate_values", "examples_schema", "results_schema"), "schema"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'xialpha.storage' has no attribute {name!r}")
    module = _EXPORTS[name]
    value = getattr(importlib.import_module(module if "." in module else f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
