"""The house rules of the architecture, checked on the source of every module of xialpha/.

- pyarrow is imported only in xialpha/storage (the only package that knows the result store's
  Parquet), except pyarrow.parquet's reader in xialpha/corpora/table_files.py, which reads a
  user's Parquet corpus a row group at a time (pandas reads whole files only);
- Dask (dask, distributed, dask_jobqueue, dask_kubernetes) only in xialpha/jobs;
- xialpha/estimators, features and corpora write no files;
- no import circle: not between modules (function-level imports count too), not between packages;
- one layer order, written in docs/architecture.md ("The packages") and read from there: a module
  imports only modules of its own package and of the layers below it (function-level imports count,
  annotations-only imports do not), and every package and top-level module has its layer;
- the store answers in DataFrames and records: outside xialpha/storage no module converts Arrow
  tables (`.to_pandas()`, `.to_pylist()`), passes read `filters=` or types rows for a dataset
  (`typed_table`), except the Parquet corpus reader above;
- the sweep's tasks and driver, which build, move and store result rows, build them as typed
  rows (`xialpha.storage.rows`) and write no column name of the results or examples dataset;
- outside xialpha/storage (and the packages below it: estimators, features, corpora) no string
  names a column of the results, selections, certifications or drift datasets: code says
  `ResultColumn.X`, `SelectionColumn.X`, `CertificationColumn.X`, `DriftColumn.X` or
  `estimate_column(...)`; the strings that equal a column's name but mean something else (a table
  header, a spec key, a metric's name, ...) are listed, each with its reason and count, in NOT_COLUMNS;
- likewise in xialpha/reports (and the report command) no string names a column of a report's
  frames or of the runs it shows: code says `ReportColumn.X`, `EdgeColumn.X` or `SweepColumn.X`
  (the other meanings of those words: NOT_REPORT_COLUMNS);
- no module of xialpha/ is longer than MAX_LINES lines (one job each: a longer one holds two);
- no two modules of xialpha/reports define one public name (the matplotlib and SVG renderers of a
  figure are named by what they return);
- the store's contract (`StoreQueries` and the upkeep of its files, `StoreFiles`, in
  xialpha/storage/contract.py) documents each attribute, each parameter (Args) and each value
  returned (Returns), as Optuna's BaseStorage does.

Each rule is a function of parsed source, so the tests below also plant one violation of each
and check that the rule reports it (a guard that cannot fail guards nothing).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "xialpha"
DASK = ("dask", "distributed", "dask_jobqueue", "dask_kubernetes")
# dask.utils.parse_bytes reads sizes like "8GiB" in specs: a string function, no scheduler and no
# cluster, so the spec (outside jobs) may use it.
DASK_ALLOWED = ("dask.utils",)
# A user's Parquet corpus is read one row group (one part) at a time, which pandas cannot do.
PYARROW_READER = {"xialpha/corpora/table_files.py": ("pyarrow.parquet",)}
WRITERS = {
    "write_text",
    "write_bytes",
    "to_parquet",
    "to_csv",
    "to_json",
    "to_pickle",
    "to_feather",
    "mkdir",
    "makedirs",
    "unlink",
    "rmdir",
    "rmtree",
    "touch",
    "symlink_to",
    "hardlink_to",
    "savez",
    "savez_compressed",
    "tofile",
    "write_table",
    "write_dataset",
    "copyfile",
    "copytree",
    "move",
    "extractall",
    "urlretrieve",
    "dump",
}
WRITE_MODES = set("wax+")
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _modules(package: Path = PACKAGE):
    for path in sorted(package.rglob("*.py")):
        yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import in `tree`, at any depth (lazy imports in functions too), except
    those under `if TYPE_CHECKING:`, which never run (annotations only: api.py names
    distributed.Client as the type of its client= parameter)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found += [(node.lineno, node.module or "")]
    typing_only = typing_only_imports(tree)
    return [(line, module) for line, module in found if line not in typing_only]


def typing_only_imports(tree: ast.AST) -> set[int]:
    """The lines of the imports under `if TYPE_CHECKING:` in `tree` (annotations only)."""
    return {
        inner.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
        if isinstance(inner, (ast.Import, ast.ImportFrom))
    }


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_violations(
    modules,
    top: tuple[str, ...],
    home: str,
    allowed: tuple[str, ...] = (),
    allowed_in: dict[str, tuple[str, ...]] | None = None,
) -> list[str]:
    """ "path:line module" for each import of a `top` package outside xialpha/`home`, except the
    modules `allowed` everywhere and those `allowed_in` {path: modules} names for one file."""
    bad = []
    for path, tree in modules:
        if path.startswith(f"xialpha/{home}/"):
            continue
        exempt = allowed + (allowed_in or {}).get(path, ())
        for line, name in imported(tree):
            if name.split(".")[0] in top and not (exempt and name.startswith(exempt)):
                bad.append(f"{path}:{line} {name}")
    return bad


def _literal(node) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def write_violations(modules) -> list[str]:
    """ "path:line what" for each call that writes, moves or removes a file."""
    bad = []
    for path, tree in modules:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            if name in WRITERS or (name == "save" and owner in ("np", "numpy")):
                bad.append(f"{path}:{node.lineno} {name}()")
            elif name in ("open", "fdopen", "ZipFile", "NamedTemporaryFile", "TemporaryDirectory", "mkstemp"):
                # the mode: open(path, mode), Path.open(mode), gzip.open(path, mode) or mode=
                mode = [_literal(k.value) for k in node.keywords if k.arg == "mode"]
                mode += [_literal(a) for a in node.args[:2]] if owner != "os" else []
                mode = [m for m in mode if isinstance(m, str) and 0 < len(m) <= 4 and set(m) <= set("rwxabt+U")]
                if name in ("NamedTemporaryFile", "TemporaryDirectory", "mkstemp") or any(
                    WRITE_MODES & set(m) for m in mode
                ):
                    bad.append(f"{path}:{node.lineno} {name}({mode[0] if mode else ''})")
                elif owner == "os" and name == "open":
                    flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} & WRITE_FLAGS
                    if flags:
                        bad.append(f"{path}:{node.lineno} os.open({', '.join(sorted(flags))})")
    return bad


def test_pyarrow_is_imported_only_in_storage():
    assert import_violations(_modules(), ("pyarrow",), "storage", allowed_in=PYARROW_READER) == []


def test_the_parquet_reader_exception_is_one_module_in_one_file():
    reader = ("xialpha/corpora/table_files.py", ast.parse("import pyarrow.parquet as pq"))
    other = ("xialpha/corpora/table.py", ast.parse("import pyarrow.parquet as pq"))
    whole = ("xialpha/corpora/table_files.py", ast.parse("import pyarrow as pa"))
    assert import_violations([reader], ("pyarrow",), "storage", allowed_in=PYARROW_READER) == []
    assert len(import_violations([other, whole], ("pyarrow",), "storage", allowed_in=PYARROW_READER)) == 2


def test_dask_is_imported_only_in_jobs():
    assert import_violations(_modules(), DASK, "jobs", DASK_ALLOWED) == []


@pytest.mark.parametrize("package", ["estimators", "features", "corpora"])
def test_estimators_features_and_corpora_write_no_files(package):
    assert write_violations(_modules(PACKAGE / package)) == []


def _planted(source: str) -> list[tuple[str, ast.AST]]:
    return [("xialpha/selection/planted.py", ast.parse(source))]


@pytest.mark.parametrize(
    "source",
    [
        "import pyarrow as pa",
        "import pyarrow.parquet as pq",
        "def f():\n    from pyarrow import compute\n",
    ],
)
def test_the_pyarrow_rule_catches_an_import_outside_storage(source):
    assert len(import_violations(_planted(source), ("pyarrow",), "storage")) == 1
    assert import_violations([("xialpha/storage/x.py", ast.parse(source))], ("pyarrow",), "storage") == []


@pytest.mark.parametrize(
    "source",
    [
        "import dask",
        "from distributed import Client",
        "import dask.array",
        "from dask_jobqueue import SLURMCluster",
    ],
)
def test_the_dask_rule_catches_an_import_outside_jobs(source):
    assert len(import_violations(_planted(source), DASK, "jobs", DASK_ALLOWED)) == 1
    assert import_violations([("xialpha/jobs/x.py", ast.parse(source))], DASK, "jobs", DASK_ALLOWED) == []
    assert import_violations(_planted("from dask.utils import parse_bytes"), DASK, "jobs", DASK_ALLOWED) == []


def test_an_import_for_annotations_only_is_no_dependency_but_the_same_import_at_run_time_is():
    typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from distributed import Client\n"
    assert import_violations(_planted(typing_only), DASK, "jobs", DASK_ALLOWED) == []
    run_time = typing_only + "else:\n    from distributed import Client\n"
    assert len(import_violations(_planted(run_time), DASK, "jobs", DASK_ALLOWED)) == 1


@pytest.mark.parametrize(
    "source",
    [
        'open(path, "w")',
        'open(path, mode="ab")',
        'path.open("x")',
        'gzip.open(path, "wt")',
        "Path(p).write_text(s)",
        "frame.to_parquet(p)",
        "np.save(p, a)",
        "pq.write_table(t, p)",
        "os.open(p, os.O_WRONLY | os.O_CREAT)",
        "json.dump(obj, stream)",
        "tempfile.NamedTemporaryFile()",
        'open(path, "r+")',
        "archive.extractall(d)",
    ],
)
def test_the_write_rule_catches_a_planted_write(source):
    assert len(write_violations(_planted(source))) == 1, source


@pytest.mark.parametrize(
    "source",
    [
        'open(path, "rb")',
        "open(path)",
        'open(path, encoding="utf-8")',
        "os.open(p, os.O_RDONLY | os.O_NONBLOCK)",
        "tarfile.open(path)",
        "text.replace('a', 'b')",
        "np.load(p)",
        "json.loads(s)",
    ],
)
def test_the_write_rule_lets_reads_pass(source):
    assert write_violations(_planted(source)) == []


def module_name(path: str) -> str:
    """xialpha/jobs/sweep.py -> xialpha.jobs.sweep; a package's __init__.py -> the package."""
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def import_graph(modules, *, annotations: bool = True) -> dict[str, set[str]]:
    """{module: the xialpha modules it imports}, at any depth (function-level imports too, and
    TYPE_CHECKING imports unless `annotations` is False): `from package import name` is the
    submodule `name` where there is one."""
    modules = list(modules)
    known = {module_name(path) for path, _ in modules}

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph = defaultdict(set)
    for path, tree in modules:
        source = module_name(path)
        graph[source]
        skipped = set() if annotations else typing_only_imports(tree)
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skipped:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = resolve(name) if name.startswith("xialpha") else None
                if target and target != source:
                    graph[source].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between xialpha's packages (a top-level module is a package of its own);
    the root package `xialpha`, whose lazy exports name the API, is the top of the house: no
    module imports it."""

    packages = defaultdict(set)
    for source, targets in graph.items():
        packages[_package(source)] |= {_package(t) for t in targets if _package(t) != _package(source)}
    return packages


def _package(module: str) -> str:
    """xialpha.jobs.sweep -> xialpha.jobs; xialpha.api -> xialpha.api; xialpha -> xialpha."""
    return ".".join(module.split(".")[:2])


def test_no_module_imports_itself_round_a_circle():
    assert circles(import_graph(_modules())) == []


def test_the_packages_are_layered_without_a_circle():
    graph = import_graph(_modules())
    assert circles(package_graph(graph)) == []
    assert not [source for source, targets in graph.items() if "xialpha" in targets]


def test_the_circle_rule_catches_a_function_level_circle():
    planted = [
        ("xialpha/a.py", ast.parse("import xialpha.b\n")),
        ("xialpha/b.py", ast.parse("def f():\n    from xialpha.c import x\n")),
        ("xialpha/c.py", ast.parse("from xialpha import a\n")),
        ("xialpha/d.py", ast.parse("import xialpha.a\n")),
    ]
    assert circles(import_graph(planted)) == [["xialpha.a", "xialpha.b", "xialpha.c"]]
    layered = [
        ("xialpha/p/one.py", ast.parse("import xialpha.q.two\n")),
        ("xialpha/q/two.py", ast.parse("def f():\n    import xialpha.p.three\n")),
        ("xialpha/p/three.py", ast.parse("x = 1\n")),
    ]
    assert circles(import_graph(layered)) == []
    assert circles(package_graph(import_graph(layered))) == [["xialpha.p", "xialpha.q"]]


ARCHITECTURE = REPO / "docs" / "architecture.md"


def written_layers(text: str) -> list[tuple[str, ...]]:
    """The layers of the numbered list under "## The packages" in docs/architecture.md, bottom
    first, each the packages before its colon as xialpha module names (`xialpha` is the root)."""
    section = text.split("## The packages\n", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        if re.match(r"\d+\. `", line):
            names = re.findall(r"`(\w+)`", line.split(": ", 1)[0])
            layers.append(tuple(name if name == "xialpha" else f"xialpha.{name}" for name in names))
    return layers


def layer_violations(graph: dict[str, set[str]], layers: list[tuple[str, ...]]) -> list[str]:
    """ "module -> module" for each import (`graph`: modules) of another package of the same layer
    or one above, and "package: in no layer" for each package `layers` leaves out."""
    level = {package: n for n, layer in enumerate(layers) for package in layer}
    bad = [f"{package}: in no layer" for package in sorted(package_graph(graph)) if package not in level]
    return bad + sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if _package(source) != _package(target)
        and level.get(_package(target), -1) >= level.get(_package(source), len(layers))
    )


def test_the_layer_order_is_written_once_and_every_package_has_its_place():
    layers = written_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    named = [package for layer in layers for package in layer]
    assert len(named) == len(set(named)), "a package in two layers"
    assert layer_violations(import_graph(_modules(), annotations=False), layers) == []


def test_jobs_sits_above_selection_and_models_below_jobs():
    layers = written_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    level = {package: n for n, layer in enumerate(layers) for package in layer}
    assert level["xialpha.storage"] < level["xialpha.selection"] < level["xialpha.jobs"]
    assert level["xialpha.reports"] < level["xialpha.models"] < level["xialpha.jobs"]


def test_the_layer_rule_catches_an_import_up_the_order_not_only_a_circle():
    layers = written_layers(
        "## The packages\n\n1. `storage`: rows.\n2. `selection`, `concept_drift`: choices.\n3. `jobs`: Dask.\n"
    )
    assert layers == [("xialpha.storage",), ("xialpha.selection", "xialpha.concept_drift"), ("xialpha.jobs",)]
    planted = [
        ("xialpha/storage/store.py", ast.parse("x = 1\n")),
        ("xialpha/jobs/auto.py", ast.parse("from xialpha.selection.c_extension import auto_steps\n")),
        ("xialpha/selection/c_extension.py", ast.parse("def f():\n    from xialpha.jobs.auto import x\n")),
        ("xialpha/selection/edges.py", ast.parse("import xialpha.concept_drift.windows\n")),
        ("xialpha/concept_drift/windows.py", ast.parse("import xialpha.storage.store\n")),
        ("xialpha/storage/rows.py", ast.parse("if TYPE_CHECKING:\n    from xialpha.selection.edges import x\n")),
        ("xialpha/plot.py", ast.parse("import xialpha.storage.store\n")),
    ]
    graph = import_graph(planted, annotations=False)
    assert circles(package_graph(graph)) == [["xialpha.jobs", "xialpha.selection"]]
    assert layer_violations(graph, layers) == [
        "xialpha.plot: in no layer",
        "xialpha.selection.c_extension -> xialpha.jobs.auto",
        "xialpha.selection.edges -> xialpha.concept_drift.windows",
    ]
    # without the circle, the import up the order alone is still reported
    upward = [planted[0], planted[2], ("xialpha/jobs/auto.py", ast.parse("x = 1\n"))]
    graph = import_graph(upward, annotations=False)
    assert circles(package_graph(graph)) == []
    assert layer_violations(graph, layers) == ["xialpha.selection.c_extension -> xialpha.jobs.auto"]
    # the annotations-only import counts where annotations do
    assert "xialpha.selection.edges" in import_graph(planted)["xialpha.storage.rows"]


ARROW_CALLS = {"to_pandas", "to_pylist", "typed_table"}


def arrow_violations(modules) -> list[str]:
    """ "path:line what" for each Arrow conversion, `filters=` keyword or `typed_table` use outside
    xialpha/storage (and the Parquet corpus reader)."""
    bad = []
    for path, tree in modules:
        if path.startswith("xialpha/storage/") or path in PYARROW_READER:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if name in ARROW_CALLS:
                    bad.append(f"{path}:{node.lineno} {name}()")
                bad += [f"{path}:{node.lineno} filters=" for k in node.keywords if k.arg == "filters"]
            elif isinstance(node, ast.ImportFrom) and any(alias.name == "typed_table" for alias in node.names):
                bad.append(f"{path}:{node.lineno} import typed_table")
    return bad


def test_outside_storage_the_store_is_asked_by_name_not_by_arrow():
    assert arrow_violations(_modules()) == []


@pytest.mark.parametrize(
    "source",
    [
        "rows = store.read('drift').to_pylist()",
        "frame = table.to_pandas()",
        "store.read('selections', filters=[('sweep_id', '=', s)])",
        "from xialpha.storage.validate import typed_table",
    ],
)
def test_the_arrow_rule_catches_a_planted_conversion(source):
    assert len(arrow_violations(_planted(source))) == 1
    assert arrow_violations([("xialpha/storage/x.py", ast.parse(source))]) == []


# The modules of xialpha/jobs and xialpha/planning that build, move, store and read back a sweep's
# result and run rows.
ROW_BUILDERS = (
    "xialpha/jobs/tasks.py",
    "xialpha/jobs/sweep.py",
    "xialpha/jobs/graph.py",
    "xialpha/planning/experiment.py",
)


def column_literals(modules, paths=ROW_BUILDERS) -> list[str]:
    """ "path:line 'name'" for each string constant in the modules `paths` that names a column of
    the results or examples dataset."""
    from xialpha.storage.arrow_schema import EXAMPLE_COLUMNS, RESULT_COLUMNS

    names = {column.name for column in (*RESULT_COLUMNS, *EXAMPLE_COLUMNS)}
    return [
        f"{path}:{node.lineno} {node.value!r}"
        for path, tree in modules
        if path in paths
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names
    ]


def test_the_sweep_names_no_result_column():
    assert column_literals(_modules()) == []


@pytest.mark.parametrize(
    "source",
    [
        'row = {**base, "category": job.category}',
        'if row["status"] == "ok": pass',
        "failed = rows.error_message if 'n_pos' else None",
    ],
)
def test_the_column_rule_catches_a_planted_column_name(source):
    assert len(column_literals([("xialpha/jobs/tasks.py", ast.parse(source))])) == 1
    assert column_literals([("xialpha/storage/rows.py", ast.parse(source))]) == []


# Packages below xialpha/storage in the layering (storage imports them, so they cannot import it):
# their strings that equal a results column's name are the parameters the columns are named after
# (gamma, C, rho, the kernel argument) and the registry's declaration of each estimator's own columns,
# which xialpha.storage.schema reads; never a column of a stored row.
BELOW_STORAGE = ("xialpha/estimators/", "xialpha/features/", "xialpha/corpora/")
STORED_HOMES = ("xialpha/storage/", *BELOW_STORAGE)  # where the stored columns' names may be strings
# Strings outside xialpha/storage that equal the name of a column of the results, selections,
# certifications or drift datasets but name something else:
# {(module, string): (how many, what they are)}. Exact counts: one more is a column literal to
# replace by its `ResultColumn`, one fewer a stale entry to remove.
NOT_COLUMNS = {
    ("xialpha/commands/drift.py", "error"): (1, "a metric's name (METRICS), in estimate_column"),
    ("xialpha/commands/report.py", "n"): (1, "a table header"),
    ("xialpha/commands/select.py", "alpha"): (1, "an option's key (OPTIONS)"),
    ("xialpha/commands/select.py", "average"): (1, "an option's key (OPTIONS)"),
    ("xialpha/commands/select.py", "category"): (1, "the word counted in '3 categories'"),
    ("xialpha/commands/sweep.py", "category"): (2, "the word counted in '3 categories'"),
    ("xialpha/commands/sweep.py", "worker"): (2, "the word counted in '2 workers'"),
    ("xialpha/jobs/worker_preload.py", "error"): (1, "the kind of a preload report's line (stage, note, error)"),
    ("xialpha/jobs/worker_processes.py", "error"): (1, "the kind of a preload report's line (stage, note, error)"),
    ("xialpha/jobs/data.py", "test_split"): (1, "the spec's corpus.test_split, a key of the counted rows' task id"),
    ("xialpha/jobs/certify.py", "confidence"): (1, "the confidence= parameter, named in its error"),
    ("xialpha/jobs/certify.py", "draws"): (1, "the draws= parameter, named in its error"),
    ("xialpha/jobs/cluster.py", "value"): (1, "a key of a Kubernetes env entry"),
    ("xialpha/jobs/cluster.py", "worker"): (3, "Dask's worker: its config section, command and name"),
    ("xialpha/jobs/progress.py", "kernel"): (1, "IPython's kernel attribute"),
    ("xialpha/jobs/refit.py", "test_split"): (1, "the test_split= parameter, named in its error"),
    ("xialpha/models/artifact.py", "category"): (2, "a key of the model artifact's own JSON format"),
    ("xialpha/models/artifact.py", "created_at"): (1, "a key of the model artifact's own JSON format"),
    ("xialpha/models/artifact.py", "kernel"): (2, "a key of the model artifact's own JSON format"),
    ("xialpha/models/artifact.py", "preprocessing_id"): (2, "a key of the model artifact's own JSON format"),
    ("xialpha/reports/columns.py", "estimator"): (
        1,
        "ReportColumn.ESTIMATOR: the calibration frames' column (not stored)",
    ),
    ("xialpha/reports/html.py", "category"): (6, "table headers"),
    ("xialpha/reports/html.py", "error"): (3, "a metric's name (METRICS)"),
    ("xialpha/reports/html.py", "estimator"): (1, "a table header"),
    ("xialpha/reports/html.py", "f1"): (2, "a metric's name (METRICS)"),
    ("xialpha/reports/html.py", "n"): (1, "a table header"),
    ("xialpha/reports/html.py", "p_value"): (1, "a column of the comparison's frame (tidy_comparison)"),
    ("xialpha/reports/html.py", "significant"): (1, "a table header"),
    ("xialpha/reports/html.py", "value"): (1, "a table header"),
    ("xialpha/reports/labels.py", "C"): (1, "the parameter's name in a label (C=0.5)"),
    ("xialpha/reports/labels.py", "j"): (2, "the parameter's name in a label (j=2)"),
    ("xialpha/reports/labels.py", "kernel"): (3, "a label part (preprocessing or kernel)"),
    ("xialpha/reports/plots.py", "C"): (1, "an axis label"),
    ("xialpha/reports/plots.py", "chosen"): (1, "a legend label"),
    ("xialpha/reports/contents.py", "estimator"): (1, "an Objective attribute"),
    ("xialpha/reports/contents.py", "f1"): (1, "a metric's name (METRICS): the default"),
    ("xialpha/reports/contents.py", "metric"): (2, "an Objective attribute, and its VIEW_CONSTRAINTS key"),
    ("xialpha/reports/contents.py", "rho"): (2, "an Objective attribute, and its VIEW_CONSTRAINTS key"),
    ("xialpha/reports/svg.py", "chosen"): (1, "a legend label"),
    ("xialpha/reports/terminal.py", "category"): (1, "the category column's header (`CATEGORY`)"),
    ("xialpha/reports/terminal.py", "error"): (1, "a metric's name (METRICS), a key of SELECTION_ESTIMATES"),
    ("xialpha/reports/terminal.py", "estimator"): (1, "a table header"),
    ("xialpha/reports/terminal.py", "f1"): (1, "a metric's name (METRICS), a key of SELECTION_ESTIMATES"),
    ("xialpha/reports/terminal.py", "mode"): (1, "a table header"),
    ("xialpha/reports/terminal.py", "n"): (1, "a table header"),
    ("xialpha/reports/terminal.py", "p_value"): (1, "a column of the comparison's frame (tidy_comparison)"),
    ("xialpha/reports/terminal.py", "significant"): (1, "a table header"),
    ("xialpha/reports/terminal.py", "value"): (1, "a table header"),
    ("xialpha/search.py", "estimator"): (2, "scikit-learn's estimator parameter"),
    ("xialpha/search.py", "f1"): (1, "a scikit-learn scoring name"),
    ("xialpha/search.py", "gamma"): (1, "an SVM argument"),
    ("xialpha/search_grid.py", "C"): (3, "a scikit-learn parameter name (one named in an error)"),
    ("xialpha/search_grid.py", "gamma"): (1, "the parameter named in an error"),
    ("xialpha/search.py", "precision"): (1, "a scikit-learn scoring name"),
    ("xialpha/search.py", "r_delta2"): (2, "a key of the scikit-learn-style cv_results_, the search's own output"),
    ("xialpha/search.py", "recall"): (1, "a scikit-learn scoring name"),
    ("xialpha/search.py", "rho"): (1, "the rho= parameter's key in scikit-learn's _parameter_constraints"),
    ("xialpha/selection/bounds.py", "error"): (3, "a metric's name (METRICS): a key of the posterior draws"),
    ("xialpha/selection/bounds.py", "f1"): (4, "a metric's name (METRICS): a key of the posterior draws"),
    ("xialpha/selection/bounds.py", "fn"): (1, "a Confusion field, named in its error"),
    ("xialpha/selection/bounds.py", "fp"): (1, "a Confusion field, named in its error"),
    ("xialpha/selection/bounds.py", "precision"): (3, "a metric's name (METRICS): a key of the posterior draws"),
    ("xialpha/selection/bounds.py", "recall"): (3, "a metric's name (METRICS): a key of the posterior draws"),
    ("xialpha/selection/bounds.py", "tn"): (1, "a Confusion field, named in its error"),
    ("xialpha/selection/bounds.py", "tp"): (1, "a Confusion field, named in its error"),
    ("xialpha/selection/certification.py", "test_split"): (7, "the test_split= parameter, named in its errors"),
    ("xialpha/selection/comparison.py", "C"): (1, "a word of `changed` (PARTS' display names)"),
    ("xialpha/selection/comparison.py", "error"): (2, "a metric's name (METRICS)"),
    ("xialpha/selection/comparison.py", "f1"): (2, "a metric's name (METRICS)"),
    ("xialpha/selection/comparison.py", "j"): (1, "a word of `changed` (PARTS' display names)"),
    ("xialpha/selection/comparison.py", "kernel"): (1, "a word of `changed` (PARTS' display names)"),
    ("xialpha/selection/comparison.py", "p_value"): (1, "a key of the comparison's own rows"),
    ("xialpha/selection/selector.py", "metric"): (1, "the metric= parameter, named in an error"),
    ("xialpha/selection/objective.py", "average"): (1, "the average= parameter, named in its error"),
    ("xialpha/selection/objective.py", "cost_fn"): (2, "the cost_fn= parameter, named in its errors"),
    ("xialpha/selection/objective.py", "cost_fp"): (2, "the cost_fp= parameter, named in its errors"),
    ("xialpha/selection/objective.py", "error"): (3, "a metric's name (METRICS)"),
    ("xialpha/selection/objective.py", "estimator"): (1, "the estimator= parameter, checked by its constraint"),
    ("xialpha/selection/objective.py", "f1"): (3, "a metric's name (METRICS)"),
    ("xialpha/selection/objective.py", "metric"): (1, "the metric= parameter, named in its error"),
    ("xialpha/selection/objective.py", "precision"): (2, "a metric's name (METRICS)"),
    ("xialpha/selection/objective.py", "recall"): (3, "a metric's name (METRICS)"),
    ("xialpha/selection/objective.py", "rho"): (1, "the rho= parameter, named in its error"),
    ("xialpha/selection/objective.py", "value"): (1, "a column of the per-category counts frame (not stored)"),
    ("xialpha/selection/options.py", "alpha"): (1, "the alpha= parameter: its constraint's key"),
    ("xialpha/selection/options.py", "average"): (1, "the average= parameter, named in its error"),
    ("xialpha/selection/options.py", "cost_fn"): (2, "an option name, and its constraint's key"),
    ("xialpha/selection/options.py", "cost_fp"): (2, "an option name, and its constraint's key"),
    ("xialpha/selection/options.py", "estimator"): (1, "the estimator= parameter, named in its error"),
    ("xialpha/selection/options.py", "f1"): (1, "a metric's name (METRICS): the default"),
    ("xialpha/selection/options.py", "metric"): (2, "an option name (and the frozen field set)"),
    ("xialpha/selection/options.py", "rho"): (1, "an option name"),
    ("xialpha/selection/selector.py", "estimator"): (2, "the estimator= parameter, named in its errors"),
    ("xialpha/selection/selector.py", "rho"): (1, "the rho= parameter, named in its error"),
    ("xialpha/spec/corpus.py", "test_split"): (2, "a key of the corpus spec"),
    ("xialpha/spec/drift.py", "C"): (1, "a key of the drift spec"),
    ("xialpha/spec/drift.py", "alpha"): (2, "a key of the drift spec"),
    ("xialpha/spec/drift.py", "j"): (1, "a key of the drift spec"),
    ("xialpha/spec/drift.py", "margin_points"): (1, "a key of the drift spec's identity"),
    ("xialpha/spec/drift.py", "rho"): (2, "a key of the drift spec"),
    ("xialpha/spec/grid.py", "C"): (5, "a key of the sweep spec"),
    ("xialpha/spec/grid.py", "j"): (3, "a key of the sweep spec"),
    ("xialpha/spec/sweep.py", "estimator"): (1, "a key of the sweep spec"),
    ("xialpha/spec/sweep.py", "f1"): (1, "a metric's name (METRICS): the default"),
    ("xialpha/spec/sweep.py", "metric"): (1, "a key of the sweep spec"),
    ("xialpha/spec/sweep.py", "rho"): (1, "a key of the sweep spec"),
    ("xialpha/time_limits.py", "error"): (3, "a key of a call's outcome"),
    ("xialpha/time_limits.py", "value"): (2, "a key of a call's outcome"),
}


def stored_column_names() -> set[str]:
    """The names of the columns of the results, selections, certifications and drift datasets."""
    from xialpha.storage.arrow_schema import CERTIFICATION_COLUMNS, DRIFT_COLUMNS, RESULT_COLUMNS, SELECTION_COLUMNS

    return {column.name for column in (*RESULT_COLUMNS, *SELECTION_COLUMNS, *CERTIFICATION_COLUMNS, *DRIFT_COLUMNS)}


def result_column_strings(
    modules, names: set[str] | None = None, within: tuple[str, ...] = ("xialpha/",), homes=STORED_HOMES
) -> dict[tuple[str, str], list[int]]:
    """{(module, string): lines} of the string constants of the modules `within` (paths or their
    beginnings), except the `homes` of the names (xialpha/storage and the packages below it), that
    equal one of `names` (default: the name of a column of the results, selections, certifications
    or drift datasets, `stored_column_names`). Not counted: the literal parts of f-strings
    (fragments, not names) and the value of a `kind=` argument (numpy's and pandas' sort "stable")."""
    names = stored_column_names() if names is None else names
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for path, tree in modules:
        if path.startswith(homes) or not path.startswith(within):
            continue
        not_names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                not_names |= {id(part) for part in node.values}
            elif isinstance(node, ast.keyword) and node.arg == "kind":
                not_names.add(id(node.value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in not_names:
                found[(path, node.value)].append(node.lineno)
    return found


def column_literals_outside_storage(
    modules,
    allowed=NOT_COLUMNS,
    names: set[str] | None = None,
    within: tuple[str, ...] = ("xialpha/",),
    homes: tuple[str, ...] = STORED_HOMES,
) -> list[str]:
    """ "path:lines 'name'" where a module's strings naming a column (`result_column_strings`: of
    the stored datasets, or one of `names`, in the modules `within` but their `homes`) differ in
    number from what `allowed` lets it have."""
    found = result_column_strings(modules, names, within, homes)
    return [
        f"{path}:{','.join(map(str, found.get((path, name), [])))} {name!r} "
        f"({len(found.get((path, name), []))}, allowed {allowed.get((path, name), (0,))[0]})"
        for path, name in sorted(set(found) | set(allowed))
        if len(found.get((path, name), [])) != allowed.get((path, name), (0,))[0]
    ]


def test_outside_storage_no_string_names_a_result_column():
    """Code outside xialpha/storage names a column of the results, selections, certifications or
    drift datasets by its member of `ResultColumn`, `SelectionColumn`, `CertificationColumn` or
    `DriftColumn` (or a storage helper such as `estimate_column`), never by a string: the store's
    columns have one definition."""
    assert column_literals_outside_storage(_modules()) == []


@pytest.mark.parametrize(
    "source",
    [
        'frame = rows.sort_values("category")',
        'value = row["xa_error"]',
        "columns = ('config_key', ResultColumn.C)",
        'order = frame.sort_values(by="created_at", kind="stable")',
        'chosen_by = selection["estimator"].iloc[0]',
        'bound = percent(row["f1_lower"])',
        "drifted = [row for row in rows if row['verdict'] == DriftVerdict.DRIFT]",
    ],
)
def test_the_storage_column_rule_catches_a_planted_column_name(source):
    assert len(column_literals_outside_storage(_planted(source), {})) == 1
    assert column_literals_outside_storage([("xialpha/storage/x.py", ast.parse(source))], {}) == []
    assert column_literals_outside_storage([("xialpha/features/x.py", ast.parse(source))], {}) == []


@pytest.mark.parametrize(
    "source",
    [
        'label = f"{prefix}C"',
        'order = np.argsort(keys, kind="stable")',
        "frame = rows.sort_values(ResultColumn.CATEGORY)",
        'words = plural(n, "categories")',
    ],
)
def test_the_storage_column_rule_lets_non_names_pass(source):
    assert column_literals_outside_storage(_planted(source), {}) == []


def test_the_storage_column_rule_reports_one_more_and_one_fewer_than_allowed():
    source = 'frame = rows.sort_values("category")'
    assert (
        column_literals_outside_storage(_planted(source), {("xialpha/selection/planted.py", "category"): (1, "")}) == []
    )
    assert len(column_literals_outside_storage(_planted(source + "\nx = 'n'"), {})) == 2
    assert (
        len(column_literals_outside_storage(_planted("x = 1"), {("xialpha/selection/planted.py", "n"): (1, "")})) == 1
    )


# The modules that build and show a report's frames: they name the frames' columns (`ReportColumn`,
# `EdgeColumn`) and the runs' (`SweepColumn`) by their members, as code outside storage names the
# stored columns; the strings that equal such a name but mean something else are NOT_REPORT_COLUMNS.
REPORT_MODULES = ("xialpha/reports/", "xialpha/commands/report.py")
REPORT_HOMES = ("xialpha/reports/columns.py",)  # where ReportColumn's names are strings
NOT_REPORT_COLUMNS = {
    ("xialpha/commands/report.py", "config"): (1, "a table header"),
    ("xialpha/commands/report.py", "configs"): (1, "a table header"),
    ("xialpha/commands/report.py", "estimate"): (1, "a table header"),
    ("xialpha/reports/html.py", "changed"): (1, "a table header"),
    ("xialpha/reports/html.py", "command"): (1, "a table header"),
    ("xialpha/reports/html.py", "config"): (3, "table headers"),
    ("xialpha/reports/html.py", "configs"): (1, "a table header"),
    ("xialpha/reports/html.py", "estimate"): (1, "a table header"),
    ("xialpha/reports/html.py", "estimator"): (1, "a table header"),
    ("xialpha/reports/html.py", "label"): (1, "a table header"),
    ("xialpha/reports/inventory.py", "categories"): (4, "a column of the store's listing (a count), not the runs'"),
    ("xialpha/reports/inventory.py", "configs"): (2, "a column of the store's listing (a count)"),
    ("xialpha/reports/contents.py", "categories"): (1, "a line of the report's summary"),
    ("xialpha/reports/contents.py", "estimator"): (1, "an Objective attribute"),
    ("xialpha/reports/terminal.py", "categories"): (4, "the store listing's column and its header"),
    ("xialpha/reports/terminal.py", "changed"): (1, "a table header"),
    ("xialpha/reports/terminal.py", "config"): (2, "table headers"),
    ("xialpha/reports/terminal.py", "configs"): (2, "the store listing's column and its header"),
    ("xialpha/reports/terminal.py", "estimator"): (1, "a table header"),
    ("xialpha/reports/terminal.py", "label"): (1, "a table header"),
    ("xialpha/reports/verdicts.py", "flat"): (1, "the word a table cell shows (`grid_word`)"),
    ("xialpha/reports/verdicts.py", "tie"): (3, "a verdict (`verdicts`)"),
}


def shown_column_names() -> set[str]:
    """The names of the columns of a report's frames and of the runs it shows."""
    from xialpha.reports.columns import ReportColumn
    from xialpha.selection.edges import EdgeColumn
    from xialpha.storage.schema import SweepColumn

    return {str(column) for names in (ReportColumn, EdgeColumn, SweepColumn) for column in names}


def report_column_literals(modules, allowed=NOT_REPORT_COLUMNS) -> list[str]:
    """ "path:lines 'name'" where a report module's strings naming a column of its frames differ in
    number from what `allowed` lets it have."""
    return column_literals_outside_storage(modules, allowed, shown_column_names(), REPORT_MODULES, REPORT_HOMES)


def test_a_report_names_the_columns_of_its_frames_by_their_members():
    """The curves, best C, choices, calibration and tidy frames and the runs a report shows are
    read by `ReportColumn`, `EdgeColumn` and `SweepColumn` members, never by a string: each column
    has one name."""
    assert report_column_literals(_modules()) == []


@pytest.mark.parametrize(
    "source",
    [
        'label = curves["label"]',
        'edge = row.get("at_edge")',
        "best = frame.rename(columns={ResultColumn.C: 'best_C'})",
        'spec = newest["spec_toml"]',
        "columns = [EdgeColumn.FLAT, 'settled']",
    ],
)
def test_the_report_column_rule_catches_a_planted_column_name(source):
    assert len(report_column_literals([("xialpha/reports/planted.py", ast.parse(source))], {})) == 1
    assert len(report_column_literals([("xialpha/commands/report.py", ast.parse(source))], {})) == 1
    assert report_column_literals([("xialpha/reports/columns.py", ast.parse(source))], {}) == []
    assert report_column_literals([("xialpha/commands/store.py", ast.parse(source))], {}) == []


def names_defined_twice(modules) -> list[str]:
    """ "name: path, path" for each public function or class that more than one of `modules`
    defines at its top level: two renderers of one figure say by their names what each returns."""
    homes: dict[str, list[str]] = defaultdict(list)
    for path, tree in modules:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                homes[node.name].append(path)
    return [f"{name}: {', '.join(paths)}" for name, paths in sorted(homes.items()) if len(paths) > 1]


def test_no_two_report_modules_define_one_name():
    """The matplotlib figures (`plots`) and the page's SVG (`svg`) draw the same panels under names
    that say what each returns (`curves_figure`, a Figure; `curves_svg`, SVG text)."""
    assert names_defined_twice(_modules(PACKAGE / "reports")) == []


def test_the_one_name_rule_catches_a_name_defined_twice():
    planted = [
        ("xialpha/reports/plots.py", ast.parse("def curves_figure(): ...\ndef _e(): ...\n")),
        ("xialpha/reports/svg.py", ast.parse("def curves_figure(): ...\ndef _e(): ...\nclass Axis: ...\n")),
    ]
    assert names_defined_twice(planted) == ["curves_figure: xialpha/reports/plots.py, xialpha/reports/svg.py"]


def test_the_ci_script_names_test_files_that_exist():
    """.ci/run runs some test files by path (once more without SLURM): a moved file must not turn that
    run into 'file not found'."""
    import re

    named = re.findall(r"\btests/[\w/]+\.py\b", (REPO / ".ci" / "run").read_text(encoding="utf-8"))
    assert named, "the CI script names no test file: this check has nothing to check"
    assert [path for path in named if not (REPO / path).is_file()] == []


STORE_CONTRACT = ("StoreFiles", "StoreQueries")


def undocumented_contract(tree: ast.Module, classes: tuple[str, ...] = STORE_CONTRACT) -> list[str]:
    """ "Class.member: what is missing" for each method of the protocols `classes` whose docstring
    lacks an Args entry for a parameter or a Returns section for a value, and each attribute without
    its docstring (the string after it), as Optuna's BaseStorage documents each of its methods."""
    bad = []
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name in classes):
            continue
        for index, member in enumerate(node.body):
            if isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                after = node.body[index + 1] if index + 1 < len(node.body) else None
                if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
                    bad.append(f"{node.name}.{member.target.id}: no docstring")
            if not isinstance(member, ast.FunctionDef):
                continue
            doc = ast.get_docstring(member) or ""
            arguments = [a.arg for a in member.args.args[1:] + member.args.kwonlyargs]
            args = doc.split("Args:", 1)[1] if "Args:" in doc else ""
            bad += [f"{node.name}.{member.name}: no Args entry for {a}" for a in arguments if f"\n    {a}:" not in args]
            returns_value = not (isinstance(member.returns, ast.Constant) and member.returns.value is None)
            if returns_value and "Returns:" not in doc:
                bad.append(f"{node.name}.{member.name}: no Returns section")
            if not doc:
                bad.append(f"{node.name}.{member.name}: no docstring")
    return bad


def test_the_store_contract_documents_each_method_and_attribute():
    tree = ast.parse((PACKAGE / "storage" / "contract.py").read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    assert set(STORE_CONTRACT) <= names
    assert undocumented_contract(tree) == []


def test_the_contract_rule_catches_an_undocumented_method():
    planted = ast.parse(
        "class StoreQueries(Protocol):\n"
        "    uri: str\n"
        "    def runs(self, sweep_id: str | None = None) -> pd.DataFrame:\n"
        '        """Read the runs.\n\n        Returns:\n            A DataFrame.\n        """\n'
        "    def add_run(self, row: RunRow) -> None:\n"
        '        """Record a run.\n\n        Args:\n            row: The run.\n        """\n'
        "    def sweeps(self) -> pd.DataFrame: ...\n"
    )
    assert undocumented_contract(planted) == [
        "StoreQueries.uri: no docstring",
        "StoreQueries.runs: no Args entry for sweep_id",
        "StoreQueries.sweeps: no Returns section",
        "StoreQueries.sweeps: no docstring",
    ]


MAX_LINES = 600  # the longest a module of xialpha/ may be


def long_modules(package: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """ "path: N lines" for each module of `package` longer than `limit` lines (as `wc -l` counts)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > limit:
            found.append(f"{path.relative_to(package.parent).as_posix()}: {lines} lines")
    return found


def test_no_module_is_longer_than_the_limit():
    """A module holds one job: past MAX_LINES it holds two, to split along the seam between them."""
    assert long_modules() == []


def test_the_size_rule_catches_a_planted_long_module(tmp_path):
    package = tmp_path / "xialpha"
    (package / "storage").mkdir(parents=True)
    (package / "storage" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (package / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    assert long_modules(package) == [f"xialpha/storage/long.py: {MAX_LINES + 1} lines"]


MODE_STRINGS = {  # a mode's strings -> the one module that names them (enum or constant)
    "xialpha/storage/schema.py": {"ok", "failed", "skipped"},  # ResultStatus, WindowStatus
    "xialpha/estimators/__init__.py": {"linear"},  # LINEAR
}


def mode_literals(modules, strings=MODE_STRINGS) -> list[str]:
    """Comparisons (==, !=, in, `pc.equal`) of a value with a mode's string outside its home module."""
    found = []
    for path, tree in modules:
        banned = set().union(*(words for home, words in strings.items() if home != path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")).endswith(
                "equal"
            ):
                operands = list(node.args)
            else:
                continue
            for operand in operands:
                values = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
                if any(isinstance(text := _literal(value), str) and text in banned for value in values):
                    found.append(f"{path}:{node.lineno}")
    return found


def test_a_mode_is_compared_by_its_name_not_by_a_string():
    """A results row's or drift window's status is compared as `ResultStatus` / `WindowStatus`, the
    linear kernel as `LINEAR`, never by the string it is stored as: its values have one definition."""
    assert mode_literals(_modules()) == []


@pytest.mark.parametrize(
    "source",
    [
        'if row.status == "ok": pass',
        "ok = [r for r in results if r.status != 'failed']",
        'rows_ok = _equal(table["status"], "ok")',
        'keep = pc.equal(table[column], "failed")',
        'done = status in ("ok", "skipped")',
        'if kernel.name == "linear": pass',
    ],
)
def test_the_mode_rule_catches_a_planted_string(source):
    assert mode_literals(_planted(source)) != []
    home = next(
        home for home, words in MODE_STRINGS.items() if any(repr(word) in source.replace('"', "'") for word in words)
    )
    assert mode_literals([(home, ast.parse(source))]) == []  # its home may name it
