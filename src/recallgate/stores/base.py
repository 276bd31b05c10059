"""The store protocol every backend implements, and helpers they share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..embeddings import Embedder
from ..records import Event, MemoryRecord, SearchHit

__all__ = ["MemoryStore", "Query", "embed_missing", "top_k_indices"]

#: What ``search`` accepts as a query: text (embedded by the store) or a unit vector.
Query = str | np.ndarray


@runtime_checkable
class MemoryStore(Protocol):
    """Events, records, namespaces and search.

    ``local`` is True when a search costs microseconds in-process (the policy then searches
    namespaces one after another instead of through a thread pool).
    """

    url: str
    embedder: Embedder
    local: bool

    def create_event(self, event: Event) -> Event: ...

    def list_events(self, actor_id: str, session_id: str | None = None) -> list[Event]: ...

    def add_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]: ...

    def search(
        self,
        namespace: str,
        query: Query,
        top_k: int = 10,
        *,
        actor_id: str | None = None,
        text: str | None = None,
    ) -> list[SearchHit]: ...

    def list_records(
        self, namespace: str | None = None, *, actor_id: str | None = None
    ) -> list[MemoryRecord]: ...

    def delete_records(self, ids: Sequence[str]) -> int: ...

    def close(self) -> None: ...


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
