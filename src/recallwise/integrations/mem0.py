"""mem0: a gate in front of ``Memory`` / ``AsyncMemory`` / ``MemoryClient`` / ``AsyncMemoryClient``.

>>> from mem0 import Memory
>>> from recallwise.integrations.mem0 import GatedMem0
>>> memory = GatedMem0(Memory())                   # the one line that changes
>>> memory.search("I'd like a drink", filters={"user_id": "u1"}, top_k=10)
{'results': [...]}                                  # mem0's own items, scores untouched, kept ones only

mem0 (``mem0ai`` 2.2) searches on every call and returns ``top_k`` memories (20 by default) above
a 0.1 score floor, whether or not any of them is any use. :class:`GatedMem0` has mem0's own
surface (``search``, ``add``, ``get_all``, ``delete`` and, through attribute access, everything
else the memory offers) and changes only ``search``:

* the gate asks first whether a memory lookup can help this query; when it closes, the answer
  is ``{"results": []}`` and mem0 is not called at all;
* when it opens, mem0 is searched with exactly the caller's arguments (``top_k``, ``filters``,
  ``threshold``, ``rerank``, ...), the judge decides which of the memories that came back belong,
  and only those come back, best first: mem0's own item dicts, scores untouched, in mem0's
  response shape (every other key of the response kept);
* the search is scoped to one actor, given as mem0 gives it: ``filters={"user_id": ...}`` (or
  ``agent_id`` / ``app_id`` / ``run_id``). Those ids are validated as recallwise validates ids
  (one id each: an operator, a list or ``"*"`` is refused, naming the field), and every memory
  mem0 returns must belong to them: a response holding anyone else's memories -- whatever the
  filter said (``OR``, ``NOT``, a store ignoring a filter) -- injects nothing and is counted as
  ``store:foreign_actor``. A top-level ``user_id=`` is refused as mem0 refuses it.

mem0 raising (its vector store, its embedder, the platform's HTTP errors) is counted in
:attr:`GatedMem0.stats` by kind (``store:RateLimitError``, ``store:timeout``; first in
``stats.report()``) and the search returns ``{"results": []}``: no memories, no traceback into the
agent. A search longer than ``store_timeout_s`` (5 s) is given up the same way, and after three
failing searches in a row mem0 is left alone for ``breaker_cooldown_s``. ``decider=None`` makes the
wrapper transparent (every call goes straight to mem0). :class:`AsyncGatedMem0` is the same for
``AsyncMemory`` / ``AsyncMemoryClient`` (``await memory.search(...)``).

The judge reads each memory's text with recallwise's embedder (default: the offline MiniLM),
whatever vector store and embedder mem0 itself uses; vectors are cached by text, so a memory that
comes back turn after turn is embedded once. :class:`RecallwiseEmbedding` is recallwise's embedder
as a mem0 embedder (``memory.embedding_model = RecallwiseEmbedding()``: mem0 then needs no hosted
embedding model, and the gate and mem0 share one cache), and :func:`local_memory` builds a mem0
``Memory`` that runs offline (a local qdrant directory, no LLM call with ``add(..., infer=False)``).

:class:`Mem0Searcher` is the seam underneath: a mem0 memory as a recallwise ``Searcher``, so
``RecallPolicy(Mem0Searcher(memory), namespaces=["mem0"])`` gates, judges and packs a mem0 memory
into recallwise's context block like any recallwise store (the actor id is mem0's ``user_id``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from mem0.embeddings.base import EmbeddingBase

from ..deciders import Decider, default_decider
from ..embeddings import Embedder, default_embedder
from ..errors import InvalidIdError, StoreError, UsageError
from ..policy import Recall, RecallOptions, RecallPolicy, RecallStats
from ..policy.config import threshold_options
from ..records import MemoryRecord, SearchHit, resolve_namespace, score_from_cosine, validate_id
from ..stores.base import Query, SearchRequest
from ._foreign import NO_BUDGET, Keep, at_most, kept_in_order, run_sync, scope_of, scoped

__all__ = [
    "ENTITY_KEYS",
    "AsyncGatedMem0",
    "GatedMem0",
    "Mem0Searcher",
    "RecallwiseEmbedding",
    "local_memory",
]

logger = logging.getLogger(__name__)

_DEFAULT: Any = object()

#: the ids mem0 scopes a memory by (``app_id`` is the platform's); one of them names the actor
ENTITY_KEYS = ("user_id", "agent_id", "app_id", "run_id")
#: policy options the gate sets itself (mem0's call says how many memories come back)
_GATE_OWNS = ("top_k", "gated_top_k", "max_records", "max_context_chars", "max_record_chars")


# ---- recallwise's embedder, cached, and as a mem0 embedder ---------------------------------------


class _CachedEmbedder:
    """A recallwise embedder whose vectors are kept by text (bounded LRU, thread-safe): the
    memories a search returns are embedded once, not on every turn they come back. Same
    ``name`` and ``dimension`` as the embedder it wraps (the decider's calibrations key on it)."""

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.dimension: int = int(inner.dimension)
        self.size = max(int(size), 0)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            found.update(zip(missing, fresh, strict=True))
            if self.size:
                with self._lock:
                    for text, vector in zip(missing, fresh, strict=True):
                        self._vectors[text] = vector
                    while len(self._vectors) > self.size:
                        self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts])


def _cached(embedder: Embedder | None) -> _CachedEmbedder:
    if isinstance(embedder, _CachedEmbedder):
        return embedder
    return _CachedEmbedder(embedder if embedder is not None else default_embedder())


class RecallwiseEmbedding(EmbeddingBase):
    """recallwise's embedder (default: the offline MiniLM) as a mem0 embedder.

    mem0 chooses its embedder by provider name at construction; swap this in afterwards::

        memory.embedding_model = RecallwiseEmbedding()

    and configure the vector store with ``embedding_model_dims=RecallwiseEmbedding().dimension``
    (384 for the default). Vectors are cached by text and shared with a :class:`GatedMem0` /
    :class:`Mem0Searcher` over the same memory (they pick this embedder up), so the judge does
    not embed again what mem0 just embedded.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        from mem0.configs.embeddings.base import BaseEmbedderConfig

        chosen = _cached(embedder)
        super().__init__(BaseEmbedderConfig(model=chosen.name, embedding_dims=chosen.dimension))
        self.embedder = chosen

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        """One text's vector, as a list of floats (mem0 hands it to its vector store)."""
        return [float(x) for x in self.embedder.embed([_as_text(text)])[0]]

    def embed_batch(self, texts: Sequence[Any], memory_action: Any = "add") -> list[list[float]]:
        """Several texts in one batch."""
        if not texts:
            return []
        return [[float(x) for x in row] for row in self.embedder.embed([_as_text(t) for t in texts])]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _embedder_of(memory: Any, given: Embedder | None) -> _CachedEmbedder:
    """The embedder the judge reads memories with: ``given``; else the memory's own when it is a
    :class:`RecallwiseEmbedding` (one cache for both); else the default, cached."""
    if given is not None:
        return _cached(given)
    model = getattr(memory, "embedding_model", None)
    if isinstance(model, RecallwiseEmbedding):
        return model.embedder
    return _CachedEmbedder(default_embedder())


def local_memory(
    path: str | Path,
    *,
    embedder: Embedder | None = None,
    collection_name: str = "recallwise",
    asynchronous: bool = False,
    config: Mapping[str, Any] | None = None,
) -> Any:
    """A mem0 ``Memory`` (``AsyncMemory`` with ``asynchronous=True``) that runs offline.

    Its vectors live in a local qdrant directory at ``path``, its history in memory, and its
    embedder is recallwise's (:class:`RecallwiseEmbedding`). mem0 builds an OpenAI LLM and
    embedder client at construction, which need a key: a placeholder is passed and never used as
    long as memories are added with ``add(..., infer=False)`` (with ``infer=True`` mem0 asks its
    LLM to extract facts, which needs a real one, given in ``config["llm"]``). ``config`` entries
    override the defaults (mem0's ``Memory.from_config`` keys). Set ``MEM0_TELEMETRY=False`` in the
    environment before importing mem0 to turn its telemetry off.
    """
    from mem0 import AsyncMemory, Memory

    chosen = RecallwiseEmbedding(embedder)
    settings: dict[str, Any] = {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": collection_name,
                "path": str(path),
                "embedding_model_dims": chosen.dimension,
                "on_disk": True,
            },
        },
        # placeholders: the clients are built, never called (the embedder is swapped below)
        "embedder": {
            "provider": "openai",
            "config": {"api_key": "unused-offline", "embedding_dims": chosen.dimension},
        },
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
        "history_db_path": ":memory:",
        **dict(config or {}),
    }
    memory = (AsyncMemory if asynchronous else Memory).from_config(settings)
    memory.embedding_model = chosen
    return memory


# ---- mem0 as a recallwise Searcher ---------------------------------------------------------------


def _is_async(memory: Any) -> bool:
    return inspect.iscoroutinefunction(getattr(memory, "search", None))


def _check_memory(memory: Any, what: str) -> None:
    if not callable(getattr(memory, "search", None)):
        raise TypeError(
            f"{what} wraps a mem0 memory (Memory, AsyncMemory, MemoryClient, AsyncMemoryClient): "
            f"{type(memory).__name__} has no search method"
        )


@dataclass
class _Scope:
    """Whose memories a search reads: the actor (recallwise's actor id) and every entity id the
    filter names, each one id, validated."""

    actor_key: str
    actor: str
    ids: dict[str, str]

    @classmethod
    def of(cls, filters: Any, actor_field: str) -> _Scope:
        if filters is None:
            filters = {}
        if not isinstance(filters, Mapping):
            raise UsageError(f"filters must be a dict (mem0's filters), got {type(filters).__name__}")
        ids: dict[str, str] = {}
        for key in ENTITY_KEYS:
            if key not in filters:
                continue
            ids[key] = _entity_id(filters[key], f"filters[{key!r}]")
        if not ids:
            raise UsageError(
                "filters must name whose memories to search: one of "
                + ", ".join(ENTITY_KEYS)
                + " (e.g. filters={'user_id': 'u1'}), as mem0 requires"
            )
        actor_key = actor_field if actor_field in ids else next(iter(ids))
        return cls(actor_key, ids[actor_key], ids)


def _entity_id(value: Any, what: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # mem0 takes integer ids and stores them as text
    if isinstance(value, str):
        value = value.strip()  # as mem0 trims them
    try:
        return validate_id(value, what)
    except InvalidIdError as exc:
        raise InvalidIdError(
            f"{exc} (a gated search reads one actor's memories: give one id, not an operator, a list or '*')"
        ) from exc


def _check_ids(kwargs: Mapping[str, Any]) -> None:
    given = [key for key in ENTITY_KEYS if key in kwargs]
    if given:
        raise UsageError(
            f"top-level {given[0]}= is not supported by mem0's search (mem0 2.2 refuses it too): "
            f"use filters={{{given[0]!r}: ...}}"
        )


def _results(response: Any) -> list[Any]:
    """The memories of a mem0 search response: ``{"results": [...]}`` (a bare list from older
    platform versions)."""
    results = response.get("results", []) if isinstance(response, Mapping) else response
    if not isinstance(results, list):
        raise StoreError(
            f"mem0 search answered {type(response).__name__} without a 'results' list", kind="bad_response"
        )
    return results


def _created_at(value: Any) -> float:
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return time.time()


@dataclass
class _Ask:
    """One gated ``search`` call as the caller made it, its scope, and what came back: mem0's
    response and its items by record id (to hand back the kept ones unchanged)."""

    query: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    scope: _Scope
    response: Any = None
    found: dict[str, Any] = field(default_factory=dict)


NamespaceFilters = Mapping[str, Mapping[str, Any]] | Callable[[str], Mapping[str, Any] | None]


class Mem0Searcher:
    """A mem0 memory searched by recallwise's policy (the ``Searcher`` seam).

    ``memory`` is a mem0 ``Memory``, ``AsyncMemory``, ``MemoryClient`` or ``AsyncMemoryClient``
    (anything with mem0's ``search``). A policy's search of ``namespace`` for ``actor_id`` is one
    mem0 search: ``search(text, top_k=top_k, filters={actor_field: actor_id, **filters,
    **namespace's filters})`` plus ``threshold`` / ``rerank`` when given (mem0's defaults
    otherwise). Keyword arguments:

    * ``embedder`` -- recallwise's embedder for the query and the memories' text (default: the
      memory's :class:`RecallwiseEmbedding` when it has one, else the offline MiniLM);
    * ``actor_field`` -- the mem0 id that is recallwise's actor (``"user_id"``; or ``"agent_id"``,
      ``"run_id"``, ``"app_id"``). ``actor_id=None`` searches every actor (mem0's ``"*"``); the
      policy always gives one;
    * ``filters`` -- mem0 filters added to every search (e.g. ``{"agent_id": "travel"}``);
    * ``namespaces`` -- what each recallwise namespace means in mem0: ``None`` (default) -- every
      namespace is the actor's whole memory (give the policy one); a mapping of namespace
      (resolved, or a template like ``"/facts/{actorId}"``) to filters, an unknown one being a
      :class:`~recallwise.UsageError`; or a function of the resolved namespace returning filters;
    * ``threshold``, ``rerank`` -- passed to mem0's search when not None;
    * ``local`` -- True when a search costs microseconds in-process (no deadline thread); default
      False: mem0 embeds every query with its embedder (a hosted model unless swapped).

    Hits come in mem0's order, each scored ``(1 + cosine) / 2`` of the query and the memory's text
    by ``embedder`` (mem0's own score is left in its item; its scale depends on mem0's vector store
    and hybrid scoring). A record's id is mem0's id, its metadata mem0's ``metadata``. Memories
    without text are skipped and counted (``records_skipped``); a response holding another actor's
    memory raises :class:`~recallwise.StoreError` of kind ``foreign_actor``: the policy counts it
    and the turn injects nothing.
    """

    def __init__(
        self,
        memory: Any,
        *,
        embedder: Embedder | None = None,
        actor_field: str = "user_id",
        filters: Mapping[str, Any] | None = None,
        namespaces: NamespaceFilters | None = None,
        threshold: float | None = None,
        rerank: bool | None = None,
        local: bool = False,
        stats: RecallStats | None = None,
    ) -> None:
        _check_memory(memory, "Mem0Searcher")
        if actor_field not in ENTITY_KEYS:
            raise UsageError(f"actor_field must be one of {', '.join(ENTITY_KEYS)}, got {actor_field!r}")
        if filters is not None and not isinstance(filters, Mapping):
            raise UsageError(f"filters must be a dict (mem0's filters), got {type(filters).__name__}")
        if filters and actor_field in filters:
            raise UsageError(
                f"filters must not hold {actor_field!r}: the actor comes from each search's actor_id"
            )
        if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
            raise UsageError(f"threshold must be between 0 and 1 (mem0's rule), got {threshold!r}")
        self.memory = memory
        self.actor_field = actor_field
        self.filters = dict(filters or {})
        self.namespaces = namespaces
        self.threshold = threshold
        self.rerank = rerank
        self.local = bool(local)
        #: where skipped memories are counted (a gate sets its policy's stats here)
        self.stats = stats if stats is not None else RecallStats()
        self.is_async = _is_async(memory)
        self._embedder = _embedder_of(memory, embedder)

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    # ---- the seam ---------------------------------------------------------------------------
    def search(self, request: SearchRequest) -> list[SearchHit]:
        """One mem0 search (see the class); an async memory is run on a fresh event loop."""
        if self.is_async:
            return run_sync(self.asearch(request))
        ask, call_args, call_kwargs = self._call(request)
        response = self.memory.search(*call_args, **call_kwargs)
        return self._hits(request.namespace, request.query, response, ask, request.actor_id)

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        """:meth:`search` for an event loop: an async memory is awaited, a sync one runs in a
        worker thread."""
        if not self.is_async:
            return await asyncio.to_thread(self.search, request)
        ask, call_args, call_kwargs = self._call(request)
        response = await self.memory.search(*call_args, **call_kwargs)
        return await asyncio.to_thread(
            self._hits, request.namespace, request.query, response, ask, request.actor_id
        )

    # ---- one call ---------------------------------------------------------------------------
    def _call(self, request: SearchRequest) -> tuple[_Ask | None, tuple[Any, ...], dict[str, Any]]:
        # (mem0 ranks by its own rules: the request's mode is not passed on)
        namespace, query, top_k, actor_id, text = (
            request.namespace,
            request.query,
            request.top_k,
            request.actor_id,
            request.text,
        )
        ask: _Ask | None = scope_of(request, self)
        if ask is not None:
            # a gated drop-in search: mem0 gets exactly the caller's call
            return ask, (ask.query, *ask.args), dict(ask.kwargs)
        words = text if text is not None else (query if isinstance(query, str) else None)
        if not words or not words.strip():
            raise UsageError("mem0 searches by text: give the query's text (policy.recall always does)")
        filters: dict[str, Any] = {**self.filters, **self._namespace_filters(namespace, actor_id)}
        if actor_id is not None:
            filters[self.actor_field] = validate_id(actor_id, "actor_id")
        elif not any(key in filters for key in ENTITY_KEYS):
            filters[self.actor_field] = "*"  # every actor: mem0's wildcard
        kwargs: dict[str, Any] = {"top_k": int(top_k), "filters": filters}
        if self.threshold is not None:
            kwargs["threshold"] = float(self.threshold)
        if self.rerank is not None:
            kwargs["rerank"] = bool(self.rerank)
        return None, (words,), kwargs

    def _namespace_filters(self, namespace: str, actor_id: str | None) -> dict[str, Any]:
        spec = self.namespaces
        if spec is None:
            return {}
        if callable(spec):
            found = spec(namespace)
            return dict(found or {})
        if namespace in spec:
            return dict(spec[namespace])
        if actor_id is not None:
            for template, filters in spec.items():
                try:
                    if resolve_namespace(template, actor_id=actor_id) == namespace:
                        return dict(filters)
                except InvalidIdError:
                    continue
        raise UsageError(f"namespace {namespace!r} is not one of this searcher's: {', '.join(spec)}")

    def _hits(
        self, namespace: str, query: Query, response: Any, ask: _Ask | None, actor_id: str | None
    ) -> list[SearchHit]:
        items = _results(response)
        if ask is not None:
            ask.response = response
            scope: dict[str, str] = ask.scope.ids
            actor_key = ask.scope.actor_key
        else:
            scope = {self.actor_field: actor_id} if actor_id is not None else {}
            actor_key = self.actor_field
        records: list[MemoryRecord] = []
        skipped = 0
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                skipped += 1
                continue
            self._check_owner(item, scope, actor_key)
            text = item.get("memory")
            if not isinstance(text, str) or not text.strip():
                skipped += 1  # nothing a judge (or the agent) could read
                continue
            record_id = str(item.get("id") or f"memory-{index}")
            if ask is not None:
                record_id = _unique(record_id, ask.found)
                ask.found[record_id] = item
            owner = scope.get(actor_key) or item.get(actor_key) or ""
            metadata = item.get("metadata")
            records.append(
                MemoryRecord(
                    actor_id=str(owner),
                    namespace=namespace,
                    text=text,
                    id=record_id,
                    strategy="mem0",
                    created_at=_created_at(item.get("created_at")),
                    metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
                )
            )
        if skipped:
            self.stats.add(records_skipped=skipped)
        return self._scored(query, records)

    @staticmethod
    def _check_owner(item: Mapping[str, Any], scope: Mapping[str, str], actor_key: str) -> None:
        """Every memory must be the actor's: its actor id present and equal; any other entity id
        the search named, equal where the memory carries it."""
        for key, wanted in scope.items():
            value = item.get(key)
            if value is None and key != actor_key:
                continue
            if value is None or str(value).strip() != wanted:
                raise StoreError(
                    f"mem0 returned a memory of {key}={value!r} to a search for {key}={wanted!r}: "
                    "nothing from this search is used",
                    kind="foreign_actor",
                )

    def _scored(self, query: Query, records: list[MemoryRecord]) -> list[SearchHit]:
        if not records:
            return []
        if isinstance(query, str):
            vector = self._embedder.embed([query])[0]
        else:
            vector = np.asarray(query, dtype=np.float32)
        vectors = self._embedder.embed([r.rendered for r in records])
        hits = []
        for record, row in zip(records, vectors, strict=True):
            record.embedding = row  # the judge reads it instead of embedding again
            hits.append(SearchHit(record, min(max(score_from_cosine(float(row @ vector)), 0.0), 1.0)))
        return hits


def _unique(base: str, taken: Mapping[str, Any]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"


# ---- the drop-in ---------------------------------------------------------------------------------


class _Gate:
    """What :class:`GatedMem0` and :class:`AsyncGatedMem0` share: the policy and the scoping."""

    _what = "GatedMem0"

    def __init__(
        self,
        memory: Any,
        *,
        decider: Decider | Any | None = _DEFAULT,
        thresholds: Mapping[str, float] | None = None,
        keep: Keep = "both",
        max_records: int | None = None,
        embedder: Embedder | None = None,
        actor_field: str = "user_id",
        local: bool = False,
        stats: RecallStats | None = None,
        log: Any = None,
        **policy_options: Any,
    ) -> None:
        _check_memory(memory, self._what)
        owned = sorted(set(policy_options) & set(_GATE_OWNS))
        if owned:
            raise UsageError(
                f"{self._what} sets {', '.join(owned)} itself: mem0's own top_k says how many memories "
                "are judged, and max_records caps how many are kept"
            )
        if max_records is not None and max_records < 1:
            raise UsageError(f"max_records must be at least 1 (or None), got {max_records}")
        self.memory = memory
        self.decider: Decider | None = default_decider() if decider is _DEFAULT else decider
        self.max_records = max_records
        self.last_recall: Recall | None = None
        self._stats = stats if stats is not None else RecallStats()
        self._searcher = Mem0Searcher(
            memory, embedder=embedder, actor_field=actor_field, local=local, stats=self._stats
        )
        #: the policy deciding the gated searches (None when ``decider=None``: transparent)
        self.policy: RecallPolicy | None = None
        if self.decider is not None:
            options = RecallOptions.of(
                None,
                {
                    "keep": keep,
                    "max_records": max_records,
                    **NO_BUDGET,
                    **threshold_options(thresholds),
                    **policy_options,
                },
            )
            # one namespace, named after the memory's type: what traces and the decision log show
            self.policy = RecallPolicy(
                self._searcher,
                decider=self.decider,
                namespaces=[type(memory).__name__],
                options=options,
                stats=self._stats,
                log=log,
            )
        else:
            self._stats.decider = None

    @property
    def stats(self) -> RecallStats:
        """Counters of the gated searches; ``.report()`` puts errors first."""
        return self._stats

    @property
    def searcher(self) -> Mem0Searcher:
        """The seam the policy searches mem0 through."""
        return self._searcher

    def __getattr__(self, name: str) -> Any:
        # only called for names this object lacks: get, update, history, delete_all, reset, ...
        if name in ("memory", "policy", "_searcher", "_stats"):
            raise AttributeError(name)
        return getattr(self.memory, name)

    def close(self) -> None:
        """Release the gate's worker threads (the memory is the caller's)."""
        if self.policy is not None:
            self.policy.close()

    def _ask(self, query: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Ask | None:
        """The call to gate, or None when it goes straight to mem0 (transparent, or a query or
        ``top_k`` mem0 itself will refuse or answer with nothing)."""
        if self.policy is None or not isinstance(query, str) or not query.strip():
            return None
        _check_ids(kwargs)
        options = args[0] if args else kwargs.get("options")  # the platform's SearchMemoryOptions
        filters = kwargs.get("filters")
        if filters is None and options is not None:
            filters = getattr(options, "filters", None)
        top_k = self._top_k(args, kwargs)
        if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
            return None
        return _Ask(query, args, dict(kwargs), _Scope.of(filters, self._searcher.actor_field))

    @staticmethod
    def _top_k(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if "top_k" in kwargs:
            return kwargs["top_k"]
        options = args[0] if args else kwargs.get("options")
        return getattr(options, "top_k", None) if options is not None else None

    def _turn(self, ask: _Ask) -> dict[str, Any]:
        top_k = self._top_k(ask.args, ask.kwargs)
        session = ask.scope.ids.get("run_id") if ask.scope.actor_key != "run_id" else None
        return {
            "actor_id": ask.scope.actor,
            "session_id": session,
            "top_k": top_k,
            "max_records": at_most(self.max_records, top_k),
        }

    def _answer(self, recall: Recall, ask: _Ask) -> Any:
        self.last_recall = recall
        kept = kept_in_order(recall, ask.found)
        response = ask.response
        if isinstance(response, Mapping):
            return {**response, "results": kept}
        if isinstance(response, list):
            return kept
        return {"results": kept}  # the gate closed (mem0 not called) or mem0 failed


class GatedMem0(_Gate):
    """mem0's ``Memory`` / ``MemoryClient`` with a gate and a judge in front of ``search``.

    Keyword arguments:

    * ``decider`` -- the decision backend; left out = the offline embedded one; ``None`` =
      transparent (every call goes straight to mem0);
    * ``thresholds`` -- ``{"gate": p, "judge": p, "judge_relative": d}`` (any subset);
    * ``keep``, ``max_records`` -- the judge's keep rule (see :class:`~recallwise.RecallPolicy`);
      at most ``min(max_records, top_k)`` memories come back;
    * ``embedder`` -- recallwise's embedder for the query and the memories' text (default: the
      memory's :class:`RecallwiseEmbedding` when it has one, else the offline MiniLM);
    * ``actor_field`` -- which of the filter's ids is the actor decisions are counted and cached
      for when it names several (default ``"user_id"``);
    * ``local`` -- True when mem0 answers in-process in microseconds (no deadline thread);
    * ``stats``, ``log`` -- a :class:`~recallwise.RecallStats` to count into, the opt-in
      decision log (a path), as ``RecallPolicy(log=...)``;
    * any other :class:`~recallwise.RecallOptions` field (``store_timeout_s``,
      ``decider_timeout_s``, ``conversation_rescore``, ``adaptive_budget``, ...).

    :attr:`last_recall` holds the most recent gated decision (trace included).
    """

    def __init__(self, memory: Any, **kwargs: Any) -> None:
        if _is_async(memory):
            raise TypeError(
                f"GatedMem0 wraps a synchronous mem0 memory; {type(memory).__name__} is async: "
                "use AsyncGatedMem0"
            )
        super().__init__(memory, **kwargs)

    def search(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``search``, gated and judged: ``{"results": [the kept items]}`` (see the module)."""
        ask = self._ask(query, args, kwargs)
        if ask is None:
            return self.memory.search(query, *args, **kwargs)
        assert self.policy is not None
        recall = self.policy.recall(query, extensions=scoped(self._searcher, ask), **self._turn(ask))
        return self._answer(recall, ask)

    def add(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``add``, unchanged."""
        return self.memory.add(*args, **kwargs)

    def get_all(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``get_all``, unchanged (a listing is never gated)."""
        return self.memory.get_all(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``delete``, unchanged."""
        return self.memory.delete(*args, **kwargs)


class AsyncGatedMem0(_Gate):
    """:class:`GatedMem0` for mem0's ``AsyncMemory`` / ``AsyncMemoryClient``: the same keyword
    arguments; ``await memory.search(...)`` gates and judges, everything else is awaited as is."""

    _what = "AsyncGatedMem0"

    def __init__(self, memory: Any, **kwargs: Any) -> None:
        _check_memory(memory, self._what)
        if not _is_async(memory):
            raise TypeError(
                f"AsyncGatedMem0 wraps an async mem0 memory; {type(memory).__name__} is synchronous: "
                "use GatedMem0"
            )
        super().__init__(memory, **kwargs)

    async def search(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``search``, gated and judged (see :meth:`GatedMem0.search`)."""
        ask = self._ask(query, args, kwargs)
        if ask is None:
            return await self.memory.search(query, *args, **kwargs)
        assert self.policy is not None
        recall = await self.policy.arecall(query, extensions=scoped(self._searcher, ask), **self._turn(ask))
        return self._answer(recall, ask)

    async def add(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``add``, unchanged."""
        return await self.memory.add(*args, **kwargs)

    async def get_all(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``get_all``, unchanged (a listing is never gated)."""
        return await self.memory.get_all(*args, **kwargs)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``delete``, unchanged."""
        return await self.memory.delete(*args, **kwargs)
