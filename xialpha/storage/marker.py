"""The store marker `_xialpha_store.json`: opening a store without changing it, creating it later.

Opening checks what is there (a marker of a schema version this xialpha reads, or nothing) and,
for writing, that the store can be written; it never creates anything. A new store's directory
and marker are written by `create_marker` just before its first data file.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import uuid

from xialpha.errors import StoreWriteError, UserError, out_of_files
from xialpha.printable import redact
from xialpha.storage import STORE_MARKER
from xialpha.storage.arrow_schema import SCHEMA_VERSION
from xialpha.storage.jsonfiles import DamagedJson, read_json
from xialpha.storage.location import TEMP_SUFFIX, Location
from xialpha.version import __version__

MARKER = STORE_MARKER
MARKER_FORMAT = "xialpha-store"
MARKER_BYTES = 64 * 1024  # a marker is a few lines: more is not read


def stored_version(location: Location, create: bool, writable: bool = True) -> int | None:
    """The schema version of the store at `location`, or None for an absent store `create` allows.

    UserError if the location is a file, a directory of other things, a damaged or newer marker,
    absent without `create`, (with `create` and `writable`) not writable, or a remote store that
    fails to answer. `writable=False`: the caller only reads (a dry run), so no write is tried.
    """
    if location.is_local:
        return _open(location, create, writable)
    try:
        return _open(location, create, writable)
    except UserError:
        raise
    except Exception as exc:  # any client error (network, credentials, a URI naming no bucket) means unusable
        reason = redact(" ".join(str(exc).split()))[:300]
        raise UserError(f"store {location.uri}: cannot reach it: {type(exc).__name__}: {reason}") from None


def _open(location: Location, create: bool, writable: bool) -> int | None:
    uri, marker = location.uri, location.path(MARKER)
    if create and writable:
        location.check_room()
    if location.is_file(location.root):
        raise UserError(f"store {uri}: is a file, not a store directory")
    if location.is_local and os.path.exists(location.root) and not os.path.isdir(location.root):
        raise UserError(f"store {uri}: is a special file (a FIFO, socket or device), not a store directory")
    # asked again after a listing that shows more than a marker being written: another process
    # creating the store may have renamed its marker in between
    for last_try in (False, True):
        if location.exists(marker):
            version = _read_marker(location, marker)
            if create and writable:
                _probe_writable(location)
            return version
        if all(_marker_being_written(info.base_name) for info in location.entries(location.root)):
            break
        if last_try:
            raise UserError(f"store {uri}: not a xialpha store (a non-empty directory without {MARKER})")
    if not create:
        if location.is_local and not location.exists(location.root):
            raise UserError(
                f"store {uri}: not a xialpha store: no such directory; `xialpha sweep SPEC --store "
                f"{shlex.quote(uri)}` creates it"
            )
        raise UserError(
            f"store {uri}: not a xialpha store yet: empty, no sweep has written to it; `xialpha sweep SPEC "
            f"--store {shlex.quote(uri)}` fills it"
        )
    if location.is_local and writable:
        _check_creatable(uri, location.root)
    return None


def _marker_being_written(name: str) -> bool:
    """Whether `name` is the temporary file of a marker another process is creating right now
    (or a creator killed before its rename left): the store is still absent, not foreign."""
    return name.startswith(f".{MARKER}.") and name.endswith(TEMP_SUFFIX)


def create_marker(location: Location) -> None:
    """Write the marker of a new store (creating its directory)."""
    text = json.dumps(
        {
            "format": MARKER_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "xialpha_version": __version__,
            "created_at": datetime.datetime.now(datetime.UTC).isoformat(),
        },
        indent=2,
    )
    location.write_bytes(location.path(MARKER), text.encode("utf-8"))


def _read_marker(location: Location, marker: str) -> int:
    try:
        content = read_json(location, marker, max_bytes=MARKER_BYTES, max_depth=1)
        version = (
            content.get("schema_version")
            if isinstance(content, dict) and content.get("format") == MARKER_FORMAT
            else None
        )
    except (DamagedJson, OSError) as exc:  # a FIFO or a device is NotRegularFile, which says so
        if out_of_files(exc):  # the machine's limit, not a damaged marker
            raise
        version = None
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(f"store {location.uri}: {MARKER} is not a valid xialpha store marker")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"store {location.uri}: written with schema version {version}, newer than this xialpha's "
            f"{SCHEMA_VERSION}; upgrade xialpha"
        )
    return version


def _probe_writable(location: Location) -> None:
    """Write and delete a hidden empty file; UserError (nothing was stored) if that fails."""
    probe = location.path(f".writable-probe-{uuid.uuid4().hex}")
    try:
        location.write_bytes(probe, b"")
    except StoreWriteError as exc:
        raise UserError(str(exc)) from None
    location.delete(probe)


def _check_creatable(uri: str, root: str) -> None:
    """UserError unless a local directory `root` could be created (without creating it)."""
    ancestor = root
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise UserError(f"store {uri}: cannot write {root}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UserError(f"store {uri}: cannot write {root}: {ancestor} is not writable")
