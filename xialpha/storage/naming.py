"""Which store and which sweep a user means, for the command line and the Python API alike.

The store: the one given, else $XIALPHA_STORE, else the spec's `store` (sweep and drift), else
./xialpha-store. The sweep: the one given, which may be left out when the store holds one sweep.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from xialpha.errors import UserError, did_you_mean

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries

DEFAULT_STORE = "xialpha-store"
ENV_STORE = "XIALPHA_STORE"


def store_location(given: str | os.PathLike[str] | None = None, spec_value: str | None = None) -> str:
    """`given` (a path or URI), else $XIALPHA_STORE, else `spec_value`, else ./xialpha-store."""
    return str(given) if given else os.environ.get(ENV_STORE) or spec_value or DEFAULT_STORE


def choose_sweep(store: StoreQueries, given: str | None) -> str:
    """`given` when the store holds that sweep, else the store's only sweep when `given` is None;
    UserError naming the parameter `sweep` (`--sweep` on the command line), the sweeps stored and
    the closest id otherwise."""
    stored = store.sweep_ids()
    if given is not None and given in stored:
        return given
    if not stored:
        unreadable = len(store.check())  # only now: a sweep whose every file is unreadable is not "no sweep yet"
        if unreadable:
            raise UserError(
                f"store {store.uri} holds no readable sweep ({unreadable} unreadable file(s) skipped; "
                f"`xialpha store check {store.uri}` names them)",
                parameter="sweep",
            )
        raise UserError(
            f"store {store.uri} holds no sweep yet (run `xialpha sweep SPEC --store {store.uri}`)", parameter="sweep"
        )
    if given is None:
        if len(stored) == 1:
            return stored[0]
        raise UserError(
            f"store {store.uri} holds {len(stored)} sweeps; choose one with sweep=: {', '.join(stored)}",
            parameter="sweep",
            mentions="sweep=",
        )
    raise UserError(f"no sweep {given!r} in store {store.uri}{did_you_mean(given, stored)}", parameter="sweep")
