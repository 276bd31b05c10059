"""LangGraph: a gate in front of any ``BaseStore``, and recallgate's stores as a ``BaseStore``.

>>> from langgraph.store.memory import InMemoryStore
>>> from recallgate.integrations.langgraph import GatedStore, index_config
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

:func:`index_config` / :func:`embeddings_function` expose recallgate's offline embedder as a
LangGraph embeddings function, so the inner store's vectors need no hosted model.

:class:`RecallgateStore` is the other direction: a recallgate store (the embedded SQLite one,
PostgreSQL, AgentCore) used *as* a LangGraph ``BaseStore``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
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

__all__ = ["GatedStore", "RecallgateStore", "embeddings_function", "index_config", "item_text"]

_DEFAULT: Any = object()
#: value keys that usually hold a memory's text (LangMem writes {"content": {"content": ...}})
_TEXT_KEYS = ("content", "text", "memory", "data")


# ---- recallgate's embedder as a LangGraph embeddings function ----------------------------------


def embeddings_function(embedder: Embedder | None = None) -> Callable[[Sequence[str]], list[list[float]]]:
    """``texts -> vectors`` with recallgate's embedder (default: the offline MiniLM), for a
    LangGraph ``index={"embed": ...}``. LangGraph runs a sync function in a worker thread for
    its async calls, so an asyncio graph never waits on it."""
    get = lazy_embedder(embedder)

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return np.asarray(get().embed(list(texts)), dtype=np.float32).tolist()

    embed.__name__ = f"recallgate_{getattr(embedder, 'name', 'default')}_embed"
    return embed


def index_config(embedder: Embedder | None = None, *, fields: Sequence[str] | None = None) -> dict[str, Any]:
    """A LangGraph ``IndexConfig`` (``dims``, ``embed``, ``fields``) over recallgate's embedder."""
    chosen = embedder if embedder is not None else default_embedder()
    config: dict[str, Any] = {"dims": int(chosen.dimension), "embed": embeddings_function(chosen)}
    if fields is not None:
        config["fields"] = list(fields)
    return config


def item_text(value: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """The text of a stored value that a judge reads (and that a recallgate store embeds).

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
    * ``keep``, ``max_records`` -- the judge's keep rule (see :class:`~recallgate.RecallPolicy`);
    * ``embedder`` -- recallgate's embedder for the query and the judged items' text (the
      inner store's own embeddings are not assumed to be recallgate's);
    * ``text_fields`` -- the value paths that hold an item's text (default: the inner
      store's ``index["fields"]``, else see :func:`item_text`);
    * ``stats`` -- a :class:`~recallgate.RecallStats` to count into; ``actor_id`` -- who the
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
    """A LangGraph store searched by recallgate's policy (the ``Searcher`` seam).

    It serves its :class:`GatedStore`'s searches only: the one being decided (see
    :func:`~recallgate.integrations._foreign.searching`) gives the prefix, filter and query; the
    policy's ``top_k`` for the turn is the number of items asked for (the over-fetched page).
    Hits are best first, scored ``(1 + s) / 2`` from the inner store's similarity ``s``; items
    the store returns without a score (no index) are scored by recallgate's embedder.
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


# ---- recallgate's stores as a LangGraph BaseStore --------------------------------------------

_ESCAPED = re.compile(r"%(25|2F)")


def namespace_path(namespace: Sequence[str]) -> str:
    """A LangGraph namespace as a recallgate namespace: ``("memories", "u1")`` -> ``/memories/u1``
    (``%`` and ``/`` inside a label are written ``%25`` and ``%2F``)."""
    return "/" + "/".join(label.replace("%", "%25").replace("/", "%2F") for label in namespace)


def namespace_tuple(path: str) -> tuple[str, ...]:
    """The inverse of :func:`namespace_path` (any recallgate namespace reads as a tuple)."""
    labels = [label for label in path.split("/") if label]
    return tuple(_ESCAPED.sub(lambda m: "%" if m.group(1) == "25" else "/", label) for label in labels)


class RecallgateStore(BaseStore):
    """A recallgate store (``recallgate.open_store(url)``) as a LangGraph ``BaseStore``.

    * a namespace ``("memories", "u1")`` is the recallgate namespace ``/memories/u1``, and every
      recallgate namespace reads back as a tuple (records written by ``recallgate ingest`` show
      up under ``("facts", "u1")``);
    * an item is one record: its text (``fields``, default :func:`item_text` of the value) is
      what the store embeds and searches; the value itself, key and times ride in the record's
      metadata and come back unchanged;
    * a search with a ``query`` is the store's vector search (scores are cosine similarity,
      as LangGraph's own stores report them); without one, a listing in the store's order;
      ``filter`` takes LangGraph's operators (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``);
    * every record is embedded (``put(..., index=False)`` still stores a searchable record);
      ``ttl`` is not supported;
    * ``actor_id`` owns every record this adapter writes and is the only actor it reads.
    """

    supports_ttl: bool = False

    def __init__(
        self, store: MemoryStore, *, actor_id: str = "langgraph", fields: Sequence[str] | None = None
    ) -> None:
        self.store = store
        self.actor_id = validate_id(actor_id, "actor_id")
        self.fields = list(fields) if fields is not None else None

    @property
    def index_config(self) -> dict[str, Any]:
        """What LangGraph code reads to know a store searches by meaning."""
        embedder = self.store.embedder
        return {"dims": int(embedder.dimension), "embed": embedder.name, "fields": self.fields or ["$"]}

    def record_id(self, namespace: Sequence[str], key: str) -> str:
        """The record id of an item: unique per (namespace, key), stable across processes."""
        digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()
        return f"lg-{digest[:32]}"

    # ---- batch ------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)
        results: list[Result] = [None] * len(ops)
        gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]
        if gets:
            found = self.store.get_records([self.record_id(op.namespace, op.key) for _, op in gets])
            for i, op in gets:
                record = found.get(self.record_id(op.namespace, op.key))
                results[i] = (
                    self._item(record) if record is not None and record.actor_id == self.actor_id else None
                )
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
        puts = [op for op in ops if isinstance(op, PutOp)]
        if puts:
            self._put(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # recallgate's stores are synchronous (SQLite in-process, psycopg's pool, boto3):
        # a worker thread keeps the event loop free
        return await asyncio.to_thread(self.batch, list(ops))

    # ---- ops --------------------------------------------------------------------------------
    def _put(self, puts: list[PutOp]) -> None:
        last: dict[str, PutOp] = {}
        for op in puts:  # the last write of a key in a batch wins, as in LangGraph's stores
            last[self.record_id(op.namespace, op.key)] = op
        deletes = [rid for rid, op in last.items() if op.value is None]
        writes = {rid: op for rid, op in last.items() if op.value is not None}
        if deletes:
            owned = self.store.get_records(deletes)
            self.store.delete_records([rid for rid, r in owned.items() if r.actor_id == self.actor_id])
        if not writes:
            return
        existing = self.store.get_records(list(writes))
        now = time.time()
        records = []
        for rid, op in writes.items():
            value = dict(op.value or {})
            before = existing.get(rid)
            created = before.created_at if before is not None else now
            fields = op.index if isinstance(op.index, list) else self.fields
            records.append(
                MemoryRecord(
                    actor_id=self.actor_id,
                    namespace=namespace_path(op.namespace),
                    text=item_text(value, fields),
                    id=rid,
                    strategy="langgraph",
                    created_at=created,
                    metadata={"langgraph": {"key": op.key, "value": value, "updated_at": now}},
                )
            )
        self.store.add_records(records)

    def _namespaces(self, prefix: tuple[str, ...]) -> list[str]:
        return [
            ns
            for ns in self.store.namespaces(actor_id=self.actor_id)
            if namespace_tuple(ns)[: len(prefix)] == prefix
        ]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        namespaces = self._namespaces(tuple(op.namespace_prefix))
        if op.limit <= 0 or not namespaces:
            return []
        want = max(op.offset, 0) + op.limit
        if op.query and op.query.strip():
            scored: list[tuple[float, MemoryRecord]] = []
            if op.filter:
                # exact: every record of the prefix that passes the filter, ranked by the store's vectors
                vector = self.store.embedder.embed([op.query])[0]
                for ns in namespaces:
                    for record in self.store.list_records(ns, actor_id=self.actor_id):
                        if _matches(self._value(record), op.filter) and record.embedding is not None:
                            scored.append((float(np.asarray(record.embedding) @ vector), record))
            else:
                for ns in namespaces:
                    hits = self.store.search(ns, op.query, want, actor_id=self.actor_id)
                    scored.extend((hit.cosine, hit.record) for hit in hits)
            scored.sort(key=lambda pair: -pair[0])
            return [self._item(record, score) for score, record in scored[op.offset : want]]
        listed = [
            record
            for ns in namespaces
            for record in self.store.list_records(ns, actor_id=self.actor_id)
            if not op.filter or _matches(self._value(record), op.filter)
        ]
        return [self._item(record) for record in listed[op.offset : want]]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = [namespace_tuple(ns) for ns in self.store.namespaces(actor_id=self.actor_id)]
        found = [ns for ns in found if all(_path_matches(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            found = [ns[: op.max_depth] for ns in found]
        unique = sorted(set(found))
        return unique[op.offset : op.offset + op.limit]

    # ---- records <-> items ------------------------------------------------------------------
    @staticmethod
    def _value(record: MemoryRecord) -> dict[str, Any]:
        saved = record.metadata.get("langgraph") if isinstance(record.metadata, dict) else None
        if isinstance(saved, dict) and isinstance(saved.get("value"), dict):
            return dict(saved["value"])
        return {"text": record.text}  # a record recallgate itself wrote (ingest, extraction)

    def _item(self, record: MemoryRecord, score: float | None = None) -> Any:
        saved = record.metadata.get("langgraph") if isinstance(record.metadata, dict) else None
        saved = saved if isinstance(saved, dict) else {}
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
        if score is None:
            return Item(**fields)
        return SearchItem(score=score, **fields)


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
