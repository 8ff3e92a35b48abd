"""An adversarial campaign: generated cases in families the tests were not written from.

Each case runs one command (a new `xialpha` process, or one Python API call in a new process)
against its own copy of a small swept store, and is checked for six invariants:

  traceback     no Python traceback and no "internal error" on stderr (an API call: no exception
                other than UserError / TypeError naming its parameter as `name=`);
  crash         no abort, segfault or "Fatal Python error" (an exit by a signal no case sends);
  hang          it ends within TIMEOUT_S seconds;
  store_changed a command that fails (exit != 0, or an API call that raises) leaves the bytes of
                its store as they were (a digest of every file, link and directory);
  rows_lost     the store's result rows are as many after the case as before;
  secret        the secret planted in the case is in no output and no stored byte.

and, for the labels family, `raw_control`: no ESC or C1 byte on stdout/stderr, no predicted CSV
text cell a spreadsheet would run.

Families (none is a test's): `secret_carriers` (credentials in a store URI's user part or query,
$XIALPHA_STORE, a spec's [sweep] store, over memory://, file://, http:// and s3:// to a closed
port, through select, report, store ls/check, certify and sweep --dry-run); `hostile_labels`
(a table corpus whose categories are generated from markup, emoji codes, bidi overrides,
zero-width and escape characters and formula starts, through select's formats and modes, report,
report --html, store ls, store check and predict); `api_types` (xialpha.select, certify, report,
refit, results and sweep given a generated wrong-typed value for one parameter);
`certify_kills` (a certify process SIGKILLed after a random delay, or a random instant after its
claim on the test set appears, then certify run twice more: exactly one certification stored,
never a test set lost or used twice); `artefact_mutations` (a refit
artefact's model.json given a generated value for one field, its digest updated, then predict);
`output_targets` (predict --output and report --html to a FIFO, a copied device node, links, a
folder, the artefact's, the input's or the store's files: `replaced_node`, `read_file_written`: what the
command reads, predict its artefact and input, report its store); `signals_at_start`
(SIGINT/SIGTERM/SIGHUP a random instant into a command: `killed_silently`, `not_one_line`);
`stalled_store` (an S3 or GCS endpoint that accepts and never answers, an http:// store that
stalls after its first answers: `hang` within 5 x the timeout + 20 s); `limits` (a sweep under
`ulimit -n` 12-40: `limit_unnamed`, `not_one_line`); `compaction_races` (select, store ls,
report, compare, select --save run alone and then beside a process that keeps compacting the store
and ending the sweep: `wrong_under_concurrency`, `skipped_replaced`); `summary_tampering` (a
sweep's `_summary.json` forged in a generated way, or its data file rewritten in place, then
store ls, select, report, select --save: `summary_trusted` unless the output is that of the rows,
`not_one_line`); `special_files` (a FIFO, a device node or a link to one as a summary, the marker,
a data file or a heartbeat, some commands sent SIGTERM: `hang`, `not_one_line`, `unnamed`,
`blocked_then_killed`). Issue 42's: `predict_line_breaks` (a .txt
whose lines hold code points str.splitlines breaks at: `rows_wrong`); `auto_cut_signals` (an auto
or cut-path sweep signalled, or its workers killed, a random instant in: `not_one_line`,
`left_running`, `unexpected_exit`); `spec_tampering` (specs nested too deep, too large, a corpus or
grid beyond memory, a malformed $XIALPHA_MEMORY_LIMIT: `not_one_line`, `file_unnamed`);
`stalled_corpus` (a corpus over an http:// server that stalls: `store_created`, `key_unnamed`);
`hostile_search` (XiAlphaSearchCV.fit given a hostile estimator, grid, X or y:
`traceback_unnamed`, `fitted_before_refusal`). Issue 48's (never in --quick): `output_paths` (every
writer of a user's path pointed into a store: `store_written`, `not_refused`); `killed_between_writes`
(a sweep SIGKILLed between a batch's examples and results writes, after one, or at random, then
resumed: `vectors_lost`, `rows_missing`, `untested`); `hostile_csv_json` (categories holding \\r,
\\n, ;, C1, formula starts, cost extremes: `csv_broken`, `names_changed`, `json_invalid`,
`raw_control`, `formula_live`); `hostile_json_files` (the quadratic-regex input at each bounded JSON
file's limit: `quadratic`); `links_out_of_store` (links from partitions and JSON files to outside:
`read_outside`); `tampered_data_pages` (bytes flipped under an intact footer: `ls_trusts_unread`);
`spec_limits` (long dotted keys, deep headers: `slow_refusal`, `memory`, `depth_miscounted`);
`numba_cache_damage` (a sweep over a damaged copy of a numba cache: `not_one_line`, `cache_unnamed`).

    python bench/campaign.py            # 449 cases
    python bench/campaign.py --quick    # 22 cases (CI: tests/test_bench_quick.py)
    python bench/campaign.py --families output_targets signals_at_start stalled_store limits --seed 2
    python bench/campaign.py --families predict_line_breaks auto_cut_signals spec_tampering \
        stalled_corpus hostile_search --seed 5 --out bench/results/campaign_issue42_families_seed5.json
    python bench/campaign.py --families output_paths killed_between_writes hostile_csv_json \\
        hostile_json_files links_out_of_store tampered_data_pages spec_limits \\
        --seed 8 --out bench/results/campaign_issue48_families_seed8.json
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import REPO, make_parser, output_path, print_table, write_results

TIMEOUT_S = 90
# exits by a signal no case sends: an abort (a C++ exception, "Fatal Python error"), a segfault, a bus error
CRASH_CODES = {-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS, -signal.SIGFPE, -signal.SIGILL}
SECRET = "S3CR3Tcampaign" + "9f2c"  # planted credentials; no output or stored byte may hold it
CONTROL = re.compile(r"[\x1b\x80-\x9f]")
SPEC = """\
[sweep]
id = "camp"
[corpus]
loader = "synthetic"
n_docs = 240
n_categories = 3
seed = 5
train_split = "train"
test_split = "test"
[corpus.categories]
top_k = 2
[svm]
C = [0.5, 5.0]
[cluster]
workers = 1
"""
HOSTILE_PARTS = [
    "[/]",
    "[bold red]x[/bold red]",
    ":warning:",
    "\u202eevil",
    "zero\u200bwidth",
    "=cmd|' /C calc'!A0",
    "+1",
    "-2",
    "@sum",
    "\x1b[31mred",
    "\x9bcsi",
    "a\tb",
    "é",
    "<script>alert(1)</script>",
    "%s%n",
    "'quote",
    '"dq',
    ";semi",
    "long" * 30,
]


def cli(argv: list[str], cwd: Path, env: dict | None = None) -> tuple[int | None, str, str]:
    """Run `xialpha ARGV` in a new process: (exit code or None on a hang, stdout, stderr)."""
    return run([sys.executable, "-m", "xialpha.cli", *argv], cwd, env)


def run(command: list[str], cwd: Path, env: dict | None = None, timeout: float = TIMEOUT_S):
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100", **(env or {})}
    try:
        done = subprocess.run(
            command, cwd=cwd, env=full_env, capture_output=True, timeout=timeout, start_new_session=True
        )
    except subprocess.TimeoutExpired as exc:
        return None, (exc.stdout or b"").decode("utf-8", "replace"), (exc.stderr or b"").decode("utf-8", "replace")
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def tree_digest(root: Path) -> str | None:
    """SHA-256 over every entry under `root` (path, kind, bytes), None if absent."""
    if not os.path.lexists(root):
        return None
    digest = hashlib.sha256()
    for path in sorted([root, *root.rglob("*")]):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def result_rows(store: Path) -> int:
    from xialpha.storage.opening import open_store

    if not (store / "_xialpha_store.json").exists():
        return 0
    return len(open_store(str(store), create=False, writable=True).read_results_df(include_failed=True))


def holds_secret(root: Path, inputs: tuple[str, ...] = ()) -> bool:
    """The secret is in a file under `root` other than the user's own `inputs` (a spec naming it)."""
    needle = SECRET.encode()
    return any(
        needle in path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not path.is_symlink() and path.name not in inputs
    )


class Campaign:
    """The base stores and artefacts, the case directories and the tally."""

    def __init__(self, work: Path):
        self.work, self.cases, self.n = work, [], 0

    def setup(self) -> None:
        base = self.work / "base"
        base.mkdir()
        (base / "camp.toml").write_text(SPEC)
        self._must(cli(["sweep", "camp.toml", "--store", "store", "--quiet"], base))
        out = self._must(cli(["select", "store", "--save"], base))
        self.selection = re.search(r"stored selection (sel-\S+)", out).group(1)
        self._must(cli(["select", "store", "--refit", "model"], base))
        labels = self._hostile_labels()
        self.hostile_labels = labels
        rng = random.Random(3)
        with (base / "hostile.jsonl").open("w", encoding="utf-8") as stream:
            for i in range(240):
                label = labels[i % len(labels)]
                text = " ".join([f"topic{i % len(labels)}"] * 3 + [f"w{rng.randrange(40)}" for _ in range(8)])
                stream.write(
                    json.dumps({"text": text, "label": [label], "split": "test" if i % 4 == 0 else "train"}) + "\n"
                )
        (base / "hostile.toml").write_text(
            '[sweep]\nid = "hostile"\n[corpus]\nloader = "table"\npath = "hostile.jsonl"\nsplit_column = "split"\n'
            'train_split = "train"\ntest_split = "test"\n[corpus.categories]\ntop_k = 4\n[svm]\nC = [0.5, 5.0]\n'
            "[cluster]\nworkers = 1\n"
        )
        self._must(cli(["sweep", "hostile.toml", "--store", "hstore", "--quiet"], base))
        out = self._must(cli(["select", "hstore", "--save"], base))
        self.hostile_selection = re.search(r"stored selection (sel-\S+)", out).group(1)
        self._must(cli(["select", "hstore", "--refit", "hmodel"], base))
        (base / "docs.txt").write_text("topic0 w1 w2\n" + "a" * 200 + "\ntopic1 w3\n")
        self.base = base

    @staticmethod
    def _hostile_labels() -> list[str]:
        rng = random.Random(11)
        labels = set()
        while len(labels) < 4:
            labels.add("".join(rng.sample(HOSTILE_PARTS, 2))[:150])
        return sorted(labels)

    @staticmethod
    def _must(outcome) -> str:
        code, out, err = outcome
        if code != 0:
            raise SystemExit(f"campaign setup failed ({code}): {err.strip()[-500:]}")
        return out

    def case_dir(self) -> Path:
        self.n += 1
        directory = self.work / f"case{self.n:04d}"
        shutil.copytree(self.base, directory, symlinks=True)
        return directory

    def record(
        self,
        family: str,
        what: str,
        code,
        out: str,
        err: str,
        root: Path,
        store: Path | None,
        before: tuple | None,
        extra: dict | None = None,
        failed: bool | None = None,
    ) -> None:
        """Check the invariants of one case and keep its outcome."""
        failed = (code != 0) if failed is None else failed
        after = (tree_digest(store), result_rows(store)) if store is not None else None
        text = out + err
        findings = {
            "traceback": "Traceback (most recent call last)" in err or "internal error" in err,
            "crash": code in CRASH_CODES or "Fatal Python error" in err,
            "hang": code is None,
            "store_changed": bool(store is not None and failed and before[0] != after[0]),
            "rows_lost": bool(store is not None and after[1] < before[1]),
            "secret": SECRET in text or holds_secret(root, ("camp.toml",)),
            **(extra or {}),
        }
        self.cases.append(
            {
                "family": family,
                "case": what,
                "exit": code,
                "findings": [k for k, v in findings.items() if v],
                "stderr": err.strip().splitlines()[-1][:300] if err.strip() else "",
            }
        )
        shutil.rmtree(root, ignore_errors=True)

    def snapshot(self, store: Path) -> tuple:
        return tree_digest(store), result_rows(store)


# --- families -------------------------------------------------------------------------------------


def secret_carriers(campaign: Campaign, rng: random.Random, n: int) -> None:
    commands = [
        ["select", "{S}"],
        ["report", "{S}"],
        ["store", "ls", "{S}"],
        ["store", "check", "{S}"],
        ["select", "{S}", "--save"],
        ["certify", "{S}", "--selection", "{SEL}", "--test-split", "test", "--draws", "1000"],
    ]
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        carrier = rng.choice(["file-user", "memory-user", "query", "env", "spec", "http", "s3"])
        uri = {
            "file-user": f"file://AKIAUSER:{SECRET}@localhost{store}",
            "memory-user": f"memory://AKIAUSER:{SECRET}@bucket/store",
            "query": f"{store}?secret_access_key={SECRET}&token={SECRET}",
            "env": str(store),
            "spec": str(store),
            "http": f"http://user:{SECRET}@127.0.0.1:9/store",
            "s3": f"s3://AKIAUSER:{SECRET}@bucket/store?endpoint_override=127.0.0.1:9&scheme=http",
        }[carrier]
        env = {"AWS_EC2_METADATA_DISABLED": "true"}
        if carrier == "env":
            env["XIALPHA_STORE"] = f"memory://AKIAUSER:{SECRET}@bucket/x"
            argv = [part.replace("{S}", "") for part in rng.choice(commands[:3])]
            argv = [a for a in argv if a]
        elif carrier == "spec":
            spec = (
                (root / "camp.toml")
                .read_text()
                .replace('id = "camp"\n', f'id = "camp"\nstore = "memory://u:{SECRET}@b/x"\n')
            )
            (root / "camp.toml").write_text(spec)
            argv = ["sweep", "camp.toml", "--dry-run"]
        else:
            argv = [part.replace("{S}", uri).replace("{SEL}", campaign.selection) for part in rng.choice(commands)]
        before = campaign.snapshot(store)
        code, out, err = cli(argv, root, env)
        campaign.record("secret_carriers", f"{carrier}: {' '.join(argv[:3])}", code, out, err, root, store, before)


def hostile_labels(campaign: Campaign, rng: random.Random, n: int) -> None:
    variants = [
        ["select", "hstore"],
        ["select", "hstore", "--wide"],
        ["select", "hstore", "--format", "csv"],
        ["select", "hstore", "--format", "json"],
        ["select", "hstore", "--global"],
        ["select", "hstore", "--metric", "error", "--no-smooth"],
        ["select", "hstore", "--save"],
        ["report", "hstore"],
        ["report", "hstore", "--html", "page.html"],
        ["store", "ls", "hstore"],
        ["store", "check", "hstore"],
        ["predict", "hmodel", "--input", "docs.txt"],
        ["predict", "hmodel", "--input", "docs.txt", "--output", "out.csv"],
        ["certify", "hstore", "--selection", "{HSEL}", "--test-split", "test", "--draws", "1000"],
    ]
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "hstore"
        argv = [part.replace("{HSEL}", campaign.hostile_selection) for part in rng.choice(variants)]
        before = campaign.snapshot(store)
        code, out, err = cli(argv, root)
        shown = out + err
        if "--format" in argv or argv[0] == "predict":  # data for scripts keeps the labels as they are
            shown = err
        cells = []
        csv_text = (
            (root / "out.csv").read_text(encoding="utf-8")
            if (root / "out.csv").exists()
            else (out if argv[0] == "predict" else "")
        )
        import csv
        import io

        for row in list(csv.reader(io.StringIO(csv_text)))[1:]:
            cells.extend(row[:2])
        formula = any(cell[:1] in ("=", "+", "-", "@") for cell in cells)
        campaign.record(
            "hostile_labels",
            " ".join(argv[:3]),
            code,
            out,
            err,
            root,
            store,
            before,
            {"raw_control": bool(CONTROL.search(shown)) or formula},
        )


API_FUNCTIONS = {
    "select": (
        "xialpha.select(STORE, {p}={v})",
        [
            "sweep",
            "metric",
            "estimator",
            "rho",
            "per_category",
            "average",
            "runners_up",
            "alpha",
            "save",
            "smooth",
            "partial",
        ],
    ),
    "certify": (
        "xialpha.certify(STORE, selection=SEL, test_split='test', {p}={v})",
        ["force", "confidence", "draws", "seed", "spec", "client"],
    ),
    "certify_sel": ("xialpha.certify(STORE, selection={v}, test_split='test')", ["selection"]),
    "report": ("xialpha.report(STORE, {p}={v})", ["sweep", "selection", "metric", "estimator", "rho", "html"]),
    "refit": ("xialpha.refit(STORE, selection={v})", ["selection"]),
    "results": ("xialpha.results(STORE, {p}={v})", ["sweep", "include_failed"]),
    "sweep": ("xialpha.sweep('camp.toml', store=STORE, {p}={v})", ["client", "force", "quiet", "force_new_run"]),
    "store": ("xialpha.select({v})", ["store"]),
}
WRONG_VALUES = [
    "'1'",
    "b'x'",
    "[1]",
    "{'a': 1}",
    "1.5",
    "-1",
    "object()",
    "float('nan')",
    "('a', 'b')",
    "'tcp://127.0.0.1:9'",
    "__import__('pandas').DataFrame({'x': [1]})",
    "2**80",
    "'false'",
    "set()",
]
API_SNIPPET = """
import sys, xialpha
from xialpha.errors import UserError
STORE, SEL = 'store', {sel!r}
if __name__ == "__main__":
    try:
        {call}
    except (UserError, TypeError, ValueError) as exc:
        ok = isinstance(exc, UserError) or re.search(r"\\b\\w+=", str(exc))
        print("RAISED" if ok else "UNNAMED", type(exc).__name__, str(exc).splitlines()[0][:200], file=sys.stderr)
        sys.exit(2)
    except Exception as exc:
        print("Traceback (most recent call last): (an API call raised)", type(exc).__name__, str(exc)[:200],
              file=sys.stderr)
        sys.exit(1)
"""


def api_types(campaign: Campaign, rng: random.Random, n: int) -> None:
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        name = rng.choice(sorted(API_FUNCTIONS))
        template, parameters = API_FUNCTIONS[name]
        parameter, value = rng.choice(parameters), rng.choice(WRONG_VALUES)
        call = template.format(p=parameter, v=value)
        snippet = "import re\n" + API_SNIPPET.format(sel=campaign.selection, call=call)
        before = campaign.snapshot(store)
        cwd_before = sorted(p.name for p in root.iterdir())
        code, out, err = run([sys.executable, "-c", snippet], root)
        created = sorted(p.name for p in root.iterdir()) != cwd_before
        findings = {"traceback_unnamed": "UNNAMED" in err, "created_files": code != 0 and created}
        campaign.record("api_types", call, code, out, err, root, store, before, findings)


def certify_kills(campaign: Campaign, rng: random.Random, n: int) -> None:
    from xialpha.storage.opening import open_store

    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        argv = [
            sys.executable,
            "-m",
            "xialpha.cli",
            "certify",
            "store",
            "--selection",
            campaign.selection,
            "--test-split",
            "test",
            "--draws",
            "1000",
        ]
        before = campaign.snapshot(store)
        child = subprocess.Popen(
            argv,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        at_claim = rng.random() < 0.5  # half the kills land once the test set is claimed, the others at random
        delay = rng.uniform(0.0, 0.3) if at_claim else rng.uniform(0.5, 8.0)
        claims = store / "certifications" / "_claims"
        deadline = time.monotonic() + TIMEOUT_S
        while (
            at_claim and child.poll() is None and not list(claims.glob("*/claim*.json")) and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        try:
            child.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
        first = cli(argv[3:], root)
        second = cli(argv[3:], root)
        stored = open_store(str(store), create=False, writable=True).certifications()
        ids = set(stored["certification_id"]) if len(stored) else set()
        lost = len(ids) != 1  # killed, resumed or not: one certification must stand, and only one
        twice = second[0] == 0 and first[0] == 0
        code, out, err = first
        resumed = " (resumed the killed one)" if "resuming certification" in first[2] else ""
        when = f"{delay:.2f} s after the claim" if at_claim else f"after {delay:.1f} s"
        campaign.record(
            "certify_kills",
            f"kill {when}, rerun exit {first[0]}{resumed}, again {second[0]}",
            code,
            out,
            err + second[2],
            root,
            store,
            before,
            {"test_set_lost_or_reused": lost or twice},
            failed=False,
        )


ARTEFACT_FIELDS = ["token_pattern", "lowercase", "min_df", "max_df", "stop_words", "stemming", "tf", "idf", "norm"]


def _pattern(rng: random.Random) -> str:
    atom = rng.choice(["a", "aa", "a|aa", "\\w", "a*", ".", "[ab]", "(a|a)"])
    return rng.choice(
        [
            f"({atom})+b",
            f"(({atom})*)*$",
            f"({atom}+)+$",
            f"(?:{atom}){{1,40}}b",
            f"({atom}|a?)+c",
            "(",
            "[",
            "a{99999999}",
            "(?P<x>a)(?P=x)+",
            "\\b\\w\\w+\\b",
        ]
    )


def artefact_mutations(campaign: Campaign, rng: random.Random, n: int) -> None:
    for _ in range(n):
        root = campaign.case_dir()
        model = root / "model"
        content = json.loads((model / "model.json").read_text())
        field = rng.choice(ARTEFACT_FIELDS)
        value = (
            _pattern(rng)
            if field == "token_pattern"
            else rng.choice([None, -1, 0, 1e308, "yes", [], {}, True, "x" * 5000, 2**70])
        )
        for entry in content["preprocessings"].values():
            entry["params"][field] = value
        (model / "model.json").write_text(json.dumps(content))
        manifest = json.loads((model / "manifest.json").read_text())
        manifest["sha256"]["model.json"] = hashlib.sha256((model / "model.json").read_bytes()).hexdigest()
        (model / "manifest.json").write_text(json.dumps(manifest))
        code, out, err = cli(["predict", "model", "--input", "docs.txt"], root)
        campaign.record("artefact_mutations", f"{field}={str(value)[:40]!r}", code, out, err, root, None, None)


def _kind(path: Path) -> str:
    """What `path` is without following a last link: link, fifo, char, dir, file or absent."""
    import stat as st

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "absent"
    return next(
        (
            name
            for test, name in ((st.S_ISLNK, "link"), (st.S_ISFIFO, "fifo"), (st.S_ISCHR, "char"), (st.S_ISDIR, "dir"))
            if test(mode)
        ),
        "file",
    )


def _output_target(root: Path, rng: random.Random, in_store: bool) -> tuple[str, str]:
    """(argument, what) of a generated output path in `root`: a FIFO, a link (to a file, to nothing,
    to a folder), a folder, a device node copied from /dev/null or /dev/full (never the real ones),
    a file of the artefact or the input (also through a hard link), of the store (`in_store`), `-`,
    or a new file."""
    kind = rng.choice(
        [
            "fifo",
            "link_file",
            "link_nothing",
            "link_dir",
            "dir",
            "null",
            "full",
            "artefact",
            "input",
            "hard_link_input",
            "store",
            "dash",
            "new",
        ]
    )
    target = root / f"out-{kind}"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link_file":
        (root / "real.csv").write_text("kept?\n")
        target.symlink_to(root / "real.csv")
    elif kind == "link_nothing":
        target.symlink_to(root / "nowhere" / "x.csv")
    elif kind == "link_dir":
        target.symlink_to(root / "model")
    elif kind == "dir":
        target.mkdir()
    elif kind in ("null", "full"):
        try:
            os.mknod(target, 0o20666, os.makedev(1, 3 if kind == "null" else 7))
        except OSError:
            kind, target = "new", root / "out-new"
    elif kind == "artefact":
        target = root / "model" / rng.choice(["model.json", "manifest.json", "arrays.npz"])
    elif kind == "input":
        target = root / "docs.txt"
    elif kind == "store" and in_store:  # only report reads the store: predict may write where it is told
        target = root / "store" / rng.choice(["page.html", "_xialpha_store.json", "results"])
    elif kind == "store":
        kind = "new"
    elif kind == "hard_link_input":
        os.link(root / "docs.txt", target)
    return ("-" if kind == "dash" else str(target)), kind


def output_targets(campaign: Campaign, rng: random.Random, n: int) -> None:
    """predict --output and report --html to generated targets: a FIFO, device, link or folder keeps
    its kind, the artefact and the input keep their bytes (issue 35, finding 2)."""
    for _ in range(n):
        root = campaign.case_dir()
        report = rng.random() < 0.5
        target, kind = _output_target(root, rng, report)
        argv = (
            ["report", "store", "--html", target]
            if report
            else ["predict", "model", "--input", "docs.txt", "--output", target]
        )
        kind_before = _kind(Path(target)) if target != "-" else "-"
        model_before, docs_before = tree_digest(root / "model"), (root / "docs.txt").read_bytes()
        store_before = tree_digest(root / "store")
        before = campaign.snapshot(root / "store")
        reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
        try:
            code, out, err = cli(argv, root)
        finally:
            if reader is not None:
                os.close(reader)
        kind_after = _kind(Path(target)) if target != "-" else "-"
        findings = {
            "replaced_node": kind_before not in ("absent", "file") and kind_before != kind_after,
            # what the command reads: predict its artefact and input, report its store
            "read_file_written": (
                tree_digest(root / "model") != model_before or (root / "docs.txt").read_bytes() != docs_before
            )
            if argv[0] == "predict"
            else tree_digest(root / "store") != store_before,
            "not_one_line": code not in (0, None) and err.count("\n") != 1,
        }
        campaign.record(
            "output_targets",
            f"{argv[0]} -> {kind}",
            code,
            out,
            err,
            root,
            root / "store",
            before,
            findings,
        )


def _started(argv: list[str], root: Path) -> subprocess.Popen:
    """`xialpha ARGV` started in `root`, in a session of its own, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "xialpha.cli", *argv],
        cwd=root,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _outcome(child: subprocess.Popen, timeout: float) -> tuple[int | None, str, str]:
    """(exit code, or None when it did not end within `timeout` s and was killed, stdout, stderr)."""
    try:
        out, err = (b.decode("utf-8", "replace") for b in child.communicate(timeout=timeout))
        return child.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return None, "", ""


def signalled_cli(argv: list[str], cwd: Path, signum: int | None, delay: float) -> tuple[int | None, str, str]:
    """`cli`, with `signum` sent `delay` seconds after the start if it still runs then (None: no signal)."""
    child = _started(argv, cwd)
    if signum is not None:
        time.sleep(delay)
        if child.poll() is None:
            child.send_signal(signum)
    return _outcome(child, TIMEOUT_S)


def signals_at_start(campaign: Campaign, rng: random.Random, n: int) -> None:
    """SIGINT, SIGTERM or SIGHUP a random instant into a command (mostly while it imports): exit
    128 + signum and one line, or its own outcome if it ended first (issue 35, finding 4)."""
    commands = [
        ["store", "ls", "store"],
        ["store", "compact", "store"],
        ["select", "store"],
        ["certify", "store", "--selection", "{SEL}", "--test-split", "test"],
        ["report", "store"],
    ]
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        argv = [a.replace("{SEL}", campaign.selection) for a in rng.choice(commands)]
        signum = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        delay = rng.uniform(0.05, 1.5)
        before = campaign.snapshot(store)
        code, out, err = signalled_cli(argv, root, signum, delay)
        signalled = code == 128 + signum
        findings = {
            "killed_silently": code is not None and code < 0,
            "not_one_line": signalled and err.count("\n") != 1,
        }
        campaign.record(
            "signals_at_start",
            f"{' '.join(argv[:2])} {signal.Signals(signum).name} at {delay:.2f} s",
            code,
            out,
            err,
            root,
            store,
            before,
            findings,
            failed=code not in (0, 128 + signum),
        )


def _half_answering_server(stop: list) -> int:
    """A local HTTP server answering requests for /store (404: a store not created yet) and holding
    every other request: a store that passes the check made when it is opened, then stalls. Its port."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(256)
    stop.append(server)

    def answer(connection) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = connection.recv(65536)
            if not chunk:
                return
            request += chunk
        if request.split(b"\r\n", 1)[0].split(b" ")[1].split(b"?")[0] == b"/store":
            connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
        else:
            stop.append(connection)

    def accept() -> None:
        try:
            while True:
                threading.Thread(target=answer, args=(server.accept()[0],), daemon=True).start()
        except OSError:  # closed once the family is done
            return

    threading.Thread(target=accept, daemon=True).start()
    return server.getsockname()[1]


def _silent_server(stop: list) -> int:
    """A local socket that accepts every connection and never answers. Its port."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(256)
    stop.append(server)

    def accept() -> None:
        try:
            while True:
                stop.append(server.accept()[0])
        except OSError:
            return

    threading.Thread(target=accept, daemon=True).start()
    return server.getsockname()[1]


def stalled_store(campaign: Campaign, rng: random.Random, n: int) -> None:
    """store ls, select, report and store check against a remote store that stalls, under a random
    $XIALPHA_STORE_TIMEOUT: an S3 or GCS endpoint (pyarrow's clients) that accepts and never
    answers, or an http:// store (fsspec) that answers the check made when it is opened and then
    holds every request: the command ends in bounded time, one line (issue 35, finding 3)."""
    stop: list = []
    silent, half = _silent_server(stop), _half_answering_server(stop)
    stores = {
        "s3": f"s3://xialpha/store?endpoint_override=127.0.0.1:{silent}&scheme=http",
        "gcs": f"gs://xialpha/store?endpoint_override=127.0.0.1:{silent}&scheme=http",
        "http": f"http://127.0.0.1:{half}/store",
    }
    for _ in range(n):
        root = campaign.case_dir()
        kind = rng.choice(sorted(stores))
        uri = stores[kind]
        argv = rng.choice([["store", "ls", uri], ["select", uri], ["report", uri], ["store", "check", uri]])
        timeout = rng.choice([1, 2, 3, 4])
        env = {
            "AWS_ACCESS_KEY_ID": "x",
            "AWS_SECRET_ACCESS_KEY": "y",
            "AWS_EC2_METADATA_DISABLED": "true",
            "XIALPHA_STORE_TIMEOUT": str(timeout),
        }
        start = time.monotonic()
        code, out, err = run([sys.executable, "-m", "xialpha.cli", *argv], root, env, timeout=5 * timeout + 20)
        took = time.monotonic() - start
        campaign.record(
            "stalled_store",
            f"{kind} {argv[0]} {argv[1] if argv[0] == 'store' else ''} timeout {timeout} s: {took:.1f} s",
            code,
            out,
            err,
            root,
            None,
            None,
            {"not_one_line": code not in (0, None) and err.count("\n") != 1},
        )
    for item in stop:
        item.close()


def limits(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A sweep under a random low open-files limit (ulimit -n 12-40): one line naming the limit,
    exit 2, no store (issue 35, finding 4)."""
    import resource

    for _ in range(n):
        root = campaign.case_dir()
        files = rng.randrange(12, 41)

        def limited(files=files):
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

        full_env = {**os.environ, "PYTHONPATH": str(REPO)}
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "xialpha.cli",
                    "sweep",
                    "camp.toml",
                    "--store",
                    "new",
                    "--quiet",
                    "--workers",
                    "2",
                ],
                cwd=root,
                env=full_env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                preexec_fn=limited,
                start_new_session=True,
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            code, out, err = None, "", ""
        campaign.record(
            "limits",
            f"ulimit -n {files}",
            code,
            out,
            err,
            root,
            root / "new",
            (None, 0),
            {
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
                "limit_unnamed": code not in (0, None) and "ulimit -n" not in err,
            },
        )


# --- issue 42's families ---------------------------------------------------------------------------

# every code point str.splitlines breaks at but "\n" and "\r\n": inside a line, none ends a document
NOT_LINE_ENDS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def predict_line_breaks(campaign: Campaign, rng: random.Random, n: int) -> None:
    """predict on a generated .txt whose lines hold code points str.splitlines breaks at, with "\n"
    or "\r\n" endings, a final line break or none: `rows_wrong` unless the output has one row per
    input line that is not blank and its ids are the line numbers (issue 42, finding 2; issue 43.6)."""
    for _ in range(n):
        root = campaign.case_dir()
        lines = []
        for _ in range(rng.randrange(1, 30)):
            words = [rng.choice(["topic0", "topic1", "w1", "w7", "w12", ""]) for _ in range(rng.randrange(0, 6))]
            marks = rng.sample(NOT_LINE_ENDS, rng.randrange(0, 4))
            for mark in marks:
                words.insert(rng.randrange(len(words) + 1), mark)
            lines.append(" ".join(words) if rng.random() < 0.8 else "".join(words))
        ending = rng.choice(["\n", "\r\n"])
        text = ending.join(lines) + (ending if rng.random() < 0.7 else "")
        (root / "lines.txt").write_bytes(text.encode("utf-8"))
        out_format = rng.choice(["csv", "jsonl"])
        code, out, err = cli(["predict", "model", "--input", "lines.txt", "--format", out_format], root)
        if out_format == "csv":
            import csv
            import io

            ids = [row[0] for row in list(csv.reader(io.StringIO(out)))[1:]]
        else:
            ids = [json.loads(line)["id"] for line in out.splitlines() if line.strip()]
        # only "\n" ends a line; a blank line is no document (issue 43.6): the ids are the other lines' numbers
        expected = [str(number) for number, line in enumerate(lines, start=1) if line.strip()]
        campaign.record(
            "predict_line_breaks",
            f"{len(lines)} lines, {out_format}, {sum(map(text.count, NOT_LINE_ENDS))} inner breaks",
            code,
            out,
            err,
            root,
            None,
            None,
            {"rows_wrong": code == 0 and ids != expected},
        )


SIGNALS = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)
# an auto sweep (rounds of C) and a grid cut into path segments (1 category x 12 C on 4 workers)
SIGNAL_SPECS = {
    "auto": SPEC.replace("C = [0.5, 5.0]", 'C = "auto"').replace("workers = 1", "workers = 2"),
    "cut": SPEC.replace("C = [0.5, 5.0]", "C = [" + ", ".join(f"{0.01 * 2**k:g}" for k in range(12)) + "]")
    .replace("top_k = 2", "top_k = 1")
    .replace("workers = 1", "workers = 4"),
}


def _session_processes(session: int) -> list[int]:
    """The live processes of `session` (a case's command and what it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] != "Z" and int(fields[3]) == session:
                found.append(int(entry))
    return found


def auto_cut_signals(campaign: Campaign, rng: random.Random, n: int) -> None:
    """An auto sweep or a cut-path sweep, signalled a random instant into it (its start, its cluster's
    start, its rounds): SIGINT or SIGHUP to its whole process group (a terminal's Ctrl-C or hang-up),
    SIGTERM to the driver, or its worker processes SIGKILLed (lost workers): exit 128 + n and one line,
    or its own outcome; a lost worker at start one line (exit 1) or the sweep goes on (issue 42,
    finding 3). `left_running`: a process of the case's session alive 30 s after the driver ended.

    The instant is drawn over 0.5-45 s until a sweep of that kind has ended before its signal, then
    over 5-95% of the shortest such sweep, so that most signals land in a running sweep; a case whose
    sweep ended first says so ("ended before it")."""
    lasted: dict[str, float] = {}  # per kind, the shortest sweep that ended before its signal (s)
    for _ in range(n):
        root = campaign.case_dir()
        kind = rng.choice(sorted(SIGNAL_SPECS))
        (root / "s.toml").write_text(SIGNAL_SPECS[kind].replace('id = "camp"', f'id = "{kind}"'))
        store = root / "sigstore"
        what = rng.choice(["SIGINT group", "SIGHUP group", "SIGTERM driver", "kill workers"])
        delay = rng.uniform(0.05, 0.95) * lasted[kind] if kind in lasted else rng.uniform(0.5, 45.0)
        started = time.monotonic()
        child = _started(["sweep", "s.toml", "--store", str(store), "--quiet"], root)
        while child.poll() is None and time.monotonic() < started + delay:
            time.sleep(0.05)
        ended_first = child.poll() is not None
        if ended_first and child.returncode == 0:
            lasted[kind] = min(lasted.get(kind, math.inf), time.monotonic() - started)
        stored_before = result_rows(store) if (store / "_xialpha_store.json").exists() else 0
        signum = None
        if not ended_first:
            if what == "kill workers":
                for pid in _session_processes(child.pid):
                    if (
                        "multiprocessing.forkserver"
                        in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                        and pid != child.pid
                    ):
                        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                        if parent != child.pid:  # a worker forked from the fork server, not the server
                            with contextlib.suppress(ProcessLookupError):
                                os.kill(pid, signal.SIGKILL)
            else:
                signum = signal.Signals[what.split()[0]]
                with contextlib.suppress(ProcessLookupError):
                    (os.killpg if what.endswith("group") else os.kill)(child.pid, signum)
        code, out, err = _outcome(child, TIMEOUT_S * 3)
        deadline = time.monotonic() + 30
        while _session_processes(child.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _session_processes(child.pid)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        expected = {None: (0,), **{s: (0, 128 + s) for s in SIGNALS}}[signum]
        if what == "kill workers":
            expected = (0, 1)
        campaign.record(
            "auto_cut_signals",
            f"{kind}: {what} at {delay:.1f} s" + (" (ended before it)" if ended_first else ""),
            code,
            out,
            err,
            root,
            store,
            (None, stored_before),
            {
                "killed_silently": code is not None and code < 0,
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
                "left_running": bool(left),
                "unexpected_exit": code is not None and code not in expected,
            },
            failed=False,
        )


def _tampered_spec(rng: random.Random) -> tuple[str, str | bytes, dict]:
    """(what, a spec's text or bytes, environment) of a generated hostile spec: nested too deep, too
    large, a corpus or a grid that cannot fit (under a small $XIALPHA_MEMORY_LIMIT, or this machine's
    memory), a malformed limit, a NUL byte."""
    depth = rng.choice([17, 40, 900, 5000, 100_000])
    kinds = ["dotted", "arrays", "inline", "huge", "n_docs", "n_docs_limit", "grid", "bad_limit", "nul", "deep_values"]
    kind = rng.choice(kinds)
    base = SPEC
    nested = "[" * depth + "]" * depth
    if kind == "dotted":
        return f"[a.a...] {depth} deep", base + f"[{'.'.join(['a'] * depth)}]\nx = 1\n", {}
    if kind == "arrays":
        return f"array nested {depth}", base.replace("[cluster]", f"[extra]\nx = {nested}\n[cluster]"), {}
    if kind == "inline":
        return f"inline tables {depth}", base + f"y = {'{a = ' * depth}1{'}' * depth}\n", {}
    if kind == "huge":
        size = rng.choice([5, 40]) * 2**20
        return f"{size >> 20} MiB spec", base + "# " + "x" * size + "\n", {}
    if kind == "n_docs":
        n_docs = rng.choice([10**8, 5 * 10**8, 10**9])
        return f"n_docs = {n_docs:,}", base.replace("n_docs = 240", f"n_docs = {n_docs}"), {}
    if kind == "n_docs_limit":
        limited = {"XIALPHA_MEMORY_LIMIT": "20MiB"}
        return "n_docs = 200,000 under 20MiB", base.replace("n_docs = 240", "n_docs = 200000"), limited
    if kind == "grid":
        C = ", ".join(f"{0.001 * 1.01**k:.6g}" for k in range(rng.choice([2000, 4000])))
        limited = {"XIALPHA_MEMORY_LIMIT": "2MiB"}
        return "a grid beyond 2MiB", base.replace("C = [0.5, 5.0]", f"C = [{C}]\nj = [1.0, 2.0, 3.0]"), limited
    if kind == "bad_limit":
        value = rng.choice(["lots", "-5GB", "0", "1e999GB", "nan kB"])
        return f"XIALPHA_MEMORY_LIMIT={value}", base, {"XIALPHA_MEMORY_LIMIT": value}
    if kind == "nul":
        return "a NUL byte", base.encode().replace(b"seed = 5", b"seed = 5\x00"), {}
    inner = "[" * min(depth, 500) + "]" * min(depth, 500)
    return f"values {min(depth, 500)} deep", base + f"[corpus.categories.a]\nx = {inner}\n", {}


def spec_tampering(campaign: Campaign, rng: random.Random, n: int) -> None:
    """sweep --dry-run (or a sweep) of a generated hostile spec (`_tampered_spec`) into a copy of a
    swept store: one line naming the file, exit 2, the store unchanged, no RecursionError, no memory
    exhausted (`hang` within TIMEOUT_S) (issue 42, findings 4 and 5)."""
    for _ in range(n):
        root = campaign.case_dir()
        what, text, env = _tampered_spec(rng)
        path = root / "tampered.toml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        store = root / "store"
        argv = ["sweep", "tampered.toml", "--store", "store"] + (["--dry-run"] if rng.random() < 0.7 else ["--quiet"])
        before = campaign.snapshot(store)
        code, out, err = cli(argv, root, env)
        campaign.record(
            "spec_tampering",
            f"{what} ({argv[-1]})",
            code,
            out,
            err,
            root,
            store,
            before,
            {
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
                "file_unnamed": code == 2 and "tampered.toml" not in err and "XIALPHA_MEMORY_LIMIT" not in err,
            },
        )


def stalled_corpus(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A sweep (or its dry run) whose corpus is read over http:// from a server that accepts
    connections and holds every request, or answers some and holds the rest, under a random
    $XIALPHA_STORE_TIMEOUT: one line naming the corpus's key, exit 2, no store created, ended
    within 5 x the timeout + 90 s (issue 42, finding 5)."""
    stop: list = []
    servers = {"silent": _silent_server(stop), "half": _half_answering_server(stop)}
    for _ in range(n):
        root = campaign.case_dir()
        kind = rng.choice(sorted(servers))
        loader = rng.choice(["table", "svmlight"])
        path = f"http://127.0.0.1:{servers[kind]}/corpus/docs.{'jsonl' if loader == 'table' else 'svm'}"
        corpus = (
            f'loader = "table"\npath = "{path}"\n' if loader == "table" else f'loader = "svmlight"\npath = "{path}"\n'
        )
        spec = f'[sweep]\nid = "http"\n[corpus]\n{corpus}[svm]\nC = [1.0]\n[cluster]\nworkers = 1\n'
        (root / "http.toml").write_text(spec)
        timeout = rng.choice([1, 2, 3, 4])
        argv = ["sweep", "http.toml", "--store", "hstore-new", "--quiet"] + (
            ["--dry-run"] if rng.random() < 0.5 else []
        )
        start = time.monotonic()
        code, out, err = run(
            [sys.executable, "-m", "xialpha.cli", *argv],
            root,
            {"XIALPHA_STORE_TIMEOUT": str(timeout)},
            timeout=5 * timeout + 90,
        )
        took = time.monotonic() - start
        campaign.record(
            "stalled_corpus",
            f"{kind} {loader} {argv[-1]} timeout {timeout} s: {took:.1f} s",
            code,
            out,
            err,
            root,
            None,
            None,
            {
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
                "store_created": (root / "hstore-new").exists(),
                "key_unnamed": code == 2 and "corpus.path" not in err,
            },
        )
    for item in stop:
        item.close()


SEARCH_SNIPPET = """
import sys, warnings
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC
import xialpha.search as search
from xialpha.search import XiAlphaSearchCV

warnings.simplefilter("ignore")
fits = []
real_fit = search.fit_svm
search.fit_svm = lambda *a, **k: fits.append(1) or real_fit(*a, **k)
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 4))
y = (X[:, 0] > 0).astype(int)
docs = [f"word{{i % 3}} other{{i}}" for i in range(60)]
estimator, grid, X, y = {estimator}, {grid}, {X}, {y}
try:
    XiAlphaSearchCV(estimator, grid).fit(X, y)
except (ValueError, TypeError) as exc:
    text = str(exc)
    named = any(text.startswith(name) for name in ("param_grid", "estimator", "X", "y", "X, y"))
    print("RAISED" if named else "UNNAMED", "after fits" if fits else "", type(exc).__name__, text[:200],
          file=sys.stderr)
    sys.exit(2)
except Exception as exc:
    print("Traceback (most recent call last): (fit raised)", type(exc).__name__, str(exc)[:200], file=sys.stderr)
    sys.exit(1)
"""
SEARCH_ESTIMATORS = [
    "SVC()",
    "SVC(kernel='rbf')",
    "SVC(kernel='poly', degree=2)",
    "LinearSVC(loss='hinge')",
    "LinearSVC()",
    "SVC(kernel='precomputed')",
    "make_pipeline(TfidfVectorizer(), LinearSVC(loss='hinge'))",
    "SVC(kernel=lambda a, b: a @ b.T)",
]
SEARCH_GRIDS = [
    "[]",
    "{}",
    "{'C': []}",
    "{'C': [1.0, 'auto']}",
    "{'C': 'auto'}",
    "{'C': 'big'}",
    "{'C': 0.5}",
    "{'C': [-1.0]}",
    "{'C': [float('nan')]}",
    "{'C': [True]}",
    "{'C': [None]}",
    "{'gama': [0.1]}",
    "[{'C': [1.0]}, 5]",
    "{'gamma': ['x'], 'C': [1.0]}",
    "{'class_weight': [{0: -1}], 'C': [1.0]}",
    "{'tol': [0.0], 'C': [1.0]}",
    "{'linearsvc__C': [1.0, 'auto']}",
    "{'linearsvc__C': [0.1, 1.0]}",
    "None",
    "{'C': [0.1, 1.0]}",
    "{'C': np.array([0.1, 1.0])}",
    "{'C': range(1, 3)}",
    "'C'",
    "5",
]
SEARCH_DATA = [
    ("X", "y"),
    ("docs", "y"),
    ("np.array(docs).reshape(-1, 1)", "y"),
    ("None", "y"),
    ("X", "None"),
    ("X", "np.c_[y, y]"),
    ("X", "y + 0.5"),
    ("X[:30]", "y"),
    ("np.where(X > 1, np.nan, X)", "y"),
    ("X", "y % 1"),
    ("'one document'", "y"),
    ("X", "np.arange(60) % 3"),
    ("X.astype(object)", "y"),
    ("[[1, 'a']] * 60", "y"),
]


def hostile_search(campaign: Campaign, rng: random.Random, n: int) -> None:
    """XiAlphaSearchCV(estimator, param_grid).fit(X, y) with a generated hostile estimator, grid or
    data: it fits, or raises a ValueError/TypeError whose message starts with the parameter it is
    about (`traceback_unnamed` otherwise), before any candidate is fitted where the fault is in its
    arguments (`fitted_before_refusal`) (issue 42, finding 6)."""
    for _ in range(n):
        root = campaign.case_dir()
        estimator, grid = rng.choice(SEARCH_ESTIMATORS), rng.choice(SEARCH_GRIDS)
        X, y = rng.choice(SEARCH_DATA)
        snippet = SEARCH_SNIPPET.format(estimator=estimator, grid=grid, X=X, y=y)
        code, out, err = run([sys.executable, "-c", snippet], root)
        campaign.record(
            "hostile_search",
            f"{estimator[:30]} {grid[:40]} X={X[:20]} y={y[:14]}",
            code,
            out,
            err,
            root,
            None,
            None,
            {"traceback_unnamed": "UNNAMED" in err, "fitted_before_refusal": "after fits" in err},
        )


# --- the store's side of trust (issues 42.1, 44.1, 44.2) ------------------------------------------

# A child process beside a reader: rewrites 3 result rows as they are (a newer file of the same
# values) and ends the sweep as a sweep ends (`finish_sweep`: compaction, summary), or compacts the
# whole store as `xialpha store compact` does, until the file argv[2] exists; "ready" once it has
# done one of each. The answers stay the same, the files keep changing.
CHURN = """
import os, sys
from xialpha.storage.arrow_schema import DATASETS
from xialpha.storage.opening import open_store

store, done = open_store(sys.argv[1], create=True, writable=True), 0
while not os.path.exists(sys.argv[2]):
    store.datasets.write_results(store.datasets.read_results("camp", include_failed=True).slice(0, 3))
    if done % 2:
        store.finish_sweep("camp")
    else:
        for dataset in DATASETS:
            store.compact(dataset)
    done += 1
    if done == 2:
        print("ready", flush=True)
"""
RACE_READERS = [
    ["select", "store", "--format", "csv"],
    ["select", "store", "--global", "--format", "csv"],
    ["store", "ls", "store", "--format", "csv"],
    ["report", "store"],
    ["compare", "--store", "store", "{SEL}", "{SEL}"],
    ["select", "store", "--save"],  # the same selection again: its id
]


_TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\+00:00|Z)?")


def _steady(output: str, since: datetime.datetime) -> str:
    """`output` without what differs from run to run: the id of a selection made now, and times
    from `since` on (the selection's own `created_at`); the stored rows' times are kept."""

    def now_or_kept(match: re.Match) -> str:
        try:
            moment = datetime.datetime.fromisoformat(match.group(0).replace("Z", "+00:00"))
        except ValueError:
            return match.group(0)
        moment = moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
        return "<now>" if moment >= since.replace(second=0, microsecond=0) else match.group(0)

    return _TIME.sub(now_or_kept, re.sub(r"sel-[0-9A-Za-z]+-[0-9a-f]+", "sel-", output))


def compaction_races(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A reading command run alone, then 2-4 times while another process keeps compacting the
    store and ending the sweep (rows rewritten as they are): the same output every time, and no
    "skipped ... unreadable" (issue 42, item 1: `wrong_under_concurrency`, `skipped_replaced`)."""
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        argv = [part.replace("{SEL}", campaign.selection) for part in rng.choice(RACE_READERS)]
        since = datetime.datetime.now(datetime.UTC)
        alone = cli(argv, root)
        before = campaign.snapshot(store)
        stop = root / "stop"
        churn = subprocess.Popen(
            [sys.executable, "-c", CHURN, str(store), str(stop)],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        ready = churn.stdout.readline().strip() == "ready" if churn.stdout else False
        outcomes = [cli(argv, root) for _ in range(rng.randint(2, 4))] if ready else []
        stop.touch()
        try:
            _, churn_err = churn.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(churn.pid, signal.SIGKILL)
            _, churn_err = churn.communicate()
        wrong = [o for o in outcomes if (o[0], _steady(o[1], since)) != (alone[0], _steady(alone[1], since))]
        code, out, err = wrong[0] if wrong else (outcomes[-1] if outcomes else alone)
        campaign.record(
            "compaction_races",
            f"{' '.join(argv[:3])} x{len(outcomes)} beside compactions",
            code,
            out,
            err + ("" if ready else f"the compacting process did not start: {churn_err[-300:]}"),
            root,
            store,
            before,
            {
                "wrong_under_concurrency": bool(wrong) or not ready,
                "skipped_replaced": any("skipped" in o[2] for o in outcomes),
            },
            failed=False,  # the compacting process changes the store's files, by design; its rows stay
        )


def _forged_summary(root: Path, rng: random.Random) -> str:
    """Change the camp sweep's summary (or its data file under it) in one generated way; what was done."""
    partition = root / "store" / "results" / "sweep_id=camp"
    path = partition / "_summary.json"
    content = json.loads(path.read_text())
    kind = rng.choice(
        [
            "count",
            "date",
            "nesting",
            "other_sweep",
            "zero_keys",
            "grid",
            "type",
            "huge",
            "rewritten_file",
            "not_json",
        ]
    )
    if kind == "count":
        field = rng.choice(["rows_ok", "rows_failed", "categories", "configs", "stored_keys"])
        content[field] = rng.choice([-5, "inf", 1e308, 2**70, None, True, 3.5, [], "12"])
        what = f"{field}={content[field]!r}"
    elif kind == "date":
        field = rng.choice(["first_created_at", "last_created_at"])
        content[field] = rng.choice(
            ["Time data", "2026-13-45T00:00:00+00:00", "9999-01-01T00:00:00+00:00", "2026-01-01", "", 5, "x" * 10000]
        )
        what = f"{field}={str(content[field])[:30]!r}"
    elif kind == "nesting":
        depth = rng.choice([100, 5000, 200000])
        path.write_text(
            json.dumps(content).replace('"grid": {', '"grid": {"deep": ' + "[" * depth + "]" * depth + ", ")
        )
        return f"nested {depth} deep"
    elif kind == "other_sweep":
        content.update(sweep_id=rng.choice(["hostile", "other", ""]))
        what = f"sweep_id={content['sweep_id']!r}"
    elif kind == "zero_keys":
        content.update(stored_keys=0, rows_ok=0, rows_failed=0)
        what = "stored_keys 0"
    elif kind == "grid":
        name = rng.choice(["C", "j", "rho", "category", "kernel_id"])
        content["grid"][name] = rng.choice([[], [float("inf")], ["x"] * 3, [[1]], {"a": 1}, [1e9]])
        what = f"grid {name}={str(content['grid'][name])[:30]}"
    elif kind == "type":
        content = rng.choice([[], "summary", 5, None, {"format": content["format"]}])
        what = f"a {type(content).__name__}"
    elif kind == "huge":
        path.write_bytes(b" " * (65 << 20))
        return "65 MiB of spaces"
    elif kind == "rewritten_file":
        import pyarrow.parquet as pq

        (data,) = partition.glob("*.parquet")
        table = pq.read_table(data)
        pq.write_table(table.slice(rng.randint(1, max(1, table.num_rows - 1))), data, compression="zstd")
        return "its data file rewritten with fewer rows"
    else:
        path.write_bytes(rng.choice([b"{", b"\xff\xfe", b"", b"null", b"[1, 2]"]))
        return "not JSON"
    path.write_text(json.dumps(content))
    return what


SUMMARY_READERS = [
    ["store", "ls", "store", "--format", "csv"],
    ["select", "store", "--format", "csv"],
    ["report", "store"],
    ["select", "store", "--save"],
]


def summary_tampering(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A sweep's summary forged (counts, dates, grid, nesting, size, another sweep's, its data file
    rewritten in place), then store ls, select, report or select --save: the output of a copy with
    no summary at all (the rows'), one line of warning, no traceback (issues 42.4, 44.1:
    `summary_trusted`, `not_one_line`)."""
    for _ in range(n):
        root = campaign.case_dir()
        what = _forged_summary(root, rng)
        truth = root / "truth"
        truth.mkdir()
        shutil.copytree(root / "store", truth / "store", symlinks=True)
        (truth / "store" / "results" / "sweep_id=camp" / "_summary.json").unlink()
        argv = rng.choice(SUMMARY_READERS)
        before = campaign.snapshot(root / "store")
        since = datetime.datetime.now(datetime.UTC)
        expected = cli(argv, truth)
        code, out, err = cli(argv, root)
        campaign.record(
            "summary_tampering",
            f"{what}: {' '.join(argv[:2])}",
            code,
            out,
            err,
            root,
            root / "store",
            before,
            {
                "summary_trusted": (code, _steady(out, since)) != (expected[0], _steady(expected[1], since)),
                "not_one_line": len([line for line in err.splitlines() if "_summary.json" in line]) > 1
                or err.count("\n") > 1 + expected[2].count("\n"),
            },
        )


SPECIAL_PLACES = [
    "results/sweep_id=camp/_summary.json",
    "_xialpha_store.json",
    "results/sweep_id=camp/part-s0000000000000009-x.parquet",
    "examples/sweep_id=camp/part-s0000000000000009-x.parquet",
    "certifications/_claims/test-set-{FP}.heartbeat.json",
]
SPECIAL_READERS = [
    ["store", "ls", "store"],
    ["select", "store"],
    ["report", "store"],
    ["compare", "--store", "store", "{SEL}", "{SEL}"],
    ["store", "check", "store"],
    ["certify", "store", "--selection", "{SEL}", "--test-split", "test", "--draws", "1000"],
]


def special_files(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A FIFO, a copied device node or a link to one where the store keeps a file (a summary, the
    marker, a data file, a claim's heartbeat), then a reading command, sometimes sent SIGTERM after
    a second: it ends at once, exit 2 (or 143) and one line, naming the file where it opened it
    (issue 44, item 2: `hang` within TIMEOUT_S, `not_one_line`, `unnamed`)."""
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        place = rng.choice(SPECIAL_PLACES).replace("{FP}", "0" * 16)
        target = store / place
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.unlink()
        kind = rng.choice(["fifo", "link_fifo", "null", "link_zero", "link_null"])
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "link_fifo":
            os.mkfifo(root / "a-fifo")
            target.symlink_to(root / "a-fifo")
        elif kind == "null":
            try:
                os.mknod(target, 0o20666, os.makedev(1, 3))
            except OSError:
                kind = "link_null"
        if kind in ("link_zero", "link_null"):
            target.symlink_to("/dev/zero" if kind == "link_zero" else "/dev/null")
        argv = [a.replace("{SEL}", campaign.selection) for a in rng.choice(SPECIAL_READERS)]
        signalled = rng.random() < 0.3
        code, out, err = signalled_cli(argv, root, signal.SIGTERM if signalled else None, 1.0)
        campaign.record(
            "special_files",
            f"{kind} at {place.split('/')[-1][:30]}: {' '.join(argv[:2])}{' SIGTERM' if signalled else ''}",
            code,
            out,
            err,
            root,
            None,  # the node is not the store's to keep as it was
            None,
            {
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
                "unnamed": code not in (0, None, 128 + signal.SIGTERM) and place.split("/")[-1] not in err,
                "blocked_then_killed": code is not None and code < 0,
            },
        )


# --- issue 48's families ---------------------------------------------------------------------------

STORES = ("store", "hstore")  # the stores of a case's copy, which no writer may write into


def _stores_digest(root: Path) -> tuple:
    return tuple(tree_digest(root / name) for name in STORES)


def _output_in_store(root: Path, rng: random.Random) -> str:
    """A generated path that is, or lies in, a store (or gets there through a link or "..")."""
    part = next((root / "store" / "results" / "sweep_id=camp").glob("*.parquet")).name
    kind = rng.choice(
        [
            "marker",
            "results",
            "summary",
            "new_in_store",
            "results_dir",
            "store_dir",
            "link_marker",
            "link_dir",
            "link_results",
            "other_store",
            "dotdot",
            "absolute",
            "examples_dir",
        ]
    )
    if kind == "link_marker":
        (root / "lnk").symlink_to(root / "store" / "_xialpha_store.json")
        return "lnk"
    if kind == "link_dir":
        (root / "into").symlink_to(root / "store")
        return "into/new.html"
    if kind == "link_results":
        (root / "lnk").symlink_to(root / "store" / "results" / "sweep_id=camp" / part)
        return "lnk"
    return {
        "marker": "store/_xialpha_store.json",
        "results": f"store/results/sweep_id=camp/{part}",
        "summary": "store/results/sweep_id=camp/_summary.json",
        "new_in_store": "store/page.html",
        "results_dir": "store/results",
        "store_dir": "store",
        "other_store": "hstore/_xialpha_store.json",
        "dotdot": "model/../store/_xialpha_store.json",
        "absolute": str(root / "store" / "_xialpha_store.json"),
        "examples_dir": "store/examples/sweep_id=camp/new",
    }[kind]


OUTPUT_WRITERS = {
    "report --html": lambda t: ["report", "store", "--html", t],
    "report --html --watch": lambda t: ["report", "store", "--html", t, "--watch", "1"],
    "api report(html=)": lambda t: f"xialpha.report(STORE, html={t!r})",
    "select --refit": lambda t: ["select", "store", "--refit", t],
    "predict --output": lambda t: ["predict", "model", "--input", "docs.txt", "--output", t],
    "fetch --dest": lambda t: ["fetch", "reuters21578", "--dest", t, "--from", "no-such-copy.tar.gz"],
}


def output_paths(campaign: Campaign, rng: random.Random, n: int) -> None:
    """Every writer of a user's path (report --html, with --watch, the API's report(html=), select
    --refit, predict --output, fetch --dest) pointed into a store: at its marker, its results files,
    a new file in it, its directories, through a link to a file or a folder, "..", another store:
    refused, no store's byte changed, whatever the exit (issue 48, item 1: `store_written`)."""
    for _ in range(n):
        root = campaign.case_dir()
        target = _output_in_store(root, rng)
        writer = rng.choice(sorted(OUTPUT_WRITERS))
        command = OUTPUT_WRITERS[writer](target)
        before, digests = campaign.snapshot(root / "store"), _stores_digest(root)
        if isinstance(command, str):
            snippet = "import re\n" + API_SNIPPET.format(sel=campaign.selection, call=command)
            code, out, err = run([sys.executable, "-c", snippet], root, timeout=30)
        else:  # a --watch that is not refused watches the ended sweep until killed: 30 s is a hang
            code, out, err = run([sys.executable, "-m", "xialpha.cli", *command], root, timeout=30)
        campaign.record(
            "output_paths",
            f"{writer} -> {target}",
            code,
            out,
            err,
            root,
            root / "store",
            before,
            {
                "store_written": _stores_digest(root) != digests,
                "not_refused": code == 0,
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
            },
        )


KILL_SPEC = SPEC.replace("top_k = 2", "top_k = 3").replace('id = "camp"', 'id = "kill"')
KILL_SNIPPET = """
import os, signal, sys
from dask.distributed import Client
import xialpha
from xialpha.storage.store import ResultStore

KILL_AT, WHEN = int(sys.argv[1]), sys.argv[2]  # the results write to die at (0: none), before or after it
calls = [0]
real_write = ResultStore.write_results


def write_results(self, rows):
    calls[0] += 1
    if calls[0] == KILL_AT and WHEN == "before":  # its vectors written, its results not
        os.kill(os.getpid(), signal.SIGKILL)
    path = real_write(self, rows)
    if calls[0] == KILL_AT and WHEN == "after":
        os.kill(os.getpid(), signal.SIGKILL)
    return path


ResultStore.write_results = write_results
if __name__ == "__main__":
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        xialpha.sweep("kill.toml", store="kstore", client=client, quiet=True)
    print("writes", calls[0])
"""


def killed_between_writes(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A sweep (3 categories x 2 C, an in-process Dask client) SIGKILLed between a batch's
    examples and results writes, just after a results write, or at a random instant; then resumed:
    every ok key has its per-example vectors, every result is stored, and select tests every
    choice (issue 48, item 3: `vectors_lost`, `rows_missing`, `untested`, `resume_failed`)."""
    from xialpha.storage.opening import open_store

    for _ in range(n):
        root = campaign.case_dir()
        (root / "kill.toml").write_text(KILL_SPEC)
        store = root / "kstore"
        when = rng.choice(["before", "after", "random"])
        command = [sys.executable, "-c", KILL_SNIPPET]
        if when == "random":
            delay = rng.uniform(0.5, 10.0)
            child = subprocess.Popen(
                [*command, "0", "none"],
                cwd=root,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=delay)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            what = f"SIGKILL at {delay:.1f} s"
        else:
            at = rng.randint(1, 3)
            killed = run([*command, str(at), when], root, timeout=TIMEOUT_S)
            what = f"SIGKILL {when} results write {at} (exit {killed[0]})"
        code, out, err = run([*command, "0", "none"], root, timeout=TIMEOUT_S * 2)
        findings = {"resume_failed": code != 0}
        if code == 0:
            queries = open_store(str(store), create=False, writable=True)
            done = queries.done_keys("kill")
            vectors = queries.read_examples(done, sweep_id="kill")
            stored = queries.read_results_df(include_failed=True)
            chosen = cli(["select", "kstore", "--format", "json"], root)
            rows = json.loads(chosen[1]) if chosen[0] == 0 else []
            findings.update(
                vectors_lost=bool(done - set(vectors)),
                rows_missing=len(stored) != 6 or len(done) != 6,
                untested=chosen[0] != 0 or not rows or any(row.get("untested") for row in rows),
            )
            err += chosen[2]
            what += f", resumed: {len(done)} ok keys, {len(vectors)} with vectors"
        campaign.record("killed_between_writes", what, code, out, err, root, None, None, findings, failed=False)


CSV_JSON_LABELS = [
    "cr\rhere",
    "line\nbreak",
    "semi;colon",
    "\x9bcsi",
    "=1+1",
    "+sum",
    "-neg",
    "@at",
    "'apos",
    'dq",comma',
]
CSV_JSON_SPEC = (
    '[sweep]\nid = "labels"\n[corpus]\nloader = "table"\npath = "labels.jsonl"\nsplit_column = "split"\n'
    'train_split = "train"\ntest_split = "test"\n[corpus.categories]\ntop_k = 10\n[svm]\nC = [0.5, 5.0]\n'
    "[cluster]\nworkers = 1\n"
)
SWEEP_SNIPPET = """
import sys
from dask.distributed import Client
import xialpha
if __name__ == "__main__":
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        xialpha.sweep(sys.argv[1], store=sys.argv[2], client=client, quiet=True)
"""
CSV_JSON_COMMANDS = [
    ["select", "cstore", "--format", "{F}"],
    ["select", "cstore", "--format", "{F}", "--wide"],
    ["select", "cstore", "--format", "{F}", "--global"],
    ["select", "cstore", "--format", "{F}", "--cost-fn", "{COST}"],
    ["select", "cstore", "--format", "{F}", "--cost-fn", "{COST}", "--cost-fp", "{COST}"],
    ["select", "cstore", "--format", "{F}", "--global", "--average", "micro", "--cost-fn", "{COST}"],
    ["select", "cstore", "--format", "{F}", "--global", "--average", "macro", "--cost-fp", "{COST}"],
    ["store", "ls", "cstore", "--format", "{F}"],
    ["predict", "cmodel", "--input", "docs.txt", "--format", "{P}"],
]
COSTS = ["1e308", "1.7976931348623157e308", "1e-308", "5e-324", "0", "1e300", "1e15"]


def _csv_json_base(campaign: Campaign) -> None:
    """A store (and its refit model) of a table corpus whose categories are CSV_JSON_LABELS, in the base."""
    base = campaign.base
    if (base / "cstore").exists():
        return
    rng = random.Random(13)
    with (base / "labels.jsonl").open("w", encoding="utf-8") as stream:
        for i in range(300):
            label = CSV_JSON_LABELS[i % len(CSV_JSON_LABELS)]
            text = " ".join([f"topic{i % len(CSV_JSON_LABELS)}"] * 3 + [f"w{rng.randrange(40)}" for _ in range(8)])
            stream.write(json.dumps({"text": text, "label": [label], "split": "test" if i % 4 == 0 else "train"}))
            stream.write("\n")
    (base / "labels.toml").write_text(CSV_JSON_SPEC)
    campaign._must(run([sys.executable, "-c", SWEEP_SNIPPET, "labels.toml", "cstore"], base))
    campaign._must(cli(["select", "cstore", "--refit", "cmodel"], base))


def _undone(cell: str) -> str:
    """A CSV text cell with the formula rule undone (`xialpha.reports.records.csv_cell`)."""
    return cell[1:] if cell.startswith("'") else cell


def _csv_json_findings(argv: list[str], out: str) -> dict:
    import csv
    import io

    labels = set(CSV_JSON_LABELS)
    names: list[str] = []
    broken = invalid = formula = False
    if "csv" in argv:
        rows = list(csv.reader(io.StringIO(out, newline="")))
        header = rows[0] if rows else []
        broken = any(len(row) != len(header) for row in rows[1:])
        for row in rows[1:]:
            for column, cell in zip(header, row):
                if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                    with contextlib.suppress(ValueError):
                        float(cell)
                        continue
                    formula = True
                if column == "category":
                    names.append(_undone(cell))
                elif column == "categories" and argv[0] == "predict":  # a JSON list of names
                    try:
                        listed = json.loads(_undone(cell))
                    except ValueError:
                        listed = None
                    broken = broken or not isinstance(listed, list)
                    names.extend(listed if isinstance(listed, list) else [])
    else:

        def refuse(token: str):
            raise ValueError(f"not JSON: {token}")

        try:
            documents = [json.loads(line, parse_constant=refuse) for line in out.splitlines() if line.strip()]
            if argv[0] != "predict":
                documents = json.loads(out, parse_constant=refuse) if out.strip() else []
        except ValueError:
            invalid, documents = True, []
        for document in documents if isinstance(documents, list) else [documents]:
            if isinstance(document, dict):
                if isinstance(document.get("category"), str):
                    names.append(document["category"])
                listed = document.get("categories") if argv[0] == "predict" else None  # store ls: a count
                if isinstance(listed, list):
                    names.extend(c for c in listed if isinstance(c, str))
    return {
        "csv_broken": broken,
        "json_invalid": invalid,
        "names_changed": any(name not in labels for name in names),
        "formula_live": formula,
        "raw_control": "json" in argv and bool(CONTROL.search(out)),
    }


def hostile_csv_json(campaign: Campaign, rng: random.Random, n: int) -> None:
    """select (per category, --wide, --global, cost extremes), store ls and predict as CSV or JSON on
    a store whose categories hold \\r, \\n, ;, C1 and formula starts: the CSV reads back (Python's
    csv) with as many fields per row as its header and the category names as they are (the
    formula rule's apostrophe undone; predict's list cell a JSON list); the JSON parses with no
    Infinity or NaN token and no raw C1; no live formula cell (issue 48, item 8: `csv_broken`,
    `names_changed`, `json_invalid`, `raw_control`, `formula_live`)."""
    _csv_json_base(campaign)
    for _ in range(n):
        root = campaign.case_dir()
        out_format = rng.choice(["csv", "json"])
        argv = [
            a.replace("{F}", out_format)
            .replace("{P}", "jsonl" if out_format == "json" else "csv")
            .replace("{COST}", rng.choice(COSTS))
            for a in rng.choice(CSV_JSON_COMMANDS)
        ]
        before = campaign.snapshot(root / "cstore")
        code, out, err = cli(argv, root)
        findings = _csv_json_findings(argv, out) if code == 0 else {}
        campaign.record(
            "hostile_csv_json",
            " ".join(argv[:2] + argv[3:]),
            code,
            out,
            err,
            root,
            root / "cstore",
            before,
            {**findings, "not_one_line": code not in (0, None) and err.count("\n") != 1},
        )


JSON_LIMITS = {  # where the store keeps a bounded JSON file, its limit (bytes) and the commands that read it
    "marker": ("_xialpha_store.json", 64 * 1024, [["store", "ls", "store"], ["select", "store"]]),
    "summary": ("results/sweep_id=camp/_summary.json", 64 << 20, [["store", "ls", "store"], ["select", "store"]]),
    "claim": (
        "selections/_claims/{CLAIM}/claim.json",
        1 << 20,
        [["select", "store", "--save"], ["store", "check", "store"]],
    ),
}
JSON_CHECK_S = 30  # a command over the worst bounded JSON file ends within this (under a loaded machine)


def hostile_json_files(campaign: Campaign, rng: random.Random, n: int) -> None:
    """The store's marker, a summary or a selection's claim replaced by the quadratic-regex input
    (`{"x": "` then `\\"` repeated, no closing quote) at its size limit, a byte under, half and a
    16th of it, then a command that reads it: ended within JSON_CHECK_S, one line (issue 48, item
    2: `quadratic`, `hang`, `not_one_line`)."""
    for _ in range(n):
        root = campaign.case_dir()
        store = root / "store"
        which = rng.choice(sorted(JSON_LIMITS))
        place, limit, readers = JSON_LIMITS[which]
        if "{CLAIM}" in place:
            place = str(next((store / "selections" / "_claims").glob("*/claim.json")).relative_to(store))
        size = rng.choice([limit, limit - 1, limit // 2, limit // 16])
        head = b'{"x": "'
        body = head + b'\\"' * ((size - len(head)) // 2)
        (store / place).write_bytes(body + b"a" * (size - len(body)))
        argv = rng.choice(readers)
        before = campaign.snapshot(store) if which != "marker" else (tree_digest(store), 0)
        start = time.monotonic()
        code, out, err = run([sys.executable, "-m", "xialpha.cli", *argv], root, timeout=TIMEOUT_S)
        took = time.monotonic() - start
        campaign.record(
            "hostile_json_files",
            f"{which} of {size:,} bytes: {' '.join(argv[:2])}: {took:.1f} s",
            code,
            out,
            err,
            root,
            store if which != "marker" else None,
            before,
            {
                "quadratic": took > JSON_CHECK_S,
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
            },
        )


LINK_READERS = [
    ["store", "ls", "store", "--format", "csv"],
    ["store", "ls", "store"],
    ["select", "store", "--format", "csv"],
    ["select", "store", "--global", "--format", "csv"],
    ["report", "store"],
    ["store", "check", "store"],
]


def _link_out(root: Path, outside: Path, rng: random.Random) -> str:
    """One link from the store's copy in `root` to `outside` (a directory beside it); what it is."""
    results, examples = root / "store" / "results" / "sweep_id=camp", root / "store" / "examples" / "sweep_id=camp"
    kind = rng.choice(["partition_dir", "examples_dir", "summary", "part_file", "other_sweep", "marker"])
    outside.mkdir()
    if kind == "partition_dir":
        for part in results.glob("*.parquet"):
            shutil.copy(part, outside / part.name.replace("part-", "part-x"))
        (results / "ext").symlink_to(outside)
    elif kind == "examples_dir":
        for part in examples.glob("*.parquet"):
            shutil.copy(part, outside / part.name.replace("part-", "part-x"))
        (examples / "ext").symlink_to(outside)
    elif kind == "summary":
        content = json.loads((results / "_summary.json").read_text())
        content["sweep_id"] = SECRET
        (outside / "summary.json").write_text(json.dumps(content) + "\n" + SECRET * 40)
        (results / "_summary.json").unlink()
        (results / "_summary.json").symlink_to(outside / "summary.json")
    elif kind == "part_file":
        part = next(results.glob("*.parquet"))
        shutil.copy(part, outside / "copy.parquet")
        (results / part.name.replace("part-", "part-y")).symlink_to(outside / "copy.parquet")
    elif kind == "other_sweep":
        shutil.copytree(results, outside / "sweep", symlinks=True)
        (root / "store" / "results" / "sweep_id=ghost").symlink_to(outside / "sweep")
    else:
        (outside / "marker.json").write_text(json.dumps({"secret": SECRET}) + "\n")
        (root / "store" / "_xialpha_store.json").rename(outside / "real-marker.json")
        (root / "store" / "_xialpha_store.json").symlink_to(outside / rng.choice(["marker.json", "real-marker.json"]))
    return kind


def links_out_of_store(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A link in the store (a partition's subfolder, an examples folder, a summary, a data file, a
    whole sweep, the marker) to a folder outside it holding copies of the store's files or a
    secret: reads give what a copy without the link gives (rows not counted twice, no choice
    changed) and echo nothing from outside (issue 48, item 5: `read_outside`, `secret`)."""
    for _ in range(n):
        root = campaign.case_dir()
        truth = root.with_name(root.name + "-truth")
        shutil.copytree(root, truth, symlinks=True)
        outside = root.with_name(root.name + "-outside")
        kind = _link_out(root, outside, rng)
        argv = rng.choice(LINK_READERS)
        since = datetime.datetime.now(datetime.UTC)
        expected = cli(argv, truth)
        before = campaign.snapshot(root / "store") if kind != "marker" else (tree_digest(root / "store"), 0)
        code, out, err = cli(argv, root)
        outside_read = (code, _steady(out, since)) != (expected[0], _steady(expected[1], since))
        if argv[:2] == ["store", "check"] and code == 1 and "outside" in out:  # the link reported, not read
            outside_read = False
        if kind == "marker":  # no store without its own marker: refused, as the truth is not
            outside_read = code == 0
        campaign.record(
            "links_out_of_store",
            f"{kind}: {' '.join(argv[:3])}",
            code,
            out,
            err,
            root,
            root / "store" if kind != "marker" else None,
            before,
            {"read_outside": outside_read, "not_one_line": code not in (0, None) and err.count("\n") != 1},
        )
        shutil.rmtree(truth, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)


def _flip_data_pages(path: Path, rng: random.Random, count: int) -> str:
    """Flip `count` bytes of a Parquet file's data pages, its footer (and length and magic) intact:
    anywhere in them, or (half the time) in the first bytes of one column's page, its header."""
    import pyarrow.parquet as pq

    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    end = len(data) - 8 - footer
    if rng.random() < 0.5:
        group = pq.ParquetFile(path).metadata.row_group(0)
        column = group.column(rng.randrange(group.num_columns))
        start = column.data_page_offset
        places = sorted(rng.sample(range(start, min(start + 16, end)), min(count, 16, end - start)))
        where = f"{column.path_in_schema}'s page header"
    else:
        places = sorted(rng.sample(range(4, end), min(count, end - 4)))
        where = f"[4, {end})"
    for place in places:
        data[place] ^= rng.choice([0x01, 0x80, 0xFF, 0x55])
    path.write_bytes(bytes(data))
    return f"{len(places)} bytes in {where}"


def tampered_data_pages(campaign: Campaign, rng: random.Random, n: int) -> None:
    """Bytes flipped in the data pages of a sweep's results file (its footer intact; its summary
    kept or removed), then store ls and select: store ls lists what select reads, or warns (issue
    48, item 6: `ls_trusts_unread`: select skips the file or finds no results while store ls lists
    the rows of an untouched copy, with no warning)."""
    for _ in range(n):
        root = campaign.case_dir()
        truth_ls = cli(["store", "ls", "store", "--format", "csv"], root)
        part = next((root / "store" / "results" / "sweep_id=camp").glob("*.parquet"))
        what = _flip_data_pages(part, rng, rng.choice([1, 1, 4, 16, 64]))
        if rng.random() < 0.4:  # no summary to find the flip (one an older xialpha wrote is not used either)
            (part.parent / "_summary.json").unlink()
            what += ", no summary"
        before = (tree_digest(root / "store"), 0)
        ls = cli(["store", "ls", "store", "--format", "csv"], root)
        chosen = cli(["select", "store", "--format", "csv"], root)
        select_refused = chosen[0] != 0 or "skipp" in chosen[2] or "unreadable" in chosen[2] or not chosen[1].strip()
        ls_silent_full = ls[0] == 0 and ls[1] == truth_ls[1] and not ls[2].strip()
        campaign.record(
            "tampered_data_pages",
            f"{what}: select exit {chosen[0]}, ls exit {ls[0]}",
            chosen[0],
            ls[1] + chosen[1],
            ls[2] + chosen[2],
            root,
            None,  # a read may quarantine nothing; the store is the case's to damage
            before,
            {"ls_trusts_unread": select_refused and ls_silent_full},
            failed=False,
        )


SPEC_LIMITS_SNIPPET = """
import json, resource, sys, time
from xialpha.errors import UserError
from xialpha.spec.sweep import load_spec

rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu = time.process_time()
try:
    load_spec(sys.argv[1])
    outcome = "accepted"
except UserError as exc:
    outcome = "refused: " + str(exc).splitlines()[0][:300]
added = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
print(json.dumps({"cpu_s": time.process_time() - cpu, "rss_mb": added, "outcome": outcome}))
"""
SPEC_LIMIT_S = 1.0  # CPU seconds a spec's refusal may take
SPEC_LIMIT_MB = 200  # memory a spec's parse may add
MAX_DEPTH = 16  # docs/spec.md: tables and arrays nest at most 16 deep, `[a.b]` is 2 and `[a.b] x = 1` too


def _limit_spec(rng: random.Random) -> tuple[str, str, int | None]:
    """(what, a spec's text, its nesting as the docs count it) of a spec with a long dotted key or a deep header."""
    parts = rng.choice([15, 16, 17, 100, 5_000, 50_000, 300_000])
    kind = rng.choice(["dotted_key", "header", "header_key", "quoted_key", "array_header"])
    names = [f"t{i}" for i in range(parts)]
    if kind == "dotted_key":
        return f"a {parts}-part dotted key", SPEC + "[extra]\n" + ".".join(names) + " = 1\n", parts
    if kind == "header":
        return f"a {parts}-part header", SPEC + "[" + ".".join(names) + "]\n", parts
    if kind == "header_key":
        return f"a {parts}-part header and a key", SPEC + "[" + ".".join(names) + "]\nx = 1\n", parts
    if kind == "quoted_key":
        return (
            f'a {parts}-part "quoted" key',
            SPEC + "[extra]\n" + ".".join(f'"{n}"' for n in names) + " = 1\n",
            parts,
        )
    return f"a {parts}-part [[array]] header", SPEC + "[[" + ".".join(names) + "]]\n", None


def spec_limits(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A spec with a long dotted key or a deep (array) header, loaded in a process limited to 2 GiB:
    refused within SPEC_LIMIT_S of CPU, adding at most SPEC_LIMIT_MB, and the depth named as the
    docs count it ([a.b] is 2) (issue 48, item 7: `slow_refusal`, `memory`, `depth_miscounted`)."""
    import resource

    for _ in range(n):
        root = campaign.case_dir()
        what, text, depth = _limit_spec(rng)
        (root / "limits.toml").write_text(text)

        def limited() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

        try:
            done = subprocess.run(
                [sys.executable, "-c", SPEC_LIMITS_SNIPPET, "limits.toml"],
                cwd=root,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                capture_output=True,
                text=True,
                timeout=30,
                preexec_fn=limited,
                start_new_session=True,
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            code, out, err = None, "", ""
        measured = json.loads(out) if code == 0 and out.strip() else {}
        outcome = measured.get("outcome", "")
        counts = [int(c.replace(",", "")) for c in re.findall(r"\((\d[\d,]*) levels\)", outcome)]
        campaign.record(
            "spec_limits",
            f"{what}: {f'refused as {counts[0]} deep' if counts else outcome[:60]} "
            f"in {measured.get('cpu_s', math.nan):.2f} s CPU, "
            f"+{measured.get('rss_mb', math.nan):.0f} MB",
            code,
            out,
            err,
            root,
            None,
            None,
            {
                "slow_refusal": code is None or measured.get("cpu_s", math.inf) > SPEC_LIMIT_S,
                "memory": code is None or "MemoryError" in err or measured.get("rss_mb", math.inf) > SPEC_LIMIT_MB,
                "depth_miscounted": depth is not None
                and (
                    (depth <= MAX_DEPTH and "nested more than" in outcome)
                    or (depth > MAX_DEPTH and bool(counts) and depth not in counts)
                ),
            },
        )


def _warm_cache(campaign: Campaign) -> None:
    """A numba cache of the campaign's own (NUMBA_CACHE_DIR=ncache in the base), warmed by a sweep,
    so that a case damages its copy and never the install's shared cache."""
    base = campaign.base
    if not (base / "ncache").exists():
        campaign._must(cli(["sweep", "camp.toml", "--store", "warm", "--quiet"], base, {"NUMBA_CACHE_DIR": "ncache"}))
        shutil.rmtree(base / "warm")


def _damage_cache(cache: Path, rng: random.Random) -> str:
    """Damage the numba cache under `cache` in one generated way; what was done."""
    data, index = sorted(cache.rglob("*.nbc")), sorted(cache.rglob("*.nbi"))
    kind = rng.choice(["truncate_nbc", "empty_nbc", "swap_nbc", "garble_nbi", "truncate_nbi", "empty_nbi"])
    if kind == "swap_nbc" and len(data) >= 2:
        first, second = rng.sample(data, 2)
        a, b = first.read_bytes(), second.read_bytes()
        first.write_bytes(b)
        second.write_bytes(a)
        return f"{first.name} and {second.name} swapped"
    target = rng.choice(index if kind.endswith("nbi") else data)
    content = target.read_bytes()
    if kind.startswith("truncate"):
        target.write_bytes(content[: rng.randrange(1, max(2, len(content)))])
    elif kind.startswith("empty"):
        target.write_bytes(b"")
    else:
        garbled = bytearray(content)
        for place in rng.sample(range(len(garbled)), min(8, len(garbled))):
            garbled[place] ^= 0xFF
        target.write_bytes(bytes(garbled))
    return f"{kind.split('_')[0]} {target.name[:50]}"


def numba_cache_damage(campaign: Campaign, rng: random.Random, n: int) -> None:
    """A sweep whose numba cache (NUMBA_CACHE_DIR, a copy per case) has a truncated, emptied or
    swapped .nbc, or a garbled, truncated or emptied .nbi: the sweep compiles again with a note and
    stores its rows, or ends in one line naming the cache directory, never an internal error (issue
    48, item 4: `traceback`, `not_one_line`, `cache_unnamed`, `rows_missing`)."""
    _warm_cache(campaign)
    for _ in range(n):
        root = campaign.case_dir()
        what = _damage_cache(root / "ncache", rng)
        code, out, err = cli(["sweep", "camp.toml", "--store", "new", "--quiet"], root, {"NUMBA_CACHE_DIR": "ncache"})
        campaign.record(
            "numba_cache_damage",
            f"{what}: exit {code}",
            code,
            out,
            err,
            root,
            None,
            None,
            {
                "not_one_line": code not in (0, None) and err.count("\n") != 1,
                "cache_unnamed": code not in (0, None) and "ncache" not in err,
                "rows_missing": code == 0 and result_rows(root / "new") != 4,
            },
        )


# families of issue 48 left out, and why
SKIPPED_FAMILIES: dict[str, str] = {}


FAMILIES = {
    "secret_carriers": (secret_carriers, 45),
    "hostile_labels": (hostile_labels, 45),
    "api_types": (api_types, 70),
    "certify_kills": (certify_kills, 8),
    "artefact_mutations": (artefact_mutations, 45),
    "output_targets": (output_targets, 36),
    "signals_at_start": (signals_at_start, 30),
    "stalled_store": (stalled_store, 12),
    "limits": (limits, 6),
    "compaction_races": (compaction_races, 12),
    "summary_tampering": (summary_tampering, 30),
    "special_files": (special_files, 30),
    "predict_line_breaks": (predict_line_breaks, 12),
    "auto_cut_signals": (auto_cut_signals, 10),
    "spec_tampering": (spec_tampering, 20),
    "stalled_corpus": (stalled_corpus, 8),
    "hostile_search": (hostile_search, 30),
    "output_paths": (output_paths, 30),
    "killed_between_writes": (killed_between_writes, 8),
    "hostile_csv_json": (hostile_csv_json, 30),
    "hostile_json_files": (hostile_json_files, 18),
    "links_out_of_store": (links_out_of_store, 24),
    "tampered_data_pages": (tampered_data_pages, 18),
    "spec_limits": (spec_limits, 24),
    "numba_cache_damage": (numba_cache_damage, 6),
}
# issue 48's families stay out of --quick (CI's time): run them by name
NOT_QUICK = {
    "output_paths",
    "killed_between_writes",
    "hostile_csv_json",
    "hostile_json_files",
    "links_out_of_store",
    "tampered_data_pages",
    "spec_limits",
    "numba_cache_damage",
}


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--families",
        nargs="+",
        choices=list(FAMILIES),
        default=None,
        metavar="FAMILY",
        help=f"the families to run (default: all; with --quick, all but issue 48's): {', '.join(FAMILIES)}",
    )
    args = parser.parse_args()
    if args.families is None:
        args.families = [name for name in FAMILIES if not (args.quick and name in NOT_QUICK)]
    rng = random.Random(args.seed)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="xialpha-campaign-") as work:
        campaign = Campaign(Path(work))
        campaign.setup()
        for name, (family, count) in FAMILIES.items():
            if name in args.families:
                family(campaign, rng, max(1, count // 20) if args.quick else count)
    cases = campaign.cases
    findings = Counter(f for case in cases for f in case["findings"])
    by_family = {
        family: {
            "cases": sum(c["family"] == family for c in cases),
            "broken": sum(bool(c["findings"]) and c["family"] == family for c in cases),
            "exits": dict(Counter(str(c["exit"]) for c in cases if c["family"] == family)),
        }
        for family in args.families
    }
    summary = {
        "benchmark": "campaign",
        "quick": args.quick,
        "seed": args.seed,
        "families": args.families,
        "cases": len(cases),
        "broken_cases": sum(bool(c["findings"]) for c in cases),
        "tracebacks": findings["traceback"] + findings["traceback_unnamed"],
        "crashes": findings["crash"],
        "hangs": findings["hang"],
        "stores_changed_by_failures": findings["store_changed"],
        "rows_lost": findings["rows_lost"],
        "secrets": findings["secret"],
        "wrong_under_concurrency": findings["wrong_under_concurrency"] + findings["skipped_replaced"],
        "findings": dict(findings),
        "by_family": by_family,
        "skipped_families": SKIPPED_FAMILIES if set(NOT_QUICK) & set(args.families) else {},
        "wall_s": round(time.monotonic() - start, 1),
        "broken": [c for c in cases if c["findings"]],
        "cases_run": cases,
    }
    print_table(
        ["family", "cases", "broken", "exit codes"],
        [
            [f, v["cases"], v["broken"], " ".join(f"{k}:{n}" for k, n in sorted(v["exits"].items()))]
            for f, v in by_family.items()
        ],
        title="campaign",
    )
    print(
        f"{len(cases)} cases: {summary['tracebacks']} tracebacks, {summary['crashes']} crashes, "
        f"{summary['hangs']} hangs, "
        f"{summary['stores_changed_by_failures']} stores changed by failing commands, {summary['rows_lost']} "
        f"rows lost, {summary['secrets']} secrets; findings {dict(findings)}"
    )
    for case in summary["broken"][:30]:
        print(
            f"  {case['family']}: {case['case'][:90]} -> exit {case['exit']} {case['findings']}: {case['stderr'][:160]}"
        )
    write_results(summary, output_path("campaign", args))


if __name__ == "__main__":
    main()
