"""What recallwise was called before (recallgate), still read so existing data keeps working.

The project was renamed because the PyPI name ``recallgate`` belongs to another project. There
is no ``recallgate`` import alias or package (that would go on shadowing it), and no
``RECALLGATE_*`` environment variable is read (no release ever read them); what survives is
only what data written before the rename carries, each with a visible notice:

- the PostgreSQL default schema ``recallgate``: used when no schema is named, the new default
  ``recallwise`` holds no store and the old one does, with a one-line notice;
- threshold configs written as ``recallgate-thresholds/1``: read as the current format.

SQLite stores and decision logs never recorded the project's name, so they open unchanged.
Everything that names the old project lives in this module (and its tests, and the README's note).
"""

from __future__ import annotations

import threading
import warnings

__all__ = [
    "OLD_CONFIG_FORMAT",
    "OLD_DEFAULT_SCHEMA",
    "RenamedWarning",
    "notice",
]

OLD_DEFAULT_SCHEMA = "recallgate"
OLD_CONFIG_FORMAT = "recallgate-thresholds/1"


class RenamedWarning(FutureWarning):
    """An old (recallgate) name was used; the message names the new one.

    A :class:`FutureWarning` so Python shows it by default: the people who must act on it are
    the application's users, not only its developers.
    """


_warned: set[str] = set()
_lock = threading.Lock()


def notice(message: str, *, key: str | None = None, stacklevel: int = 3) -> None:
    """Warn once per ``key`` (default: the message) with a :class:`RenamedWarning`."""
    key = key or message
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, RenamedWarning, stacklevel=stacklevel)
