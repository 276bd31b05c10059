"""mem0 (``Memory``, ``AsyncMemory``, ``MemoryClient``, ``AsyncMemoryClient``) as a ``Searcher``."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from ...embeddings import Embedder
from ...errors import InvalidIdError, StoreError, UsageError
from ...policy import RecallStats
from ...records import MemoryRecord, SearchHit, resolve_namespace, score_from_cosine, validate_id
from ...stores.base import Query, SearchRequest
from .._foreign import run_sync, scope_of, unique_key
from .embedding import _embedder_of

#: the ids mem0 scopes a memory by (``app_id`` is the platform's); one of them names the actor
ENTITY_KEYS = ("user_id", "agent_id", "app_id", "run_id")

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
                record_id = unique_key(record_id, ask.found)
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
