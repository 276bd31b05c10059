"""What the Strands, LangGraph, ADK and mem0 gates share: one RecallPolicy serving many framework searches.

A framework's search carries its own scope that the policy's namespaces do not: which Strands
stores were asked and for how many entries, a LangGraph namespace prefix and filter, an ADK app
and user. The gate passes that scope to ``policy.recall`` / ``arecall`` as a search extension
(:func:`scoped`); the policy sends it with every :class:`~recallwise.stores.base.SearchRequest`
of the turn, and the gate's searcher reads its own scope back with :func:`scope_of`. Concurrent
searches never see each other's (each request carries its own), and the policy's namespaces stay
names a person can read in traces (a store's name, the inner store's type), not per-call keys.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np

from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import Recall, RecallOptions, RecallPolicy, RecallStats
from ..policy.config import threshold_options
from ..policy.options import shorthand_value, with_shorthand
from ..records import MemoryRecord, SearchHit, score_from_cosine
from ..stores.base import Searcher, SearchRequest

__all__ = [
    "NO_BUDGET",
    "SCOPE",
    "Keep",
    "at_most",
    "foreign_owned",
    "foreign_policy",
    "gate_options",
    "kept_in_order",
    "lazy_embedder",
    "run_sync",
    "scope_of",
    "scoped",
    "score_hits",
]

T = TypeVar("T")
Keep = Literal["absolute", "relative", "both"]

#: A gate returns the framework's own items, not the policy's packed context block: no size
#: budget may drop or cut a kept record (the framework, or the model, reads what comes back).
#: Exact duplicates are still left out of the block, once per turn.
NO_BUDGET: dict[str, Any] = {"max_context_chars": 1 << 40, "max_record_chars": 1 << 40}

#: The key of a framework gate's search scope in ``SearchRequest.extensions``: the searcher it is
#: for, and the scope (a policy's searcher is its gate's own, but a scope is never read by another).
SCOPE = "recallwise.framework_scope"


def scoped(searcher: object, scope: Any) -> dict[str, Any]:
    """The extensions that hand ``scope`` to ``searcher`` in a ``policy.recall(..., extensions=)``."""
    return {SCOPE: (searcher, scope)}


def scope_of(request: SearchRequest, searcher: object) -> Any | None:
    """The scope ``request`` carries for ``searcher``, or None (a search from outside its gate)."""
    found = request.extensions.get(SCOPE)
    if isinstance(found, tuple) and len(found) == 2 and found[0] is searcher:
        return found[1]
    return None


def run_sync(call: Coroutine[Any, Any, T]) -> T:
    """A synchronous ``search`` over a natively async memory (a direct ``policy.recall``; the gates
    themselves await ``asearch``): the coroutine runs in a fresh event loop of this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(call)
    call.close()
    raise UsageError("this memory is async: on a thread running an event loop, use `await policy.arecall`")


def gate_options(
    what: str,
    options: RecallOptions | None,
    *,
    given: Mapping[str, Any] | None = None,
    owned: Mapping[str, Any] | None = None,
    thresholds: Mapping[str, float] | None = None,
    why: str = "",
    stacklevel: int = 3,
) -> RecallOptions:
    """The options a framework gate's policy runs with: the caller's ``options`` (a
    :class:`RecallOptions`, the same object a policy takes), then the flat keywords the caller
    gave the gate (``given``: ``keep=``, ``max_records=``; a None is not given), then what the gate
    sets itself (``owned``, flat names). The caller setting an owned option is a
    :class:`UsageError` saying ``why`` the gate owns it, never a silent override.

    ``thresholds`` is the old ``{"gate": p, ...}`` dialect: still read, with a DeprecationWarning.
    """
    if options is not None and not isinstance(options, RecallOptions):
        raise UsageError(f"{what}(options=...) must be a recallwise.RecallOptions, got {options!r}")
    flat = {name: value for name, value in (given or {}).items() if value is not None}
    if thresholds is not None:
        warnings.warn(
            f"{what}(thresholds={{...}}) is deprecated: pass options=RecallOptions(thresholds="
            "ThresholdOptions(gate=..., judge=...)), with the same role names",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        flat = {**threshold_options(thresholds), **flat}  # an unknown role fails here
    base = options if options is not None else RecallOptions()
    default = RecallOptions()
    clash = sorted(
        n for n in (owned or {}) if n in flat or shorthand_value(base, n) != shorthand_value(default, n)
    )
    if clash:
        raise UsageError(f"{what} sets {', '.join(clash)} itself{why}")
    return with_shorthand(base, {**flat, **(owned or {})})


def foreign_policy(
    searcher: Searcher,
    decider: Any,
    namespace: str,
    *,
    options: RecallOptions,
    stats: RecallStats | None,
    log: Any = None,
) -> RecallPolicy:
    """The policy of a LangGraph, ADK or mem0 gate: one namespace (the inner memory)."""
    return RecallPolicy(
        searcher, decider=decider, namespaces=[namespace], options=options, stats=stats, log=log
    )


def foreign_owned(top_k: int) -> dict[str, Any]:
    """What a gate over one foreign memory sets itself: how deep it searches (its page size, or
    its ``top_k``: not the embedded decider's own deeper default), and no context budget."""
    return {"top_k": top_k, "gated_top_k": top_k, **NO_BUDGET}


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


def unique_key(base: str, taken: Mapping[str, Any]) -> str:
    """``base``, or ``base#2``, ``base#3``, ... : the first not in ``taken`` (two framework items
    with the same id are still two candidates)."""
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"
