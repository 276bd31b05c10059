"""SQL the SQLite and PostgreSQL stores (and the decision log) share."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from ..errors import UsageError

__all__ = ["MigrationStep", "migrate_sqlite", "where_equal"]

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
