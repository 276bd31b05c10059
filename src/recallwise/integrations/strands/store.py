"""RecallwiseMemoryStore: a namespace of a recallwise store as a read-only Strands ``MemoryStore``."""

from __future__ import annotations

import asyncio
from typing import Any

from strands.memory import MemoryEntry
from strands.memory import MemoryStore as StrandsMemoryStore
from strands.memory.types import SearchOptions

from ...records import resolve_namespace
from ...stores.base import SearchRequest


class RecallwiseMemoryStore(StrandsMemoryStore):
    """One namespace of a recallwise store as a read-only Strands ``MemoryStore``.

    ``search`` is the store's dense (semantic) search, as a hosted memory's retrieval is: the top
    ``max_search_results`` records by cosine, content = the record's stored text, metadata
    ``_id`` / ``_score`` (the relevance in [0, 1]) / ``_namespace``. Runs in a worker thread so
    the agent's event loop never waits on the store.
    """

    def __init__(
        self,
        store: Any,
        namespace: str,
        *,
        actor_id: str,
        session_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        max_search_results: int | None = None,
    ) -> None:
        self.store = store
        self.actor_id = actor_id
        self.namespace = resolve_namespace(namespace, actor_id=actor_id, session_id=session_id)
        self.name = name or namespace.strip("/").split("/")[0] or "recallwise"
        self.description = description
        self.max_search_results = max_search_results
        self.writable = False
        self.extraction = None

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        wanted = options.get("max_search_results") if options is not None else None
        top_k = wanted or self.max_search_results or 5
        request = SearchRequest(self.namespace, query, top_k, actor_id=self.actor_id)
        hits = await asyncio.to_thread(self.store.search, request)
        return [
            MemoryEntry(
                content=hit.record.text,
                metadata={"_id": hit.record.id, "_score": hit.score, "_namespace": self.namespace},
            )
            for hit in hits
        ]
