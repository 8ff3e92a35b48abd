"""Exclusive claims in a store and the heartbeats of their holders: the `Claims` a certification
relies on, and `FileClaims`, which keeps them as files beside the store's datasets.

A claim names something that may be done once (a test set certified once: `claim_test_set`;
a selection saved under one id: `claim_selection`);
of concurrent claims of one name at most one stands (on a local store exactly one: see
`xialpha.storage.location.Location.claim`). While its holder runs, it writes a heartbeat next
to the claim, so that others can tell a running holder from one that ended without storing.
`Claims` is what callers outside the store use (`StoreQueries.claims`); a backend that is no
filesystem answers it its own way.

`FileClaims`' layout under the store root:

    <dataset>/_claims/<name>/                  the claim (one JSON file: its content)
    <dataset>/_claims/<name>.heartbeat.json    when the holder last said it runs
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from xialpha.errors import UserError, out_of_files
from xialpha.storage.jsonfiles import DamagedJson, parse_json, read_json
from xialpha.storage.location import CLAIM_BYTES

if TYPE_CHECKING:
    from xialpha.storage.datasets import Datasets

CLAIMS = "_claims"
HEARTBEAT_SUFFIX = ".heartbeat.json"
TEST_SET_CLAIM = "test-set-{}"  # a certified test set's claim, by its fingerprint
TEST_SETS = "certifications"  # the dataset whose claims are test sets
SELECTION_CLAIM = "selection-{}"  # a saved selection's id, by a digest of its content
SELECTIONS = "selections"  # the dataset whose claims are saved selections' ids
CLAIM_DEPTH = 8  # claims and heartbeats hold flat records: deeper nesting is damage
_CLAIM_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")


@runtime_checkable
class Claims(Protocol):
    """The test sets claimed in a store, each by at most one certification, with its holder's heartbeat."""

    def claim_test_set(self, test_fingerprint: str, content: Mapping) -> str | None:
        """Claim test set `test_fingerprint` for a certification (`content`: JSON, its id and what
        resuming it needs); where the claim is (for `withdraw`), or None when it was claimed before
        (of concurrent claims at most one stands)."""
        ...

    def test_set_claim(self, test_fingerprint: str) -> dict | None:
        """The content of test set `test_fingerprint`'s claim ({} when damaged), or None when unclaimed."""
        ...

    def beat_test_set(self, test_fingerprint: str, content: Mapping | None) -> None:
        """Write the heartbeat of test set `test_fingerprint`'s claim (JSON), or delete it (None)."""
        ...

    def test_set_beat(self, test_fingerprint: str) -> dict | None:
        """The last heartbeat of test set `test_fingerprint`'s claim, or None."""
        ...

    def withdraw(self, claim_path: str) -> None:
        """Remove the claim at `claim_path` (what `claim_test_set` gave) and its heartbeat: what it
        guarded was not stored."""
        ...

    def claim_selection(self, digest: str, content: Mapping) -> str | None:
        """Claim the id a selection is saved under (`content`: JSON, the id), by `digest` of what
        the selection is; where the claim is (for `withdraw`), or None when it was claimed before."""
        ...

    def selection_claim(self, digest: str) -> dict | None:
        """The content of selection `digest`'s claim ({} when damaged), or None when unclaimed."""
        ...


class FileClaims(Claims):
    """The claims and heartbeats of the store whose datasets are `datasets`, as files under the
    datasets' directories (see the module docstring)."""

    def __init__(self, datasets: Datasets):
        self._datasets = datasets
        self._location = datasets.location

    # --- test sets ---------------------------------------------------------------------------

    def claim_test_set(self, test_fingerprint: str, content: Mapping) -> str | None:
        """Claim the test set `test_fingerprint` for a certification (`content`: its id and what
        resuming it needs); the claim's path, or None when it was claimed before."""
        return self.claim(TEST_SETS, TEST_SET_CLAIM.format(test_fingerprint), content)

    def test_set_claim(self, test_fingerprint: str) -> dict | None:
        """The claim of test set `test_fingerprint` (its content; {} when damaged), or None."""
        return self.claimed(TEST_SETS, TEST_SET_CLAIM.format(test_fingerprint))

    def beat_test_set(self, test_fingerprint: str, content: Mapping | None) -> None:
        """Write the heartbeat of test set `test_fingerprint`'s claim (None: delete it)."""
        self.beat(TEST_SETS, TEST_SET_CLAIM.format(test_fingerprint), content)

    def test_set_beat(self, test_fingerprint: str) -> dict | None:
        """The last heartbeat of test set `test_fingerprint`'s claim, or None."""
        return self.last_beat(TEST_SETS, TEST_SET_CLAIM.format(test_fingerprint))

    # --- saved selections --------------------------------------------------------------------

    def claim_selection(self, digest: str, content: Mapping) -> str | None:
        """Claim the id of the selection `digest` (`content`: the id); the claim's path, or None
        when it was claimed before."""
        return self.claim(SELECTIONS, SELECTION_CLAIM.format(digest), content)

    def selection_claim(self, digest: str) -> dict | None:
        """The claim of selection `digest` (its content; {} when damaged), or None."""
        return self.claimed(SELECTIONS, SELECTION_CLAIM.format(digest))

    # --- any claim ---------------------------------------------------------------------------

    def claim(self, dataset: str, name: str, content: Mapping) -> str | None:
        """Claim `name` in `dataset` for `content` (JSON); the claim's path if it stands, None if
        `name` was claimed before. Of concurrent claims of one name at most one stands, and on
        a local store exactly one (see `Location.claim`)."""
        directory = self._directory(dataset, name)
        self._datasets.create_if_absent()
        return self._location.claim(directory, _json(content))

    def claimed(self, dataset: str, name: str) -> dict | None:
        """The content of the claim of `name` in `dataset`, or None if it is not claimed."""
        data = self._location.first_claim(self._directory(dataset, name))
        if data is None:
            return None
        try:
            content = parse_json(data, CLAIM_DEPTH)
        except DamagedJson:
            content = None
        return content if isinstance(content, dict) else {}  # a damaged claim still counts as a claim

    def withdraw(self, claim_path: str) -> None:
        """Remove a claim made by `claim` (when what it guarded could not be stored), and its heartbeat."""
        self._location.delete(posixpath.dirname(claim_path) + HEARTBEAT_SUFFIX)
        self._location.withdraw(claim_path)

    def beat(self, dataset: str, name: str, content: Mapping | None) -> None:
        """Write the heartbeat of claim `name` (JSON, replacing the last one), or delete it (None)."""
        path = self._directory(dataset, name) + HEARTBEAT_SUFFIX
        if content is None:
            self._location.delete(path)
        else:
            self._location.write_bytes(path, _json(content))

    def last_beat(self, dataset: str, name: str) -> dict | None:
        """The last heartbeat of claim `name`, or None when there is none (or it cannot be read)."""
        path = self._directory(dataset, name) + HEARTBEAT_SUFFIX
        try:
            content = read_json(self._location, path, max_bytes=CLAIM_BYTES, max_depth=CLAIM_DEPTH)
        except (OSError, DamagedJson) as exc:  # a FIFO or a device is NotRegularFile, which says so
            if out_of_files(exc):  # the machine's limit, not a missing heartbeat
                raise
            return None
        return content if isinstance(content, dict) else None

    def _directory(self, dataset: str, name: str) -> str:
        self._datasets.dataset(dataset)
        if not _CLAIM_NAME.fullmatch(name):
            raise UserError(f"claim name {name!r}: use 1-128 letters, digits, '-' or '_'")
        return self._location.path(dataset, CLAIMS, name)


def _json(content: Mapping) -> bytes:
    return json.dumps(dict(content), sort_keys=True).encode("utf-8")
