"""The store protocol every backend implements, and helpers they share."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

import numpy as np

from ..embeddings import Embedder
from ..errors import UsageError
from ..records import Event, MemoryRecord, SearchHit

__all__ = [
    "BM25_WEIGHT",
    "LEXICAL_WEIGHT",
    "RRF_K",
    "AsyncSearcher",
    "MemoryStore",
    "MentionIndex",
    "Query",
    "SearchMode",
    "SearchRequest",
    "Searcher",
    "ThreadedAsyncMethods",
    "accepts_old_search_call",
    "as_searcher",
    "embed_missing",
    "keyword_terms",
    "rrf_fuse",
    "top_k_indices",
    "where_equal",
    "write_transaction",
]

#: What ``search`` accepts as a query: text (embedded by the store) or a unit vector.
Query = str | np.ndarray
SearchMode = Literal["dense", "hybrid"]

#: Reciprocal rank fusion constant (Cormack et al. 2009 use 60).
RRF_K = 60
#: Weight of the lexical ranking relative to the dense one in rank fusion.
LEXICAL_WEIGHT = 1.0
#: Weight of a BM25 score added to a cosine similarity in score fusion. Fitted on LoCoMo's dev
#: split (recall@5 of all-MiniLM-L6-v2 cosine 0.638 -> 0.680 with BM25 at 0.02; flat 0.01-0.03).
BM25_WEIGHT = 0.02

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words that carry no topic: dropped from full-text queries so BM25 ranks on the rest.
_STOPWORD_TEXT = """a an and are as at be been but by can could did do does for from had has have he her his
how i if in into is it its me my of on or our she should so than that the their them then there these they
this to too us was we were what when where which who whom why will with would you your about any anything
get got just know like make much now some tell want"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def keyword_terms(text: str, limit: int = 32) -> list[str]:
    """Lower-cased content words of ``text`` (stopwords dropped, order kept, no repeats)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS and len(word) > 1:
            seen.setdefault(word, None)
        if len(seen) >= limit:
            break
    return list(seen)


def rrf_fuse(
    dense_order: Sequence[int],
    lexical_order: Sequence[int],
    top_k: int,
    k: int = RRF_K,
    lexical_weight: float = LEXICAL_WEIGHT,
) -> list[int]:
    """Fuse two rankings (lists of candidate indices, best first) by reciprocal rank fusion."""
    fused: dict[int, float] = {}
    for rank, index in enumerate(dense_order):
        fused[index] = fused.get(index, 0.0) + 1.0 / (k + rank + 1)
    for rank, index in enumerate(lexical_order):
        fused[index] = fused.get(index, 0.0) + lexical_weight / (k + rank + 1)
    dense_rank = {index: rank for rank, index in enumerate(dense_order)}
    return sorted(fused, key=lambda i: (-fused[i], dense_rank.get(i, len(dense_rank))))[:top_k]


@dataclass(frozen=True, eq=False)
class SearchRequest:
    """One search of one namespace: what every searcher's ``search`` takes.

    * ``namespace``: a resolved namespace (``/prefs/u1``), searched for ``actor_id``'s records;
    * ``query``: text (embedded by the searcher) or the turn's unit vector (the policy passes the
      vector it embedded once for the gate, the search and the judge);
    * ``top_k``: how many records, best first;
    * ``text``: the message's text, for a lexical ranking (``mode="hybrid"``) or a framework
      memory that searches by text; ``mode``: ``"dense"`` or ``"hybrid"`` (see :func:`rrf_fuse`);
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


_OLD_CALL = ("query", "top_k", "actor_id", "text", "mode")
SearchMethod = TypeVar("SearchMethod", bound=Callable[..., Any])


def _old_call(owner: str, namespace: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> SearchRequest:
    """A :class:`SearchRequest` from the old call ``search(namespace, query, top_k=10, *,
    actor_id=None, text=None, mode="dense", **extras)`` (extras become extensions), warned."""
    if isinstance(namespace, SearchRequest):
        raise UsageError(f"{owner}.search(request) takes the SearchRequest alone")
    if not isinstance(namespace, str) or len(args) > 2:
        raise UsageError(f"{owner}.search takes a SearchRequest, got {type(namespace).__name__}")
    given = dict(zip(_OLD_CALL, args, strict=False))
    for name in given:
        if name in kwargs:
            raise UsageError(f"{owner}.search got {name!r} twice")
    given.update({k: v for k, v in kwargs.items() if k in _OLD_CALL})
    if "query" not in given:
        raise UsageError(f"{owner}.search takes a SearchRequest (the old call needs a query)")
    extras = {k: v for k, v in kwargs.items() if k not in _OLD_CALL and v is not None}
    warnings.warn(
        f"{owner}.search(namespace, query, top_k, ...) is deprecated: pass "
        f"SearchRequest(namespace, query, top_k, actor_id=..., text=..., mode=...)",
        DeprecationWarning,
        stacklevel=3,
    )
    return SearchRequest(namespace, extensions=extras, **given)


def accepts_old_search_call(method: SearchMethod) -> SearchMethod:
    """A store's ``search(self, request)`` that may still be called the old way for one release
    (``store.search(namespace, query, top_k, actor_id=...)``), with a :class:`DeprecationWarning`;
    keywords beyond the old ones (PostgreSQL's ``plan=``) become the request's extensions."""

    @functools.wraps(method)
    def search(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(request, SearchRequest):
            request = _old_call(type(self).__name__, request, args, kwargs)
        return method(self, request)

    return cast(SearchMethod, search)


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

    A searcher written to the old signature ``search(namespace, query, top_k, *, actor_id, text,
    mode)`` still works for one release: :func:`as_searcher` adapts it, with a deprecation warning.
    """

    @property
    def embedder(self) -> Embedder: ...

    @property
    def local(self) -> bool: ...

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """Top ``request.top_k`` records of ``request.namespace``, best first.

        ``mode="dense"`` ranks by cosine similarity; ``mode="hybrid"`` fuses that ranking with a
        full-text (BM25) ranking of ``text`` by reciprocal rank fusion (see :func:`rrf_fuse`).
        Scores are always the dense relevance ``(1 + cosine) / 2``.
        """
        ...


@runtime_checkable
class AsyncSearcher(Searcher, Protocol):
    """A searcher whose memory is natively async: ``await policy.arecall(...)`` awaits ``asearch``
    instead of sending ``search`` to a worker thread."""

    async def asearch(self, request: SearchRequest) -> list[SearchHit]: ...


def _old_signature(method: Any) -> bool:
    """True for ``search(namespace, query, ...)``: a first parameter named ``namespace``, or two or
    more required positional parameters."""
    try:
        parameters = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: assume the current signature
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if positional and positional[0].name == "namespace":
        return True
    return sum(p.default is p.empty for p in positional) >= 2


class _OldSignatureSearcher:
    """A searcher written to the old ``search(namespace, query, top_k, *, actor_id, text, mode)``,
    called with a :class:`SearchRequest` (``mode`` only passed when hybrid, as it always was)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def embedder(self) -> Embedder:
        return self.inner.embedder

    @property
    def local(self) -> bool:
        return bool(getattr(self.inner, "local", False))

    @staticmethod
    def _args(request: SearchRequest) -> tuple[tuple[Any, ...], dict[str, Any]]:
        keywords: dict[str, Any] = {"actor_id": request.actor_id, "text": request.text}
        if request.mode != "dense":
            keywords["mode"] = request.mode
        return (request.namespace, request.query, request.top_k), keywords

    def search(self, request: SearchRequest) -> list[SearchHit]:
        args, keywords = self._args(request)
        return self.inner.search(*args, **keywords)

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        args, keywords = self._args(request)
        return await self.inner.asearch(*args, **keywords)


def as_searcher(searcher: Searcher) -> Searcher:
    """``searcher`` itself, or an adapter when its ``search`` has the old signature (one release)."""
    if not _old_signature(searcher.search):
        return searcher
    warnings.warn(
        f"{type(searcher).__name__}.search(namespace, query, top_k, ...) is the old Searcher "
        "signature: implement search(request: SearchRequest) (and asearch(request)); adapted "
        "for this release",
        DeprecationWarning,
        stacklevel=3,
    )
    return _OldSignatureSearcher(searcher)


@runtime_checkable
class MentionIndex(Protocol):
    """A memory that can say which of some names it mentions (the store-aware gate)."""

    def mentions(self, namespace: str, terms: Sequence[str], *, actor_id: str | None = None) -> set[str]:
        """The ``terms`` (lower-cased words) that occur in this actor's records of ``namespace``."""
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


def where_equal(columns: dict[str, object], placeholder: str) -> tuple[str, list[object]]:
    """`` WHERE a = ? AND b = ?`` for the columns whose value is not None, and the values.

    ``placeholder`` is the driver's parameter mark (``?`` for sqlite3, ``%s`` for psycopg).
    """
    given = {name: value for name, value in columns.items() if value is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{name} = {placeholder}" for name in given), list(given.values())


class ThreadedAsyncMethods:
    """``await store.asearch(...)`` and friends for a remote store with a synchronous client
    (psycopg's pool, boto3): each call runs in a worker thread, so an asyncio agent's event loop
    never waits on the network. Same arguments, results and errors as the sync methods."""

    async def asearch(self, request: SearchRequest, *args: Any, **kwargs: Any) -> list[SearchHit]:
        # (the old call's arguments pass through, for one release, to ``search``'s warning)
        return await asyncio.to_thread(self.search, request, *args, **kwargs)  # type: ignore[attr-defined]

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


def embed_missing(embedder: Embedder, records: Sequence[MemoryRecord]) -> None:
    """Embed, in one batch, the rendered text of every record that has no embedding yet."""
    todo = [r for r in records if r.embedding is None]
    if not todo:
        return
    vectors = embedder.embed([r.rendered for r in todo])
    for record, vector in zip(todo, vectors, strict=True):
        record.embedding = vector


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first (ties broken by position)."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.lexsort((part, -scores[part]))]
