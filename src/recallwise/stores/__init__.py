"""Where memories live: events, records, namespaces and search.

Backends register a URL scheme (:func:`register_store`, or an installed package's entry point
in the ``recallwise.stores`` group: :mod:`recallwise.registry`); :func:`open_store` picks one by
the URL: ``sqlite:///path`` (embedded default), ``postgresql://...`` (extra ``[postgres]``),
``agentcore://MEMORY_ID?region=...`` (extra ``[agentcore]``).

Every URL may name the store's embedder: ``sqlite:///m.db?embedder=multilingual`` embeds
records and queries with the multilingual model. A store records the embedder its vectors
were made with and refuses to open with another (the error names both); an SQLite or
PostgreSQL store opened without one uses the one it recorded (AgentCore embeds on its side).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..embeddings import Embedder
from ..errors import UsageError
from ..extras import require_extra
from ..registry import STORES_GROUP, Registry
from .base import AsyncSearcher, MemoryStore, MentionIndex, Query, Searcher, SearchRequest
from .ranking import embed_missing, top_k_indices
from .sqlite import SQLiteStore
from .urls import choose_embedder, redact_url, split_embedder_option

__all__ = [
    "AsyncSearcher",
    "MemoryStore",
    "MentionIndex",
    "Query",
    "SQLiteStore",
    "SearchRequest",
    "Searcher",
    "embed_missing",
    "open_store",
    "register_store",
    "top_k_indices",
]

StoreFactory = Callable[..., MemoryStore]
_SCHEMES: Registry[StoreFactory] = Registry("store URL scheme", STORES_GROUP)
#: other spellings of a scheme
_ALIASES = {"postgres": "postgresql", "postgresql+psycopg": "postgresql"}


def register_store(scheme: str, factory: StoreFactory) -> None:
    """Make ``open_store("<scheme>://...")`` call ``factory(url, embedder=..., **options)``."""
    _SCHEMES.register(scheme, factory)


def open_store(url: str, *, embedder: Embedder | None = None, **options: Any) -> MemoryStore:
    """Open the store a URL names.

    >>> store = open_store("sqlite://:memory:")

    ``?embedder=NAME`` in the URL (or ``embedder=``) picks the embedder (see the module docs).
    """
    if not isinstance(url, str) or "://" not in url:
        shown = redact_url(url) if isinstance(url, str) else url
        raise UsageError(f"not a store URL: {shown!r} (expected e.g. sqlite:///memory.db)")
    scheme = url.split("://", 1)[0].lower()
    factory = _SCHEMES.find(_ALIASES.get(scheme, scheme))
    if factory is None:
        known = ", ".join(_SCHEMES.names())
        raise UsageError(f"unknown store URL scheme {scheme!r} in {redact_url(url)!r}; known: {known}")
    stripped, named = split_embedder_option(url)
    embedder = choose_embedder(url, embedder, named)
    return factory(stripped, embedder=embedder, **options)


def _open_postgres(url: str, **options: Any) -> MemoryStore:
    require_extra("postgres", "a postgresql:// store")
    from .postgres import PostgresStore

    return PostgresStore(url, **options)


def _open_agentcore(url: str, **options: Any) -> MemoryStore:
    require_extra("agentcore", "an agentcore:// store", ("boto3", "botocore"))
    from .agentcore import AgentCoreStore

    return AgentCoreStore(url, **options)


def _open_sqlite(url: str, **options: Any) -> MemoryStore:
    return SQLiteStore(url, **options)


register_store("sqlite", _open_sqlite)
register_store("postgresql", _open_postgres)
register_store("agentcore", _open_agentcore)
