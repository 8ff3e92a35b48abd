"""Rebuilding what a sweep trained on: its spec (from the store's "sweeps" dataset), corpus,
training split, and the Preprocessing and Kernel behind a result row's ids.

The stored spec text is re-read with relative corpus paths taken from the current directory;
`spec_path` points at the spec file instead. Either way the training split must have the
fingerprint the sweep recorded, so a moved or changed corpus is refused, never used silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from xialpha.errors import UserError


@dataclass(frozen=True)
class SweepContext:
    """A sweep's spec, its whole corpus and its training split (the corpus when unsplit)."""

    spec: object
    corpus: object
    train: object

    def preprocessing(self, preprocessing_id: str):
        """The spec's Preprocessing with this id."""
        for preprocessing in self.spec.preprocessings:
            if preprocessing.id == preprocessing_id:
                return preprocessing
        raise UserError(f"preprocessing_id: {preprocessing_id!r} is not in sweep {self.spec.id!r}'s spec")

    def kernel(self, kernel_id: str):
        """The spec's Kernel with this id."""
        for kernel in self.spec.kernels:
            if kernel.id == kernel_id:
                return kernel
        raise UserError(f"kernel_id: {kernel_id!r} is not in sweep {self.spec.id!r}'s spec")

    def split(self, name: str):
        """A named split of the corpus (UserError naming the splits there are)."""
        if name not in self.corpus.split_names:
            splits = ", ".join(self.corpus.split_names) or "none"
            raise UserError(f"test_split=: the corpus has no split {name!r} (it has: {splits})")
        return self.corpus.split(name)


def load_context(store, sweep_id: str, data_fingerprint: str, spec_path: str | None = None,
                 corpus=None) -> SweepContext:
    """The context of `sweep_id` whose training data has `data_fingerprint`; `corpus`: the
    in-memory corpus the sweep was given (`parse_spec(corpus=)`), None to load the spec's."""
    from xialpha.spec.sweep import load_spec, parse_spec

    if spec_path is not None:
        spec = load_spec(spec_path, corpus=corpus)
        if spec.id != sweep_id:
            raise UserError(f"spec=: {spec_path} is sweep {spec.id!r}, not {sweep_id!r}")
    else:
        text, spec_dir = _stored_spec(store, sweep_id, data_fingerprint)
        spec = parse_spec(text, source=f"sweep {sweep_id!r} spec", base_dir=spec_dir, corpus=corpus)
    corpus = spec.corpus.load()
    train = corpus if spec.corpus.train_split is None else corpus.split(spec.corpus.train_split)
    if spec.data_fingerprint(corpus) != data_fingerprint:
        raise UserError(
            f"corpus: the documents loaded for sweep {sweep_id!r} ({spec.corpus.loader}) differ from the ones it "
            "trained on (fingerprint mismatch); pass the spec file as spec= so relative paths resolve"
        )
    return SweepContext(spec, corpus, train)


def _stored_spec(store, sweep_id: str, data_fingerprint: str) -> tuple[str, str | None]:
    """The newest recorded spec text of the sweep on this data, and the directory it was read from."""
    from xialpha.selection.records import read_if_stored

    table = read_if_stored(store, "sweeps", [("sweep_id", "=", sweep_id)])
    runs = None if table is None else table.to_pandas()
    if runs is not None:
        runs = runs[runs["data_fingerprint"] == data_fingerprint]
    if runs is None or runs.empty:
        raise UserError(f"sweep=: store {store.uri} has no spec recorded for sweep {sweep_id!r}; pass its spec file as spec=")
    newest = runs.sort_values("created_at").iloc[-1]
    spec_dir = newest.get("spec_dir")
    return str(newest["spec_toml"]), spec_dir if isinstance(spec_dir, str) and spec_dir else None
