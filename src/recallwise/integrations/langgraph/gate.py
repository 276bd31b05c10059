"""GatedStore: the gate and judge in front of any LangGraph ``BaseStore``."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

import numpy as np
from langgraph.store.base import (
    BaseStore,
    Op,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.memory import InMemoryStore

from ...embeddings import Embedder
from ...errors import UsageError
from ...policy import Recall
from ...records import MemoryRecord, SearchHit, score_from_cosine, validate_id
from ...stores.base import Query, SearchRequest
from .._foreign import (
    FrameworkGate,
    GateKeywords,
    at_most,
    check_over_fetch,
    foreign_owned,
    kept_in_order,
    scope_of,
    scoped,
    score_hits,
    unique_key,
)
from .text import item_text


@dataclass
class _Search:
    """One gated LangGraph search while the policy decides it: the op as the caller made it, and
    the inner store's items that came back, by record id (to hand back the kept ones unchanged)."""

    op: SearchOp
    found: dict[str, SearchItem] = field(default_factory=dict)


def _is_gated(op: Op) -> bool:
    return isinstance(op, SearchOp) and isinstance(op.query, str) and bool(op.query.strip())


class GatedStore(BaseStore, FrameworkGate):
    """A LangGraph ``BaseStore`` that gates and judges natural-language searches of ``inner``.

    The keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider``, ``options``, ``embedder`` (the inner store's own embeddings are not assumed to be
    recallwise's), ``stats``, ``log``. Its own:

    * ``over_fetch`` -- how many times a search's page to fetch for the judge (a number >= 1,
      default 3);
    * ``text_fields`` -- the value paths that hold an item's text (default: the inner
      store's ``index["fields"]``, else see :func:`item_text`);
    * ``actor_id`` -- who the decisions are counted and cached for (a store has no user;
      namespaces usually carry it).

    Anything else is read from ``inner`` (``index_config``, ``setup()``, ...).
    """

    _owned = foreign_owned(10)
    _why = ": a search's limit and over_fetch say how many items are judged"

    def __init__(
        self,
        inner: BaseStore,
        *,
        over_fetch: float = 3,
        text_fields: Sequence[str] | None = None,
        actor_id: str = "langgraph",
        **gate: Unpack[GateKeywords],
    ) -> None:
        if not isinstance(inner, BaseStore):
            raise TypeError(f"GatedStore wraps a langgraph BaseStore, got {type(inner).__name__}")
        self._configure(**gate)
        self.inner = inner
        self.over_fetch = check_over_fetch(over_fetch)
        self.actor_id = validate_id(actor_id, "actor_id")
        self._text_fields = list(text_fields) if text_fields is not None else None
        self._searcher = _StoreSearcher(self, self._judge_embedder)
        # one namespace, named after the inner store: what traces and the decision log show
        self.policy = self._policy_over(self._searcher, [type(inner).__name__])

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
        return {
            "top_k": max(math.ceil(self.over_fetch * end), 1),
            "max_records": at_most(self.options.limits.max_records, end),
        }

    def _finish(self, recall: Recall, search: _Search) -> list[SearchItem]:
        self.last_recall = recall
        op = search.op
        return kept_in_order(recall, search.found)[op.offset : op.offset + op.limit]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        assert self.policy is not None
        search = _Search(op)
        recall = self.policy.recall(
            op.query or "",
            actor_id=self.actor_id,
            extensions=scoped(self._searcher, search),
            **self._page(op),
        )
        return self._finish(recall, search)

    async def _asearch(self, op: SearchOp) -> list[SearchItem]:
        assert self.policy is not None
        search = _Search(op)
        recall = await self.policy.arecall(
            op.query or "",
            actor_id=self.actor_id,
            extensions=scoped(self._searcher, search),
            **self._page(op),
        )
        return self._finish(recall, search)

    def _fields(self) -> list[str] | None:
        if self._text_fields is not None:
            return self._text_fields
        config = getattr(self.inner, "index_config", None)
        fields = config.get("fields") if isinstance(config, Mapping) else None
        return list(fields) if isinstance(fields, list) else None


class _StoreSearcher:
    """A LangGraph store searched by recallwise's policy (the ``Searcher`` seam).

    It serves its :class:`GatedStore`'s searches only: the one being decided (the request's scope,
    see :func:`~recallwise.integrations._foreign.scoped`) gives the prefix, filter and query; the
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

    def _op(self, request: SearchRequest) -> tuple[_Search, SearchOp]:
        search: _Search | None = scope_of(request, self)
        if search is None:
            raise UsageError("this searcher serves its GatedStore's own searches only")
        return search, search.op._replace(limit=request.top_k, offset=0)

    def search(self, request: SearchRequest) -> list[SearchHit]:
        search, op = self._op(request)
        items = _first(self.gated.inner.batch([op]))
        return self._hits(request.namespace, request.query, search, items, request.actor_id)

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        search, op = self._op(request)
        items = _first(await self.gated.inner.abatch([op]))
        return self._hits(request.namespace, request.query, search, items, request.actor_id)

    def _hits(
        self, namespace: str, query: Query, search: _Search, items: Any, actor_id: str | None
    ) -> list[SearchHit]:
        fields = self.gated._fields()
        hits: list[SearchHit | None] = []
        unscored: list[tuple[int, MemoryRecord]] = []
        for item in items or []:
            record_id = unique_key(f"{'/'.join(item.namespace)}/{item.key}", search.found)
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
