"""LangGraph: a gate in front of any ``BaseStore``, and recallwise's stores as a ``BaseStore``.

>>> from langgraph.store.memory import InMemoryStore
>>> from recallwise.integrations.langgraph import GatedStore, index_config
>>> store = GatedStore(InMemoryStore(index=index_config()))
>>> graph = builder.compile(store=store)        # nodes call store.search(ns, query=message)

:class:`GatedStore` wraps a store (``InMemoryStore``, ``PostgresStore``, any ``BaseStore``) and
passes every operation through to it, except a search with a natural-language ``query``:

* the gate asks first whether a memory lookup can help this query; when it closes, the search
  returns ``[]`` and the inner store is not asked at all;
* when it opens, the inner store is asked for ``over_fetch`` times the page
  (``over_fetch * (offset + limit)`` items, same prefix, same filter), the judge decides which
  of them belong, and the kept items come back best first -- the inner store's own
  ``SearchItem`` objects, scores untouched -- with ``offset`` / ``limit`` applied to the kept list.

A search without a query (a listing, a filter) is never gated. ``decider=None`` passes every
call straight through: the wrapper is then transparent. An inner store that fails a gated
search is counted in :attr:`GatedStore.stats` by kind and the search returns ``[]``; the error
is first in ``stats.report()``. A namespace LangGraph rejects gets LangGraph's own
``InvalidNamespaceError``.

:func:`index_config` / :func:`embeddings_function` expose recallwise's offline embedder as a
LangGraph embeddings function, so the inner store's vectors need no hosted model.

:class:`RecallwiseStore` is the other direction: a recallwise store (the embedded SQLite one,
PostgreSQL, AgentCore) used *as* a LangGraph ``BaseStore``, with LangGraph's ``put(...,
index=False)`` (stored, not embedded) and TTL (``ttl=TTLConfig(...)``, ``put(..., ttl=minutes)``,
renewal on read, ``sweep_ttl()`` and a background sweeper).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import math
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    validate_op_namespace,
)
from langgraph.store.memory import InMemoryStore

from ..deciders import Decider, default_decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import Recall, RecallPolicy, RecallStats
from ..records import MemoryRecord, SearchHit, render_text, score_from_cosine, validate_id
from ..stores.base import MemoryStore, Query, SearchMode
from ._foreign import (
    Keep,
    at_most,
    current_search,
    foreign_policy,
    kept_in_order,
    lazy_embedder,
    score_hits,
    searching,
)

__all__ = ["GatedStore", "RecallwiseStore", "embeddings_function", "index_config", "item_text"]

logger = logging.getLogger(__name__)

_DEFAULT: Any = object()
#: value keys that usually hold a memory's text (LangMem writes {"content": {"content": ...}})
_TEXT_KEYS = ("content", "text", "memory", "data")


# ---- recallwise's embedder as a LangGraph embeddings function ----------------------------------


def embeddings_function(embedder: Embedder | None = None) -> Callable[[Sequence[str]], list[list[float]]]:
    """``texts -> vectors`` with recallwise's embedder (default: the offline MiniLM), for a
    LangGraph ``index={"embed": ...}``. LangGraph runs a sync function in a worker thread for
    its async calls, so an asyncio graph never waits on it."""
    get = lazy_embedder(embedder)

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return np.asarray(get().embed(list(texts)), dtype=np.float32).tolist()

    embed.__name__ = f"recallwise_{getattr(embedder, 'name', 'default')}_embed"
    return embed


def index_config(embedder: Embedder | None = None, *, fields: Sequence[str] | None = None) -> dict[str, Any]:
    """A LangGraph ``IndexConfig`` (``dims``, ``embed``, ``fields``) over recallwise's embedder."""
    chosen = embedder if embedder is not None else default_embedder()
    config: dict[str, Any] = {"dims": int(chosen.dimension), "embed": embeddings_function(chosen)}
    if fields is not None:
        config["fields"] = list(fields)
    return config


def item_text(value: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """The text of a stored value that a judge reads (and that a recallwise store embeds).

    ``fields`` (LangGraph paths, e.g. the inner store's ``index["fields"]``) pick it
    explicitly. Otherwise: the first of ``content`` / ``text`` / ``memory`` / ``data`` that
    holds text (nested, as LangMem writes it), else the value's only string, else the whole
    value rendered to prose (``key: value; ...``).
    """
    if fields and list(fields) != ["$"]:
        parts = [t for path in fields for t in get_text_at_path(value, path)]
        joined = " ".join(p for p in parts if p.strip())
        if joined:
            return joined
    found = _text_in(value)
    if found:
        return found
    return render_text(json.dumps(value, ensure_ascii=False, default=str))


def _text_in(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, Mapping):
        return ""
    for key in _TEXT_KEYS:
        if key in value:
            text = _text_in(value[key])
            if text:
                return text
    strings = [v for v in value.values() if isinstance(v, str) and v.strip()]
    return strings[0].strip() if len(strings) == 1 else ""


# ---- the gate in front of a BaseStore ------------------------------------------------------------


@dataclass
class _Search:
    """One gated LangGraph search while the policy decides it: the op as the caller made it, and
    the inner store's items that came back, by record id (to hand back the kept ones unchanged)."""

    op: SearchOp
    found: dict[str, SearchItem] = field(default_factory=dict)


def _is_gated(op: Op) -> bool:
    return isinstance(op, SearchOp) and isinstance(op.query, str) and bool(op.query.strip())


class GatedStore(BaseStore):
    """A LangGraph ``BaseStore`` that gates and judges natural-language searches of ``inner``.

    Keyword arguments:

    * ``decider`` -- the decision backend; left out = the offline embedded one; ``None`` =
      transparent (every call goes straight to ``inner``);
    * ``over_fetch`` -- how many times the requested page to fetch for the judge (default 3);
    * ``thresholds`` -- ``{"gate": p, "judge": p, "judge_relative": d}`` (any subset);
    * ``keep``, ``max_records`` -- the judge's keep rule (see :class:`~recallwise.RecallPolicy`);
    * ``embedder`` -- recallwise's embedder for the query and the judged items' text (the
      inner store's own embeddings are not assumed to be recallwise's);
    * ``text_fields`` -- the value paths that hold an item's text (default: the inner
      store's ``index["fields"]``, else see :func:`item_text`);
    * ``stats`` -- a :class:`~recallwise.RecallStats` to count into; ``actor_id`` -- who the
      decisions are counted and cached for (a store has no user; namespaces usually carry it);
    * ``log`` -- the opt-in decision log (a path), as ``RecallPolicy(log=...)``.

    Anything else is read from ``inner`` (``index_config``, ``setup()``, ...).
    :attr:`last_recall` holds the most recent gated decision (trace included).
    """

    def __init__(
        self,
        inner: BaseStore,
        *,
        decider: Decider | Any | None = _DEFAULT,
        over_fetch: int = 3,
        thresholds: Mapping[str, float] | None = None,
        keep: Keep = "both",
        max_records: int | None = None,
        embedder: Embedder | None = None,
        text_fields: Sequence[str] | None = None,
        stats: RecallStats | None = None,
        actor_id: str = "langgraph",
        log: Any = None,
    ) -> None:
        if not isinstance(inner, BaseStore):
            raise TypeError(f"GatedStore wraps a langgraph BaseStore, got {type(inner).__name__}")
        if over_fetch < 1:
            raise ValueError(f"over_fetch must be at least 1, got {over_fetch}")
        self.inner = inner
        self.decider: Decider | None = default_decider() if decider is _DEFAULT else decider
        self.over_fetch = int(over_fetch)
        self.max_records = max_records
        self.actor_id = validate_id(actor_id, "actor_id")
        self.last_recall: Recall | None = None
        self._text_fields = list(text_fields) if text_fields is not None else None
        self._searcher = _StoreSearcher(self, lazy_embedder(embedder))
        #: the policy deciding the gated searches (None when ``decider=None``: transparent)
        self.policy: RecallPolicy | None = None
        if self.decider is not None:
            # one namespace, named after the inner store: what traces and the decision log show
            self.policy = foreign_policy(
                self._searcher,
                self.decider,
                type(inner).__name__,
                top_k=10,
                keep=keep,
                max_records=max_records,
                thresholds=thresholds,
                stats=stats,
                log=log,
            )
        self._stats = stats if stats is not None else (self.policy.stats if self.policy else RecallStats())
        if self.policy is None:
            self._stats.decider = None

    # ---- what LangGraph reads off a store: the inner store's ----------------------------------
    @property
    def supports_ttl(self) -> bool:  # type: ignore[override]
        return bool(self.inner.supports_ttl)

    @property
    def ttl_config(self) -> TTLConfig | None:  # type: ignore[override]
        return self.inner.ttl_config

    def __getattr__(self, name: str) -> Any:
        # only called for names this object lacks: index_config, embeddings, setup(), conn, ...
        if name in ("inner", "policy"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def stats(self) -> RecallStats:
        """Counters of the gated searches; ``.report()`` puts errors first."""
        return self._stats

    def close(self) -> None:
        """Release the gate's worker threads (the inner store is the caller's to close)."""
        if self.policy is not None:
            self.policy.close()

    # ---- the two methods a BaseStore implements -------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        gated = [i for i, op in enumerate(ops) if _is_gated(op)] if self.policy is not None else []
        if not gated:
            return self.inner.batch(ops)
        for i in gated:
            validate_op_namespace(ops[i])
        results: list[Result] = [None] * len(ops)
        # Reads before writes, as InMemoryStore and PostgresStore order a batch themselves.
        for i in gated:
            results[i] = self._search(ops[i])  # type: ignore[arg-type]
        self._rest(ops, gated, results, self.inner.batch([op for i, op in enumerate(ops) if i not in gated]))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        gated = [i for i, op in enumerate(ops) if _is_gated(op)] if self.policy is not None else []
        if not gated:
            return await self.inner.abatch(ops)
        for i in gated:
            validate_op_namespace(ops[i])
        results: list[Result] = [None] * len(ops)
        found = await asyncio.gather(*(self._asearch(ops[i]) for i in gated))  # type: ignore[arg-type]
        for i, items in zip(gated, found, strict=True):
            results[i] = items
        rest = [op for i, op in enumerate(ops) if i not in gated]
        self._rest(ops, gated, results, await self.inner.abatch(rest) if rest else [])
        return results

    @staticmethod
    def _rest(ops: list[Op], gated: list[int], results: list[Result], rest: list[Result]) -> None:
        others = [i for i in range(len(ops)) if i not in set(gated)]
        for i, result in zip(others, rest, strict=True):
            results[i] = result

    # ---- a gated search ---------------------------------------------------------------------
    def _page(self, op: SearchOp) -> dict[str, Any]:
        """The search's page as the policy's sizes for this turn: the inner store is asked for
        ``over_fetch`` times the page, and at most the page's end is kept."""
        end = max(op.offset, 0) + max(op.limit, 0)
        return {"top_k": max(self.over_fetch * end, 1), "max_records": at_most(self.max_records, end)}

    def _finish(self, recall: Recall, search: _Search) -> list[SearchItem]:
        self.last_recall = recall
        op = search.op
        return kept_in_order(recall, search.found)[op.offset : op.offset + op.limit]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        assert self.policy is not None
        with searching(self._searcher, _Search(op)) as search:
            recall = self.policy.recall(op.query or "", actor_id=self.actor_id, **self._page(op))
        return self._finish(recall, search)

    async def _asearch(self, op: SearchOp) -> list[SearchItem]:
        assert self.policy is not None
        with searching(self._searcher, _Search(op)) as search:
            recall = await self.policy.arecall(op.query or "", actor_id=self.actor_id, **self._page(op))
        return self._finish(recall, search)

    def _fields(self) -> list[str] | None:
        if self._text_fields is not None:
            return self._text_fields
        config = getattr(self.inner, "index_config", None)
        fields = config.get("fields") if isinstance(config, Mapping) else None
        return list(fields) if isinstance(fields, list) else None


class _StoreSearcher:
    """A LangGraph store searched by recallwise's policy (the ``Searcher`` seam).

    It serves its :class:`GatedStore`'s searches only: the one being decided (see
    :func:`~recallwise.integrations._foreign.searching`) gives the prefix, filter and query; the
    policy's ``top_k`` for the turn is the number of items asked for (the over-fetched page).
    Hits are best first, scored ``(1 + s) / 2`` from the inner store's similarity ``s``; items
    the store returns without a score (no index) are scored by recallwise's embedder.
    """

    def __init__(self, gated: GatedStore, embedder: Callable[[], Embedder]) -> None:
        self.gated = gated
        self._embedder = embedder
        # In-process InMemoryStore: microseconds, no deadline thread; anything else may be remote.
        self.local = isinstance(gated.inner, InMemoryStore)

    @property
    def embedder(self) -> Embedder:
        return self._embedder()

    def _op(self, top_k: int) -> tuple[_Search, SearchOp]:
        search = current_search(self)
        if search is None:
            raise UsageError("this searcher serves its GatedStore's own searches only")
        return search, search.op._replace(limit=top_k, offset=0)

    def search(
        self,
        namespace: str,
        query: Query,
        top_k: int = 10,
        *,
        actor_id: str | None = None,
        text: str | None = None,
        mode: SearchMode = "dense",
    ) -> list[SearchHit]:
        search, op = self._op(top_k)
        return self._hits(namespace, query, search, _first(self.gated.inner.batch([op])), actor_id)

    async def asearch(
        self,
        namespace: str,
        query: Query,
        top_k: int = 10,
        *,
        actor_id: str | None = None,
        text: str | None = None,
        mode: SearchMode = "dense",
    ) -> list[SearchHit]:
        search, op = self._op(top_k)
        return self._hits(namespace, query, search, _first(await self.gated.inner.abatch([op])), actor_id)

    def _hits(
        self, namespace: str, query: Query, search: _Search, items: Any, actor_id: str | None
    ) -> list[SearchHit]:
        fields = self.gated._fields()
        hits: list[SearchHit | None] = []
        unscored: list[tuple[int, MemoryRecord]] = []
        for item in items or []:
            record_id = _unique(f"{'/'.join(item.namespace)}/{item.key}", search.found)
            search.found[record_id] = item
            record = MemoryRecord(
                actor_id=actor_id or self.gated.actor_id,
                namespace=namespace,
                text=item_text(item.value, fields),
                id=record_id,
                metadata={"namespace": list(item.namespace), "key": item.key},
            )
            score = getattr(item, "score", None)
            if isinstance(score, (int, float)) and np.isfinite(score):
                hits.append(SearchHit(record, min(max(score_from_cosine(score), 0.0), 1.0)))
            else:
                unscored.append((len(hits), record))
                hits.append(None)
        if unscored:
            scored = score_hits(self.embedder, query, [r for _, r in unscored])
            for (slot, _), hit in zip(unscored, scored, strict=True):
                hits[slot] = hit
        return [h for h in hits if h is not None]


def _first(results: list[Result]) -> list[SearchItem]:
    found = results[0] if results else []
    return list(found) if isinstance(found, list) else []  # type: ignore[arg-type]


def _unique(base: str, taken: Mapping[str, Any]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"


# ---- recallwise's stores as a LangGraph BaseStore --------------------------------------------

_ESCAPED = re.compile(r"%(25|2F)")


def namespace_path(namespace: Sequence[str]) -> str:
    """A LangGraph namespace as a recallwise namespace: ``("memories", "u1")`` -> ``/memories/u1``
    (``%`` and ``/`` inside a label are written ``%25`` and ``%2F``)."""
    return "/" + "/".join(label.replace("%", "%25").replace("/", "%2F") for label in namespace)


def namespace_tuple(path: str) -> tuple[str, ...]:
    """The inverse of :func:`namespace_path` (any recallwise namespace reads as a tuple)."""
    labels = [label for label in path.split("/") if label]
    return tuple(_ESCAPED.sub(lambda m: "%" if m.group(1) == "25" else "/", label) for label in labels)


#: the metadata entry of an item's record: key, value, updated_at, and when set, indexed / ttl
_META = "langgraph"
_TTL_KEYS = ("refresh_on_read", "omit_expired", "default_ttl", "sweep_interval_minutes")
#: minutes between sweeps when neither start_ttl_sweeper nor the TTLConfig says (as PostgresStore)
_DEFAULT_SWEEP_MINUTES = 5.0
#: a refresh on read is written only when it moves the expiry by at least this share of the TTL:
#: an item read many times a second is rewritten once per 1% of its TTL, not once per read
_REFRESH_SLACK = 0.01
#: records a list_namespaces probe looks at before it reads a whole namespace
_PROBE_SIZE = 4


class RecallwiseStore(BaseStore):
    """A recallwise store (``recallwise.open_store(url)``) as a LangGraph ``BaseStore``.

    * a namespace ``("memories", "u1")`` is the recallwise namespace ``/memories/u1``, and every
      recallwise namespace reads back as a tuple (records written by ``recallwise ingest`` show
      up under ``("facts", "u1")``);
    * an item is one record: its text (``fields``, default :func:`item_text` of the value) is
      what the store embeds and searches; the value itself, key and times ride in the record's
      metadata and come back unchanged;
    * a search with a ``query`` is the store's vector search (scores are cosine similarity,
      as LangGraph's own stores report them); without one, a listing (per namespace, in the
      order the items were first put); ``filter`` takes LangGraph's operators (``$eq``, ``$ne``,
      ``$gt``, ``$gte``, ``$lt``, ``$lte``);
    * ``put(..., index=False)`` stores the item without embedding it, as ``InMemoryStore``
      does: ``get`` and searches without a query return it; a search with a query ranks only
      indexed items and, when fewer of them than the page exist, fills the rest of the page
      with unindexed ones, unscored (``score=None``). ``index=["path", ...]`` embeds only the
      text at those paths (joined into one text: one vector per item, where LangGraph's stores
      keep one per path); an item with no text there is unindexed too;
    * ``ttl`` (minutes) as LangGraph's TTL: ``put(..., ttl=m)`` or ``ttl=TTLConfig(default_ttl=m)``
      makes the item expire ``m`` minutes after it was last written or read. An expired item is
      gone for this adapter at once -- ``get`` returns ``None``, searches and
      ``list_namespaces`` leave it out -- and :meth:`sweep_ttl` (or the sweeper that
      :meth:`start_ttl_sweeper` / :meth:`astart_ttl_sweeper` runs every
      ``sweep_interval_minutes``, default 5) deletes it from the store. ``get`` / ``search``
      renew the expiry of what they return unless ``refresh_ttl=False`` (default:
      ``TTLConfig(refresh_on_read=...)``, else True). A renewal rewrites the record; it is
      skipped when it would move the expiry by less than 1% of the TTL;
    * ``actor_id`` owns every record this adapter writes and is the only actor it reads (and sweeps).

    The expiry is a time in the record's metadata, read with ``clock`` (default ``time.time``;
    every worker sharing a store must agree on it). recallwise's own commands reading the same
    store see an expired record until a sweep deletes it.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        store: MemoryStore,
        *,
        actor_id: str = "langgraph",
        fields: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.actor_id = validate_id(actor_id, "actor_id")
        self.fields = list(fields) if fields is not None else None
        self.ttl_config = _checked_ttl_config(ttl)
        self.clock = clock
        #: sweeps that raised (the sweeper logs them and keeps going), and the last such error
        self.sweep_errors = 0
        self.last_sweep_error: BaseException | None = None
        # One adapter's read-modify-writes (put, TTL renewal, sweep) do not interleave.
        self._write_lock = threading.RLock()
        self._sweep_stop = threading.Event()
        self._sweep_thread: threading.Thread | None = None
        self._sweep_future: concurrent.futures.Future[None] | None = None
        self._sweep_task: asyncio.Task[None] | None = None
        self._sweep_task_stop: asyncio.Event | None = None

    @property
    def index_config(self) -> dict[str, Any]:
        """What LangGraph code reads to know a store searches by meaning."""
        embedder = self.store.embedder
        return {"dims": int(embedder.dimension), "embed": embedder.name, "fields": self.fields or ["$"]}

    def record_id(self, namespace: Sequence[str], key: str) -> str:
        """The record id of an item: unique per (actor, namespace, key), stable across processes.

        The actor is part of it: adapters of two actors over one store that put the same
        (namespace, key) write two records, and neither can replace the other's."""
        digest = hashlib.sha256(json.dumps([self.actor_id, list(namespace), key]).encode()).hexdigest()
        return f"lg-{digest[:32]}"

    # Records written before the actor was part of the id sit under the id of (namespace, key)
    # alone. Lookups by id try that one second and take its record only when it is this actor's;
    # a put moves such a record to the new id (keeping created_at) and a delete deletes it. A
    # record of another actor under it is never read, moved or deleted.
    @staticmethod
    def _legacy_record_id(namespace: Sequence[str], key: str) -> str:
        digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()
        return f"lg-{digest[:32]}"

    def _ids(self, namespace: Sequence[str], key: str) -> tuple[str, str]:
        return self.record_id(namespace, key), self._legacy_record_id(namespace, key)

    def _own(
        self, found: Mapping[str, MemoryRecord], namespace: Sequence[str], key: str
    ) -> MemoryRecord | None:
        """This actor's record of an item among ``found`` (fetched by :meth:`_ids`): the one
        under its id, else a legacy one."""
        for rid in self._ids(namespace, key):
            record = found.get(rid)
            if record is not None and record.actor_id == self.actor_id:
                return record
        return None

    # ---- batch ------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)
            if isinstance(op, PutOp) and op.value is not None:
                _check_ttl(op.ttl)
        now = self.clock()
        results: list[Result] = [None] * len(ops)
        read: dict[str, MemoryRecord] = {}  # the items to renew, when they have a TTL
        gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]
        if gets:
            found = self.store.get_records([rid for _, op in gets for rid in self._ids(op.namespace, op.key)])
            for i, op in gets:
                record = self._own(found, op.namespace, op.key)
                if record is None or not _is_live(record, now):
                    continue
                results[i] = self._item(record)
                if op.refresh_ttl:
                    read[record.id] = record
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                results[i] = self._search(op, now, read)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op, now)
        puts = [op for op in ops if isinstance(op, PutOp)]
        # Reads before writes, as LangGraph's stores order a batch: the renewals go first, so
        # that a put of the same key in this batch has the last word.
        written = {rid for op in puts for rid in self._ids(op.namespace, op.key)}
        self._renew({rid: r for rid, r in read.items() if rid not in written}, now)
        if puts:
            self._put(puts, now)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # recallwise's stores are synchronous (SQLite in-process, psycopg's pool, boto3):
        # a worker thread keeps the event loop free
        return await asyncio.to_thread(self.batch, list(ops))

    # ---- ops --------------------------------------------------------------------------------
    def _put(self, puts: list[PutOp], now: float) -> None:
        last: dict[str, PutOp] = {}
        for op in puts:  # the last write of a key in a batch wins, as in LangGraph's stores
            last[self.record_id(op.namespace, op.key)] = op
        with self._write_lock:
            found = self.store.get_records(
                [rid for op in last.values() for rid in self._ids(op.namespace, op.key)]
            )
            owned = {rid: self._own(found, op.namespace, op.key) for rid, op in last.items()}
            # a delete deletes this actor's record of the key; a write replaces it (a legacy one
            # is deleted after the new one is written: a failure in between loses nothing)
            gone = [
                r.id for rid, r in owned.items() if r is not None and (last[rid].value is None or r.id != rid)
            ]
            records = []
            for rid, op in last.items():
                if op.value is None:
                    continue
                value = dict(op.value)
                before = owned[rid]
                # an expired item is gone: putting its key again makes a new item
                created = before.created_at if before is not None and _is_live(before, now) else now
                fields = op.index if isinstance(op.index, list) else self.fields
                indexed = "" if op.index is False else _index_text(value, fields)
                saved: dict[str, Any] = {"key": op.key, "value": value, "updated_at": now}
                if not indexed:
                    saved["indexed"] = False
                if op.ttl is not None:
                    saved["ttl_minutes"] = float(op.ttl)
                    saved["expires_at"] = now + 60.0 * float(op.ttl)
                records.append(
                    MemoryRecord(
                        actor_id=self.actor_id,
                        namespace=namespace_path(op.namespace),
                        text=indexed or item_text(value, fields),
                        id=rid,
                        strategy="langgraph",
                        created_at=created,
                        metadata={_META: saved},
                        embedding=None if indexed else self._unindexed_vector(),
                    )
                )
            if records:
                self.store.add_records(records)
            if gone:
                self.store.delete_records(gone)

    def _unindexed_vector(self) -> np.ndarray:
        """The vector of an item put with ``index=False``.

        Every recallwise store keeps one vector per record. An unindexed item gets a fixed unit
        vector instead of its text's embedding (so nothing is embedded, as in LangGraph's
        stores), and its metadata says ``indexed: False``, which the searches skip whatever
        the score. Not a zero vector: pgvector's cosine distance to one is NaN.
        """
        vector = np.zeros(int(self.store.embedder.dimension), dtype=np.float32)
        vector[0] = 1.0
        return vector

    def _namespaces(self, prefix: tuple[str, ...]) -> list[str]:
        return [
            ns
            for ns in self.store.namespaces(actor_id=self.actor_id)
            if namespace_tuple(ns)[: len(prefix)] == prefix
        ]

    def _listing(self, namespaces: Sequence[str], now: float) -> list[MemoryRecord]:
        """The live items of ``namespaces``, namespace by namespace, each in creation order.

        By creation time, not the store's order: a store puts a rewritten record (an update, a
        TTL renewal) at the end of its order, and a reader paging through a listing that renews
        what it reads must not see the pages shift (``InMemoryStore`` keeps an updated key in
        place too). Items created at the same time (one batch) are in key order."""
        listed = []
        for ns in namespaces:
            records = [r for r in self.store.list_records(ns, actor_id=self.actor_id) if _is_live(r, now)]
            records.sort(key=lambda r: (r.created_at, str(_saved(r).get("key", r.id))))
            listed.extend(records)
        return listed

    def _search(self, op: SearchOp, now: float, read: dict[str, MemoryRecord]) -> list[SearchItem]:
        namespaces = self._namespaces(tuple(op.namespace_prefix))
        if op.limit <= 0 or not namespaces:
            return []
        start = max(op.offset, 0)
        want = start + op.limit
        if op.query and op.query.strip():
            page = self._ranked(op, namespaces, want, now)[start:want]
        else:
            listed = [
                r
                for r in self._listing(namespaces, now)
                if not op.filter or _matches(self._value(r), op.filter)
            ]
            page = [(None, record) for record in listed[start:want]]
        if op.refresh_ttl:
            read.update((record.id, record) for _, record in page)
        return [self._item(record, score, search=True) for score, record in page]

    def _ranked(
        self, op: SearchOp, namespaces: Sequence[str], want: int, now: float
    ) -> list[tuple[float | None, MemoryRecord]]:
        """The live items of a query search, best first: the indexed ones by cosine, then -- when
        fewer than ``want`` are indexed -- the unindexed ones unscored, in listing order (as
        ``InMemoryStore`` fills a page)."""
        query = op.query or ""
        scored: list[tuple[float, MemoryRecord]] = []
        unscored: list[MemoryRecord] = []
        if op.filter:
            # exact: every live record of the prefix that passes the filter, ranked by the store's vectors
            vector = self.store.embedder.embed([query])[0]
            for record in self._listing(namespaces, now):
                if not _matches(self._value(record), op.filter):
                    continue
                if _is_indexed(record) and record.embedding is not None:
                    scored.append((float(np.asarray(record.embedding) @ vector), record))
                else:
                    unscored.append(record)
        else:
            for ns in namespaces:
                scored.extend(self._nearest(ns, query, want, now))
            if len(scored) < want:  # then every namespace was searched to its end
                unscored = [r for r in self._listing(namespaces, now) if not _is_indexed(r)]
        scored.sort(key=lambda pair: -pair[0])
        return [*scored, *((None, record) for record in unscored)]

    def _nearest(self, namespace: str, query: str, want: int, now: float) -> list[tuple[float, MemoryRecord]]:
        """The ``want`` nearest live, indexed items of one namespace (fewer when it has fewer).

        The store's search cannot filter on a record's metadata (the store protocol has no such
        filter, and every backend would need one), so expired and unindexed records take places
        in its ranking: the adapter asks for twice as many until ``want`` usable ones come back
        or the namespace runs out."""
        top_k = want
        while True:
            hits = self.store.search(namespace, query, top_k, actor_id=self.actor_id)
            usable = [
                (hit.cosine, hit.record)
                for hit in hits
                if _is_indexed(hit.record) and _is_live(hit.record, now)
            ]
            if len(usable) >= want or len(hits) < top_k:
                return usable[:want]
            top_k *= 2

    def _list_namespaces(self, op: ListNamespacesOp, now: float) -> list[tuple[str, ...]]:
        found = [
            (ns, namespace_tuple(ns))
            for ns in self.store.namespaces(actor_id=self.actor_id)
            if all(_path_matches(c, namespace_tuple(ns)) for c in op.match_conditions or ())
        ]
        live = [labels for ns, labels in found if self._has_live_item(ns, now)]
        if op.max_depth is not None:
            live = [labels[: op.max_depth] for labels in live]
        unique = sorted(set(live))
        return unique[op.offset : op.offset + op.limit]

    def _has_live_item(self, namespace: str, now: float) -> bool:
        """Whether ``namespace`` holds an item of this actor that has not expired.

        The store lists namespaces, not expiries (see :meth:`_nearest` for why the protocol is
        left alone). A short search proves a namespace live in the usual case; only when none of
        the records it returns is live is the whole namespace read."""
        probe = self.store.search(
            namespace, self._unindexed_vector(), _PROBE_SIZE, actor_id=self.actor_id, text=namespace
        )
        if any(_is_live(hit.record, now) for hit in probe):
            return True
        return any(_is_live(r, now) for r in self.store.list_records(namespace, actor_id=self.actor_id))

    # ---- TTL ----------------------------------------------------------------------------------
    def _renew(self, read: Mapping[str, MemoryRecord], now: float) -> None:
        """Push back the expiry of the items just read that have a TTL (a refresh on read)."""
        due = [rid for rid, record in read.items() if _renewal(record, now) is not None]
        if not due:
            return
        with self._write_lock:
            # Read again: another worker may have rewritten or deleted an item since this batch
            # read it, and a renewal must not write back an older value.
            current = self.store.get_records(due)
            renewed = []
            for rid in due:
                record = current.get(rid)
                expires = _renewal(record, now) if record is not None else None
                if record is None or expires is None or record.actor_id != self.actor_id:
                    continue
                record.metadata = {**record.metadata, _META: {**_saved(record), "expires_at": expires}}
                renewed.append(record)
            if renewed:
                self.store.add_records(renewed)

    def sweep_ttl(self) -> int:
        """Delete this actor's expired items from the store; returns how many were deleted."""
        now = self.clock()
        with self._write_lock:
            expired = [r.id for r in self.store.list_records(actor_id=self.actor_id) if not _is_live(r, now)]
            if not expired:
                return 0
            # another worker may have renewed one since the listing: delete what is still expired
            current = self.store.get_records(expired)
            gone = [rid for rid, r in current.items() if r.actor_id == self.actor_id and not _is_live(r, now)]
            return int(self.store.delete_records(gone)) if gone else 0

    async def asweep_ttl(self) -> int:
        """:meth:`sweep_ttl` in a worker thread."""
        return await asyncio.to_thread(self.sweep_ttl)

    def _sweep_minutes(self, sweep_interval_minutes: float | None) -> float:
        if sweep_interval_minutes is not None:
            return _positive_minutes(sweep_interval_minutes, "sweep_interval_minutes")
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        return float(configured) if configured is not None else _DEFAULT_SWEEP_MINUTES

    def _swept(self) -> None:
        """One sweep of a background sweeper: a failure is logged and counted, and the next
        sweep runs on time."""
        try:
            count = self.sweep_ttl()
        except Exception as exc:
            self.sweep_errors += 1
            self.last_sweep_error = exc
            logger.exception("recallwise TTL sweep failed (%s)", type(exc).__name__)
            return
        if count:
            logger.info("recallwise TTL sweep deleted %d expired items", count)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items every ``sweep_interval_minutes`` (default: the TTLConfig's, else 5)
        in a daemon thread, as ``PostgresStore`` does; the first sweep runs after one interval.

        Returns a future that completes when :meth:`stop_ttl_sweeper` stops the thread;
        cancelling it stops the thread too. While a sweeper runs, the same future is returned.
        Unlike ``PostgresStore``, a store made without a TTLConfig sweeps too (items may still
        be put with ``ttl=``)."""
        interval = self._sweep_minutes(sweep_interval_minutes)
        if (
            self._sweep_thread is not None
            and self._sweep_thread.is_alive()
            and self._sweep_future is not None
        ):
            return self._sweep_future
        stop = self._sweep_stop
        stop.clear()
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        # The thread holds the store weakly: a store nobody uses any more is not kept alive by it.
        ref = weakref.ref(self)

        def sweep_loop() -> None:
            while not stop.wait(interval * 60.0):
                store = ref()
                if store is None:
                    break
                store._swept()
                del store
            if not future.done():
                future.set_result(None)

        future.add_done_callback(lambda f: stop.set() if f.cancelled() else None)
        self._sweep_thread = threading.Thread(target=sweep_loop, name="recallwise-ttl-sweeper", daemon=True)
        self._sweep_future = future
        self._sweep_thread.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True when it stopped (or was not running), False when
        ``timeout`` seconds passed first."""
        thread = self._sweep_thread
        if thread is None or not thread.is_alive():
            return True
        self._sweep_stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._sweep_thread = None
        self._sweep_future = None
        return True

    async def astart_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> asyncio.Task[None]:
        """:meth:`start_ttl_sweeper` as an asyncio task (``AsyncPostgresStore``'s
        ``start_ttl_sweeper``): each sweep runs in a worker thread. While one runs, the same task
        is returned; cancelling it stops the sweeper."""
        interval = self._sweep_minutes(sweep_interval_minutes)
        if self._sweep_task is not None and not self._sweep_task.done():
            return self._sweep_task
        stop = asyncio.Event()

        async def sweep_loop() -> None:
            while not stop.is_set():
                try:
                    await asyncio.wait_for(stop.wait(), timeout=interval * 60.0)
                    return
                except TimeoutError:
                    pass
                await asyncio.to_thread(self._swept)

        self._sweep_task_stop = stop
        self._sweep_task = asyncio.create_task(sweep_loop(), name="recallwise-ttl-sweeper")
        return self._sweep_task

    async def astop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper task; True when it stopped (or was not running), False when
        ``timeout`` seconds passed first."""
        task = self._sweep_task
        if task is None or task.done():
            return True
        assert self._sweep_task_stop is not None
        self._sweep_task_stop.set()
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if task not in done:
            return False
        self._sweep_task = None
        return True

    def __del__(self) -> None:
        stop = getattr(self, "_sweep_stop", None)
        if stop is not None:
            stop.set()

    # ---- records <-> items ------------------------------------------------------------------
    @staticmethod
    def _value(record: MemoryRecord) -> dict[str, Any]:
        saved = _saved(record)
        if isinstance(saved.get("value"), dict):
            return dict(saved["value"])
        return {"text": record.text}  # a record recallwise itself wrote (ingest, extraction)

    def _item(self, record: MemoryRecord, score: float | None = None, *, search: bool = False) -> Any:
        saved = _saved(record)
        created = datetime.fromtimestamp(record.created_at, tz=UTC)
        updated_at = saved.get("updated_at")
        updated = (
            datetime.fromtimestamp(float(updated_at), tz=UTC)
            if isinstance(updated_at, (int, float))
            else created
        )
        fields: dict[str, Any] = {
            "namespace": namespace_tuple(record.namespace),
            "key": str(saved.get("key", record.id)),
            "value": self._value(record),
            "created_at": created,
            "updated_at": updated,
        }
        if not search:
            return Item(**fields)
        return SearchItem(score=score, **fields)


def _saved(record: MemoryRecord) -> dict[str, Any]:
    """The LangGraph entry of a record's metadata ({} for a record recallwise itself wrote)."""
    saved = record.metadata.get(_META) if isinstance(record.metadata, dict) else None
    return saved if isinstance(saved, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _is_live(record: MemoryRecord, now: float) -> bool:
    expires = _number(_saved(record).get("expires_at"))
    return expires is None or expires > now


def _is_indexed(record: MemoryRecord) -> bool:
    return _saved(record).get("indexed", True) is not False


def _renewal(record: MemoryRecord, now: float) -> float | None:
    """The new expiry of a live item with a TTL that was just read, or None when there is
    nothing to write (no TTL, expired, or a renewal smaller than the slack)."""
    saved = _saved(record)
    minutes = _number(saved.get("ttl_minutes"))
    if minutes is None or not _is_live(record, now):
        return None
    expires = now + 60.0 * minutes
    before = _number(saved.get("expires_at"))
    if before is not None and expires - before < 60.0 * minutes * _REFRESH_SLACK:
        return None
    return expires


def _index_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text an item is embedded by: the text at ``fields`` (LangGraph paths), or for the
    whole item (no fields, or ``["$"]``) :func:`item_text`. Empty when the paths hold no text:
    the item is then not indexed, as in LangGraph's stores."""
    if fields is None or list(fields) == ["$"]:
        return item_text(value)
    parts = [text for path in fields for text in get_text_at_path(value, path)]
    return " ".join(part for part in parts if part.strip())


def _positive_minutes(value: Any, what: str) -> float:
    minutes = _number(value)
    if minutes is None or not math.isfinite(minutes) or minutes <= 0:
        raise ValueError(f"{what} must be a positive number of minutes, got {value!r}")
    return minutes


def _check_ttl(ttl: Any) -> None:
    if ttl is not None:
        _positive_minutes(ttl, "ttl")


def _checked_ttl_config(config: TTLConfig | None) -> TTLConfig | None:
    """A copy of ``config`` when its keys hold what LangGraph's TTLConfig says; else one
    ValueError naming the key."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ValueError(f"ttl must be a TTLConfig dict, got {type(config).__name__}")
    unknown = sorted(set(config) - set(_TTL_KEYS))
    if unknown:
        raise ValueError(f"unknown TTLConfig key(s) {', '.join(unknown)} (known: {', '.join(_TTL_KEYS)})")
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in config and not isinstance(config[flag], bool):
            raise ValueError(f"TTLConfig {flag} must be True or False, got {config[flag]!r}")
    if config.get("omit_expired") is False:
        raise ValueError(
            "TTLConfig omit_expired=False is not supported: RecallwiseStore never returns expired items"
        )
    for minutes in ("default_ttl", "sweep_interval_minutes"):
        if config.get(minutes) is not None:
            _positive_minutes(config.get(minutes), f"TTLConfig {minutes}")
    return TTLConfig(**config)  # a copy: the caller's dict may change later


def _path_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    window = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(want == "*" or want == have for want, have in zip(path, window, strict=True))


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda have, want: bool(have == want),
    "$ne": lambda have, want: bool(have != want),
    "$gt": lambda have, want: float(have) > float(want),
    "$gte": lambda have, want: float(have) >= float(want),
    "$lt": lambda have, want: float(have) < float(want),
    "$lte": lambda have, want: float(have) <= float(want),
}


def _matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter semantics: nested equality, lists element-wise, ``$`` operators."""
    if isinstance(condition, Mapping):
        if condition and all(isinstance(k, str) and k.startswith("$") for k in condition):
            for operator, operand in condition.items():
                if operator not in _OPERATORS:
                    raise ValueError(f"Unsupported operator: {operator}")
                try:
                    if not _OPERATORS[operator](value, operand):
                        return False
                except (TypeError, ValueError):
                    return False
            return True
        return isinstance(value, Mapping) and all(_matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(_matches(v, c) for v, c in zip(value, condition, strict=True))
        )
    return bool(value == condition)
