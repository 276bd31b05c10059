"""The decision cache: a repeated message in a session reuses its query vector and gate answers."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from .stats import RecallStats

__all__ = ["DecisionCache"]

Key = tuple[str, str | None, str, bool]


class DecisionCache:
    """A bounded LRU of (actor, session, text, with the follow-up question) -> (query vector,
    gate answers); thread-safe.

    Gate answers are only put after the decider answered: a failure is retried next time.
    Hits and misses are counted in ``stats`` (``cache_hits`` / ``cache_misses``).
    """

    def __init__(self, size: int, stats: RecallStats) -> None:
        self.size = max(int(size), 0)
        self.stats = stats
        self._entries: OrderedDict[Key, tuple[np.ndarray, dict[str, Any] | None]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> tuple[np.ndarray, dict[str, Any] | None] | None:
        if not self.size:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        self.stats.add(**({"cache_hits": 1} if entry is not None else {"cache_misses": 1}))
        return entry

    def put(self, key: Key, vector: np.ndarray | None, answers: dict[str, Any] | None) -> None:
        if not self.size or vector is None:
            return
        with self._lock:
            self._entries[key] = (vector, answers)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
