"""The `xialpha` command: a thin dispatcher to the modules in `xialpha.commands`.

Each command module defines `add_arguments(parser)` and `run(args) -> int` (the exit code), and may
define INSTEAD ({flag another command takes: what this one does instead}). Arguments it cannot parse
are one line on stderr naming the command and the flag, with exit code 2 (`--help` gives the usage;
`ArgumentMistake`). A `UserError` (or a path that is missing, unreadable, a loop of links, ...) is
printed as one line on stderr with exit code 2, and so is running out of file descriptors anywhere
(naming `ulimit -n` and what to raise it to), a `StoreWriteError` (disk full part-way) with exit
code 4, a `ClusterFailure` (workers lost as the cluster starts) with exit code 1, any other error as
one line with exit code 1 that says it is internal. Standard output closed early (`xialpha ... |
head -1`) ends the command quietly with exit code 1. Warnings of the result store (skipped files)
are one line each. SIGINT, SIGTERM and SIGHUP unwind the command (a cluster it started is closed,
its batch jobs cancelled, stored results kept), print one line and exit with 130, 143 or 129; from
the console entry point's first instruction, while the command's modules import too. Set
XIALPHA_DEBUG=1 to see the traceback instead.
"""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import io
import os
import signal
import sys
import warnings
from typing import NoReturn

from xialpha.commands.signals import (
    Interrupted,
    exit_at_once,
    interrupt_from_now,
    received,
    signals_interrupt,
    swallowed,
)
from xialpha.errors import ClusterFailure, StoreWarning, StoreWriteError, UserError, did_you_mean, one_of, out_of_files
from xialpha.printable import printable, redact
from xialpha.version import __version__

EXIT_FAILED = 1
EXIT_USER_ERROR = 2
EXIT_STORE_WRITE = 4
EXIT_STDOUT_CLOSED = 1
# errors about a path the user gave: missing, not permitted, wrong kind, a loop of links, too long
USER_ERRNOS = {
    errno.ENOENT,
    errno.EACCES,
    errno.EPERM,
    errno.EISDIR,
    errno.ENOTDIR,
    errno.ELOOP,
    errno.ENAMETOOLONG,
    errno.EROFS,
    errno.ENXIO,
}
NO_SPACE = {errno.ENOSPC, errno.EDQUOT}

# what `xialpha --help` says the tool does, in one line of an 80-column terminal
DESCRIPTION = "pick SVM text classifiers per category from one training each, not k-fold CV"
# name -> (module under xialpha.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "sweep": ("sweep", "run a model-selection sweep from a TOML spec and store every result"),
    "fetch": ("fetch", "download (or copy) and verify a public corpus: reuters21578"),
    "compile": ("compile", "compile the numba kernels now, once per install (else the first sweep does)"),
    "store": ("store", "inspect, check and compact a result store: ls, check [--quarantine], compact"),
    "select": ("select", "choose configs from a sweep's estimates (per category or --global), with significance tests"),
    "certify": ("certify", "evaluate a selection once on a sealed test split, with one-sided confidence bounds"),
    "report": ("report", "a sweep's estimates as terminal tables or a self-contained HTML page"),
    "compare": ("compare", "two saved selections (or two sweeps' newest) side by side per category, with tests"),
    "predict": (
        "predict",
        "label documents with an artefact from `select --refit` (data only; no pickle unless --allow-pickle)",
    ),
    "drift": (
        "drift",
        "check the newest batch of a stream for concept drift (exit 0 none, 3 drift, 1 failed, 2 bad input)",
    ),
}


class ArgumentMistake(Exception):
    """Arguments a parser refused: `prog` ("xialpha select") and argparse's message, shown by `main`
    as one line with exit code 2 instead of argparse's usage text."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog = prog
        self.message = message


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises `ArgumentMistake` where argparse prints its usage and exits, and
    says of a refused choice what the library says of one (`one_of`: the closest choice)."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentMistake(self.prog, message)

    def _check_value(self, action: argparse.Action, value: object) -> None:
        if action.choices is None or value in action.choices:
            return
        if isinstance(action, argparse._SubParsersAction):
            name = str(action.metavar or action.dest)
            if name == "COMMAND":
                raise ArgumentMistake(
                    self.prog, f"{value}: not a command{did_you_mean(value, COMMANDS, listing='commands')}"
                )
        else:
            name = max(action.option_strings, key=len) if action.option_strings else str(action.metavar or action.dest)
        raise ArgumentMistake(self.prog, f"{name}: {one_of(value, action.choices)}")


def build_parser(commands=tuple(COMMANDS)) -> argparse.ArgumentParser:
    """The parser of the commands, with the arguments of those in `commands` (every command by
    default); the others are listed by name and help only, and their modules not imported."""
    parser = _Parser(prog="xialpha", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"xialpha {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module, help_text) in COMMANDS.items():
        subparser = sub.add_parser(name, help=help_text, description=help_text)
        subparser.set_defaults(_module=module)
        if name in commands:
            _load(module).add_arguments(subparser)
    return parser


def _load(module: str):
    return importlib.import_module(f"xialpha.commands.{module}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    named = next((arg for arg in argv if not arg.startswith("-")), None)  # the top level takes no option values
    parser = build_parser([named] if named in COMMANDS else [])
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            raise ArgumentMistake(f"xialpha {args.command}", _not_an_option(unknown[0], args.command, parser))
    except ArgumentMistake as mistake:
        print(f"{mistake.prog}: error: {_argument_message(mistake)}", file=sys.stderr)
        return EXIT_USER_ERROR

    def interrupted(signum: int) -> str:
        return f"xialpha {args.command}: interrupted by {signal.Signals(signum).name}; results stored so far are kept"

    try:
        with signals_interrupt(interrupted), warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(args.command, warnings.showwarning)
            return int(_load(args._module).run(args) or 0)
    except BrokenPipeError:
        return _stdout_closed()
    except Exception as exc:
        if (signum := received()) is not None:  # the signal, turned into a library's own error
            print(interrupted(signum), file=sys.stderr)
            return 128 + signum
        if os.environ.get("XIALPHA_DEBUG"):
            raise
        if (number := out_of_files(exc)) is not None:  # wherever it happened, however it was wrapped
            print(f"xialpha {args.command}: error: {_out_of_files_message(number)}", file=sys.stderr)
            return EXIT_USER_ERROR
        if isinstance(exc, StoreWriteError):
            print(f"xialpha {args.command}: error: {_one_line(exc)}", file=sys.stderr)
            return EXIT_STORE_WRITE
        code, message = _classify(exc, _flags(parser, args.command))
        print(f"xialpha {args.command}: {message}", file=sys.stderr)
        return code
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM: the cluster is closed by now, its jobs cancelled
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        print(interrupted(signum), file=sys.stderr)
        return 128 + signum


def _argument_message(mistake: ArgumentMistake) -> str:
    """argparse's message about refused arguments on one line, naming flags as they are typed
    ("--runners-up: invalid int value: 'x'", not "argument --runners-up: ..."), and how to see the usage."""
    message = _shown(" ".join(mistake.message.split()))
    if message.startswith("argument "):
        flags, colon, rest = message.removeprefix("argument ").partition(": ")
        message = f"{flags.split('/')[-1]}{colon}{rest}"
    return f"{message}{' U' if message.endswith('?') else '; u'}sage: {mistake.prog} --help"


def _not_an_option(given: str, command: str, parser: argparse.ArgumentParser) -> str:
    """What to say of an argument `command` does not take: an option named with the closest of
    its own, what the command does instead, and the other commands that take it; or an argument
    too many."""
    if not given.startswith("-") or given == "-":
        return f"unexpected argument {given!r}"
    flag = given.split("=", 1)[0]
    notes = [note] if (note := getattr(_load(COMMANDS[command][0]), "INSTEAD", {}).get(flag)) else []
    others = [name for name in COMMANDS if name != command and flag in _flags(build_parser([name]), name).values()]
    if others:
        notes.append(f"{_listed(others)} take {flag}")
    if notes:
        return f"{flag}: not an option of {command} ({'; '.join(notes)})"
    own = [f for f in _flags(parser, command).values() if f.startswith("--")]
    return f"{flag}: not an option of {command}{did_you_mean(flag, own, listing=None)}"


def _listed(names: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _flags(parser: argparse.ArgumentParser, command: str) -> dict[str, str]:
    """{parameter (argparse dest): its long flag} of one command (and of its actions: `store ls`'s),
    e.g. {"test_split": "--test-split"}, and of its positional arguments with a metavar, their
    metavar ({"a": "A"}) unless a flag has their dest."""
    return _action_flags(parser._subparsers._group_actions[0].choices[command])


def _action_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    actions = parser._actions
    nested = [
        _action_flags(sub)
        for action in actions
        if isinstance(action, argparse._SubParsersAction)
        for sub in action.choices.values()
    ]
    positionals = {a.dest: a.metavar for a in actions if not a.option_strings and isinstance(a.metavar, str)}
    flags = {a.dest: max(a.option_strings, key=len) for a in actions if a.option_strings}
    return {key: value for found in (*nested, positionals, flags) for key, value in found.items()}


def _one_line_warning(command: str, default):
    """A `warnings.showwarning` printing the store's warnings as "xialpha CMD: warning: ..."."""

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, StoreWarning):
            return default(message, category, filename, lineno, file, line)
        print(f"xialpha {command}: warning: {_shown(str(message))}", file=sys.stderr)

    return show


def _classify(exc: Exception, flags: dict[str, str]) -> tuple[int, str]:
    """(exit code, one-line message): 2 for the user's input, 1 for everything else. The
    parameters a UserError is about or mentions (its fields) are named by their flags in `flags`
    ({parameter: flag}); its text is not searched for them."""
    if isinstance(exc, UserError):
        return EXIT_USER_ERROR, f"error: {_one_line(exc.named(flags))}"
    if isinstance(exc, OSError) and exc.errno in USER_ERRNOS:
        return EXIT_USER_ERROR, f"error: {_one_line(exc)}"
    if isinstance(exc, OSError) and exc.errno in NO_SPACE:  # a full disk, as a store's is: exit 4
        if exc.filename is None and _stdout_failing():
            return EXIT_STORE_WRITE, f"error: cannot write standard output: {exc.strerror}"
        return EXIT_STORE_WRITE, f"error: {_one_line(exc) if exc.filename else exc.strerror}"
    if isinstance(exc, MemoryError):
        return EXIT_FAILED, "error: out of memory"
    if isinstance(exc, ClusterFailure):
        return EXIT_FAILED, f"error: {_one_line(exc)}"
    return EXIT_FAILED, (
        f"internal error: {type(exc).__name__}: {_one_line(exc)} "
        "(set XIALPHA_DEBUG=1 for the traceback, and please report it)"
    )


def _out_of_files_message(number: int) -> str:
    """What ran out and what to raise, for EMFILE (this process's `ulimit -n`) or ENFILE (the system's table)."""
    done = "then rerun: results stored before it are kept, nothing was stored half"
    if number == errno.ENFILE:
        return (
            "too many open files in the system (ENFILE): the machine's table of open files is full; "
            f"close other programs or raise it (`sysctl fs.file-max`), {done}"
        )
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(4 * soft, 1024)
    if hard != resource.RLIM_INFINITY and wanted > hard:
        wanted = hard
    return (
        f"too many open files (EMFILE): this process may open {soft} files (ulimit -n) and had them all "
        f"open; raise the limit (`ulimit -n {wanted}`{f', at most the hard limit {hard}' if wanted == hard else ''}), "
        f"{done}"
    )


def _stdout_failing() -> bool:
    """True when standard output cannot be written (a write of no bytes fails, as on /dev/full); it
    is then sent to /dev/null, so that Python's flush at exit prints no second error."""
    try:
        os.write(sys.stdout.fileno(), b"")
        return False
    except (AttributeError, ValueError, io.UnsupportedOperation):  # not a file (captured in tests)
        return False
    except OSError:
        _stdout_closed()
        return True


def _stdout_closed() -> int:
    """The reader of standard output went away: stop quietly, and send what Python still flushes
    at exit to /dev/null instead of printing another BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a file (captured in tests)
        pass
    return EXIT_STDOUT_CLOSED


def _one_line(exc: BaseException | str, limit: int = 2000) -> str:
    """The message of `exc` on one line, each word (a path) over 240 characters shortened in its
    middle, then the whole to `limit` characters keeping its end, where the reason is."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = _shown(f"{exc.filename}: {exc.strerror or exc}")
    else:
        text = _shown(" ".join(str(exc).split()))
    text = " ".join(word if len(word) <= 240 else f"{word[:100]}...{word[-100:]}" for word in text.split(" "))
    return text if len(text) <= limit else f"{text[: limit // 2]} ... {text[-limit // 2 :]}"


def _shown(text: str) -> str:
    """A message as stderr may show it: without credentials or control characters."""
    return printable(redact(text))


def _starting_name() -> str:
    """ "xialpha COMMAND" from the arguments, before they are parsed ("xialpha" without a command)."""
    named = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    return f"xialpha{f' {named}' if named in COMMANDS else ''}"


def _starting_interrupted(signum: int) -> str:
    return f"{_starting_name()}: interrupted by {signal.Signals(signum).name}"


def console() -> None:
    """The `xialpha` command: `main`, then exit with its code. Before exiting, the objects the
    command created are frozen out of the garbage collector: the interpreter's last collection
    would walk the scientific stack's million objects, a share of a small sweep's time that
    nothing here needs (stored files are closed, a cluster is closed by then). Not in `main`, which
    tests call in-process."""
    interrupt_from_now(_starting_interrupted)  # first: the command's imports take a second or more
    try:
        code = main()
    except Interrupted as exc:  # before the command ran (its imports, the arguments) or as it ended
        code = 128 + exc.signum
        print(_starting_interrupted(exc.signum), file=sys.stderr)
    except Exception as exc:  # numpy, interrupted while it imports, raises an ImportError of its own
        if (signum := received()) is not None:
            code = 128 + signum
            print(_starting_interrupted(signum), file=sys.stderr)
        elif (number := out_of_files(exc)) is not None and not os.environ.get("XIALPHA_DEBUG"):  # importing
            code = EXIT_USER_ERROR
            print(f"{_starting_name()}: error: {_out_of_files_message(number)}", file=sys.stderr)
        else:
            raise
    if code == 0 and (signum := swallowed()) is not None:  # a finalizer swallowed it; the command went on
        code = 128 + signum
        print(_starting_interrupted(signum), file=sys.stderr)
    exit_at_once(_starting_interrupted)  # the interpreter's clean-up may wait (a store's request in flight)
    time_limits = sys.modules.get("xialpha.time_limits")
    if time_limits is not None and time_limits.calls_left_behind():  # a remote store's call still waiting
        _exit_now(code)
    gc.freeze()
    sys.exit(code)


def _exit_now(code: int) -> None:
    """Exit with `code` without the interpreter's clean-up (what was printed is flushed first): a
    remote store's call left waiting in a client's C++ code (`time_limits.calls_left_behind`) would
    abort the process if it returned during that clean-up."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    console()
