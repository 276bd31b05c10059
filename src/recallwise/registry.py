"""Backends registered by name: stores, deciders and embedders, each kind in one :class:`Registry`.

recallwise registers its own backends in code (:func:`~recallwise.stores.register_store`,
:func:`~recallwise.deciders.register_decider`, :func:`~recallwise.embeddings.register_embedder`).
Another installed package adds its own without being imported, by declaring an entry point in the
kind's group, e.g. in its ``pyproject.toml``::

    [project.entry-points."recallwise.deciders"]
    my-decider = "my_package.decider:make_my_decider"

The entry point's name is the backend's name (a store's is its URL scheme) and its object the
factory, imported only when that backend is asked for: a package that fails to import breaks only
its own name, with a :class:`~recallwise.errors.UsageError` naming the entry point. A name recallwise
registers itself is never replaced by an installed package.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import metadata
from typing import Any, Generic, TypeVar, cast

from .errors import UsageError

__all__ = ["DECIDERS_GROUP", "EMBEDDERS_GROUP", "STORES_GROUP", "Registry"]

#: The entry-point group of each kind of backend.
STORES_GROUP = "recallwise.stores"
DECIDERS_GROUP = "recallwise.deciders"
EMBEDDERS_GROUP = "recallwise.embedders"

Entry = TypeVar("Entry")


class Registry(Generic[Entry]):
    """One kind of backend by name: what code registers, then what installed packages declare in
    ``group`` (read once, on the first name not registered in code, or the first listing).

    An entry is what the kind keeps per name: its factory, or (``from_entry_point``) what the kind
    makes of an installed package's factory (an embedder's: the factory, and that it takes an
    argument). The package's factory is imported when it is first called."""

    def __init__(
        self,
        kind: str,
        group: str,
        from_entry_point: Callable[[Callable[..., Any]], Entry] | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self._from_entry_point = from_entry_point
        self._entries: dict[str, Entry] = {}
        self._read_entry_points = False
        self._lock = threading.RLock()

    def register(self, name: str, entry: Entry) -> None:
        """Make ``name`` this kind's ``entry`` (a second registration replaces the first)."""
        with self._lock:
            self._entries[name] = entry

    def find(self, name: str) -> Entry | None:
        """The entry registered as ``name``, or None (installed packages are read on a miss)."""
        with self._lock:
            if name not in self._entries:
                self._installed()
            return self._entries.get(name)

    def get(self, name: str) -> Entry:
        """The entry registered as ``name``; an unknown name is a :class:`UsageError` listing the
        known ones."""
        found = self.find(name)
        if found is None:
            raise UsageError(f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}")
        return found

    def names(self) -> list[str]:
        """Every registered name, installed packages' included, sorted."""
        with self._lock:
            self._installed()
            return sorted(self._entries)

    def items(self) -> list[tuple[str, Entry]]:
        """Every registered name and its entry, sorted by name."""
        with self._lock:
            self._installed()
            return sorted(self._entries.items())

    def _installed(self) -> None:
        """Add what installed packages declare in the group (once; code's names win)."""
        if self._read_entry_points:
            return
        self._read_entry_points = True
        for found in metadata.entry_points(group=self.group):
            if found.name not in self._entries:
                factory = _lazy(found, self.kind)
                made = self._from_entry_point(factory) if self._from_entry_point else factory
                self._entries[found.name] = cast(Entry, made)


def _lazy(found: metadata.EntryPoint, kind: str) -> Callable[..., Any]:
    """The factory an entry point names, imported on its first call."""

    def factory(*args: Any, **kwargs: Any) -> Any:
        try:
            loaded = found.load()
        except Exception as exc:
            raise UsageError(
                f"{kind} {found.name!r} (entry point {found.value!r} in {found.group}) cannot be "
                f"loaded: {type(exc).__name__}: {exc}"
            ) from exc
        return loaded(*args, **kwargs)

    return factory
