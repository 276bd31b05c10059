"""RecallwiseStore: a recallwise store used as a LangGraph ``BaseStore``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from ...records import MemoryRecord, validate_id
from ...stores.base import MemoryStore, SearchRequest
from .namespaces import matches, namespace_path, namespace_tuple, path_matches
from .text import index_text, item_text
from .ttl import (
    DEFAULT_SWEEP_MINUTES,
    META,
    check_ttl,
    checked_ttl_config,
    is_indexed,
    is_live,
    positive_minutes,
    renewal,
    saved_entry,
)

logger = logging.getLogger(__name__)

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
        self.ttl_config = checked_ttl_config(ttl)
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
                check_ttl(op.ttl)
        now = self.clock()
        results: list[Result] = [None] * len(ops)
        read: dict[str, MemoryRecord] = {}  # the items to renew, when they have a TTL
        gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]
        if gets:
            found = self.store.get_records([rid for _, op in gets for rid in self._ids(op.namespace, op.key)])
            for i, op in gets:
                record = self._own(found, op.namespace, op.key)
                if record is None or not is_live(record, now):
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
                created = before.created_at if before is not None and is_live(before, now) else now
                fields = op.index if isinstance(op.index, list) else self.fields
                indexed = "" if op.index is False else index_text(value, fields)
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
                        metadata={META: saved},
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
            records = [r for r in self.store.list_records(ns, actor_id=self.actor_id) if is_live(r, now)]
            records.sort(key=lambda r: (r.created_at, str(saved_entry(r).get("key", r.id))))
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
                if not op.filter or matches(self._value(r), op.filter)
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
                if not matches(self._value(record), op.filter):
                    continue
                if is_indexed(record) and record.embedding is not None:
                    scored.append((float(np.asarray(record.embedding) @ vector), record))
                else:
                    unscored.append(record)
        else:
            for ns in namespaces:
                scored.extend(self._nearest(ns, query, want, now))
            if len(scored) < want:  # then every namespace was searched to its end
                unscored = [r for r in self._listing(namespaces, now) if not is_indexed(r)]
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
            hits = self.store.search(SearchRequest(namespace, query, top_k, actor_id=self.actor_id))
            usable = [
                (hit.cosine, hit.record)
                for hit in hits
                if is_indexed(hit.record) and is_live(hit.record, now)
            ]
            if len(usable) >= want or len(hits) < top_k:
                return usable[:want]
            top_k *= 2

    def _list_namespaces(self, op: ListNamespacesOp, now: float) -> list[tuple[str, ...]]:
        found = [
            (ns, namespace_tuple(ns))
            for ns in self.store.namespaces(actor_id=self.actor_id)
            if all(path_matches(c, namespace_tuple(ns)) for c in op.match_conditions or ())
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
            SearchRequest(
                namespace, self._unindexed_vector(), _PROBE_SIZE, actor_id=self.actor_id, text=namespace
            )
        )
        if any(is_live(hit.record, now) for hit in probe):
            return True
        return any(is_live(r, now) for r in self.store.list_records(namespace, actor_id=self.actor_id))

    # ---- TTL ----------------------------------------------------------------------------------
    def _renew(self, read: Mapping[str, MemoryRecord], now: float) -> None:
        """Push back the expiry of the items just read that have a TTL (a refresh on read)."""
        due = [rid for rid, record in read.items() if renewal(record, now) is not None]
        if not due:
            return
        with self._write_lock:
            # Read again: another worker may have rewritten or deleted an item since this batch
            # read it, and a renewal must not write back an older value.
            current = self.store.get_records(due)
            renewed = []
            for rid in due:
                record = current.get(rid)
                expires = renewal(record, now) if record is not None else None
                if record is None or expires is None or record.actor_id != self.actor_id:
                    continue
                record.metadata = {**record.metadata, META: {**saved_entry(record), "expires_at": expires}}
                renewed.append(record)
            if renewed:
                self.store.add_records(renewed)

    def sweep_ttl(self) -> int:
        """Delete this actor's expired items from the store; returns how many were deleted."""
        now = self.clock()
        with self._write_lock:
            expired = [r.id for r in self.store.list_records(actor_id=self.actor_id) if not is_live(r, now)]
            if not expired:
                return 0
            # another worker may have renewed one since the listing: delete what is still expired
            current = self.store.get_records(expired)
            gone = [rid for rid, r in current.items() if r.actor_id == self.actor_id and not is_live(r, now)]
            return int(self.store.delete_records(gone)) if gone else 0

    async def asweep_ttl(self) -> int:
        """:meth:`sweep_ttl` in a worker thread."""
        return await asyncio.to_thread(self.sweep_ttl)

    def _sweep_minutes(self, sweep_interval_minutes: float | None) -> float:
        if sweep_interval_minutes is not None:
            return positive_minutes(sweep_interval_minutes, "sweep_interval_minutes")
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        return float(configured) if configured is not None else DEFAULT_SWEEP_MINUTES

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
        saved = saved_entry(record)
        if isinstance(saved.get("value"), dict):
            return dict(saved["value"])
        return {"text": record.text}  # a record recallwise itself wrote (ingest, extraction)

    def _item(self, record: MemoryRecord, score: float | None = None, *, search: bool = False) -> Any:
        saved = saved_entry(record)
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
