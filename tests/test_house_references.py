"""Every module, name and file that a docstring or comment of xialpha/ cross-references exists.

Docstrings rot when modules move: a reference to `xialpha.selection.choices` after `choices` was
merged into `objective` sends the reader nowhere. Checked statically, from parsed source (nothing
is imported):
- a dotted name that starts with `xialpha.` (anywhere in a docstring or comment), or a backticked
  dotted name that starts with one of xialpha's packages or modules (`selection.edges`), or with
  a sibling module of the referring module (`linear.RowStatistics` inside xialpha/estimators),
  names a module, then names defined in it: a function, class, assignment or import at the
  module's top level, then a class's methods, attributes (class-level or `self.x = ...`) and
  members; an imported name is followed into the xialpha module it comes from;
- a backticked bare name in a package's docstring (`records`) names a module of the package or
  a name one of its modules defines;
- a path of the repository (`xialpha/jobs/tasks.py`, `selection/records.py`, `bench/c_path.py`,
  `docs/spec.md`, `config/demo.toml`) names a file or folder that exists;
- a backticked bare name in any docstring (module, class or function: `fit_svm`, `check_input`,
  `submit_features(...)`) names something of xialpha: a module, or a name its code defines, binds,
  reads as an attribute, passes as a keyword or spells as a string (a column, a spec key), or
  Python's (a builtin, a keyword, a dunder). Another project's name is written qualified
  (`scipy.stats.binomtest`; dotted names outside xialpha are not checked), or as its owner's:
  after a possessive (SVMlight's `a` and `b`) or in the parentheses after a backticked module
  that is not ours (`scipy.stats` (`binomtest`, `ttest_rel`)); NOT_NAMES lists the few words in
  backticks that are no Python name at all, each with its reason;
- a backticked call (`fit_svm(problem, parameters)`, `select(rho=...)`) names a callable as
  above, and each keyword it passes is a parameter of a function or class of xialpha of that
  name (one taking **kwargs takes any);
- a backticked file name in docs/*.md (`xi_alpha.py`) names a file of the repository.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import re
import tokenize
from functools import cache
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "xialpha"
TOP_FOLDERS = ("xialpha", "bench", "tests", "docs", "config", "deploy", "notebooks")
DOTTED = re.compile(r"(?<![\w.])xialpha(?:\.[A-Za-z_]\w*)+")
# A backticked dotted name, unless the backticks hold an assignment, a key: value or a subscript
# (`svm.C = "auto"`, `cluster.walltime: must be ...`, `spec.estimators["kfold"]`: spec keys and
# expressions, not modules).
BACKTICKED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w.]|\s*=|:|\[|\()")
# A dotted name of three parts or more outside backticks (`selection.display.write_records`).
PLAIN = re.compile(r"(?<![\w.`])([a-z_]\w*(?:\.[A-Za-z_]\w*){2,})(?![\w(])")
BARE = re.compile(r"`([a-z_][a-z0-9_]*)`")
# File names that read like dotted names (`models.joblib`): not modules.
FILE_ENDINGS = ("joblib", "json", "toml", "parquet", "py", "md", "csv", "tsv", "txt", "html", "jsonl", "gz")
PATH = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w-]*/)+[\w.-]*\w)")
SUFFIXES = (".py", ".md", ".toml", ".json", ".yaml", ".yml", ".ipynb", ".sh", ".cfg", ".txt")
# Words in backticks that name no Python object, of ours or another's.
NOT_NAMES = {
    "kill": "a shell command (commands/signals.py: what sends SIGTERM)",
    "scancel": "SLURM's shell command (commands/signals.py)",
    "hello": "a CSV cell's text in an example of a malformed row (corpora/table_files.py)",
    "span_f1": "an estimate column, spelled <estimator>_<metric> at run time (api.py)",
    "xa_error": "an estimate column, spelled <estimator>_<metric> at run time (api.py)",
    "svc__C": "a parameter path of a scikit-learn pipeline (<step>__<parameter>, search.py)",
    "GridSearchCV": "scikit-learn's search, which XiAlphaSearchCV's parameters follow (search.py)",
}
SPAN = re.compile(r"`([^`\n]+)`")
# A run of backticked spans joined by commas, "and", "or" or an opening parenthesis.
JOINER = re.compile(r"\s*(?:,|\band\b|\bor\b|\()\s*(?:\band\b\s*|\bor\b\s*)?")
POSSESSIVE = re.compile(r"\w's\s+$")
CALL = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((.*)\)?$", re.S)
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _texts(source: str) -> list[tuple[int, str]]:
    """(line, text) of every docstring and comment of a module's source."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    found.append((body[0].lineno, body[0].value.value))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return found


def module_file(parts: tuple[str, ...]) -> Path | None:
    """The file of module xialpha.<parts> (a package's __init__.py), or None."""
    base = PACKAGE.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@cache
def _module_names(path: Path) -> dict[str, ast.AST]:
    """What the module at `path` defines at its top level (with a lazy `__getattr__`, also the names
    its string tables list)."""
    names = _defined(_tree(path).body)
    if "__getattr__" in names:
        names.update(dict.fromkeys(_strings(_tree(path)), ast.Pass()))
    return names


def _defined(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body defines, each with the node that defines it."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            inner = list(node.body) + list(getattr(node, "orelse", [])) + list(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                inner += handler.body
            names.update(_defined(inner))
    return names


def _strings(tree: ast.Module) -> set[str]:
    """The string constants in a module's top-level assignments (its export tables)."""
    return {
        node.value
        for statement in tree.body
        if isinstance(statement, (ast.Assign, ast.AnnAssign))
        for node in ast.walk(statement)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _instance_attributes(cls: ast.ClassDef) -> set[str]:
    return {
        node.attr
        for node in ast.walk(cls)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    }


def _imported_module(node: ast.ImportFrom, module: tuple[str, ...], name: str) -> tuple[str, ...] | None:
    """The xialpha module path (without "xialpha") that `from ... import name` reads, or None."""
    if node.level:
        package = module[: len(module) - node.level] if module else ()
        source = package + tuple((node.module or "").split(".")) if node.module else package
    elif node.module and node.module.split(".")[0] == "xialpha":
        source = tuple(node.module.split(".")[1:])
    else:
        return None
    source = tuple(part for part in source if part)
    if module_file(source + (name,)) is not None:
        return source + (name,)
    return source


def _resolves(module: tuple[str, ...], attributes: tuple[str, ...], depth: int = 0) -> bool:
    """Whether attributes name something defined in module xialpha.<module> (module doc)."""
    if not attributes:
        return True
    if depth > 8:
        return True
    if module_file(module + attributes[:1]) is not None:
        return _resolves(module + attributes[:1], attributes[1:], depth + 1)
    path = module_file(module)
    if path is None:
        return False
    names = _module_names(path)
    node = names.get(attributes[0])
    if node is None:
        return False
    if isinstance(node, ast.ImportFrom):
        source = _imported_module(node, module if path.name != "__init__.py" else module + ("",), attributes[0])
        if source is None:
            return True  # another library's name: not ours to check
        if module_file(source) is not None and source[-1:] == attributes[:1]:
            return _resolves(source, attributes[1:], depth + 1)
        return _resolves(source, attributes, depth + 1)
    if isinstance(node, ast.ClassDef) and len(attributes) > 1:
        members = set(_defined(node.body)) | _instance_attributes(node)
        if attributes[1] in members:
            return True
        # inherited from a base class of ours
        for base in node.bases:
            if isinstance(base, ast.Name) and _resolves(module, (base.id, attributes[1]), depth + 1):
                return True
        return not any(isinstance(base, ast.Name) and base.id in names for base in node.bases) and bool(node.bases)
    return True


def _module_of(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


@cache
def _names_in(folder: Path) -> frozenset[str]:
    """The modules and packages directly in `folder`."""
    return frozenset(
        other.stem for other in folder.iterdir() if other.suffix == ".py" or (other / "__init__.py").is_file()
    )


def _references(text: str, package: tuple[str, ...]) -> set[str]:
    """The dotted references (as xialpha.<...>) in one docstring or comment of a module of `package`."""
    refs = {match.group(0) for match in DOTTED.finditer(text) if match.group(0).split(".")[-1] not in FILE_ENDINGS}
    siblings, top = _names_in(PACKAGE.joinpath(*package)), _names_in(PACKAGE)
    for match in BACKTICKED.finditer(text):
        name = match.group(1)
        first = name.split(".")[0]
        if first == "xialpha" or name.split(".")[-1] in FILE_ENDINGS:
            continue  # DOTTED has it; a file name
        if package and first in siblings:
            refs.add(".".join(("xialpha", *package, name)))
        elif first in top:
            refs.add("xialpha." + name)
    for match in PLAIN.finditer(text):
        name = match.group(1).rstrip(".")
        if name.split(".")[0] in top and (PACKAGE / name.split(".")[0]).is_dir():
            if name.split(".")[-1] not in FILE_ENDINGS:
                refs.add("xialpha." + name)
    return refs


def _path_exists(ref: str) -> bool | None:
    """Whether a repository path named in a docstring exists (None: not a path of ours)."""
    if not ref.endswith(SUFFIXES) or "*" in ref or "<" in ref:
        return None
    first = ref.split("/")[0]
    if first in TOP_FOLDERS:
        return (REPO / ref).exists()
    if first in _names_in(PACKAGE):
        return (PACKAGE / ref).exists()
    return None


def dangling(path: Path, source: str) -> list[str]:
    """`line: reference` for every reference in the docstrings and comments of `source` (the text of
    the module at `path`, under xialpha/) that names nothing that exists."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module[:-1]
    found = []
    if path.name == "__init__.py":
        for match in BARE.finditer(ast.get_docstring(ast.parse(source), clean=False) or ""):
            name = match.group(1)
            modules = _names_in(PACKAGE.joinpath(*package))
            if not _resolves(package, (name,)) and not any(_resolves((*package, m), (name,)) for m in modules):
                found.append(f"1: `{name}` (neither a module of xialpha.{'.'.join(package)} nor a name in one)")
    for line, text in _texts(source):
        found += [
            f"{line}: {ref}"
            for ref in sorted(_references(text, package))
            if not _resolves((), tuple(ref.split(".")[1:]))
        ]
        found += [f"{line}: {match.group(1)}" for match in PATH.finditer(text) if _path_exists(match.group(1)) is False]
    return found


def test_every_reference_in_a_docstring_or_comment_exists():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += [f"{path.relative_to(REPO)}:{entry}" for entry in dangling(path, path.read_text(encoding="utf-8"))]
    assert not found, "references to modules, names or files that do not exist:\n" + "\n".join(found)


def test_a_planted_dangling_reference_is_reported():
    path = PACKAGE / "selection" / "__init__.py"
    planted = (
        '"""See `xialpha.selection.choices`, `edges.no_such_name`, `selection.display.write_records`,\n'
        'xialpha.storage.rows.NoSuchRow and selection/no_such_module.py; `choices` holds the options."""\n'
        "# rows: storage.rows.no_such_row\n"
    )
    assert [entry.split(": ", 1)[1] for entry in dangling(path, planted)] == [
        "`choices` (neither a module of xialpha.selection nor a name in one)",
        "xialpha.selection.choices",
        "xialpha.selection.display.write_records",
        "xialpha.selection.edges.no_such_name",
        "xialpha.storage.rows.NoSuchRow",
        "selection/no_such_module.py",
        "xialpha.storage.rows.no_such_row",
    ]


def test_references_that_exist_are_not_reported():
    path = PACKAGE / "estimators" / "dcd.py"
    fine = (
        '"""`linear.RowStatistics`, xialpha.estimators.linear.FIRST_MU_SHARE, `storage.rows`,\n'
        'xialpha.storage.store.ResultStore, xialpha/estimators/dcd.py, bench/c_path.py and np.sum."""\n'
    )
    assert dangling(path, fine) == []


@cache
def _project_names() -> tuple[frozenset[str], dict[str, frozenset[str] | None]]:
    """Every name xialpha's code defines, binds, reads as an attribute, passes as a keyword or
    spells as a one-word string, with its modules; and {name: the parameters of the functions and
    classes (their __init__ or fields) of that name, None where one takes **kwargs}."""
    names: set[str] = {"xialpha"}
    parameters: dict[str, set[str] | None] = {}
    for path in PACKAGE.rglob("*.py"):
        names.add(path.stem)
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                taken = _parameters(node)
                known = parameters.setdefault(node.name, set())
                parameters[node.name] = None if known is None or taken is None else known | taken
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.update((node.asname or node.name).split("."))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and IDENTIFIER.fullmatch(node.value):
                names.add(node.value)
    python = set(dir(builtins)) | set(keyword.kwlist)
    return frozenset(names | python), {
        name: None if taken is None else frozenset(taken) for name, taken in parameters.items()
    }


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str] | None:
    """The keywords a function (or a class: its __init__, else its annotated fields) takes; None
    for any (**kwargs)."""
    if isinstance(node, ast.ClassDef):
        init = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]
        if init:
            return _parameters(init[0])
        return {
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
    arguments = node.args
    if arguments.kwarg is not None:
        return None
    return {arg.arg for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}


def _spans(text: str) -> list[tuple[str, bool]]:
    """(code, whether it is another project's) for each backticked span of `text`: another's when a
    possessive ("SVMlight's `a`") or a backticked dotted name that is not xialpha's ("`scipy.stats`
    (`a`, `b`)") heads the run of spans it is in."""
    found: list[tuple[str, bool]] = []
    theirs, end = False, 0
    for match in SPAN.finditer(text):
        code, between = match.group(1), text[end : match.start()]
        if not (found and JOINER.fullmatch(between)):
            theirs = bool(POSSESSIVE.search(text[max(0, match.start() - 80) : match.start()]))
        found.append((code, theirs))
        head = code.split("(")[0].split(".")
        if (
            len(head) > 1
            and IDENTIFIER.fullmatch(head[0])
            and head[0] != "xialpha"
            and head[0] not in _names_in(PACKAGE)
        ):
            theirs = True  # `scipy.stats` (`binomtest`, ...): the names after it are its
        end = match.end()
    return found


def unknown_names(text: str) -> list[str]:
    """The backticked bare names and calls of one docstring that name nothing of xialpha or Python
    (see the module's docstring), and keywords a call of ours does not take."""
    names, parameters = _project_names()
    bad = []
    for code, theirs in _spans(text):
        call = CALL.fullmatch(code)
        name = call.group(1) if call else code
        if theirs or not IDENTIFIER.fullmatch(name.split(".")[-1]) or name in NOT_NAMES:
            continue
        if "." not in name and not name.startswith("__") and name not in names:
            bad.append(f"`{code}`")
            continue
        taken = parameters.get(name.split(".")[-1], None) if call else None
        if taken is not None and (call is None or "." not in name or name.split(".")[0] in _names_in(PACKAGE)):
            bad += [
                f"`{code}` ({word}=)"
                for word in re.findall(r"(?<![\w.=])([A-Za-z_]\w*)=(?!=)", call.group(2))
                if word not in taken
            ]
    return bad


def _docstrings(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, text) of every docstring of a module: the module's, its classes' and functions'."""
    return [
        (node.body[0].lineno, node.body[0].value.value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    ]


def test_every_backticked_name_and_call_in_a_docstring_is_ours_or_pythons():
    found, spans = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in _docstrings(_tree(path)):
            found += [f"{path.relative_to(REPO)}:{line}: {entry}" for entry in unknown_names(text)]
            spans.update(SPAN.findall(text))
    assert set(NOT_NAMES) <= spans, f"NOT_NAMES lists words no docstring holds: {sorted(set(NOT_NAMES) - spans)}"
    assert not found, "names in docstrings that nothing of xialpha or Python defines:\n" + "\n".join(found)


def test_a_planted_stale_name_or_keyword_is_reported():
    planted = (
        "`fit_linear` solves the same problem as `fit_svm(gram=X X^T)`; `submit_assembled` stacks the\n"
        "blocks; `fit_svm(problem, parameters, warm_start=None)`, `check_input`, `len(rows)`,\n"
        "`scipy.stats` (`binomtest`, `ttest_rel`), SVMlight's `compute_xa_estimates` and\n"
        "`distribute_alpha_t_greedily`, `np.linalg.norm`, `__del__`, `None`, `kill` and `x + 1`."
    )
    assert unknown_names(planted) == ["`fit_linear`", "`fit_svm(gram=X X^T)` (gram=)", "`submit_assembled`"]


def markdown_file_names(text: str) -> list[str]:
    """The backticked names of modules and documents (`xi_alpha.py`, `spec.md`, no folder) in a
    Markdown text that no file of the repository has (other file names, `_summary.json`, name a
    store's or a user's files)."""
    tracked = {path.name for folder in TOP_FOLDERS for path in (REPO / folder).rglob("*") if path.is_file()}
    tracked |= {path.name for path in REPO.iterdir()}
    return [name for name in re.findall(r"`([\w-]+\.(?:py|md))`", text) if name not in tracked]


def test_every_file_a_document_names_exists():
    found = []
    for path in sorted((REPO / "docs").rglob("*.md")):
        found += [f"{path.relative_to(REPO)}: {name}" for name in markdown_file_names(path.read_text(encoding="utf-8"))]
    assert not found, "files named in docs/ that the repository does not have:\n" + "\n".join(found)


def test_a_planted_missing_file_in_a_document_is_reported():
    assert markdown_file_names("xi-alpha (`xialpha.py`), span (`span.py`), `pyproject.toml`") == ["xialpha.py"]
