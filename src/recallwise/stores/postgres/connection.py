"""Reaching the server: the store's URL, one direct connection, the pool's reconnection, and
database errors in one line.

Owns how a ``postgresql://`` URL is split into libpq's part and recallwise's own options
(``schema=``) with the password hidden for messages, how a failed connection becomes a
:class:`~recallwise.errors.StoreError` saying what is wrong, how often the pool tries to
reconnect after losing the server (:class:`ReconnectingPool`), and how a database error is
counted (``timeout``, ``unavailable`` or ``error``). The store owns its pool and knows when the
database is unreachable.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool
from psycopg_pool.pool import AddConnection, MaintenanceTask

from ...errors import StoreError, UsageError
from ..urls import redact_url

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "RECONNECT_MAX_DELAY_S",
    "ReconnectingPool",
    "connect",
    "error_kind",
    "lost_server",
    "quote_ident",
    "reason",
    "split_url",
]

DEFAULT_CONNECT_TIMEOUT = 10.0

#: The longest wait between two attempts of the pool to connect after it lost the server.
#: psycopg_pool starts at 1 s and doubles the wait, bounded only by ``reconnect_timeout`` (5 min):
#: after a 3-minute outage it tried again up to 64 s after the previous attempt, so the store
#: stayed without a connection half a minute after the database was back. A refused attempt costs
#: the server nothing, so the pool retries every 2 s at most.
RECONNECT_MAX_DELAY_S = 2.0


class ReconnectingPool(ConnectionPool[psycopg.Connection[TupleRow]]):
    """psycopg_pool's ``ConnectionPool`` with its reconnection back-off capped at
    ``reconnect_max_delay_s``.

    psycopg_pool has no option for the cap: each attempt to add a connection that fails schedules
    the next (its ``AddConnection`` task) with the pool's ``schedule_task(task, delay)``, the
    delay doubling each time. This subclass caps that delay where it is scheduled; every other
    scheduled task (the periodic shrink) keeps its own. ``reconnect_timeout`` still ends a run of
    attempts (the pool then makes a new connection when one is next asked for).
    """

    def __init__(
        self, *args: Any, reconnect_max_delay_s: float = RECONNECT_MAX_DELAY_S, **kwargs: Any
    ) -> None:
        self.reconnect_max_delay_s = float(reconnect_max_delay_s)
        super().__init__(*args, **kwargs)

    def schedule_task(self, task: MaintenanceTask, delay: float) -> None:
        if isinstance(task, AddConnection):
            delay = min(delay, self.reconnect_max_delay_s)
        super().schedule_task(task, delay)


# Options recallwise reads from the URL's query string; everything else goes to libpq.
_OWN_PARAMETERS = ("schema", "embedder")


def split_url(url: str) -> tuple[str, dict[str, str], str]:
    """(conninfo URL for libpq, recallwise's own options, the URL with the password hidden)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("postgresql", "postgres", "postgresql+psycopg"):
        raise UsageError(
            f"not a PostgreSQL URL: {redact_url(url)!r} (expected postgresql://user@host:port/db)"
        )
    query = parse_qsl(parts.query, keep_blank_values=True)
    own = {k: v for k, v in query if k in _OWN_PARAMETERS}
    rest = [(k, v) for k, v in query if k not in _OWN_PARAMETERS]
    # by hand: urlunsplit drops an empty authority (postgresql:///db?host=h -> postgresql:/db?host=h)
    libpq_query = f"?{urlencode(rest)}" if rest else ""
    conninfo = f"postgresql://{parts.netloc}{parts.path}{libpq_query}"
    redacted = redact_url(
        f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")
    )
    try:  # libpq's own reading (postgresql:///db?host=h&port=p&user=u is valid): one line if not
        psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.Error as exc:
        raise UsageError(f"not a valid PostgreSQL URL: {redacted!r}: {reason(exc)}") from None
    return conninfo, own, redacted


def error_kind(exc: psycopg.Error) -> str:
    """How the policy counts a database error: a lost server, a cancelled statement, or a refusal."""
    if isinstance(exc, psycopg.errors.QueryCanceled):  # statement_timeout, or cancelled
        return "timeout"
    if isinstance(exc, psycopg.OperationalError):  # connection lost, server shutting down, ...
        return "unavailable"
    return "error"


def lost_server(exc: psycopg.Error) -> bool:
    """Whether the error says the server is gone or going (a lost connection, a shutdown, a
    server not yet accepting connections), not that one statement failed."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P"))


def reason(exc: BaseException) -> str:
    """libpq's message without its repeated 'connection failed:' prefixes, on one line."""
    text = " ".join(str(exc).split())
    for prefix in ("connection failed: ", "connection is bad: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text or type(exc).__name__


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def connect(conninfo: str, url: str, connect_timeout: float) -> psycopg.Connection[TupleRow]:
    """One direct connection, every failure turned into a one-line :class:`StoreError`.

    ``url`` is the redacted URL the message names; ``connect_timeout`` the seconds it cites.
    """
    try:
        return psycopg.connect(conninfo, autocommit=True)
    except psycopg.ProgrammingError as exc:  # an option libpq does not know, a bad value
        raise UsageError(f"cannot connect to PostgreSQL at {url}: {reason(exc)}") from None
    except psycopg.OperationalError as exc:
        why = reason(exc)
        if "password authentication failed" in why or "no password supplied" in why:
            hint = "wrong user name or password"
        elif "timeout expired" in why:
            hint = f"no answer within the connect timeout ({connect_timeout:g} s)"
        elif "failed to resolve host" in why:
            hint = "unknown host name"
        elif "does not exist" in why:
            hint = "no such database or role"
        else:
            hint = "server unreachable"
        raise StoreError(f"cannot connect to PostgreSQL at {url}: {hint}: {why}") from exc
