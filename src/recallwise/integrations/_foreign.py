"""What the framework gates share: the same keywords (:class:`FrameworkGate`), and one RecallPolicy
serving many framework searches.

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
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypedDict, TypeVar, Unpack

import numpy as np

from ..deciders import Decider, default_decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import DecisionLog, Recall, RecallOptions, RecallPolicy, RecallStats
from ..policy.options import shorthand_value, with_shorthand
from ..records import MemoryRecord, SearchHit, score_from_cosine, validate_id
from ..stores.base import Searcher, SearchRequest

__all__ = [
    "DEFAULT_DECIDER",
    "NO_BUDGET",
    "SCOPE",
    "CountingSearcher",
    "FrameworkGate",
    "GateKeywords",
    "StoreGate",
    "TurnGate",
    "at_most",
    "check_over_fetch",
    "foreign_owned",
    "gate_options",
    "is_searcher",
    "kept_in_order",
    "lazy_embedder",
    "run_sync",
    "scope_of",
    "scoped",
    "score_hits",
]

T = TypeVar("T")

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


class _DefaultDecider:
    """The ``decider`` of a gate when it is left out: the offline embedded one."""

    def __repr__(self) -> str:
        return "<the embedded decider>"


#: A gate's ``decider`` left out: the offline embedded decider (``None`` makes it transparent).
DEFAULT_DECIDER: Any = _DefaultDecider()


def gate_options(
    what: str, options: RecallOptions | None, *, owned: Mapping[str, Any], why: str
) -> RecallOptions:
    """The options a framework gate's policy runs with: the caller's ``options`` (a
    :class:`RecallOptions`, the same object a policy takes) with what the gate sets itself
    (``owned``, by shorthand name). The caller setting an owned option is a :class:`UsageError`
    saying ``why`` the gate owns it, never a silent override."""
    if options is not None and not isinstance(options, RecallOptions):
        raise UsageError(f"{what}(options=...) must be a recallwise.RecallOptions, got {options!r}")
    base = options if options is not None else RecallOptions()
    default = RecallOptions()
    clash = sorted(n for n in owned if shorthand_value(base, n) != shorthand_value(default, n))
    if clash:
        raise UsageError(f"{what} sets {', '.join(clash)} itself{why}")
    return with_shorthand(base, owned)


def check_over_fetch(over_fetch: Any) -> float:
    """A gate's ``over_fetch`` (a number >= 1): the framework's memory is asked for that many times
    the entries the framework asked for, so the judge can reach ones the memory ranked lower."""
    if isinstance(over_fetch, bool) or not (
        isinstance(over_fetch, (int, float)) and math.isfinite(over_fetch) and over_fetch >= 1
    ):
        raise UsageError(f"over_fetch must be a number >= 1, got {over_fetch!r}")
    return float(over_fetch)


class GateKeywords(TypedDict, total=False):
    """The keywords every framework gate takes, with the same types and meaning on each (a gate's
    ``**gate`` is these; the AgentCore drop-in, whose ``**`` is upstream's, names them one by one).
    """

    #: the decision backend; left out: the offline embedded one; ``None``: transparent (every call
    #: goes straight to the framework's memory: the stock behaviour, the control arm)
    decider: Decider | Any | None
    #: the one place thresholds, the keep rule, limits and timeouts are given; what the gate sets
    #: itself is refused with a UsageError naming it
    options: RecallOptions | None
    #: recallwise's embedder for the query and the memories' text; left out: the decider's own (its
    #: judge was fitted on that model's vectors), else the offline default (one rule on every gate)
    embedder: Embedder | None
    #: the counters to add to (share one between gates to pool counts); ``gate.stats`` either way
    stats: RecallStats | None
    #: the opt-in decision log (a path), as ``RecallPolicy(log=...)``
    log: DecisionLog | str | os.PathLike[str] | None


class FrameworkGate:
    """What every framework gate is: a policy in front of a framework's memory, configured by
    :class:`GateKeywords` on every gate (Strands' ``MemoryGate``, the AgentCore drop-in, LangGraph's
    ``GatedStore``, ADK's ``GatedMemoryService``, ``GatedMem0``).

    :attr:`stats` counts what it did (``stats.report()`` puts errors first); :attr:`policy` decides
    the gated calls (None when transparent); :attr:`last_recall` is the most recent decision
    (trace included); :meth:`close` releases the policy's worker threads. A gate says in ``_owned``
    (shorthand names) which options it sets itself, and in ``_why`` why.
    """

    _owned: Mapping[str, Any] = MappingProxyType({})
    _why: str = ""

    decider: Decider | Any | None
    options: RecallOptions
    stats: RecallStats
    policy: RecallPolicy | None
    last_recall: Recall | None

    def _configure(self, owned: Mapping[str, Any] | None = None, **gate: Unpack[GateKeywords]) -> None:
        """Set what every gate has (a gate's ``__init__`` calls it first, so a wrong keyword fails
        before anything is built); ``owned`` replaces the class's ``_owned`` for this gate."""
        what = type(self).__name__
        unknown = sorted(set(gate) - set(GateKeywords.__annotations__))
        if unknown:  # what a signature would refuse: a misspelt keyword must not pass unseen
            raise TypeError(
                f"{what}() got unexpected keyword argument(s) {', '.join(unknown)}; a gate takes "
                f"{', '.join(GateKeywords.__annotations__)} and its own"
            )
        self.options = gate_options(
            what, gate.get("options"), owned=self._owned if owned is None else owned, why=self._why
        )
        decider = gate.get("decider", DEFAULT_DECIDER)
        self.decider = default_decider() if decider is DEFAULT_DECIDER else decider
        given = gate.get("stats")
        self.stats = given if given is not None else RecallStats()
        if self.decider is None:
            self.stats.decider = None
        self.policy = None
        self.last_recall = None
        #: the embedder given (None: the gate's default, see :meth:`_judge_embedder`)
        self._embedder = gate.get("embedder")
        self._embedder_chosen: Embedder | None = None
        self._log = gate.get("log")

    def _judge_embedder(self) -> Embedder:
        """The embedder a gate scores its framework's memories and the query with: the one given,
        else the decider's own (its judge was fitted on that model's vectors), else the offline
        default. Chosen on first use (a model takes ~0.35 s to load), then kept; a searcher takes
        this bound method as its lazy embedder."""
        chosen = self._embedder_chosen
        if chosen is None:
            chosen = self._embedder or getattr(self.decider, "embedder", None) or default_embedder()
            self._embedder_chosen = chosen
        return chosen

    def _policy_over(
        self,
        searcher: Searcher,
        namespaces: Sequence[str] | Mapping[str, str],
        options: RecallOptions | None = None,
    ) -> RecallPolicy | None:
        """The gate's policy over ``searcher`` (None when transparent). Its namespaces are names a
        person can read in traces and the decision log: the inner memory's type, a store's name."""
        if self.decider is None:
            return None
        return RecallPolicy(
            searcher,
            decider=self.decider,
            namespaces=namespaces,
            options=options if options is not None else self.options,
            stats=self.stats,
            log=self._log,
        )

    def close(self) -> None:
        """Release the gate's worker threads (the framework's memory is the caller's to close)."""
        if self.policy is not None:
            self.policy.close()


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


# ---- one decision per user turn ------------------------------------------------------------------

logger = logging.getLogger("recallwise.integrations")

#: how many user turns' decisions a :class:`TurnGate` remembers (a framework asks again within a turn:
#: after each round of tool calls, per task, per model call; never across hundreds of turns)
TURNS_REMEMBERED = 256
#: how long a decision answers the asks of its turn, in seconds: a turn's tool loop takes seconds to
#: minutes; the same message long after is another turn (the store may have changed), decided anew
TURN_TTL_S = 300.0


def is_searcher(memory: object) -> bool:
    """Whether ``memory`` is a recallwise :class:`~recallwise.stores.base.Searcher` (every recallwise
    store is one): a ``search(request)`` method, an ``embedder`` and a ``local`` flag."""
    return (
        callable(getattr(memory, "search", None)) and hasattr(memory, "embedder") and hasattr(memory, "local")
    )


class TurnGate(FrameworkGate):
    """A :class:`FrameworkGate` that decides once per user turn, for frameworks that ask for memory
    many times in one turn (LlamaIndex after each round of tool calls, the OpenAI Agents SDK before
    every model call), and falls back to the framework's stock behaviour when deciding fails. A gate
    over a memory the framework writes mid-turn (CrewAI) sets ``_reuse_turns = False``: each ask
    searches again, and the policy's decision cache answers the gate once for a repeated message.

    * :meth:`decide` / :meth:`adecide` -- the turn's :class:`~recallwise.policy.Recall`: the first ask
      of a turn runs the policy, every later ask of the same turn (the same ``turn`` key; by default
      the actor, session and message) gets the same object back, and the policy counts one turn;
    * a failing decider is the policy's own business: it fails open (the gate opens, the judge
      keeps everything: the stock records) and ``stats`` counts it by kind;
    * anything else that goes wrong while deciding (the framework's memory raising through a seam,
      a bug) returns None: the adapter then runs the framework's own, stock, behaviour; it is counted
      in :attr:`fallbacks` and logged, never raised into the agent's turn;
    * what the adapter injects from the Recall is ephemeral: for the one turn (the model call, the
      prompt), never written to the framework's history -- each adapter says where.

    ``actor_id`` / ``session_id`` scope the decisions (whose memory; follow-ups, the decision log).
    """

    actor_id: str
    session_id: str | None
    #: turns whose decision failed and ran the framework's stock behaviour instead
    fallbacks: int
    #: whether later asks of a turn reuse its Recall (False: each ask searches again, the policy's
    #: decision cache still answers the gate once, for a memory the framework writes mid-turn)
    _reuse_turns = True

    def _configure_turns(self, actor_id: str, session_id: str | None) -> None:
        self.actor_id = validate_id(actor_id, "actor_id")
        self.session_id = validate_id(session_id, "session_id") if session_id is not None else None
        self.fallbacks = 0
        self._decided: OrderedDict[Hashable, tuple[float, Recall | None]] = OrderedDict()
        self._deciding: dict[Hashable, asyncio.Future[Recall | None]] = {}
        self._turn_lock = threading.Lock()

    def _key(
        self, message: str, turn: Hashable | None, actor_id: str | None, session_id: str | None
    ) -> Hashable:
        return (actor_id or self.actor_id, session_id or self.session_id, message if turn is None else turn)

    def _remembered(self, key: Hashable) -> tuple[bool, Recall | None]:
        if not self._reuse_turns:
            return False, None
        with self._turn_lock:
            found = self._decided.get(key)
            if found is not None and time.monotonic() - found[0] <= TURN_TTL_S:
                self._decided.move_to_end(key)
                return True, found[1]
        return False, None

    def _remember(self, key: Hashable, recall: Recall | None) -> None:
        if not self._reuse_turns:
            return
        with self._turn_lock:
            self._decided[key] = (time.monotonic(), recall)
            self._decided.move_to_end(key)
            while len(self._decided) > TURNS_REMEMBERED:
                self._decided.popitem(last=False)

    def forget_turns(self) -> None:
        """Forget the turns decided so far: the next ask decides anew (an adapter calls it when
        the framework writes to its memory, so a turn never reuses an answer the write made stale)."""
        with self._turn_lock:
            self._decided.clear()

    def _fell_back(self, exc: BaseException) -> None:
        with self._turn_lock:
            self.fallbacks += 1
        logger.warning(
            "%s: deciding failed (%s: %s); the framework's stock memory behaviour runs for this turn",
            type(self).__name__,
            type(exc).__name__,
            exc,
        )

    def _recall_keywords(
        self, actor_id: str | None, session_id: str | None, extra: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {"actor_id": actor_id or self.actor_id, "session_id": session_id or self.session_id, **extra}

    def _ask_policy(self, message: str, keywords: dict[str, Any]) -> Recall:
        """The policy's answer for a new turn (``policy.recall``; a gate that only gates asks
        ``policy.judge(..., gate=True)`` instead)."""
        assert self.policy is not None
        return self.policy.recall(message, **keywords)

    async def _aask_policy(self, message: str, keywords: dict[str, Any]) -> Recall:
        """:meth:`_ask_policy` for asyncio frameworks (``policy.arecall``)."""
        assert self.policy is not None
        return await self.policy.arecall(message, **keywords)

    def decide(
        self,
        message: str,
        *,
        turn: Hashable | None = None,
        actor_id: str | None = None,
        session_id: str | None = None,
        **recall: Any,
    ) -> Recall | None:
        """The user turn's decision (see the class); None: run the framework's stock behaviour
        (the gate is transparent, or deciding failed). ``recall`` goes to ``policy.recall``."""
        if self.policy is None:
            return None
        key = self._key(message, turn, actor_id, session_id)
        known, found = self._remembered(key)
        if known:
            return found
        try:
            decided: Recall | None = self._ask_policy(
                message, self._recall_keywords(actor_id, session_id, recall)
            )
        except Exception as exc:
            self._fell_back(exc)
            decided = None
        self.last_recall = decided if decided is not None else self.last_recall
        self._remember(key, decided)
        return decided

    async def adecide(
        self,
        message: str,
        *,
        turn: Hashable | None = None,
        actor_id: str | None = None,
        session_id: str | None = None,
        **recall: Any,
    ) -> Recall | None:
        """:meth:`decide` for asyncio frameworks: concurrent asks of one turn share one decision."""
        if self.policy is None:
            return None
        key = self._key(message, turn, actor_id, session_id)
        known, found = self._remembered(key)
        if known:
            return found
        pending = self._deciding.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Recall | None] = asyncio.get_running_loop().create_future()
        self._deciding[key] = future
        try:
            decided: Recall | None = await self._aask_policy(
                message, self._recall_keywords(actor_id, session_id, recall)
            )
        except Exception as exc:
            self._fell_back(exc)
            decided = None
        finally:
            self._deciding.pop(key, None)
        self.last_recall = decided if decided is not None else self.last_recall
        self._remember(key, decided)
        future.set_result(decided)
        return decided


class StoreGate(TurnGate):
    """A :class:`TurnGate` over a recallwise store: for frameworks with no memory of their own to
    gate (the OpenAI Agents SDK, a context provider, a memory block), the policy searches the store
    and the adapter injects its context block.

    ``memory`` is any :class:`~recallwise.stores.base.Searcher` (every recallwise store is one);
    ``actor_id`` whose memory is read; ``namespaces`` the templates searched (default: the
    policy's). ``decider=None`` is the stock arm here: recall on every turn, the store's top-k above
    the score floor (what the frameworks do with memory today).
    """

    def __init__(
        self,
        memory: Searcher,
        *,
        actor_id: str,
        session_id: str | None = None,
        namespaces: Sequence[str] | Mapping[str, str] | None = None,
        **gate: Unpack[GateKeywords],
    ) -> None:
        self._configure(**gate)
        self._configure_store(memory, actor_id, session_id, namespaces)

    def _configure_store(
        self,
        memory: Searcher,
        actor_id: str,
        session_id: str | None,
        namespaces: Sequence[str] | Mapping[str, str] | None,
    ) -> None:
        """The store, the turn scope and the policy (a subclass's ``__init__`` calls it after
        :meth:`_configure`)."""
        if not is_searcher(memory):
            raise TypeError(f"{type(self).__name__} reads a recallwise store, got {type(memory).__name__}")
        self._configure_turns(actor_id, session_id)
        self.memory = memory
        keywords: dict[str, Any] = {"namespaces": namespaces} if namespaces is not None else {}
        self.policy = RecallPolicy(
            memory, decider=self.decider, options=self.options, stats=self.stats, log=self._log, **keywords
        )


class CountingSearcher:
    """A recallwise searcher that counts the searches it receives (``searches``) and passes them on:
    what the examples and tests read to show that a closed gate searched nothing."""

    def __init__(self, inner: Searcher) -> None:
        self.inner = inner
        self.searches = 0
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        return self.inner.embedder

    @property
    def local(self) -> bool:
        return bool(self.inner.local)

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "searches", "_lock"):
            raise AttributeError(name)
        found = getattr(self.inner, name)
        if name == "asearch":  # a natively async store's searches are counted too

            async def asearch(request: SearchRequest) -> list[SearchHit]:
                self._count()
                hits: list[SearchHit] = await found(request)
                return hits

            return asearch
        return found

    def _count(self) -> None:
        with self._lock:
            self.searches += 1

    def search(self, request: SearchRequest) -> list[SearchHit]:
        self._count()
        return self.inner.search(request)
