"""The spec reference, docs/spec-reference.md, generated from what the spec parsers read.

Every key comes from the code that reads it, not from a hand-kept list:
- the keys of the spec's tables: the parsers (`parse_spec`, `parse_drift_spec`) are run on example
  specs with `Table`'s typed readers recorded, so each key comes with the type, default and bounds
  its reader was called with (a key is recorded whether the example sets it or not: the parsers
  read every key of a table they parse, defaults included);
- `[corpus]` loader arguments: each loader's signature (`xialpha.corpora.loading.LOADERS`);
- `[[preprocessing]]` and `[[kernels]]`: the fields of `Preprocessing` and `Kernel`;
- `[cluster]` options of kind "slurm" and "kubernetes": their checks' tables.
Only the one-line descriptions are written here (`DESCRIPTIONS`); generating fails, naming the key,
when a key has none, and tests/spec/test_spec_reference.py fails when the committed file is not
what `python -m xialpha.spec.reference` writes.

    python -m xialpha.spec.reference > docs/spec-reference.md
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from xialpha.corpora.loading import LOADERS, parameter_hints
from xialpha.errors import UserError
from xialpha.features.kernels import Kernel
from xialpha.features.preprocessing import Preprocessing
from xialpha.spec import tables
from xialpha.spec.cluster_options import KUBERNETES_OPTIONS, SLURM_OPTIONS

READERS = ("str", "str_list", "choice", "bool", "int", "float", "float_list", "bytes")
SWEEP_EXAMPLE = """
[sweep]
[corpus]
loader = "synthetic"
train_split = "train"
validation_fraction = 0.25
[[preprocessing]]
[[kernels]]
name = "linear"
[svm]
[estimators]
holdout = true
[cluster]
"""
DRIFT_EXAMPLE = """
[drift]
[batches]
period = "7D"
[corpus]
loader = "synthetic"
n_batches = 4
[[preprocessing]]
[[kernels]]
name = "linear"
[svm]
[cluster]
"""

DESCRIPTIONS: dict[str, str] = {
    # [sweep]
    "sweep.id": "the sweep's name: one experiment (rerunning it with another grid or data is refused)",
    "sweep.store": "where results are stored (a directory or URI); `--store` and `$XIALPHA_STORE` come first",
    "sweep.metric": "what a selection optimises",
    "sweep.estimator": "the estimate a selection ranks by (default: span when computed, else xa)",
    "sweep.batch_size": "fits per task on the kernel path (default: chosen from the sweep's size)",
    "sweep.gram_memory_limit": "the largest Gram matrix one kernel-path fit may need",
    "sweep.max_configs": "the most configurations per category; a larger grid is refused with its count",
    # [corpus]
    "corpus.loader": "how documents are read: one of the loaders below (the other keys are its arguments)",
    "corpus.train_split": "the split trained on (all documents when unset)",
    "corpus.test_split": "the held-out split (scored by `holdout`; `certify --test-split` may name another)",
    "corpus.validation_fraction": "a seeded share of train_split held out as split 'validation' (0 = none)",
    "corpus.validation_seed": "the seed of that share",
    "corpus.categories.top_k": "the k categories with the most training documents",
    "corpus.categories.names": "these categories (default: every category, or top_k)",
    "corpus.categories.min_positives": "only categories with at least this many positive training documents",
    # loaders
    "loader.synthetic.n_docs": "documents to generate",
    "loader.synthetic.n_categories": "categories (cat00 the most frequent)",
    "loader.synthetic.seed": "the random seed: the same seed gives the same corpus",
    "loader.synthetic.n_batches": "time-ordered batches (drift checks), batch b dated start + b days",
    "loader.synthetic.shift": "a concept shift: abrupt, gradual or abrupt-return (needs n_batches)",
    "loader.synthetic.shift_batch": "the batch the shift starts at",
    "loader.synthetic.shift_width": "batches a gradual shift takes, or an abrupt-return lasts",
    "loader.synthetic.shifted_categories": "how many of the most frequent categories shift, or their names",
    "loader.synthetic.vocabulary_size": "words in the vocabulary",
    "loader.synthetic.mean_length": "mean document length in words",
    "loader.synthetic.topic_words": "words each category owns",
    "loader.synthetic.signal": "mean share of a positive document's words drawn from its categories' words",
    "loader.synthetic.max_prevalence": "the most frequent category's share of documents",
    "loader.synthetic.category_skew": "how fast prevalence falls from one category to the next",
    "loader.synthetic.test_fraction": "the share of documents in split 'test'",
    "loader.synthetic.start": "the first batch's date (YYYY-MM-DD)",
    "loader.reuters21578.path": "the directory of reut2-NNN.sgm files, or a tar archive of them "
    "(`xialpha fetch reuters21578` downloads it)",
    "loader.reuters21578.split": "modapte (9,603 train / 3,299 test stories) or all (21,578 stories)",
    "loader.reuters21578.follow_symlinks": "read symbolic links that leave path (refused otherwise)",
    "loader.directory.path": "a directory tree (or tar archive) of one folder per category, one file per document",
    "loader.directory.layout": "split/category, category, or auto (split/category when files lie two folders deep)",
    "loader.directory.skip_empty": "drop empty documents instead of refusing them",
    "loader.directory.follow_symlinks": "read symbolic links that leave path (refused otherwise)",
    "loader.svmlight.path": "an svmlight/libsvm file (a path or fsspec URI) of feature vectors",
    "loader.svmlight.n_features": "the number of features (default: the largest index seen)",
    "loader.svmlight.zero_based": "whether feature indices start at 0 (auto: when some index is 0)",
    "loader.table.path": "a CSV, TSV, JSON-lines or Parquet file (a path or fsspec URI), or one per split: "
    '{train = "train.csv", test = "test.csv"}',
    "loader.table.text_column": "the column holding each document's text",
    "loader.table.label_column": "the column holding each document's category label(s)",
    "loader.table.id_column": "a column of unique document ids (default: the row number)",
    "loader.table.time_column": "a column of timestamps (drift checks batch by time)",
    "loader.table.split_column": "a column naming each document's split (train, test, ...)",
    "loader.table.label_separator": 'the character between several labels in one cell (";" for "finance;health"), '
    'or "" for one label per cell; unset, cells that look joined are refused',
    "loader.table.format": "auto (from the file suffix), csv, tsv, jsonl or parquet",
    "loader.table.header": "whether a CSV/TSV file's first line names its columns",
    "loader.table.column_names": "the columns in order, for a file without header",
    "loader.table.encoding": "the text encoding of CSV/TSV/JSON-lines files",
    "loader.table.skip_empty": "drop rows whose text is empty instead of refusing them",
    # [[preprocessing]]
    "preprocessing.lowercase": "lower-case before tokenising",
    "preprocessing.token_pattern": "the regular expression a token matches (at most one group)",
    "preprocessing.stop_words": "none, or english (scikit-learn's list)",
    "preprocessing.stemming": "none, or porter (PyStemmer)",
    "preprocessing.min_df": "keep terms in at least this many training documents",
    "preprocessing.max_df": "keep terms in at most this fraction of training documents",
    "preprocessing.tf": "term frequency: raw counts, log (1 + ln count) or binary",
    "preprocessing.idf": "none, log (ln n/df, Joachims eq. 2) or smooth (ln((1+n)/(1+df)) + 1)",
    "preprocessing.norm": "l2 (unit-length rows) or none",
    # [[kernels]]
    "kernels.name": "linear (trained on the sparse features), rbf, poly or sigmoid (trained on Grams)",
    "kernels.gamma": "the kernel's gamma (rbf, poly, sigmoid; default 1.0)",
    "kernels.degree": "the polynomial's degree (poly; default 3)",
    "kernels.coef0": "the kernel's constant term (poly, sigmoid; default 0.0)",
    # [svm]
    "svm.C": 'the soft-margin constants to sweep, or "auto": found from the data in rounds as the sweep runs '
    "(a starting C, then more C while the choice sits at the edge of those fitted; refused by drift checks)",
    "svm.j": "SVMlight's cost factor: positive examples get C x j",
    "svm.tol": "the solver's stopping tolerance (KKT violation)",
    # [estimators]
    "estimators.rho": "the rho values of the xi-alpha estimate (1: the estimate; 2: Joachims' bound)",
    "estimators.span": "compute the span estimate (the default selection estimate)",
    "estimators.span_prune": "span's exact calls only where a per-category choice by this metric may need them "
    "(any: by any; docs/spec.md)",
    "estimators.xa_ext_depth": "search depth of SVMlight's extended xi-alpha estimate (0 = off)",
    "estimators.exact_loo": "compute the exact leave-one-out error (retrains)",
    "estimators.loo_prune": "which examples exact LOO retrains: support (exact) or xi_alpha (fewer)",
    "estimators.holdout": "score each fit on corpus.test_split",
    "estimators.kfold": "k-fold cross-validation with this k (0 = off)",
    "estimators.bootstrap": "bootstrap estimate with this many resamples (0 = off)",
    # [cluster]
    "cluster.kind": "local (worker processes here), address (a running scheduler), slurm or kubernetes",
    "cluster.address": "the scheduler's address (kind address), tcp:// or tls://",
    "cluster.workers": "worker processes (local), or batch jobs / pods (slurm, kubernetes)",
    "cluster.max_workers": "the most workers cluster.workers and --workers may ask for",
    "cluster.threads_per_worker": "threads per worker",
    "cluster.memory_limit": 'memory per worker, e.g. "8GiB" (required for slurm)',
    "cluster.security.ca_file": "TLS: the CA certificate (PEM)",
    "cluster.security.cert_file": "TLS: this process's certificate (PEM)",
    "cluster.security.key_file": "TLS: its private key (PEM, without passphrase)",
    "cluster.slurm.queue": "the partition (sbatch -p)",
    "cluster.slurm.account": "the account (sbatch -A)",
    "cluster.slurm.walltime": "each worker job's time limit, [D-]HH:MM:SS",
    "cluster.slurm.processes": "worker processes per job",
    "cluster.slurm.interface": "the network interface workers listen on",
    "cluster.slurm.local_directory": "the workers' scratch directory on the nodes",
    "cluster.slurm.log_directory": "where the worker jobs' logs go",
    "cluster.slurm.shared_temp_directory": "a directory shared by the nodes, for Dask's temporary files",
    "cluster.slurm.python": "the Python the worker jobs run",
    "cluster.slurm.job_name": "the worker jobs' name",
    "cluster.slurm.death_timeout": "seconds a worker waits for a lost scheduler before it exits",
    "cluster.slurm.job_extra_directives": "more #SBATCH lines",
    "cluster.slurm.job_script_prologue": "shell lines run before the worker starts (module load ...)",
    "cluster.slurm.job_directives_skip": "default #SBATCH directives to leave out",
    "cluster.slurm.worker_extra_args": "more arguments of the dask worker command",
    "cluster.kubernetes.image": "an image with xialpha installed (required; see deploy/Dockerfile)",
    "cluster.kubernetes.name": "the DaskCluster's name",
    "cluster.kubernetes.namespace": "the namespace it is created in",
    "cluster.kubernetes.env": "environment variables of the worker pods",
    "cluster.kubernetes.resources": "the worker containers' resource requests and limits",
    "cluster.kubernetes.image_pull_policy": "Always, IfNotPresent or Never",
    # drift specs
    "drift.id": "the drift check's name (its rows in the store)",
    "drift.store": "where results are stored; `--store` and `$XIALPHA_STORE` come first",
    "drift.windows": 'candidate training windows in batches: "all" or a list, e.g. [1, 2, 4, 8]',
    "drift.margin": "percentage points by which the full-memory xi-alpha error must be worse to call drift",
    "drift.alpha": "the significance level of the one-sided McNemar test on the newest batch",
    "drift.rho": "rho of the xi-alpha estimate the check uses",
    "drift.gram_memory_limit": "the largest Gram matrix one kernel-path fit may need",
    "drift.max_configs": "the most configurations per category",
    "batches.by": "time (timestamps binned by period) or split (the corpus's split labels are batch ids)",
    "batches.period": '`<count><unit>`, unit h, D, W (from Monday), M or Y, e.g. "7D"',
}
# Where what a reader was called with does not say the whole type (a key read by more than one reader).
KINDS = {"drift.windows": '`"all"` or a list of integers'}

TABLES = {
    "": "",
    "sweep": "[sweep]",
    "corpus": "[corpus]",
    "corpus.categories": "[corpus.categories]",
    "svm": "[svm]",
    "estimators": "[estimators]",
    "cluster": "[cluster]",
    "cluster.security": "[cluster.security]",
    "drift": "[drift]",
    "batches": "[batches]",
}


@dataclasses.dataclass(frozen=True)
class Key:
    """One spec key: its table ("corpus.categories"), name, type and default as shown, and description."""

    table: str
    name: str
    kind: str
    default: str
    description: str


def generate() -> str:
    """The whole reference as Markdown."""
    sweep, drift = _recorded(SWEEP_EXAMPLE, "sweep"), _recorded(DRIFT_EXAMPLE, "drift")
    out = [
        "# Spec reference",
        "",
        "Generated by `python -m xialpha.spec.reference > docs/spec-reference.md` from the code that reads",
        "each key (tests/spec/test_spec_reference.py fails when it is out of date). Concepts and examples:",
        "[the spec and the store](spec.md). Wherever a list is allowed (C, j, rho, a preprocessing or kernel",
        "key), each value is one variant of the grid.",
        "",
        "## Sweep specs",
        "",
    ]
    for table in ("sweep", "corpus", "corpus.categories"):
        out += _section(TABLES[table], [key for key in sweep if key.table == table])
    for loader in LOADERS:
        out += _section(f'[corpus] loader = "{loader}"', list(_loader_keys(loader)))
    out += _section("[[preprocessing]]", list(_field_keys("preprocessing", Preprocessing)))
    out += _section("[[kernels]]", list(_field_keys("kernels", Kernel)))
    for table in ("svm", "estimators", "cluster", "cluster.security"):
        out += _section(TABLES[table], [key for key in sweep if key.table == table])
    for kind, options in (("slurm", SLURM_OPTIONS), ("kubernetes", KUBERNETES_OPTIONS)):
        out += _section(
            f'[cluster] kind = "{kind}"',
            [
                _key("cluster", name, _checker_kind(check), "—", f"cluster.{kind}.{name}")
                for name, check in options.items()
            ],
        )
    out += [
        "## Drift specs",
        "",
        "A drift spec (`xialpha drift SPEC`) has `[corpus]`, `[[preprocessing]]`, `[[kernels]]`, `[svm]` and",
        "`[cluster]` as a sweep spec has, and instead of `[sweep]` and `[estimators]`:",
        "",
    ]
    for table in ("drift", "batches"):
        out += _section(TABLES[table], [key for key in drift if key.table == table])
    return "\n".join(out).rstrip() + "\n"


def _section(title: str, keys: list[Key]) -> list[str]:
    lines = [f"### {title}", "", "| key | type | default | what it does |", "|---|---|---|---|"]
    lines += [f"| `{key.name}` | {key.kind} | {key.default} | {key.description} |" for key in keys]
    return lines + [""]


def _key(table: str, name: str, kind: str, default: str, described_as: str | None = None) -> Key:
    described_as = described_as or f"{table}.{name}"
    if described_as not in DESCRIPTIONS:
        raise UserError(f"no description for spec key {described_as!r}: add one to DESCRIPTIONS", key="DESCRIPTIONS")
    return Key(table, name, kind, default, DESCRIPTIONS[described_as].replace("|", "\\|"))


def _recorded(example: str, kind: str) -> list[Key]:
    """The keys the parser of `kind` ("sweep" or "drift") reads from the tables of `example`."""
    from xialpha.spec.drift import parse_drift_spec
    from xialpha.spec.sweep import parse_spec

    parse = parse_spec if kind == "sweep" else parse_drift_spec
    with _recording() as calls:
        parse(example)
    keys = []
    for (table, name), (reader, args, kwargs) in calls.items():
        if table in ("preprocessing[]", "kernels[]"):
            continue  # their fields are listed from the dataclasses
        kind = KINDS.get(f"{table}.{name}") or _reader_kind(reader, args, kwargs)
        keys.append(_key(table, name, kind, _default(reader, args, kwargs)))
    return keys


@contextmanager
def _recording() -> Iterator[dict[tuple[str, str], tuple[str, tuple, dict]]]:
    """{(table, key): (reader, args, kwargs)} of every typed read of a `Table` while inside."""
    calls: dict[tuple[str, str], tuple[str, tuple, dict]] = {}
    originals = {name: getattr(tables.Table, name) for name in READERS}

    def recorder(name: str, original: Callable) -> Callable:
        @functools.wraps(original)
        def recorded(self: tables.Table, key: str, *args: Any, **kwargs: Any) -> Any:
            calls.setdefault((re.sub(r"\[\d+\]", "[]", self.path), key), (name, args, kwargs))
            return original(self, key, *args, **kwargs)

        return recorded

    try:
        for name, original in originals.items():
            setattr(tables.Table, name, recorder(name, original))
        yield calls
    finally:
        for name, original in originals.items():
            setattr(tables.Table, name, original)


def _argument(args: tuple, kwargs: dict, position: int, name: str, default: Any = None) -> Any:
    return args[position] if len(args) > position else kwargs.get(name, default)


def _reader_kind(reader: str, args: tuple, kwargs: dict) -> str:
    if reader == "choice":
        return "one of " + ", ".join(f"`{option}`" for option in _argument(args, kwargs, 0, "options"))
    if reader == "int":
        bounds = [
            f">= {kwargs['minimum']}" if kwargs.get("minimum") is not None else "",
            f"<= {kwargs['maximum']:,}" if kwargs.get("maximum") is not None else "",
        ]
        return "integer" + "".join(f", {bound}" for bound in bounds if bound)
    if reader in ("float", "float_list"):
        within = kwargs.get("within")
        bound = ", > 0" if kwargs.get("positive") else ""
        bound += f", {within[0]:g} to {within[1]:g}" if within else ""
        return ("number" if reader == "float" else "number or list of numbers") + bound
    return {
        "str": "string",
        "str_list": "string or list of strings",
        "bool": "true or false",
        "bytes": 'size ("8GiB", "500MB") or bytes',
    }[reader]


def _default(reader: str, args: tuple, kwargs: dict) -> str:
    if kwargs.get("required"):
        return "required"
    position = 1 if reader == "choice" else 0
    return _shown(_argument(args, kwargs, position, "default"))


def _shown(value: Any) -> str:
    if value is None or value == [] or value is inspect.Parameter.empty:
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'.replace("|", "\\|")
    if isinstance(value, list) and len(value) == 1:
        return _shown(value[0])
    if isinstance(value, int) and value >= 2**30 and value % 2**30 == 0:
        return f'`"{value // 2**30}GiB"`'
    return f"`{list(value) if isinstance(value, tuple) else value}`"


def _loader_keys(loader: str) -> Iterator[Key]:
    function: Callable[..., Any] = LOADERS[loader]
    hints = parameter_hints(function, include_extras=False)
    for name, parameter in inspect.signature(function).parameters.items():
        default = "required" if parameter.default is inspect.Parameter.empty else _shown(parameter.default)
        yield _key("corpus", name, _type_text(hints.get(name, Any)), default, f"loader.{loader}.{name}")


def _field_keys(table: str, cls: type) -> Iterator[Key]:
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if field.init:
            yield _key(table, field.name, _type_text(hints[field.name]), _shown(field.default))


def _type_text(hint: Any) -> str:
    """A type annotation in words: `str | None` -> "string", `tuple[str, ...] | list[str]` -> "list of strings"."""
    origin, arms = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _type_text(arms[0])
    if origin in (types.UnionType, typing.Union):
        words = dict.fromkeys(_type_text(arm) for arm in arms if arm is not type(None))
        return " or ".join(words)
    if origin in (list, tuple):
        return "list of " + _type_text(arms[0]).replace("string", "strings").replace("number", "numbers")
    if origin is dict or hint is dict or (isinstance(hint, type) and issubclass(hint, dict)):
        return "table"
    return {str: "string", int: "integer", float: "number", bool: "true or false"}.get(hint, "path")


def _checker_kind(check: Callable) -> str:
    name = check.__name__.strip("_")
    return {
        "string": "string",
        "walltime": "string, [D-]HH:MM:SS",
        "positive_int": "integer, >= 1",
        "positive_number": "number, > 0",
        "string_list": "list of strings",
        "dns_label": "string, a DNS label",
        "env": "table of strings",
        "resources": "table",
        "pull_policy": "one of `Always`, `IfNotPresent`, `Never`",
    }.get(name, name.replace("_", " "))


def main() -> None:
    print(generate(), end="")


if __name__ == "__main__":
    main()
