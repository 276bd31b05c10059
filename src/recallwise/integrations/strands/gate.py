"""MemoryGate and GatedMemoryStore: one gate decision per MemoryManager turn over any Strands ``MemoryStore``
(the package docstring, :mod:`recallwise.integrations.strands`, says how)."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, Unpack, cast

import numpy as np
from strands.memory import MemoryEntry
from strands.memory import MemoryStore as StrandsMemoryStore
from strands.memory.types import SearchOptions

from ...embeddings import Embedder
from ...embeddings.cache import CachedEmbedder
from ...errors import StoreError, UsageError
from ...policy import Recall, RecallStats
from ...records import (
    MemoryRecord,
    SearchHit,
    render_text,
    score_from_cosine,
    validate_id,
)
from ...stores.base import SearchRequest
from .._foreign import (
    NO_BUDGET,
    FrameworkGate,
    GateKeywords,
    at_most,
    check_over_fetch,
    run_sync,
    scope_of,
    scoped,
)

T = TypeVar("T")


logger = logging.getLogger(__name__)

#: The optional methods of Strands' ``MemoryStore`` protocol, detected on the store's type.
OPTIONAL_METHODS = ("add", "add_messages", "initialize", "get_tools")
#: What every Strands memory store has besides ``search``.
REQUIRED_ATTRIBUTES = ("name", "description", "max_search_results", "writable", "extraction")
#: policy options the gate sets itself: the manager asks each store for its own count, and the
#: entries come back to it whole (no context budget)
_GATE_OWNS: dict[str, Any] = {"top_k": 10, **NO_BUDGET}


def implements(store: object, method: str) -> bool:
    """Whether ``store``'s type really implements ``method`` (Strands' own rule: a method merely
    inherited from the ``MemoryStore`` protocol's default body does not count)."""
    found = getattr(type(store), method, None)
    return found is not None and found is not getattr(StrandsMemoryStore, method, None) and callable(found)


def _check_memory_store(inner: object) -> None:
    missing = [] if callable(getattr(type(inner), "search", None)) else ["async search(query, options)"]
    missing += [name for name in REQUIRED_ATTRIBUTES if not hasattr(inner, name)]
    if missing:
        raise UsageError(
            f"GatedMemoryStore wraps a Strands MemoryStore; {type(inner).__name__} has no "
            f"{', '.join(missing)}"
        )
    name = getattr(inner, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"GatedMemoryStore: the store's name must be a non-empty string, got {name!r}")


# ---- one turn ------------------------------------------------------------------------------------


@dataclass
class _Ask:
    """What the manager asked one store for this turn."""

    store: GatedMemoryStore
    options: SearchOptions | None  # forwarded to the inner store
    cap: int | None  # the entries the manager asked for (None: whatever the inner store returns)


@dataclass
class _Turn:
    """The searches of one turn: which stores (by namespace key), and what came back.

    Each namespace is written by its own search only (one key each), so no lock is needed."""

    query: str
    asks: dict[str, _Ask]
    entries: dict[str, list[Any]] = field(default_factory=dict)
    errors: dict[str, BaseException] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def cap(self) -> int | None:
        """The most entries the turn returns: the largest count the manager asked a store for
        (None when a store was asked for no count)."""
        caps = [ask.cap for ask in self.asks.values()]
        return max(cast(list[int], caps)) if caps and None not in caps else None


class StrandsSearcher:
    """The policy's view of a gate's Strands stores: one namespace per store (see ``Searcher``).

    ``asearch(request)`` awaits the store behind ``request.namespace`` with what the manager asked
    of it this turn (the turn the gate is deciding, carried as the request's scope), embeds the
    entries' text in one batch and scores each by cosine relevance to the query.
    Entries with empty or non-text content are skipped and counted (``stats.records_skipped``).
    Outside a gate's turn (a direct ``policy.arecall``) a store is asked for its own default count.
    """

    local = False  # a foreign store may be remote: the policy applies its deadline and breaker

    def __init__(
        self,
        embedder: Embedder,
        members: Mapping[str, GatedMemoryStore],
        stats: RecallStats,
        *,
        vector_cache_size: int = 4096,
    ) -> None:
        self.embedder = embedder
        self.members = members
        self.stats = stats
        # A store returns the same memories turn after turn: their vectors are kept (bounded LRU,
        # by rendered text) so each is embedded once, not on every turn it comes back.
        self._entry_vectors = CachedEmbedder(embedder, vector_cache_size)

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """:meth:`asearch` for a direct ``policy.recall`` (Strands stores are async only)."""
        return run_sync(self.asearch(request))

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        """The inner store awaited on the running loop; its entries embedded in a worker thread."""
        namespace, query, text, actor_id = request.namespace, request.query, request.text, request.actor_id
        turn: _Turn | None = scope_of(request, self)
        if turn is None:
            store = self.members.get(namespace)
            turn = _Turn(text or "", {namespace: _Ask(store, None, None)} if store is not None else {})
        ask = turn.asks.get(namespace)
        if ask is None:  # a store the manager did not ask this turn (search_memory naming stores)
            return []
        try:
            entries = await ask.store.inner.search(turn.query, ask.options)
        except Exception as exc:
            # The store's own search re-raises it to the manager; the policy counts it by kind
            # (botocore's error code, e.g. ThrottlingException).
            turn.errors[namespace] = exc
            raise
        return await asyncio.to_thread(self._hits, turn, namespace, query, entries, actor_id)

    def embed_entries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``: cached ones reused, the rest embedded in one batch."""
        return self._entry_vectors.embed(texts)

    def _hits(
        self, turn: _Turn, namespace: str, query: np.ndarray | str, entries: Any, actor_id: str | None
    ) -> list[SearchHit]:
        name = turn.asks[namespace].store.name
        if not isinstance(entries, (list, tuple)):
            raise StoreError(
                f"{name}: search returned {type(entries).__name__}, not a list of MemoryEntry",
                kind="bad_response",
            )
        usable = [
            (index, entry.content)
            for index, entry in enumerate(entries)
            if isinstance(getattr(entry, "content", None), str) and entry.content.strip()
        ]
        turn.entries[namespace] = list(entries)
        turn.skipped[namespace] = len(entries) - len(usable)
        if len(usable) < len(entries):
            self.stats.add(records_skipped=len(entries) - len(usable))
        if not usable:
            return []
        vectors = self.embed_entries([render_text(content) for _, content in usable])
        query_vector = (
            np.asarray(query, dtype=np.float32)
            if isinstance(query, np.ndarray)
            else np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        )
        hits = []
        for (index, content), vector in zip(usable, vectors, strict=True):
            metadata = getattr(entries[index], "metadata", None)
            foreign = metadata.get("_id", metadata.get("id")) if isinstance(metadata, Mapping) else None
            record = MemoryRecord(
                actor_id=actor_id or "strands",
                namespace=namespace,
                text=content,
                id=f"{namespace}#{index}",  # unique within the turn; the store's own id is kept below
                metadata={"store": name, "entry": index, **({"id": foreign} if foreign is not None else {})},
                embedding=vector,
            )
            hits.append(SearchHit(record, score_from_cosine(float(vector @ query_vector))))
        return hits


# ---- the gate ------------------------------------------------------------------------------------


@dataclass
class _Batch:
    """Searches for one query that started in the same event-loop step."""

    query: str
    asks: dict[str, _Ask] = field(default_factory=dict)
    task: asyncio.Task[dict[str, Any]] | None = None


class MemoryGate(FrameworkGate):
    """One :class:`~recallwise.policy.RecallPolicy` shared by the Strands stores it gates.

    The keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider`` (``None`` makes every member a plain pass-through: the control arm), ``options``,
    ``embedder`` (default: the decider's own, the judge compares vectors), ``stats``, ``log``. The
    gate sets ``top_k`` and the context budget itself. Its own:

    * ``over_fetch`` -- each inner store is asked for that many times the entries the manager
      asked for, so the judge can reach entries the store ranked lower (a number >= 1); the
      default 1 forwards the manager's own count (Strands' default injection already asks each
      store for a candidate set of ``max_entries``);
    * ``route`` -- True lets the decider choose between the stores by their ``description`` (all
      members need one; off by default, as in the policy: routing cost recall on LoCoMo);
    * ``actor_id`` / ``session_id`` -- scope the decision cache and the decision log.
    """

    _owned = _GATE_OWNS
    _why = (
        " (the memory manager says how many entries each store returns; use over_fetch= to ask the "
        "stores for more)"
    )

    def __init__(
        self,
        *,
        over_fetch: float = 1.0,
        route: bool = False,
        actor_id: str = "strands",
        session_id: str | None = None,
        **gate: Unpack[GateKeywords],
    ) -> None:
        self._configure(**gate)
        self.over_fetch = check_over_fetch(over_fetch)
        self.route = route
        self.actor_id = validate_id(actor_id, "actor_id")
        self.session_id = validate_id(session_id, "session_id") if session_id is not None else None
        self._members: dict[str, GatedMemoryStore] = {}  # by namespace key
        self.searcher = StrandsSearcher(self._judge_embedder(), self._members, self.stats)
        #: the judge's probability of each entry kept in the most recent turn, by (store name, content)
        self.last_kept: dict[tuple[str, str], float | None] = {}
        self._forming: dict[tuple[int, str], _Batch] = {}
        self._lock = threading.Lock()

    @property
    def members(self) -> list[GatedMemoryStore]:
        return list(self._members.values())

    def wrap(self, inner: Any) -> GatedMemoryStore:
        """``inner`` wrapped as a member of this gate."""
        return GatedMemoryStore(inner, gate=self)

    def join(self, store: GatedMemoryStore) -> str:
        """Add a member (its constructor does this); returns its namespace key in the policy."""
        key = store.name.replace("{", "(").replace("}", ")")  # a namespace template takes no braces
        with self._lock:
            if key in self._members:
                raise UsageError(f"a MemoryGate already has a store named {store.name!r}")
            self._members[key] = store
            if self.decider is not None:
                self._build_policy()
        return key

    def _build_policy(self) -> None:
        old, keys = self.policy, list(self._members)
        descriptions = {k: self._members[k].description for k in keys}
        described = all(isinstance(d, str) and d for d in descriptions.values())
        routed = self.route and len(keys) >= 2 and described
        self.policy = self._policy_over(self.searcher, cast(dict[str, str], descriptions) if routed else keys)
        if old is not None:
            old.close()

    def report(self) -> str:
        """The policy's report: errors first, entries skipped as not text among the counts."""
        return self.stats.report()

    # ---- one store's search -------------------------------------------------------------------
    async def search(
        self, store: GatedMemoryStore, query: str, options: SearchOptions | None = None
    ) -> list[MemoryEntry]:
        """``store.search(query, options)`` through the gate (see the module docs)."""
        if self.policy is None:
            return cast(list[MemoryEntry], await store.inner.search(query, options))
        loop = asyncio.get_running_loop()
        key = (id(loop), query)
        batch = self._forming.get(key)
        if batch is None or store.key in batch.asks:
            batch = _Batch(query)
            self._forming[key] = batch
            # The turn starts in the next loop step: after the other stores' searches that the
            # manager started in this one (asyncio.gather schedules them all before any runs).
            batch.task = loop.create_task(self._turn(key, batch))
        batch.asks[store.key] = self._ask(store, options)
        assert batch.task is not None
        outcome = (await asyncio.shield(batch.task))[store.key]
        if isinstance(outcome, BaseException):
            raise outcome
        return cast(list[MemoryEntry], outcome)

    def _ask(self, store: GatedMemoryStore, options: SearchOptions | None) -> _Ask:
        wanted = options.get("max_search_results") if options is not None else None
        if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted < 1:
            return _Ask(store, options, None)  # the inner store applies (or rejects) its own count
        forwarded = options
        if self.over_fetch > 1:
            more = math.ceil(wanted * self.over_fetch)
            forwarded = cast(SearchOptions, {**(options or {}), "max_search_results": more})
        return _Ask(store, forwarded, wanted)

    async def _turn(self, key: tuple[int, str], batch: _Batch) -> dict[str, Any]:
        if self._forming.get(key) is batch:
            del self._forming[key]
        policy = self.policy
        assert policy is not None
        # One policy turn over the stores the manager asked, keeping at most the count it asked for.
        turn = _Turn(batch.query, dict(batch.asks))
        recall = await policy.arecall(
            batch.query,
            actor_id=self.actor_id,
            session_id=self.session_id,
            namespaces=list(turn.asks),
            max_records=at_most(policy.options.limits.max_records, turn.cap),
            extensions=scoped(self.searcher, turn),
        )
        return self._share(recall, turn)

    def _share(self, recall: Recall, turn: _Turn) -> dict[str, Any]:
        """Each store's part of the turn: its kept entries, best first (a failed store: its error)."""
        out: dict[str, Any] = {key: [] for key in turn.asks}
        out.update(turn.errors)
        kept: dict[tuple[str, str], float | None] = {}
        for record in recall.records:  # best first; none when a search failed
            key = record.record.namespace
            entry = turn.entries[key][record.record.metadata["entry"]]
            out[key].append(entry)
            kept[(turn.asks[key].store.name, entry.content)] = record.judge_p
        skipped = sum(turn.skipped.values())
        if skipped:
            recall.trace.notes.append(f"{skipped} entries with empty or non-text content skipped")
        self.last_recall, self.last_kept = recall, kept
        return out


# ---- the store -----------------------------------------------------------------------------------


class _Through(Generic[T]):
    """An attribute of the wrapper that is the inner store's, read and written through."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, store: Any, owner: type | None = None) -> T:
        if store is None:  # read on the class (a Protocol check): the descriptor itself
            return cast(T, self)
        return cast(T, getattr(store.inner, self.name))

    def __set__(self, store: Any, value: T) -> None:
        setattr(store.inner, self.name, value)


class GatedMemoryStore(StrandsMemoryStore):
    """A Strands ``MemoryStore`` that gates another one (see the module docs).

    ``GatedMemoryStore(store)`` makes a gate of its own; ``gate=`` joins an existing
    :class:`MemoryGate` (``gated_stores`` does that for a list); other keywords build the gate
    (see :class:`MemoryGate`). ``inner`` is the wrapped store; ``gate.stats`` / ``gate.report()``
    say what it did; ``gate.last_recall.trace`` how the latest turn was decided.
    """

    inner: Any
    gate: MemoryGate
    key: str

    def __new__(cls, inner: Any, *args: Any, **kwargs: Any) -> GatedMemoryStore:
        # Strands reads a store's optional methods off its type: the wrapper's type has exactly
        # the inner store's (see :func:`_gated_type`).
        _check_memory_store(inner)
        capabilities = frozenset(m for m in OPTIONAL_METHODS if implements(inner, m))
        return cast(GatedMemoryStore, object.__new__(_gated_type(capabilities)))

    def __init__(self, inner: Any, *, gate: MemoryGate | None = None, **gate_keywords: Any) -> None:
        if gate is not None and gate_keywords:
            raise UsageError("a store that joins a MemoryGate takes the gate's decider and options")
        self.inner = inner
        self.gate = gate if gate is not None else MemoryGate(**gate_keywords)
        self.key = self.gate.join(self)

    # The protocol's attributes are the inner store's, read and written through.
    name: _Through[str] = _Through()
    description: _Through[str | None] = _Through()
    max_search_results: _Through[int | None] = _Through()
    writable: _Through[bool] = _Through()
    extraction: _Through[Any] = _Through()

    def __getattr__(self, name: str) -> Any:
        # Anything else the inner store offers (its own settings, helpers) reads through too.
        if name.startswith("__") or name in ("inner", "gate", "key"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        return await self.gate.search(self, query, options)

    def __repr__(self) -> str:
        return f"GatedMemoryStore({self.inner!r}, decider={getattr(self.gate.decider, 'name', None)!r})"


@functools.cache
def _gated_type(capabilities: frozenset[str]) -> type[GatedMemoryStore]:
    """:class:`GatedMemoryStore` with a pass-through for exactly the optional methods named in
    ``capabilities``: Strands' ``MemoryManager`` reads them off a store's type (a method inherited
    from the protocol's default body does not count), so a wrapper must not claim one its inner
    store lacks (a write routed to a store that cannot take it) nor hide one it has."""
    if not capabilities:
        return GatedMemoryStore

    class Gated(GatedMemoryStore):
        if "add" in capabilities:

            async def add(self, *args: Any, **kwargs: Any) -> Any:
                return await self.inner.add(*args, **kwargs)

        if "add_messages" in capabilities:

            async def add_messages(self, *args: Any, **kwargs: Any) -> Any:
                return await self.inner.add_messages(*args, **kwargs)

        if "initialize" in capabilities:

            async def initialize(self) -> None:
                await self.inner.initialize()

        if "get_tools" in capabilities:

            def get_tools(self) -> Any:
                return self.inner.get_tools()

    Gated.__name__ = Gated.__qualname__ = (
        f"GatedMemoryStore[{', '.join(m for m in OPTIONAL_METHODS if m in capabilities)}]"
    )
    return Gated


def gated_stores(stores: Sequence[Any], **gate_keywords: Any) -> list[GatedMemoryStore]:
    """Wrap every store in ``stores`` behind one shared :class:`MemoryGate`: one decision per turn,
    and the judge ranks the entries of all of them together (see the module docs). Keywords go to
    :class:`MemoryGate` (``decider=``, ``options=``, ``over_fetch=``, ``route=``, ...)."""
    gate = MemoryGate(**gate_keywords)
    return [GatedMemoryStore(store, gate=gate) for store in stores]


# ---- injection -----------------------------------------------------------------------------------
