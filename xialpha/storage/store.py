"""`ResultStore`: the append-only Parquet store of sweep results and everything derived from them.

Layout under the store root (hive partitions; `sweep_id` is also a column inside each file):

    _xialpha_store.json                        format marker with the store's schema version
    results/sweep_id=<id>/part-*.parquet       one row per trained configuration
    examples/sweep_id=<id>/part-*.parquet      per-example error indicators per config
    selections|drift|certifications|sweeps/[sweep_id=<id>/]part-*.parquet

Each write adds new files and never rewrites one. Reads keep the newest row per key (see
`xialpha.storage.reading`), so a config recomputed with `--force` replaces the older row.
"""

from __future__ import annotations

import datetime
import json
import socket
import uuid
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from xialpha import __version__
from xialpha.errors import UserError
from xialpha.storage import validate
from xialpha.storage.bits import pack_bits, unpack_bits
from xialpha.storage.compaction import compact_partitions
from xialpha.storage.location import Location
from xialpha.storage.reading import as_expression, read_newest, stored_schema
from xialpha.storage.schema import DATASETS, ESTIMATORS, EXAMPLE_COLUMNS, RESULT_COLUMNS, SCHEMA_VERSION, TIMESTAMP

MARKER = "_xialpha_store.json"
MARKER_FORMAT = "xialpha-store"


class ResultStore:
    """A store at a local directory or pyarrow/fsspec URI (s3://bucket/prefix, memory://name, ...).

    With `create=True` (the default) an absent or empty directory becomes a new store and the
    store must be writable; with `create=False` the store must exist and may be read-only.
    """

    def __init__(self, uri: str, *, create: bool = True):
        self.location = Location(uri)
        self.uri = uri
        self.schema_version = self._open(create)

    def __repr__(self) -> str:
        return f"ResultStore({self.uri!r})"

    # --- writing -----------------------------------------------------------------------------

    def write_results(self, rows: Sequence[Mapping] | pa.Table) -> str:
        """Validate result rows of one sweep and store them as one new file; return its path.

        `created_at` (now), `schema_version`, `xialpha_version` and `worker` (this host) are
        filled where absent. Nothing is written if any row is invalid.
        """
        what = "results"
        table = rows if isinstance(rows, pa.Table) else validate.table_from_rows(rows, RESULT_COLUMNS, what)
        defaults = {
            "created_at": datetime.datetime.now(datetime.timezone.utc),
            "schema_version": SCHEMA_VERSION,
            "xialpha_version": __version__,
            "worker": socket.gethostname(),
        }
        table = validate.conform(table, RESULT_COLUMNS, what, defaults)
        sweep_id = validate.check_sweep_ids(table, what)
        validate.require_values(table, "status", ("ok", "failed"), what)
        row = validate.first_true(pc.and_(pc.equal(table["status"], "failed"), pc.is_null(table["error_message"])))
        if row is not None:
            raise UserError(f"{what} row {row}: status is 'failed' but error_message is null")
        validate.reject_duplicate_keys(table, DATASETS["results"].key_columns, what)
        return self._write("results", table, sweep_id)

    def write_examples(self, rows: Sequence[Mapping]) -> str:
        """Store per-example indicator rows of one sweep as one new file; return its path.

        `bits` may be packed bytes (then `n` is required) or a 1-D boolean array (packed here,
        `n` taken from its length); `created_at` defaults to now.
        """
        what = "examples"
        validate.check_row_list(rows, what)
        table = validate.table_from_rows([_packed(row, index) for index, row in enumerate(rows)], EXAMPLE_COLUMNS, what)
        now = datetime.datetime.now(datetime.timezone.utc)
        table = validate.conform(table, EXAMPLE_COLUMNS, what, {"created_at": now})
        sweep_id = validate.check_sweep_ids(table, what)
        validate.require_values(table, "estimator", ESTIMATORS, what)
        expected_bytes = pc.divide(pc.add(table["n"], 7), 8)
        row = validate.first_true(pc.not_equal(pc.binary_length(table["bits"]), expected_bytes))
        if row is not None:
            raise UserError(f"{what} row {row}: bits has {len(table['bits'][row].as_py())} bytes, n={table['n'][row]} needs {expected_bytes[row]}")
        validate.reject_duplicate_keys(table, DATASETS["examples"].key_columns, what)
        return self._write("examples", table, sweep_id)

    def append(self, dataset: str, rows: Sequence[Mapping] | pa.Table) -> str:
        """Append rows to a dataset typed by its rows (selections, drift, ...); return the path written.

        Rows need the dataset's id column (non-null, unique in the write); `created_at`
        defaults to now; a `sweep_id` column partitions the files. Column types must agree with
        the files already stored.
        """
        spec = self._dataset(dataset)
        if spec.columns is not None:
            raise UserError(f"dataset {dataset!r}: use write_{dataset}() for it, not append()")
        table = validate.flat_table(rows, dataset)
        if "created_at" not in table.column_names:
            now = datetime.datetime.now(datetime.timezone.utc)
            table = table.append_column("created_at", pa.array([now] * table.num_rows, TIMESTAMP))
        for name in (*spec.key_columns, "created_at"):
            if name not in table.column_names or table[name].null_count:
                raise UserError(f"{dataset}: column {name!r} is missing or null")
        validate.reject_duplicate_keys(table, spec.key_columns, dataset)
        sweep_id = validate.check_sweep_ids(table, dataset) if "sweep_id" in table.column_names else None
        files = self.location.data_files(self.location.path(dataset))
        if files:
            try:
                pa.unify_schemas([stored_schema(self.location, files), table.schema], promote_options="permissive")
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise UserError(f"{dataset}: rows do not match the stored column types: {exc}") from None
        return self._write(dataset, table, sweep_id)

    # --- reading -----------------------------------------------------------------------------

    def done_keys(self, sweep_id: str) -> set[str]:
        """Config keys of `sweep_id` whose newest row has status "ok".

        Failed configs do not count as done, so rerunning a sweep retries them.
        """
        table = self.read_results(sweep_id, columns=["config_key"])
        return set(table["config_key"].to_pylist())

    def read_results(
        self,
        sweep_id: str | None = None,
        *,
        filters: object = None,
        columns: Sequence[str] | None = None,
        include_failed: bool = False,
    ) -> pa.Table:
        """Result rows, newest per (sweep_id, config_key), sorted by key.

        `filters` (a pyarrow Expression or pyarrow.parquet-style DNF tuples) apply after the
        newest row per key is chosen; failed rows are dropped unless `include_failed`.
        """
        expression = as_expression(filters)
        if not include_failed:
            ok = pc.field("status") == "ok"
            expression = ok if expression is None else ok & expression
        return self._read_newest(DATASETS["results"], sweep_id, columns=columns, filter=expression)

    def read_results_df(self, sweep_id: str | None = None, **options):
        """`read_results` as a pandas DataFrame."""
        return self.read_results(sweep_id, **options).to_pandas()

    def read_examples(self, config_keys: Iterable[str], estimator: str = "xa", *, sweep_id: str | None = None) -> dict[str, np.ndarray]:
        """{config_key: boolean vector "counted as error" of length n} for the stored keys.

        Keys without a stored vector are absent from the result. Where a key was stored in
        several sweeps, the newest row wins unless `sweep_id` picks one.
        """
        keys = list(dict.fromkeys(config_keys))
        wanted = pc.field("config_key").isin(keys) & (pc.field("estimator") == estimator)
        table = self._read_newest(DATASETS["examples"], sweep_id, key_columns=("config_key", "estimator"),
                                  columns=["config_key", "n", "bits"], filter=wanted)
        return {key: unpack_bits(bits, n) for key, n, bits in zip(*(table[c].to_pylist() for c in table.column_names))}

    def read(self, dataset: str, filters: object = None, *, sweep_id: str | None = None) -> pa.Table:
        """Rows of any dataset, newest per key, sorted by key; `filters` apply after deduplication."""
        return self._read_newest(self._dataset(dataset), sweep_id, filter=as_expression(filters))

    def sweeps(self):
        """A pandas DataFrame with one row per sweep: rows_ok, rows_failed, categories, configs
        (distinct preprocessing x kernel x C x j), first_created_at, last_created_at."""
        import pandas as pd

        names = ["sweep_id", "status", "category", "preprocessing_id", "kernel_id", "C", "j", "created_at"]
        frame = self.read_results(include_failed=True, columns=names).to_pandas()
        columns = ["sweep_id", "rows_ok", "rows_failed", "categories", "configs", "first_created_at", "last_created_at"]
        if frame.empty:
            return pd.DataFrame(columns=columns)
        frame["config"] = list(zip(frame["preprocessing_id"], frame["kernel_id"], frame["C"], frame["j"]))
        summary = frame.groupby("sweep_id", sort=True).agg(
            rows_ok=("status", lambda s: int((s == "ok").sum())),
            rows_failed=("status", lambda s: int((s == "failed").sum())),
            categories=("category", "nunique"),
            configs=("config", "nunique"),
            first_created_at=("created_at", "min"),
            last_created_at=("created_at", "max"),
        )
        return summary.reset_index()[columns]

    # --- maintenance -------------------------------------------------------------------------

    def compact(self, dataset: str = "results") -> tuple[int, int]:
        """Merge each partition's files into one, dropping superseded rows; (files before, after).

        Query results do not change; see `xialpha.storage.compaction`.
        """
        spec = self._dataset(dataset)
        return compact_partitions(self.location, spec)

    # --- internals ---------------------------------------------------------------------------

    def _dataset(self, name: str):
        if name not in DATASETS:
            raise UserError(f"dataset {name!r}: unknown; use one of {', '.join(DATASETS)}")
        return DATASETS[name]

    def _read_newest(self, spec, sweep_id: str | None, *, key_columns=None, columns=None, filter=None) -> pa.Table:
        """`reading.read_newest` over one dataset, or one sweep's partition of it."""
        directory = self.location.path(spec.name)
        if sweep_id is not None:
            directory = f"{directory}/sweep_id={validate.check_sweep_id(sweep_id)}"
        files = self.location.data_files(directory)
        if not files and spec.schema() is None:
            return pa.table({})  # a row-typed dataset nothing was appended to yet has no columns
        schema = spec.schema() or stored_schema(self.location, files)
        return read_newest(self.location, files, schema, key_columns or spec.key_columns, columns=columns, filter=filter)

    def _write(self, dataset: str, table: pa.Table, sweep_id: str | None) -> str:
        directory = self.location.path(dataset)
        if sweep_id is not None:
            directory = f"{directory}/sweep_id={sweep_id}"
        return self.location.write_table(directory, table)

    def _open(self, create: bool) -> int:
        location = self.location
        marker = location.path(MARKER)
        if location.is_file(location.root):
            raise UserError(f"store {self.uri}: is a file, not a store directory")
        if location.exists(marker):
            version = self._read_marker(marker)
            if create:
                self._probe_writable()
            return version
        if location.entries(location.root):
            raise UserError(f"store {self.uri}: not a xialpha store (a non-empty directory without {MARKER})")
        if not create:
            raise UserError(f"store {self.uri}: not a xialpha store (no {MARKER}); create it by writing results to it")
        text = json.dumps({
            "format": MARKER_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "xialpha_version": __version__,
            "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        }, indent=2)
        location.write_bytes(marker, text.encode("utf-8"))
        return SCHEMA_VERSION

    def _read_marker(self, marker: str) -> int:
        try:
            content = json.loads(self.location.read_text(marker))
            version = content["schema_version"] if content.get("format") == MARKER_FORMAT else None
        except (ValueError, KeyError, AttributeError, OSError):
            version = None
        if not isinstance(version, int) or isinstance(version, bool):
            raise UserError(f"store {self.uri}: {MARKER} is not a valid xialpha store marker")
        if version > SCHEMA_VERSION:
            raise UserError(
                f"store {self.uri}: written with schema version {version}, newer than this xialpha's "
                f"{SCHEMA_VERSION}; upgrade xialpha"
            )
        return version

    def _probe_writable(self) -> None:
        probe = self.location.path(f".writable-probe-{uuid.uuid4().hex}")
        self.location.write_bytes(probe, b"")
        self.location.delete(probe)


def _packed(row: Mapping, index: int) -> dict:
    """The row with a boolean `bits` vector packed into bytes and `n` set from its length."""
    bits = row.get("bits") if isinstance(row, Mapping) else None
    if not isinstance(bits, np.ndarray):
        return dict(row)
    if row.get("n") is not None and row["n"] != len(bits):
        raise UserError(f"examples row {index}: n={row['n']} but bits has {len(bits)} indicators")
    return {**row, "bits": pack_bits(bits), "n": len(bits)}
