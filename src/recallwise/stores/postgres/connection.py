"""Reaching the server: the store's URL, one direct connection, and database errors in one line.

Owns how a ``postgresql://`` URL is split into libpq's part and recallwise's own options
(``schema=``) with the password hidden for messages, how a failed connection becomes a
:class:`~recallwise.errors.StoreError` saying what is wrong, and how a database error is
counted (``timeout``, ``unavailable`` or ``error``). The pool lives in the store.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg.rows import TupleRow

from ...errors import StoreError, UsageError
from ..urls import redact_url

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "connect", "error_kind", "quote_ident", "reason", "split_url"]

DEFAULT_CONNECT_TIMEOUT = 10.0


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
    conninfo = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(rest), ""))
    redacted = redact_url(urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, "")))
    return conninfo, own, redacted


def error_kind(exc: psycopg.Error) -> str:
    """How the policy counts a database error: a lost server, a cancelled statement, or a refusal."""
    if isinstance(exc, psycopg.errors.QueryCanceled):  # statement_timeout, or cancelled
        return "timeout"
    if isinstance(exc, psycopg.OperationalError):  # connection lost, server shutting down, ...
        return "unavailable"
    return "error"


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
