"""Google ADK: a gate in front of any ``BaseMemoryService``, and recallwise's stores as one.

>>> from google.adk.memory import InMemoryMemoryService
>>> from recallwise.integrations.adk import GatedMemoryService
>>> runner = Runner(agent=agent, app_name="app", session_service=sessions,
...                 memory_service=GatedMemoryService(InMemoryMemoryService()))

ADK's ``PreloadMemoryTool`` searches memory before every model call of a turn that has text,
and puts everything the service returns into the request: no top-k, no relevance floor.
``load_memory`` lets the model search. Both call the memory service's ``search_memory``.

:class:`GatedMemoryService` wraps any memory service and changes only ``search_memory``:

* the gate asks first whether a memory lookup can help this query; when it closes, the
  response is empty and the inner service is not asked at all;
* when it opens, the inner service is searched as usual, the judge decides which of the
  memories that came back belong, and only those come back, best first -- the inner
  service's own ``MemoryEntry`` objects, unchanged (at most ``top_k`` are judged).

``add_session_to_memory``, ``add_events_to_memory``, ``add_memory``, ``delete_memory`` and
anything else the inner service offers pass straight through. ``decider=None`` makes the
wrapper transparent. A service that fails a search is counted in :attr:`GatedMemoryService.stats`
by kind (first in ``stats.report()``) and the turn gets no memories -- as ADK's preload tool
does with an exception, but counted instead of logged and forgotten.

:class:`RecallwiseMemoryService` is the other direction: a recallwise store (embedded SQLite,
PostgreSQL, AgentCore) used *as* an ADK memory service, searched by meaning.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Unpack

from ..embeddings import Embedder
from ..errors import InvalidIdError, UsageError
from ..extras import extra_imports
from ..policy import RecallStats
from ..records import MemoryRecord, SearchHit, validate_id
from ..stores.base import MemoryStore, Query, SearchRequest
from ._foreign import (
    FrameworkGate,
    GateKeywords,
    foreign_owned,
    kept_in_order,
    run_sync,
    scope_of,
    scoped,
    score_hits,
)

with extra_imports("adk", "recallwise.integrations.adk"):
    from google.adk.memory import BaseMemoryService, InMemoryMemoryService
    from google.adk.memory.base_memory_service import SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry
    from google.genai import types


__all__ = ["GatedMemoryService", "RecallwiseMemoryService", "entry_text"]


def entry_text(entry: MemoryEntry) -> str:
    """The text of a memory entry: its text parts joined, as ADK's own tools read it."""
    parts = entry.content.parts or []
    return " ".join(p.text for p in parts if p.text).strip()


def _policy_actor(user_id: str) -> str:
    """The actor the policy counts and caches decisions for: the ADK user when its id is safe."""
    try:
        return validate_id(user_id, "user_id")
    except InvalidIdError:
        return "adk-" + hashlib.sha256(str(user_id).encode()).hexdigest()[:24]


# ---- the gate in front of a memory service -----------------------------------------------------


@dataclass
class _Ask:
    """One ``search_memory`` call as ADK made it, and the entries that came back, by record id
    (to hand back the kept ones unchanged)."""

    app_name: str
    user_id: str
    query: str
    found: dict[str, MemoryEntry] = field(default_factory=dict)


class GatedMemoryService(BaseMemoryService, FrameworkGate):
    """An ADK memory service that gates and judges ``inner``'s ``search_memory``.

    The keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider``, ``options``, ``embedder``, ``stats``, ``log``. Its own: ``top_k``, at most this
    many of the memories the service returns are judged (ADK's services return their own count:
    ``InMemoryMemoryService`` up to 10); the gate sets how deep it searches and the context budget
    from it.
    """

    _why = ": its top_k= says how many memories are judged"

    def __init__(self, inner: BaseMemoryService, *, top_k: int = 10, **gate: Unpack[GateKeywords]) -> None:
        if not isinstance(inner, BaseMemoryService):
            raise TypeError(f"GatedMemoryService wraps an ADK BaseMemoryService, got {type(inner).__name__}")
        self._configure(foreign_owned(top_k), **gate)
        self.inner = inner
        self._searcher = _ServiceSearcher(inner, self._judge_embedder, self.stats)
        # one namespace, named after the inner service: what traces and the decision log show
        self.policy = self._policy_over(self._searcher, [type(inner).__name__])

    def __getattr__(self, name: str) -> Any:
        # only called for names this object lacks: a service's own extras pass through
        if name in ("inner", "policy"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    # ---- the one gated call -----------------------------------------------------------------
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        if self.policy is None or not isinstance(query, str) or not query.strip():
            return await self.inner.search_memory(app_name=app_name, user_id=user_id, query=query)
        ask = _Ask(app_name, user_id, query)
        recall = await self.policy.arecall(
            query, actor_id=_policy_actor(user_id), extensions=scoped(self._searcher, ask)
        )
        self.last_recall = recall
        return SearchMemoryResponse(memories=kept_in_order(recall, ask.found))

    # ---- everything else: the inner service's, called as the caller called it (BaseMemoryService
    # defines these, so __getattr__ would not reach them)
    async def add_session_to_memory(self, session: Any) -> None:
        await self.inner.add_session_to_memory(session)

    async def add_events_to_memory(self, *args: Any, **kwargs: Any) -> None:
        await self.inner.add_events_to_memory(*args, **kwargs)

    async def add_memory(self, *args: Any, **kwargs: Any) -> None:
        await self.inner.add_memory(*args, **kwargs)

    async def delete_memory(self, *args: Any, **kwargs: Any) -> None:
        await self.inner.delete_memory(*args, **kwargs)


class _ServiceSearcher:
    """An ADK memory service searched by recallwise's policy (the ``Searcher`` seam).

    It serves its :class:`GatedMemoryService`'s searches only: the ``search_memory`` call being
    decided (its request's scope, see :func:`~recallwise.integrations._foreign.scoped`) gives the
    app, user and query. ADK's memories carry no relevance score, so each hit is scored ``(1 + cosine) / 2``
    by recallwise's embedder (one batch; the judge reuses the vectors). Hits keep the service's
    order, at most ``top_k``; entries without text are skipped and counted (``records_skipped``).
    """

    def __init__(
        self, inner: BaseMemoryService, embedder: Callable[[], Embedder], stats: RecallStats
    ) -> None:
        self.inner = inner
        self._embedder = embedder
        self.stats = stats
        # ADK's in-process keyword service answers in microseconds; anything else may be remote.
        self.local = isinstance(inner, InMemoryMemoryService)

    @property
    def embedder(self) -> Embedder:
        return self._embedder()

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """:meth:`asearch` for a direct ``policy.recall`` (ADK's services are async only)."""
        return run_sync(self.asearch(request))

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        ask: _Ask | None = scope_of(request, self)
        if ask is None:
            raise UsageError("this searcher serves its GatedMemoryService's own searches only")
        response = await self.inner.search_memory(app_name=ask.app_name, user_id=ask.user_id, query=ask.query)
        return self._hits(request.namespace, request.query, request.top_k, ask, response, request.actor_id)

    def _hits(
        self,
        namespace: str,
        query: Query,
        top_k: int,
        ask: _Ask,
        response: SearchMemoryResponse,
        actor_id: str | None,
    ) -> list[SearchHit]:
        records: list[MemoryRecord] = []
        skipped = 0
        for index, entry in enumerate(response.memories or []):
            if len(records) >= top_k:
                break
            text = entry_text(entry)
            if not text:
                skipped += 1  # nothing a judge (or ADK's tools) could read
                continue
            record_id = entry.id or f"memory-{index}"
            if record_id in ask.found:
                record_id = f"{record_id}#{index}"
            ask.found[record_id] = entry
            records.append(
                MemoryRecord(
                    actor_id=actor_id or _policy_actor(ask.user_id),
                    namespace=namespace,
                    text=text,
                    id=record_id,
                    metadata={"author": entry.author, "timestamp": entry.timestamp},
                )
            )
        if skipped:
            self.stats.add(records_skipped=skipped)
        return score_hits(self.embedder, query, records)


# ---- recallwise's stores as an ADK memory service ------------------------------------------------


def _escape(value: str) -> str:
    return value.replace("%", "%25").replace("/", "%2F")


class RecallwiseMemoryService(BaseMemoryService):
    """A recallwise store (``recallwise.open_store(url)``) as an ADK ``BaseMemoryService``.

    * every event with text becomes one record in ``namespace`` (default
      ``/adk/{app_name}/{user_id}``; ``/`` and ``%`` in the names are escaped), owned by the
      user as recallwise actor; adding a session again changes nothing (record ids come from
      the app, user and event id), so ``add_session_to_memory`` can run after every turn;
    * ``search_memory`` is the store's vector search over ``namespace`` and the
      ``also_search`` templates (e.g. ``"/facts/{user_id}"``, where ``recallwise ingest``
      writes), best first, at most ``top_k``; each entry's ``custom_metadata`` has its
      ``score`` (``(1 + cosine) / 2``) and ``namespace``;
    * ``add_memory`` writes explicit entries; ``delete_memory`` deletes by the entry's id (a
      deleted event comes back if its session is added again).

    Put :class:`GatedMemoryService` in front of it to gate and judge the searches.
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        namespace: str = "/adk/{app_name}/{user_id}",
        also_search: Sequence[str] = (),
        top_k: int = 10,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        self.store = store
        self.namespace = namespace
        self.also_search = list(also_search)
        self.top_k = int(top_k)

    def namespace_for(self, template: str, app_name: str, user_id: str) -> str:
        return template.replace("{app_name}", _escape(app_name)).replace("{user_id}", _escape(user_id))

    @staticmethod
    def record_id(app_name: str, user_id: str, memory_id: str) -> str:
        """The record id of a memory: unique per (app, user, ADK id), stable across processes."""
        digest = hashlib.sha256(json.dumps([app_name, user_id, memory_id]).encode()).hexdigest()
        return f"adk-{digest[:32]}"

    # ---- writes -----------------------------------------------------------------------------
    async def add_session_to_memory(self, session: Any) -> None:
        await self._add_events(session.app_name, session.user_id, session.events, session.id, None)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Any],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        await self._add_events(app_name, user_id, events, session_id, custom_metadata)

    async def _add_events(
        self,
        app_name: str,
        user_id: str,
        events: Sequence[Any],
        session_id: str | None,
        custom_metadata: Mapping[str, object] | None,
    ) -> None:
        namespace = self.namespace_for(self.namespace, app_name, user_id)
        records = []
        for event in events:
            content = getattr(event, "content", None)
            parts = getattr(content, "parts", None) or []
            text = " ".join(p.text for p in parts if getattr(p, "text", None)).strip()
            if not text:
                continue  # tool calls, images: nothing to search by
            records.append(
                MemoryRecord(
                    actor_id=user_id,
                    namespace=namespace,
                    text=text,
                    id=self.record_id(app_name, user_id, event.id),
                    strategy="adk",
                    created_at=float(event.timestamp),
                    metadata={
                        "adk": {
                            "id": event.id,
                            "author": event.author,
                            "role": getattr(content, "role", None),
                            "session_id": session_id,
                            "custom_metadata": dict(custom_metadata or {}),
                        }
                    },
                )
            )
        if records:
            await asyncio.to_thread(self.store.add_records, records)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        namespace = self.namespace_for(self.namespace, app_name, user_id)
        records = []
        for entry in memories:
            text = entry_text(entry)
            if not text:
                continue
            memory_id = entry.id or uuid.uuid4().hex
            record = MemoryRecord(
                actor_id=user_id,
                namespace=namespace,
                text=text,
                id=self.record_id(app_name, user_id, memory_id),
                strategy="adk",
                metadata={
                    "adk": {
                        "id": memory_id,
                        "author": entry.author,
                        "role": entry.content.role,
                        "timestamp": entry.timestamp,
                        "custom_metadata": {**dict(custom_metadata or {}), **entry.custom_metadata},
                    }
                },
            )
            created = _parse_time(entry.timestamp)
            if created is not None:
                record.created_at = created
            records.append(record)
        if records:
            await asyncio.to_thread(self.store.add_records, records)

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        if not memory_id:
            return
        rid = self.record_id(app_name, user_id, memory_id)
        await asyncio.to_thread(self.store.delete_records, [rid])

    # ---- search -----------------------------------------------------------------------------
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        if not isinstance(query, str) or not query.strip():
            return SearchMemoryResponse()
        templates = [self.namespace, *self.also_search]
        namespaces = list(dict.fromkeys(self.namespace_for(t, app_name, user_id) for t in templates))
        asearch = getattr(self.store, "asearch", None)
        hits: list[SearchHit] = []
        for ns in namespaces:
            request = SearchRequest(ns, query, self.top_k, actor_id=user_id, text=query)
            if asearch is not None:
                found = await asearch(request)
            else:
                found = await asyncio.to_thread(self.store.search, request)
            hits.extend(found)
        hits.sort(key=lambda h: -h.score)
        return SearchMemoryResponse(memories=[self._entry(h) for h in hits[: self.top_k]])

    @staticmethod
    def _entry(hit: SearchHit) -> MemoryEntry:
        record = hit.record
        saved = record.metadata.get("adk") if isinstance(record.metadata, dict) else None
        saved = saved if isinstance(saved, dict) else {}
        timestamp = saved.get("timestamp") or datetime.fromtimestamp(record.created_at).isoformat()
        custom = dict(saved.get("custom_metadata") or {})
        custom.update(score=hit.score, namespace=record.namespace)
        return MemoryEntry(
            id=str(saved.get("id") or record.id),
            content=types.Content(role=saved.get("role") or "user", parts=[types.Part(text=record.text)]),
            author=saved.get("author") or None,
            timestamp=timestamp,
            custom_metadata=custom,
        )


def _parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None
