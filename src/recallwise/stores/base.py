"""The store protocol: what one search asks (:class:`SearchRequest`), the read-only seam the policy
needs (:class:`Searcher`), and the whole store (:class:`MemoryStore`).

What the stores share to implement it lives beside it: rankings in :mod:`.ranking`, SQL in :mod:`.sql`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, Protocol, Self, runtime_checkable

import numpy as np

from ..embeddings import Embedder
from ..errors import UsageError
from ..records import Event, MemoryRecord, SearchHit
from .profile import ActorProfile

__all__ = [
    "AsyncSearcher",
    "ClosesOnExit",
    "MemoryStore",
    "MentionIndex",
    "ProfileIndex",
    "Query",
    "SearchMode",
    "SearchRequest",
    "Searcher",
    "ThreadedAsyncMethods",
    "write_transaction",
]

#: What ``search`` accepts as a query: text (embedded by the store) or a unit vector.
Query = str | np.ndarray
SearchMode = Literal["dense", "hybrid"]


@dataclass(frozen=True, eq=False)
class SearchRequest:
    """One search of one namespace: what every searcher's ``search`` takes.

    * ``namespace``: a resolved namespace (``/prefs/u1``), searched for ``actor_id``'s records;
    * ``query``: text (embedded by the searcher) or the turn's unit vector (the policy passes the
      vector it embedded once for the gate, the search and the judge);
    * ``top_k``: how many records, best first;
    * ``text``: the message's text, for a lexical ranking (``mode="hybrid"``) or a framework
      memory that searches by text; ``mode``: ``"dense"`` or ``"hybrid"`` (see
      :func:`~recallwise.stores.ranking.rrf_fuse`);
    * ``extensions``: extras for one backend or caller, like httpx's request extensions: a
      framework gate passes its own search's scope here (a Strands store's options, a LangGraph
      filter, an ADK app and user), so concurrent searches never see each other's. A searcher
      ignores the keys it does not know.
    """

    namespace: str
    query: Query
    top_k: int = 10
    actor_id: str | None = None
    text: str | None = None
    mode: SearchMode = "dense"
    extensions: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if self.mode not in ("dense", "hybrid"):
            raise UsageError(f"unknown search mode {self.mode!r} (dense or hybrid)")

    def to(self, namespace: str) -> SearchRequest:
        """The same request for another namespace (the policy's fan-out)."""
        return replace(self, namespace=namespace)


@runtime_checkable
class Searcher(Protocol):
    """The read-only seam the policy needs from a memory: search, an embedder, and whether it is local.

    Any memory becomes one by implementing this (a Strands MemoryStore, a LangGraph BaseStore, an
    ADK memory service, AgentCore retrieval) -- never by stubbing the wider :class:`MemoryStore`.

    * ``embedder`` embeds the query once per turn (shared by the gate, the search and the judge)
      and the judged records that come back without a vector;
    * ``local`` is True when a search costs microseconds in-process: the policy then calls it
      directly; a remote searcher is called under a deadline and a circuit breaker;
    * ``search`` returns the top ``request.top_k`` records of ``request.namespace``, best first;
      it may raise anything on failure (the policy counts it by kind and the turn injects nothing).
    """

    @property
    def embedder(self) -> Embedder: ...

    @property
    def local(self) -> bool: ...

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """Top ``request.top_k`` records of ``request.namespace``, best first.

        ``mode="dense"`` ranks by cosine similarity; ``mode="hybrid"`` fuses that ranking with a
        full-text (BM25) ranking of ``text`` by reciprocal rank fusion
        (:func:`~recallwise.stores.ranking.rrf_fuse`).
        Scores are always the dense relevance ``(1 + cosine) / 2``.
        """
        ...


@runtime_checkable
class AsyncSearcher(Searcher, Protocol):
    """A searcher whose memory is natively async: ``await policy.arecall(...)`` awaits ``asearch``
    instead of sending ``search`` to a worker thread."""

    async def asearch(self, request: SearchRequest) -> list[SearchHit]: ...


@runtime_checkable
class MentionIndex(Protocol):
    """A memory that can say which of some names it mentions (the store-aware gate)."""

    def mentions(self, namespace: str, terms: Sequence[str], *, actor_id: str | None = None) -> set[str]:
        """The ``terms`` (lower-cased words) that occur in this actor's records of ``namespace``."""
        ...


@runtime_checkable
class ProfileIndex(Protocol):
    """A memory that keeps a per-actor profile at write time (:mod:`.profile`): the gate reads it
    in-process, with no search and no round trip to the store."""

    def actor_profile(self, actor_id: str) -> ActorProfile:
        """The actor's profile as of the last commit (an in-process copy, current)."""
        ...

    def domain_of(self, vector: np.ndarray) -> str:
        """The life domain closest to a text's vector (the store's embedder), as its records are filed."""
        ...


@runtime_checkable
class MemoryStore(Searcher, Protocol):
    """A recallwise store: the :class:`Searcher` seam plus events, records and namespaces."""

    url: str

    def create_event(self, event: Event) -> Event: ...

    def list_events(self, actor_id: str, session_id: str | None = None) -> list[Event]: ...

    def add_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]: ...

    def list_records(
        self, namespace: str | None = None, *, actor_id: str | None = None
    ) -> list[MemoryRecord]: ...

    def get_records(self, ids: Sequence[str]) -> dict[str, MemoryRecord]: ...

    def delete_records(self, ids: Sequence[str]) -> int: ...

    def count_records(self) -> int: ...

    def namespaces(self, actor_id: str | None = None) -> list[str]: ...

    def close(self) -> None: ...


class ClosesOnExit:
    """``with store:`` closes the store at the end: a store (or the decision log) that holds a
    connection implements :meth:`close` and inherits the rest."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ThreadedAsyncMethods:
    """``await store.asearch(...)`` and friends for a remote store with a synchronous client
    (psycopg's pool, boto3): each call runs in a worker thread, so an asyncio agent's event loop
    never waits on the network. Same arguments, results and errors as the sync methods."""

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        return await asyncio.to_thread(self.search, request)  # type: ignore[attr-defined]

    async def aadd_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        return await asyncio.to_thread(self.add_records, records)  # type: ignore[attr-defined]

    async def acreate_event(self, event: Event) -> Event:
        return await asyncio.to_thread(self.create_event, event)  # type: ignore[attr-defined]

    async def alist_records(self, *args: Any, **kwargs: Any) -> list[MemoryRecord]:
        return await asyncio.to_thread(self.list_records, *args, **kwargs)  # type: ignore[attr-defined]


def write_transaction(store: Any, actor_id: str) -> contextlib.AbstractContextManager[Any]:
    """``store.transaction(actor_id)``: what is written inside lands together or not at all, and
    read-then-write work for ``actor_id`` is serialized across threads, processes and replicas
    (SQLite and PostgreSQL have it: see theirs). A store without one (AgentCore, where each write
    is a request of its own) gets a no-op: its writes land one by one, as they always did."""
    transaction = getattr(store, "transaction", None)
    return transaction(actor_id) if transaction is not None else contextlib.nullcontext()
