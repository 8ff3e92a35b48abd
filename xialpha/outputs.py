"""Files xialpha writes for the user (a report page, predictions): whole or not at all.

A full disk, a read-only directory or a missing one must not leave a truncated CSV or an empty
page behind that looks like a result: the text is written to a hidden temporary file beside
the target and renamed over it once complete; on failure the temporary file is removed and the
error names the parameter and the file in one line.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from xialpha.errors import UserError


def write_file(path, write: Callable[[TextIO], None], parameter: str) -> None:
    """Call `write(stream)` on a temporary file beside `path` (UTF-8 text, no newline translation)
    and rename it to `path`; UserError naming `parameter` (`--html`, `html=`) and `path` if it fails."""
    target = Path(path)
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(temp, "x", encoding="utf-8", newline="") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise UserError(f"{parameter}: cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
