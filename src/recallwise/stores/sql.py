"""SQL the SQLite and PostgreSQL stores (and the decision log) share: the columns of the events
and records tables and how a row maps to an :class:`~recallwise.records.Event` or a
:class:`~recallwise.records.MemoryRecord` (each driver encodes the metadata and the vector its
own way), ``WHERE`` clauses, and the SQLite files' migrations."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import UsageError
from ..records import Event, MemoryRecord

__all__ = [
    "EVENT_COLUMNS",
    "RECORD_COLUMNS",
    "MigrationStep",
    "event_from_row",
    "event_values",
    "migrate_sqlite",
    "record_from_row",
    "record_values",
    "where_equal",
]

#: an event's columns, named as its attributes; the metadata last
EVENT_COLUMNS = ("id", "actor_id", "session_id", "role", "text", "created_at", "metadata")
#: a record's columns as the stores read it back, named as its attributes; the metadata and the
#: vector last (the table also keeps ``rendered``, the text deciders read, which is written only)
RECORD_COLUMNS = ("id", "actor_id", "namespace", "text", "strategy", "created_at", "metadata", "embedding")

#: one step of a SQLite file's layout: takes the file from its version to the next
MigrationStep = Callable[[sqlite3.Connection], None]


def where_equal(columns: dict[str, object], placeholder: str) -> tuple[str, list[object]]:
    """`` WHERE a = ? AND b = ?`` for the columns whose value is not None, and the values.

    ``placeholder`` is the driver's parameter mark (``?`` for sqlite3, ``%s`` for psycopg).
    """
    given = {name: value for name, value in columns.items() if value is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{name} = {placeholder}" for name in given), list(given.values())


def event_values(event: Event, metadata: object) -> tuple[object, ...]:
    """The values of :data:`EVENT_COLUMNS` for ``event`` (``metadata``: as the driver stores it)."""
    return (*(getattr(event, name) for name in EVENT_COLUMNS[:-1]), metadata)


def event_from_row(row: Sequence[Any], metadata: dict[str, Any]) -> Event:
    """The event a row of :data:`EVENT_COLUMNS` holds (``metadata``: decoded by the caller)."""
    return Event(**dict(zip(EVENT_COLUMNS[:-1], row, strict=False)), metadata=metadata)


def record_values(record: MemoryRecord, metadata: object) -> tuple[object, ...]:
    """``id, actor_id, namespace, text, rendered, strategy, created_at, metadata`` of ``record``:
    what both stores write before the vector (``metadata`` as the driver stores it)."""
    return (
        record.id,
        record.actor_id,
        record.namespace,
        record.text,
        record.rendered,
        record.strategy,
        float(record.created_at),
        metadata,
    )


def record_from_row(row: Sequence[Any], metadata: dict[str, Any], embedding: Any) -> MemoryRecord:
    """The record a row of :data:`RECORD_COLUMNS` holds (a longer row's extra columns, such as a
    score, are ignored; ``metadata`` and ``embedding``: decoded by the caller)."""
    fields = dict(zip(RECORD_COLUMNS[:-2], row, strict=False))
    return MemoryRecord(**fields, metadata=metadata, embedding=embedding)


def migrate_sqlite(conn: sqlite3.Connection, steps: Sequence[MigrationStep], *, what: str) -> int:
    """Bring a SQLite file recallwise writes (the store, the decision log) to its latest layout.

    ``steps[i]`` takes the file from version ``i`` to ``i + 1``; the version is SQLite's
    ``user_version`` (0 in a new file), so the latest is ``len(steps)``. The pending steps run in
    order and the new version is set; call this inside a write transaction (``BEGIN IMMEDIATE``),
    so they land together or not at all, and two processes opening one file at once migrate it
    once. A file from a newer release (a higher version) is a :class:`UsageError` naming ``what``
    (e.g. ``store 'm.db'``), and nothing is changed. Returns the version the file had.
    """
    latest = len(steps)
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > latest:
        raise UsageError(
            f"{what} has schema version {found}; this recallwise reads version {latest}: "
            "upgrade recallwise to read it"
        )
    for step in steps[found:]:
        step(conn)
    if found < latest:
        conn.execute(f"PRAGMA user_version = {latest}")
    return found
