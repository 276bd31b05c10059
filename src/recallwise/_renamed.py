"""What recallwise was called before (recallgate), still read so existing set-ups keep working.

The project was renamed because the PyPI name ``recallgate`` belongs to another project. There
is no ``recallgate`` import alias or package (that would go on shadowing it); what survives is
only what existing users' *data and settings* carry, each with a visible notice:

- environment variables ``RECALLGATE_*``: read when ``RECALLWISE_*`` is unset, with a one-time
  :class:`RenamedWarning` naming the new variable (for one release);
- the PostgreSQL default schema ``recallgate``: used when no schema is named, the new default
  ``recallwise`` holds no store and the old one does, with a one-line notice;
- threshold configs written as ``recallgate-thresholds/1``: read as the current format.

SQLite stores and decision logs never recorded the project's name, so they open unchanged.
Everything that names the old project lives in this module (and its tests, and the README's note).
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import overload

__all__ = [
    "ENV_PREFIX",
    "OLD_CONFIG_FORMAT",
    "OLD_DEFAULT_SCHEMA",
    "OLD_ENV_PREFIX",
    "RenamedWarning",
    "getenv",
    "notice",
]

ENV_PREFIX = "RECALLWISE_"
OLD_ENV_PREFIX = "RECALLGATE_"
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


@overload
def getenv(name: str, default: None = None) -> str | None: ...
@overload
def getenv(name: str, default: str) -> str: ...
@overload
def getenv(name: str, default: str | None) -> str | None: ...
def getenv(name: str, default: str | None = None) -> str | None:
    """``os.environ.get(name, default)`` for a ``RECALLWISE_*`` variable that also reads its
    ``RECALLGATE_*`` predecessor when ``name`` is unset, warning once that it is deprecated."""
    value = os.environ.get(name)
    if value is not None or not name.startswith(ENV_PREFIX):
        return value if value is not None else default
    old = OLD_ENV_PREFIX + name[len(ENV_PREFIX) :]
    value = os.environ.get(old)
    if value is None:
        return default
    notice(
        f"{old} is deprecated (recallgate was renamed recallwise): set {name} instead; "
        f"the old name is read for one release",
        key=old,
    )
    return value
