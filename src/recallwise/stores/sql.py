"""SQL the SQLite and PostgreSQL stores (and the decision log) share."""

from __future__ import annotations

__all__ = ["where_equal"]


def where_equal(columns: dict[str, object], placeholder: str) -> tuple[str, list[object]]:
    """`` WHERE a = ? AND b = ?`` for the columns whose value is not None, and the values.

    ``placeholder`` is the driver's parameter mark (``?`` for sqlite3, ``%s`` for psycopg).
    """
    given = {name: value for name, value in columns.items() if value is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{name} = {placeholder}" for name in given), list(given.values())
