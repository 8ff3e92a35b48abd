"""Credentials taken out of text before it is shown, logged or stored: `redact`.

A URI may carry credentials in its user part (`s3://KEY:SECRET@bucket/x`, `https://TOKEN@host/x`)
or in query parameters (`?secret_key=...`, `&sas_token=...`). `redact` replaces them with "***"
wherever a URI occurs in a text (a message, a command line, a spec), as fsspec and pyarrow users
expect a URI to be shown. Credentials belong in the environment or a credentials file
(docs/spec.md); a URI holding them still works, and is only ever shown redacted.

The patterns use possessive quantifiers and start only where a scheme begins, so redacting takes
time linear in the text's length whatever it holds.
"""

from __future__ import annotations

import re

HIDDEN = "***"
_SCHEME = r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*+://"
# user[:password]@ as RFC 3986 allows it, or user:secret@ where the secret holds a raw "/" (a malformed
# URI that a parser refuses, naming it in its message)
_USER_PART = re.compile(rf"({_SCHEME})(?:[^\s/?#@'\"<>:]*+:[^\s@'\"<>]*+|[^\s/?#@'\"<>]++)@")
_PARAMETER = re.compile(r"([?&;])([A-Za-z0-9_.\-]++)=[^&;#\s'\"<>]*+")
_SECRET_NAME = re.compile(r"key|secret|token|passw|pwd|credential|signature|(?:^|[_.\-])sig$", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with the credentials of every URI in it replaced by "***"."""
    text = _USER_PART.sub(rf"\1{HIDDEN}@", text)
    return _PARAMETER.sub(_hidden_if_secret, text) if "=" in text else text


def _hidden_if_secret(match: re.Match) -> str:
    separator, name = match.group(1), match.group(2)
    return f"{separator}{name}={HIDDEN}" if _SECRET_NAME.search(name) else match.group(0)
