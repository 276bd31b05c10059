"""What the Strands, LangGraph and ADK gates share: one RecallPolicy serving many framework searches.

A framework's search carries its own scope that the policy's ``Searcher`` seam does not: which
Strands stores were asked and for how many entries, a LangGraph namespace prefix and filter, an
ADK app and user. The gate runs ``policy.arecall`` (or ``recall``) inside :func:`searching`, which
puts that scope in a context variable; the policy calls the searcher in the same context (awaited
natively, or in a worker thread that copies it), so the searcher reads its own search's scope with
:func:`current_search`. Concurrent searches never see each other's, and the policy's namespaces stay
names a person can read in traces (a store's name, the inner store's type), not per-call keys.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, TypeVar

import numpy as np

from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import Recall, RecallOptions, RecallPolicy, RecallStats
from ..policy.config import threshold_options
from ..records import MemoryRecord, SearchHit, score_from_cosine
from ..stores.base import Searcher

__all__ = [
    "NO_BUDGET",
    "Keep",
    "at_most",
    "current_search",
    "foreign_policy",
    "kept_in_order",
    "lazy_embedder",
    "run_sync",
    "score_hits",
    "searching",
]

T = TypeVar("T")
Keep = Literal["absolute", "relative", "both"]

#: A gate returns the framework's own items, not the policy's packed context block: no size
#: budget may drop or cut a kept record (the framework, or the model, reads what comes back).
#: Exact duplicates are still left out of the block, once per turn.
NO_BUDGET: dict[str, Any] = {"max_context_chars": 1 << 40, "max_record_chars": 1 << 40}

# The framework search being decided, as (the searcher it is for, its scope). One variable for
# every gate (context variables are made once, at module level); the owner tells gates apart.
_SEARCH: ContextVar[tuple[object, Any] | None] = ContextVar("recallwise_foreign_search", default=None)


@contextmanager
def searching(searcher: object, scope: Any) -> Iterator[Any]:
    """While the block runs (a ``policy.recall`` / ``await policy.arecall``), ``searcher`` serves
    ``scope``: :func:`current_search` returns it in this context and in the policy's calls."""
    token = _SEARCH.set((searcher, scope))
    try:
        yield scope
    finally:
        _SEARCH.reset(token)


def current_search(searcher: object) -> Any | None:
    """The scope ``searcher`` serves in this context, or None outside its gate's searches."""
    found = _SEARCH.get()
    return found[1] if found is not None and found[0] is searcher else None


def run_sync(call: Coroutine[Any, Any, T]) -> T:
    """A synchronous ``search`` over a natively async memory (a direct ``policy.recall``; the gates
    themselves await ``asearch``): the coroutine runs in a fresh event loop of this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(call)
    call.close()
    raise UsageError("this memory is async: on a thread running an event loop, use `await policy.arecall`")


def foreign_policy(
    searcher: Searcher,
    decider: Any,
    namespace: str,
    *,
    top_k: int,
    keep: Keep,
    max_records: int | None,
    thresholds: Mapping[str, float] | None,
    stats: RecallStats | None,
    log: Any = None,
) -> RecallPolicy:
    """The policy of a LangGraph or ADK gate: one namespace (the inner memory), thresholds given
    as ``{"gate": p, "judge": p, "judge_relative": d}``, no context budget."""
    options = RecallOptions.of(
        None,
        {
            "top_k": top_k,
            # the integration says how deep to search (its page size, or its top_k): not the
            # embedded decider's own deeper default
            "gated_top_k": top_k,
            "keep": keep,
            "max_records": max_records,
            **NO_BUDGET,
            **threshold_options(thresholds),
        },
    )
    return RecallPolicy(
        searcher, decider=decider, namespaces=[namespace], options=options, stats=stats, log=log
    )


def at_most(*caps: int | None) -> int | None:
    """The smallest of the caps given (None: no cap)."""
    given = [c for c in caps if c is not None]
    return min(given) if given else None


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


def score_hits(embedder: Embedder, query: Any, records: Sequence[MemoryRecord]) -> list[SearchHit]:
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


def lazy_embedder(given: Embedder | None) -> Callable[[], Embedder]:
    """The embedder to use, loaded on first use (the default model takes ~0.35 s to load)."""
    chosen: list[Embedder] = [given] if given is not None else []

    def get() -> Embedder:
        if not chosen:
            chosen.append(default_embedder())
        return chosen[0]

    return get
