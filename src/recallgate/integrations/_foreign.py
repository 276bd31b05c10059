"""What the LangGraph and ADK gates share: one RecallPolicy over a foreign memory, one search at a time.

A framework's search (a LangGraph ``SearchOp``, an ADK ``search_memory`` call) carries its own
scope -- a namespace prefix and filter, an app and user -- that the policy knows nothing of. Each
such search is *opened* as a :class:`Turn` under a fresh key; the policy is asked to search that
key as its one namespace, and the gate's searcher looks the key up to make the framework's call.
The key is closed when the turn is over, so concurrent searches never see each other's scope.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import numpy as np

from ..deciders import Decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import Recall, RecallPolicy, RecallStats
from ..records import MemoryRecord, SearchHit, score_from_cosine

__all__ = [
    "THRESHOLD_KEYS",
    "ForeignGate",
    "Keep",
    "Turn",
    "Turns",
    "kept_in_order",
    "score_hits",
    "wait_on_loop",
]

#: ``thresholds=`` keys, as GatedAgentCoreMemorySessionManager takes them
THRESHOLD_KEYS = {"gate": "gate_threshold", "judge": "judge_threshold", "judge_relative": "relative_delta"}
# A search's results are returned to the framework, not packed into a prompt block here: no
# budget may cut a kept record (the framework packs, or the model reads, what comes back).
_NO_BUDGET = 1 << 40
# Today's RecallPolicy.recall takes no per-turn namespaces; the redesigned one does (CONTRACT.md).
# Until then a turn's key travels as the session id into the policy's one namespace template.
_PER_TURN_NAMESPACES = "namespaces" in inspect.signature(RecallPolicy.recall).parameters

T = TypeVar("T")
Keep = Literal["absolute", "relative", "both"]


@dataclass
class Turn(Generic[T]):
    """One framework search while the policy runs it: its request, its loop, what came back."""

    request: T
    #: the event loop of an async caller: a sync search from a worker thread runs the
    #: framework's async call there (the inner store's own async API, on its own loop)
    loop: asyncio.AbstractEventLoop | None = None
    #: record id -> the framework's own item, to hand back the kept ones unchanged
    found: dict[str, Any] = field(default_factory=dict)


class Turns(Generic[T]):
    """The open turns by key. Thread-safe: the policy may search from its worker threads."""

    def __init__(self) -> None:
        self._open: dict[str, Turn[T]] = {}
        self._lock = threading.Lock()
        self._seq = itertools.count(1)

    def open(self, label: str, turn: Turn[T]) -> str:
        seq = next(self._seq)
        # A policy that takes per-turn namespaces shows the key in traces and logs: keep it
        # readable. Otherwise it travels as a session id, which allows only safe characters.
        # (braces would read as a namespace template's placeholder)
        readable = label.replace("{", "(").replace("}", ")")
        key = f"{readable}#{seq}" if _PER_TURN_NAMESPACES else f"turn-{seq}"
        with self._lock:
            self._open[key] = turn
        return key

    def get(self, key: str) -> Turn[T]:
        with self._lock:
            turn = self._open.get(key)
        if turn is None:
            raise UsageError(f"no open search {key!r}: this searcher serves its gate's own turns only")
        return turn

    def close(self, key: str) -> None:
        with self._lock:
            self._open.pop(key, None)


class ForeignGate:
    """A RecallPolicy whose one namespace is whichever turn is being searched."""

    def __init__(
        self,
        searcher: Any,
        decider: Decider | Any,
        *,
        stats: RecallStats | None,
        top_k: int,
        keep: Keep,
        max_records: int | None,
        thresholds: Mapping[str, float] | None,
        log: Any = None,
    ) -> None:
        unknown = set(thresholds or {}) - set(THRESHOLD_KEYS)
        if unknown:
            raise UsageError(f"unknown threshold(s) {sorted(unknown)}; use gate, judge, judge_relative")
        given = dict(thresholds or {})
        namespaces = ["(the turn's own)"] if _PER_TURN_NAMESPACES else ["{sessionId}"]
        # cast: the policy reads only the Searcher seam (CONTRACT.md), which `searcher` implements
        self.policy = RecallPolicy(
            searcher,
            decider=decider,
            namespaces=namespaces,
            top_k=top_k,
            keep=keep,
            max_records=max_records,
            max_context_chars=_NO_BUDGET,
            stats=stats,
            log=log,
            gate_threshold=given.get("gate"),
            judge_threshold=given.get("judge"),
            relative_delta=given.get("judge_relative"),
        )

    @property
    def stats(self) -> RecallStats:
        return self.policy.stats

    def recall(self, text: str, *, actor_id: str, key: str) -> Recall:
        policy: Any = self.policy
        if _PER_TURN_NAMESPACES:
            return policy.recall(text, actor_id=actor_id, namespaces=[key])
        return policy.recall(text, actor_id=actor_id, session_id=key)

    async def arecall(self, text: str, *, actor_id: str, key: str) -> Recall:
        policy: Any = self.policy
        if _PER_TURN_NAMESPACES:
            return await policy.arecall(text, actor_id=actor_id, namespaces=[key])
        return await policy.arecall(text, actor_id=actor_id, session_id=key)

    def close(self) -> None:
        self.policy.close()


def kept_in_order(recall: Recall, found: Mapping[str, Any]) -> list[Any]:
    """The framework's items the judge kept, best first.

    The policy drops a record from its context block when its text repeats a kept one; two
    items with the same text are still two items to a store, judged alike: both come back.
    """
    kept_ids = {k.record.id for k in recall.records}
    kept_texts = {k.text for k in recall.records}
    kept = [c for c in recall.trace.candidates if c.id in kept_ids or c.text in kept_texts]
    # best first by the judge (by the search score where it gave none); ties keep the search's order
    kept.sort(key=lambda c: -(c.judge_p if c.judge_p is not None else c.score))
    return [found[c.id] for c in kept if c.id in found]


def score_hits(embedder: Embedder, query: Any, records: list[MemoryRecord]) -> list[SearchHit]:
    """Hits for records whose memory gave no relevance score: ``(1 + cosine) / 2`` by ``embedder``.

    The records get their vectors here, in one batch, so the judge does not embed them again.
    """
    if not records:
        return []
    vector = embedder.embed([query])[0] if isinstance(query, str) else np.asarray(query, dtype=np.float32)
    vectors = embedder.embed([r.rendered for r in records])
    for record, row in zip(records, vectors, strict=True):
        record.embedding = row
    return [
        SearchHit(record, score_from_cosine(float(row @ vector)))
        for record, row in zip(records, vectors, strict=True)
    ]


def wait_on_loop(loop: asyncio.AbstractEventLoop | None, call: Callable[[], Awaitable[T]]) -> T:
    """Run the async ``call`` from a synchronous search.

    From a worker thread while an async caller waits on ``loop``: on that loop (where the
    framework's clients live). Without a loop (a sync caller): in a fresh loop of this thread.
    """
    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            return asyncio.run_coroutine_threadsafe(_as_coroutine(call), loop).result()
        raise UsageError("a synchronous search cannot wait on its own running event loop; use asearch")
    return asyncio.run(_as_coroutine(call))


async def _as_coroutine(call: Callable[[], Awaitable[T]]) -> T:
    return await call()


def lazy_embedder(given: Embedder | None) -> Callable[[], Embedder]:
    """The embedder to use, loaded on first use (the default model takes ~0.35 s to load)."""
    chosen: list[Embedder] = [given] if given is not None else []

    def get() -> Embedder:
        if not chosen:
            chosen.append(default_embedder())
        return chosen[0]

    return get
