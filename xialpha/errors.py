"""The exception types the CLI turns into one-line messages and exit codes.

`UserError`: a mistake a user can fix (bad spec, missing file, bad input): exit code 2.
`DataFailure`: a configuration cannot be trained on its data (no positive example, an empty
vocabulary, ...): a sweep stores its rows as failed and goes on; any other error stops it.
`StoreWriteError`: the store could not be written part-way through a command (disk full,
I/O error): exit code 4; what was stored before stays stored.
`ClusterFailure`: the cluster could not start (its worker processes killed as they started): exit 1.
`StoreWarning`: reads skipped unreadable or foreign files of the store (printed as one line).
"""

import copy
import errno
import os
import re
from collections.abc import Iterable


class UserError(ValueError):
    """A problem with the user's input: the CLI prints it as one line and exits with code 2.

    The message names the field, argument or file and says what is wrong with it. Where that is
    a key (of a spec, or a loader's argument) it is given as `key` and the message as what is
    wrong: str() is then "key: message", and `within(table)` names the same key inside a table
    ("label_column" -> "corpus.label_column") without editing the message's text. `file`: the
    spec file the key is in, shown first. `parameter`: the parameter(s) of a Python function the
    error is about, shown as "test_split=: message", and by the CLI as its flag (`named`).
    `mentions`: the parameters the message names in its text, each as it is spelled there in
    Python ("force=True", "spec="), which the CLI shows as the flag ("--force", "--spec").
    """

    def __init__(
        self,
        message: str = "",
        *,
        key: str | None = None,
        file: str | None = None,
        parameter: str | tuple[str, ...] = (),
        mentions: str | tuple[str, ...] = (),
    ):
        super().__init__(message)
        self.message = message
        self.key = key
        self.file = file
        self.parameters = (parameter,) if isinstance(parameter, str) else tuple(parameter)
        self.mentions = (mentions,) if isinstance(mentions, str) else tuple(mentions)

    def __str__(self) -> str:
        return self.named({})

    def named(self, flags: dict[str, str]) -> str:
        """The message with each parameter it is about, and each it mentions, named by `flags`
        ({parameter: its command-line flag}), else as in Python ("test_split=", "force=True")."""
        parameters = ", ".join(flags.get(name, f"{name}=") for name in self.parameters)
        message = self.message
        for spelling in self.mentions:
            flag = flags.get(spelling.partition("=")[0])
            message = message.replace(spelling, flag) if flag else message
        return "".join(f"{part}: " for part in (self.file, self.key, parameters) if part) + message

    def within(self, table: str | None = None, *, file: str | None = None) -> "UserError":
        """The same error, its key inside `table` (a dotted path; an error without a key is left
        as it is) and in `file` (unless it names one already)."""
        error = copy.copy(self)
        error.key = f"{table}.{self.key}" if table and self.key else self.key
        error.file = self.file or file
        return error


class DataFailure(UserError):
    """A configuration cannot be trained on its data: a category without a positive (or
    negative) training example, a vocabulary that preprocessing leaves empty, k-fold with more
    folds than the smaller class has examples, a Gram matrix over the spec's memory limit.

    Raised only by the input checks that find such data. A sweep stores the rows of the
    configurations it hits as failed, with the message, and goes on; every other exception in
    a sweep's task is a bug (or a lost worker) and stops the sweep. Outside a sweep it is a
    `UserError` like any other.
    """


class StoreWriteError(Exception):
    """Writing a file into the result store failed (no space left, I/O error, permission lost).

    The CLI prints it as one line and exits with code 4. The failed file left nothing behind
    (its temporary file is removed); files stored before it are complete and kept.
    """


class ClusterFailure(Exception):
    """The cluster could not start, or lost what it needs to run (worker processes killed as they
    started, out of memory): neither the user's input nor a bug. The CLI prints it as one line and
    exits with code 1; nothing was stored by the step that failed."""


class StoreWarning(UserWarning):
    """Reads skipped unreadable or foreign files of a store; `xialpha store check` lists them."""


def did_you_mean(
    name: str, known: Iterable[object], *, listing: str | None = "stored", limit: int = 12, list_when_close: bool = True
) -> str:
    """The tail of a message about an unknown `name`: "; did you mean X?" when one of `known` is
    close (difflib), then " (<listing>: a, b, ...)" naming up to `limit` of them (left out when
    `listing` is None, or a close one was found and not `list_when_close`). Empty when there is
    nothing to add."""
    import difflib

    names = [str(k) for k in known]
    same = [known_name for known_name in names if known_name.casefold() == str(name).casefold()]
    close = same[:1] or difflib.get_close_matches(str(name), names, n=1)
    text = f"; did you mean {close[0]}?" if close else ""
    if listing and names and (list_when_close or not close):
        more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
        text += f" ({listing}: {', '.join(names[:limit])}{more})"
    return text


def one_of(value: object, choices: Iterable[object]) -> str:
    """What is wrong with `value` where one of `choices` is wanted: "must be one of a, b, got 'x'",
    then "; did you mean b?" when one is close (`did_you_mean`). The error raised with it names the
    key, parameter or flag."""
    names = [str(choice) for choice in choices]
    close = did_you_mean(value, names, listing=None) if isinstance(value, str) else ""
    return f"must be one of {', '.join(names)}, got {value!r}{close}"


OUT_OF_FILES = {errno.EMFILE, errno.ENFILE}  # this process's open files at `ulimit -n`; the system's table full
_ERRNO_TEXT = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)


def out_of_files(exc: BaseException) -> int | None:
    """EMFILE or ENFILE when `exc`, or an error it was raised from or while handling, is about
    running out of file descriptors (pyarrow gives the errno in its text only, a library may wrap
    it); else None. Such an error is the machine's limit, never a fact about the file being
    opened: reads must not skip that file as unreadable."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        number = getattr(error, "errno", None)
        if number in OUT_OF_FILES:
            return number
        for match in _ERRNO_TEXT.finditer(str(error)):
            if int(match.group(1)) in OUT_OF_FILES:
                return int(match.group(1))
        if os.strerror(errno.ENFILE) in str(error):  # "Too many open files in system"
            return errno.ENFILE
        if os.strerror(errno.EMFILE) in str(error):
            return errno.EMFILE
        error = error.__cause__ or error.__context__
    return None
