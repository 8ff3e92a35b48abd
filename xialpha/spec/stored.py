"""What a stored sweep trained on: its spec, from the store's recorded runs or a spec file.

The stored spec text is re-read with relative corpus paths taken from the directory it was read
from; `spec_path` points at the spec file instead. Either way the corpus it loads must have the
fingerprint the sweep recorded (`xialpha.jobs.refit.refit_session` checks, once it has read it),
so a moved or changed corpus is refused, never used silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xialpha.errors import UserError
from xialpha.spec.sweep import SweepSpec, load_spec, parse_spec

if TYPE_CHECKING:
    from xialpha.corpora.corpus import Corpus
    from xialpha.storage.contract import StoreQueries


def sweep_spec(
    store: StoreQueries,
    sweep_id: str,
    data_fingerprint: str,
    spec_path: str | None = None,
    corpus: Corpus | None = None,
) -> SweepSpec:
    """The spec of `sweep_id` whose training data has `data_fingerprint`; `corpus`: the in-memory
    corpus the sweep was given (`parse_spec(corpus=)`), None to load the spec's."""
    if spec_path is not None:
        spec = load_spec(spec_path, corpus=corpus)
        if spec.id != sweep_id:
            raise UserError(f"{spec_path} is sweep {spec.id!r}, not {sweep_id!r}", parameter="spec")
        return spec
    text, spec_dir = _stored_spec(store, sweep_id, data_fingerprint)
    return parse_spec(text, source=f"sweep {sweep_id!r} spec", base_dir=spec_dir, corpus=corpus)


def _stored_spec(store: StoreQueries, sweep_id: str, data_fingerprint: str) -> tuple[str, str | None]:
    """The newest recorded spec text of the sweep on this data, and the directory it was read from."""
    from xialpha.storage.schema import ResultColumn  # the store's module: a spec file is read without it

    runs = store.runs(sweep_id)
    if not runs.empty:
        runs = runs[runs[ResultColumn.DATA_FINGERPRINT] == data_fingerprint]
    if runs.empty:
        raise UserError(
            f"store {store.uri} has no spec recorded for sweep {sweep_id!r}; pass its spec file as spec=",
            parameter="sweep",
            mentions="spec=",
        )
    newest = runs.sort_values(ResultColumn.CREATED_AT).iloc[-1]
    spec_dir = newest.get("spec_dir")
    return str(newest["spec_toml"]), spec_dir if isinstance(spec_dir, str) and spec_dir else None
