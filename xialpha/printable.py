"""User text made safe to show: on a terminal (control characters) and anywhere (credentials).

Labels, category names, ids and messages come from corpora, specs, artefacts and stores that
xialpha does not trust. `printable` is what every terminal line and table cell shows of them:
control characters (ESC, the C1 set, DEL, line breaks...) as visible escapes, so no escape
sequence reaches the terminal and a cell stays one line. Rich markup in them is never
interpreted: tables take their cells as rich `Text` (`xialpha.reports.terminal.cell_text`).
(A CSV cell a spreadsheet would run as a formula: `xialpha.reports.records.csv_cell`.)

`redact` takes credentials out of text before it is shown, logged or stored. A URI may carry them
in its user part (`s3://KEY:SECRET@bucket/x`, `https://TOKEN@host/x`) or in query parameters
(`?secret_key=...`, `&sas_token=...`); `redact` replaces them with "***" wherever a URI occurs in
a text (a message, a command line, a spec), as fsspec and pyarrow users expect a URI to be shown.
Credentials belong in the environment or a credentials file (docs/spec.md); a URI holding them
still works, and is only ever shown redacted. The patterns use possessive quantifiers and start
only where a scheme begins, so redacting takes time linear in the text's length whatever it holds.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """`text` with each control character as its escape (`\\x1b`, `\\n`, `\\u2028`), else unchanged."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


HIDDEN = "***"
_SCHEME = r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*+://"
# user[:password]@ as RFC 3986 allows it, or user:secret@ where the secret holds a raw "/" (a malformed
# URI that a parser refuses, naming it in its message)
_USER_PART = re.compile(rf"({_SCHEME})(?:[^\s/?#@'\"<>:]*+:[^\s@'\"<>]*+|[^\s/?#@'\"<>]++)@")
_PARAMETER = re.compile(r"([?&;])([A-Za-z0-9_.\-]++)=[^&;#\s'\"<>]*+")
_SECRET_NAME = re.compile(r"key|secret|token|passw|pwd|credential|signature|(?:^|[_.\-])sig$", re.IGNORECASE)


_BETWEEN_WORDS = re.compile(r"""([\s'"<>]++)""")  # what no URI's user part spans


def redact(text: str) -> str:
    """`text` with the credentials of every URI in it replaced by "***". A user part ends with "@"
    and spans no blank, quote or angle bracket: each word is searched up to its last "@" only,
    where every search ends in a match or at most at the next scheme's "://" (linear time;
    searching past that "@" would scan to the word's end from every scheme in it)."""
    if "@" in text:
        words = _BETWEEN_WORDS.split(text)
        text = "".join(_with_user_hidden(word) for word in words)
    return _PARAMETER.sub(_hidden_if_secret, text) if "=" in text else text


def _with_user_hidden(word: str) -> str:
    head, at, tail = word.rpartition("@")
    return _USER_PART.sub(rf"\1{HIDDEN}@", head + at) + tail if at else word


def _hidden_if_secret(match: re.Match) -> str:
    separator, name = match.group(1), match.group(2)
    return f"{separator}{name}={HIDDEN}" if _SECRET_NAME.search(name) else match.group(0)
