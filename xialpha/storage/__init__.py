"""The Parquet result store: results, per-example indicators, selections, drift, certifications.

`xialpha.storage.opening.open_store(uri, create=..., writable=...)` opens a store on a local path
or a pyarrow/fsspec URI: a `xialpha.storage.store.ResultStore`, which answers named queries
(`StoreQueries`) with pandas DataFrames or plain records, taking the typed rows of
`xialpha.storage.rows`; it composes the Arrow-level datasets (`.datasets`) and the exclusive
claims with their heartbeats (`.claims`, a `Claims`); `xialpha.storage.rows.config_key`
names a configuration; `xialpha.storage.schema` defines every dataset and its columns (the
estimators' columns from `xialpha.estimators.registry`) and turns estimates into columns. Only this
package reads or writes Parquet or knows the stored column names. Which row of a key wins (write
order from the store, "ok" before failed) is `xialpha.storage.reading`; which files reads skip,
`xialpha.storage.files`.

This package imports nothing itself, so that `xialpha.storage.naming` (read by the command-line
parser) does not load the store's reading machinery. It names the file that makes a directory a
store (STORE_MARKER, which `xialpha.storage.marker` reads and writes), so that what must never
write into a store (`xialpha.outputs`) finds one without loading it either.
"""

STORE_MARKER = "_xialpha_store.json"
