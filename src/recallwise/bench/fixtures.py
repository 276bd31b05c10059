"""What the latency bench measures against: a realistically sized store, and a remote one."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from ..records import MemoryRecord, SearchHit
from ..stores.base import MemoryStore

__all__ = ["DelayedStore", "add_synthetic_records"]


class DelayedStore:
    """A store wrapper whose searches take at least ``delay_ms``: a remote memory service.

    Marked non-local, so the policy searches its namespaces concurrently, as the AgentCore
    session manager does with one thread per namespace.
    """

    local = False

    def __init__(self, store: MemoryStore, delay_ms: float) -> None:
        self.inner = store
        self.delay_s = delay_ms / 1000.0
        self.url = store.url
        self.embedder = store.embedder
        self.searches = 0
        self._lock = threading.Lock()

    def search(self, *args: Any, **kwargs: Any) -> list[SearchHit]:
        started = time.perf_counter()
        hits = self.inner.search(*args, **kwargs)
        with self._lock:
            self.searches += 1
        remaining = self.delay_s - (time.perf_counter() - started)
        if remaining > 0:
            time.sleep(remaining)
        return hits

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def add_synthetic_records(store: MemoryStore, count: int, namespaces: int = 100, seed: int = 7) -> int:
    """Fill the store with ``count`` records of other actors (random unit vectors, no embedding
    cost) so searches and memory are measured against a realistically sized store."""
    if count <= 0:
        return 0
    rng = np.random.default_rng(seed)
    dim = store.embedder.dimension
    batch = 5000
    for start in range(0, count, batch):
        n = min(batch, count - start)
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        records = []
        for i in range(n):
            actor = f"synthetic-{(start + i) % namespaces}"
            records.append(
                MemoryRecord(
                    actor_id=actor,
                    namespace=f"/facts/{actor}",
                    text=f"Synthetic memory {start + i} of {actor}.",
                    embedding=vectors[i],
                )
            )
        store.add_records(records)
    return count
