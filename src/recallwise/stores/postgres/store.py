"""The store: :class:`PostgresStore`, records and events in PostgreSQL with pgvector search.

Owns the connection pool (and each pooled connection's settings), events, the record CRUD
methods, and search: dense (the plan's SQL function, then an exact re-sort), hybrid (fused with
full-text search), mentions and explain. It opens by running :func:`.migrations.migrate`,
writes through :mod:`.ingest`, and asks its :class:`.planner.Planner` which plan a search takes.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb
from psycopg_pool import PoolTimeout

from ..._renamed import OLD_DEFAULT_SCHEMA, notice
from ...embeddings import Embedder, default_embedder, make_embedder
from ...errors import DimensionMismatchError, StoreError, UsageError
from ...records import Event, MemoryRecord, SearchHit, check_event, score_from_cosine
from ..base import ClosesOnExit, Query, SearchRequest, ThreadedAsyncMethods
from ..ranking import keyword_terms, ready_to_write, rrf_fuse
from ..sql import EVENT_COLUMNS, RECORD_COLUMNS, event_from_row, event_values, record_from_row, where_equal
from ..urls import choose_embedder
from .connection import (
    DEFAULT_CONNECT_TIMEOUT,
    ReconnectingPool,
    connect,
    error_kind,
    lost_server,
    quote_ident,
    reason,
    split_url,
)
from .ingest import bulk_load, copy_in, staging_rows
from .migrations import SchemaContext, advisory_key, migrate, recorded_embedder
from .planner import (
    EXACT_OVERFETCH,
    EXACT_SCAN_LIMIT,
    EXACT_SCAN_MAX,
    HNSW_EF_SEARCH,
    HNSW_ITERATIVE_SCAN,
    HNSW_MAX_SCAN_TUPLES,
    HNSW_MIN_SHARE,
    HNSW_OVERFETCH,
    HNSW_SCAN_MEM_MULTIPLIER,
    IterativeScan,
    Planner,
    SearchPlan,
)
from .search_functions import function_name

__all__ = ["DEFAULT_SCHEMA", "PostgresStore"]

DEFAULT_SCHEMA = "recallwise"

_RECORD_COLUMNS = ", ".join(f"r.{name}" for name in RECORD_COLUMNS)
# A dense hit: the record and its (full-precision) cosine similarity to the query.
_HIT_COLUMNS = _RECORD_COLUMNS + ", 1 - (r.embedding <=> %(query)s) AS cosine"

#: How long a call waits for a pooled connection while the database is unreachable (a connection
#: was lost, or none came within the pool's timeout, and none has been made since), instead of
#: the pool's timeout (``connect_timeout`` + 5 s): during an outage a write fails in this time
#: with a StoreError naming the store, not after 15 s, and a connection the pool makes meanwhile
#: (it retries every 2 s at most) is taken at once.
UNREACHABLE_WAIT_S = 0.5


def actor_lock_keys(schema: str, actor_id: str) -> tuple[int, int]:
    """The two 32-bit advisory-lock keys of ``actor_id``'s writes in ``schema`` (the two-key space
    does not overlap the one-key space the migration lock uses)."""

    def key(text: str) -> int:
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "big", signed=True)

    return key(f"recallwise-actor:{schema}"), key(actor_id)


class PostgresStore(ClosesOnExit, ThreadedAsyncMethods):
    """Records and events in PostgreSQL; vector search with pgvector.

    ``url`` is a libpq URL (``postgresql://user:password@host:port/db?sslmode=require``) that
    may also carry ``schema=NAME`` and ``embedder=NAME``. The embedder is, in order: ``embedder``,
    the URL's ``embedder=NAME``, the one the schema recorded when it was created, the default; a
    schema made with another embedder is refused (:class:`DimensionMismatchError` naming both).
    ``connect_timeout`` (seconds) bounds each connection attempt, so a wrong host fails with
    one :class:`StoreError` instead of hanging.
    ``pool_size`` caps the connections this store keeps open. ``create=False`` opens only an
    existing store (read-only commands): a schema recallwise never made is a :class:`UsageError`
    and nothing is created in the database.

    When the database goes away the pool tries to reconnect every 2 s at most
    (:class:`.connection.ReconnectingPool`), and until a connection is made again each call
    waits at most :data:`UNREACHABLE_WAIT_S` for one before its :class:`StoreError`
    (``kind="unavailable"``): an outage costs a caller half a second, not the pool's timeout.
    """

    local = False

    def __init__(
        self,
        url: str,
        *,
        embedder: Embedder | None = None,
        schema: str | None = None,
        pool_size: int = 4,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        exact_scan_limit: int = EXACT_SCAN_LIMIT,
        exact_scan_max: int = EXACT_SCAN_MAX,
        hnsw_min_share: float = HNSW_MIN_SHARE,
        ef_search: int = HNSW_EF_SEARCH,
        iterative_scan: IterativeScan = HNSW_ITERATIVE_SCAN,
        scan_mem_multiplier: float = HNSW_SCAN_MEM_MULTIPLIER,
        size_cache_seconds: float = 30.0,
        create: bool = True,
    ) -> None:
        conninfo, own, self.url = split_url(url)
        if "schema" in own and not own["schema"]:
            raise UsageError(f"empty schema= in {self.url!r}: name a schema or leave the option out")
        self.schema = schema or own.get("schema") or DEFAULT_SCHEMA
        schema_named = bool(schema or own.get("schema"))
        if "\x00" in self.schema or len(self.schema) > 63:
            raise UsageError(f"invalid schema name {self.schema!r} in {self.url!r}")
        # An explicit embedder is checked (and loaded) before connecting; without one, the store
        # takes the one its schema recorded, once connected.
        chosen = choose_embedder(self.url, embedder, own.get("embedder"))
        self.connect_timeout = float(connect_timeout)
        self.ef_search = int(ef_search)
        if iterative_scan not in ("strict_order", "relaxed_order"):
            raise UsageError(f"iterative_scan must be strict_order or relaxed_order, not {iterative_scan!r}")
        self.iterative_scan: IterativeScan = iterative_scan
        self.scan_mem_multiplier = float(scan_mem_multiplier)
        self._conninfo = psycopg.conninfo.make_conninfo(
            conninfo,
            **({} if "connect_timeout" in conninfo else {"connect_timeout": max(1, round(connect_timeout))}),
            application_name="recallwise",
        )
        self.planner = Planner(
            self._conn,
            exact_scan_limit=exact_scan_limit,
            exact_scan_max=exact_scan_max,
            hnsw_min_share=hnsw_min_share,
            size_cache_seconds=size_cache_seconds,
        )
        self._vector_schema = "public"
        self._held = threading.local()  # this thread's connection inside transaction()
        # threads of this process wait for an actor here, not holding a pooled connection each
        self._actor_stripes = [threading.Lock() for _ in range(64)]
        #: why the database is unreachable (the last connection error), None while it is not
        self.unreachable: str | None = None
        with self._connect() as conn:
            if not schema_named:
                self.schema = self._default_schema(conn)
            if not create:
                self._require_schema(conn)
            self.embedder: Embedder = chosen or self._recorded_embedder(conn) or default_embedder()
            self.dimension = int(self.embedder.dimension)
            self._migrate(conn)
        self._pool = ReconnectingPool(
            self._conninfo,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=self.connect_timeout + 5.0,
            open=False,
            name=f"recallwise:{self.schema}",
        )
        try:
            self._pool.open(wait=True, timeout=self.connect_timeout + 5.0)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(f"cannot open a connection pool to {self.url}: {reason(exc)}") from exc

    # ---- connections ---------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[TupleRow]:
        """One direct connection, every failure turned into a one-line :class:`StoreError`."""
        return connect(self._conninfo, self.url, self.connect_timeout)

    def _configure(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Per pooled connection: vector adapters, search path, iterative HNSW scans."""
        conn.execute(
            sql.SQL("SET search_path = {}, {}").format(
                sql.Identifier(self.schema), sql.Identifier(self._vector_schema)
            )
        )
        register_vector(conn)
        settings = {
            "hnsw.iterative_scan": self.iterative_scan,
            "hnsw.ef_search": str(self.ef_search),
            "hnsw.max_scan_tuples": str(HNSW_MAX_SCAN_TUPLES),
            "hnsw.scan_mem_multiplier": str(self.scan_mem_multiplier),
        }
        for name, value in settings.items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        self.unreachable = None  # the pool has just made a connection

    @contextmanager
    def _conn(self, action: str) -> Iterator[psycopg.Connection[TupleRow]]:
        """A pooled connection (inside :meth:`transaction`, this thread's); database errors become a
        :class:`StoreError` naming ``action``.

        While the database is unreachable the wait for a connection is :data:`UNREACHABLE_WAIT_S`.
        """
        down = self.unreachable
        try:
            held: psycopg.Connection[TupleRow] | None = getattr(self._held, "conn", None)
            if held is not None:
                yield held
            else:
                with self._pool.connection(timeout=UNREACHABLE_WAIT_S if down else None) as conn:
                    yield conn
        except PoolTimeout as exc:
            if down is None:
                self.unreachable = down = f"no connection within {self._pool.timeout:g} s"
            raise StoreError(
                f"{action}: no connection to {self.url}: the database is unreachable (last error: {down})",
                kind="unavailable",
            ) from exc
        except psycopg.errors.UniqueViolation as exc:
            raise StoreError(f"{action}: {reason(exc)}") from exc
        except psycopg.Error as exc:
            if lost_server(exc):
                self.unreachable = reason(exc)
            raise StoreError(f"{action} on {self.url} failed: {reason(exc)}", kind=error_kind(exc)) from exc
        else:
            self.unreachable = None

    @contextmanager
    def transaction(self, actor_id: str | None = None) -> Iterator[None]:
        """Everything this thread writes inside lands together or not at all (an error rolls it all
        back): one pooled connection, one transaction. With ``actor_id``, a transaction-scoped
        advisory lock of that actor is taken first, so read-then-write work for one actor
        (consolidation) is serialized across threads, processes and replicas, while other actors'
        writes and every read go on. Nests (inner ones are savepoints). Holds a pooled connection
        throughout: keep slow work, such as embedding, outside."""
        held: psycopg.Connection[TupleRow] | None = getattr(self._held, "conn", None)
        if held is not None:
            with self._conn("savepoint") as conn, conn.transaction():
                yield
            return
        keys = None if actor_id is None else actor_lock_keys(self.schema, actor_id)
        stripe = self._actor_stripes[keys[1] % 64] if keys is not None else nullcontext()
        with stripe, self._conn("transaction") as conn, conn.transaction():
            if keys is not None:
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", keys)
            self._held.conn = conn
            try:
                yield
            finally:
                self._held.conn = None

    # ---- migrations ----------------------------------------------------------------------
    def _has_store(self, conn: psycopg.Connection[TupleRow], schema: str) -> bool:
        """Whether ``schema`` holds a store (its ``schema_version`` table exists)."""
        found = conn.execute(
            "SELECT 1 FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid "
            "WHERE n.nspname = %s AND c.relname = 'schema_version'",
            (schema,),
        ).fetchone()
        return found is not None

    def _default_schema(self, conn: psycopg.Connection[TupleRow]) -> str:
        """The schema when none is named: ``recallwise``, or the pre-rename default when only it
        holds a store (used in place, with a one-time notice, never ignored for an empty new one)."""
        if self._has_store(conn, DEFAULT_SCHEMA) or not self._has_store(conn, OLD_DEFAULT_SCHEMA):
            return DEFAULT_SCHEMA
        notice(
            f"{self.url}: using the store in schema {OLD_DEFAULT_SCHEMA!r}, the default before the "
            f"rename to recallwise (the new default {DEFAULT_SCHEMA!r} holds none); name it with "
            f"?schema={OLD_DEFAULT_SCHEMA} to silence this (renaming the schema would break its "
            f"search functions, which carry its name)",
            key=f"schema:{self.url}",
        )
        return OLD_DEFAULT_SCHEMA

    def _require_schema(self, conn: psycopg.Connection[TupleRow]) -> None:
        """``create=False`` (read-only commands): the store's schema must already exist."""
        if not self._has_store(conn, self.schema):
            raise UsageError(
                f"no recallwise store in schema {self.schema!r} at {self.url} (nothing was created)"
            )

    def _recorded_embedder(self, conn: psycopg.Connection[TupleRow]) -> Embedder | None:
        """The embedder the schema recorded (None for a new schema); a recorded name this process
        cannot make is a :class:`UsageError` naming it."""
        name = recorded_embedder(conn, schema=self.schema, url=self.url)
        if name is None:
            return None
        try:
            return make_embedder(name)
        except UsageError as exc:
            raise UsageError(
                f"PostgreSQL schema {self.schema!r} in {self.url} was embedded with {name!r}, which "
                f"this process cannot make ({exc}); pass that embedder (embedder=...) or use another "
                f"schema (?schema=NAME)"
            ) from exc

    def _schema_context(self) -> SchemaContext:
        return SchemaContext(sql.Identifier(self.schema), self._vector_schema, self.dimension)

    def _migrate(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Create or upgrade the schema, once, even when several workers start together."""
        self._vector_schema = migrate(conn, schema=self.schema, url=self.url, embedder=self.embedder)

    # ---- events --------------------------------------------------------------------------
    def create_event(self, event: Event) -> Event:
        check_event(event)
        marks = ", ".join(["%s"] * len(EVENT_COLUMNS))
        with self._conn(f"create event {event.id!r}") as conn, conn.transaction():
            conn.execute(
                f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES ({marks})",
                event_values(event, Jsonb(event.metadata)),
            )
        return event

    def list_events(self, actor_id: str, session_id: str | None = None) -> list[Event]:
        where, args = where_equal({"actor_id": actor_id, "session_id": session_id}, "%s")
        query = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events{where} ORDER BY created_at, seq"
        with self._conn("list events") as conn:
            rows = conn.execute(query, args).fetchall()
        return [event_from_row(r, r[-1]) for r in rows]

    # ---- records -------------------------------------------------------------------------
    def _vector(self, value: Any, what: str) -> np.ndarray:
        vector = np.ascontiguousarray(np.asarray(value, dtype=np.float32).reshape(-1))
        if vector.shape[0] != self.dimension:
            raise DimensionMismatchError(
                f"{what} has a {vector.shape[0]}-dimensional embedding; the store "
                f"{self.url} (schema {self.schema!r}) holds {self.dimension}-dimensional vectors"
            )
        return vector

    def add_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Insert (or replace, by id) records in one transaction, embedding those without a vector.

        The rows go in by binary ``COPY`` into a temporary staging table, then one
        ``INSERT ... ON CONFLICT (id) DO UPDATE`` moves them into ``records``: a replaced record
        takes its new place at the end of the insertion order, as in the embedded store, and
        two workers writing the same id at once both succeed (the later commit wins).
        """
        records = ready_to_write(self.embedder, records)
        if not records:
            return []
        rows = staging_rows(records, self._vector)
        with self._conn(f"add {len(rows)} records") as conn, conn.transaction():
            copy_in(conn, rows)
        self._forget_sizes({r.namespace for r in records})
        return records

    def bulk_ingest(
        self,
        batches: Iterable[Sequence[MemoryRecord]],
        *,
        rebuild_index: bool = True,
        maintenance_work_mem: str | None = None,
    ) -> int:
        """Load many records in ONE transaction by binary COPY; returns how many were written.

        With ``rebuild_index`` the HNSW index is dropped first and built once at the end, which
        is several times faster than growing it row by row (100k 384-d records: see
        BENCHMARKS.md). Dropping the index locks the records table until the commit, so other
        workers' searches and writes wait: use it for initial loads and re-imports. The build
        is fastest when the graph fits in ``maintenance_work_mem`` (about 2 GB per million
        384-d vectors); pass it here or set it on the server. On any
        error nothing is written and the index is left as it was. Afterwards the table is
        vacuumed so that exact searches can read vectors from the namespace index alone.
        """
        with self._conn("bulk ingest") as conn:
            total, namespaces = bulk_load(
                conn,
                batches,
                embedder=self.embedder,
                vector=self._vector,
                ctx=self._schema_context(),
                rebuild_index=rebuild_index,
                maintenance_work_mem=maintenance_work_mem,
            )
        self._forget_sizes(namespaces)
        return total

    @staticmethod
    def _row_to_record(row: Sequence[Any]) -> MemoryRecord:
        return record_from_row(row, row[6], row[7].to_numpy())

    def list_records(
        self, namespace: str | None = None, *, actor_id: str | None = None
    ) -> list[MemoryRecord]:
        where, args = where_equal({"namespace": namespace, "actor_id": actor_id}, "%s")
        with self._conn("list records") as conn, conn.cursor(binary=True) as cur:
            query = f"SELECT {_RECORD_COLUMNS} FROM records r{where} ORDER BY seq"
            rows = cur.execute(query, args).fetchall()
        return [self._row_to_record(r) for r in rows]

    def get_records(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        with self._conn("get records") as conn, conn.cursor(binary=True) as cur:
            rows = cur.execute(
                f"SELECT {_RECORD_COLUMNS} FROM records r WHERE id = ANY(%s)",
                (list(ids),),
            ).fetchall()
        return {r[0]: self._row_to_record(r) for r in rows}

    def delete_records(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._conn(f"delete {len(ids)} records") as conn, conn.transaction():
            rows = conn.execute(
                "DELETE FROM records WHERE id = ANY(%s) RETURNING namespace", (list(ids),)
            ).fetchall()
        self._forget_sizes({r[0] for r in rows})
        return len(rows)

    def forget_actor(self, actor_id: str) -> dict[str, int]:
        """Delete every record and event of ``actor_id`` (one transaction); the counts deleted."""
        with self._conn("forget an actor") as conn, conn.transaction():
            rows = conn.execute(
                "DELETE FROM records WHERE actor_id = %s RETURNING namespace", (actor_id,)
            ).fetchall()
            events = conn.execute("DELETE FROM events WHERE actor_id = %s", (actor_id,)).rowcount
        self._forget_sizes({r[0] for r in rows})
        return {"records": len(rows), "events": int(events)}

    def count_records(self) -> int:
        with self._conn("count records") as conn:
            row = conn.execute("SELECT count(*) FROM records").fetchone()
        return int(row[0]) if row else 0

    def namespaces(self, actor_id: str | None = None) -> list[str]:
        with self._conn("list namespaces") as conn:
            if actor_id is None:
                rows = conn.execute("SELECT DISTINCT namespace FROM records ORDER BY namespace").fetchall()
            else:
                rows = conn.execute(
                    "SELECT DISTINCT namespace FROM records WHERE actor_id = %s ORDER BY namespace",
                    (actor_id,),
                ).fetchall()
        return [r[0] for r in rows]

    # ---- search --------------------------------------------------------------------------
    def _forget_sizes(self, namespaces: set[str]) -> None:
        self.planner.forget_sizes(namespaces)

    def namespace_size(self, namespace: str) -> int:
        """Records in ``namespace`` (cached for ``size_cache_seconds``; only steers the plan)."""
        return self.planner.namespace_size(namespace)

    def plan_for(self, namespace: str) -> SearchPlan:
        """``"exact"`` or ``"hnsw"`` for a search of ``namespace`` (see :mod:`.planner`).

        Exact up to ``exact_scan_limit`` records. Above it HNSW, but only where its filtered
        walk finds the right rows: when the namespace holds at least ``hnsw_min_share`` of the
        table, or when it is so large (over ``exact_scan_max``) that scanning it would cost
        more than the approximation does.
        """
        return self.planner.plan_for(namespace)

    def query_vector(self, query: Query) -> np.ndarray:
        """The unit vector for ``query`` (embedding it when it is text)."""
        if isinstance(query, str):
            return np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        return self._vector(query, "query vector")

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """Top ``top_k`` records of ``namespace``, best first.

        ``mode="dense"``: by cosine similarity. ``mode="hybrid"``: the dense ranking fused with
        PostgreSQL full-text search's ranking (``ts_rank_cd`` over an English ``tsvector``) of
        ``text`` (or of ``query`` when it is text) by reciprocal rank fusion. Scores are
        always ``(1 + cosine) / 2``. ``actor_id`` restricts hits to that actor's records.
        The request's ``extensions={"plan": "exact" | "hnsw" | ...}`` (or ``plan=``) overrides
        the size-based plan choice (for measurements).
        """
        namespace, query, top_k = request.namespace, request.query, request.top_k
        actor_id, text, mode = request.actor_id, request.text, request.mode
        if top_k <= 0:
            return []
        vector = self.query_vector(query)
        chosen = request.extensions.get("plan") or self.plan_for(namespace)
        if mode == "dense":
            rows = self._dense(namespace, vector, top_k, actor_id, chosen)
            return [SearchHit(self._row_to_record(r), score_from_cosine(r[8])) for r in rows]
        pool = max(50, 5 * top_k)
        lexical_text = text if text is not None else (query if isinstance(query, str) else "")
        dense_rows = self._dense(namespace, vector, pool, actor_id, chosen)
        lexical_rows = self._lexical(namespace, vector, lexical_text, pool, actor_id)
        candidates: dict[str, Sequence[Any]] = {}
        for row in [*dense_rows, *lexical_rows]:
            candidates.setdefault(row[0], row)
        position = {record_id: i for i, record_id in enumerate(candidates)}
        rows_by_index = list(candidates.values())
        order = rrf_fuse([position[r[0]] for r in dense_rows], [position[r[0]] for r in lexical_rows], top_k)
        return [
            SearchHit(self._row_to_record(rows_by_index[i]), score_from_cosine(rows_by_index[i][8]))
            for i in order
        ]

    def _dense(
        self, namespace: str, vector: np.ndarray, limit: int, actor_id: str | None, plan: SearchPlan
    ) -> list[tuple[Any, ...]]:
        with self._conn("search") as conn, conn.cursor(binary=True) as cur:
            return cur.execute(
                self._dense_sql(plan, actor_id is not None),
                self._dense_args(namespace, vector, limit, actor_id, plan),
            ).fetchall()

    @staticmethod
    def _dense_args(
        namespace: str, vector: np.ndarray, limit: int, actor_id: str | None, plan: SearchPlan
    ) -> dict[str, Any]:
        # Both plans hand back more candidates than asked for, re-sorted exactly by _dense_sql:
        # relaxed_order may return rows slightly out of order, and the exact scan ranks by
        # half-precision distances.
        candidates = limit * (HNSW_OVERFETCH if plan == "hnsw" else EXACT_OVERFETCH)
        return {
            "namespace": namespace,
            "actor": actor_id,
            "query": vector,
            "limit": limit,
            "candidates": candidates,
        }

    @staticmethod
    def _dense_sql(plan: SearchPlan, by_actor: bool) -> sql.Composed:
        """A dense search: the plan's function picks candidate ids, then rows are fetched and
        ordered by their full-precision distance."""
        actor = "%(actor)s, " if by_actor else ""
        return sql.SQL(
            f"SELECT {_HIT_COLUMNS} FROM {{}}(%(namespace)s, {actor}%(query)s, %(candidates)s) AS c "
            "JOIN records r ON r.id = c.id ORDER BY r.embedding <=> %(query)s, c.seq LIMIT %(limit)s"
        ).format(sql.Identifier(function_name(plan, by_actor)))

    def _lexical(
        self, namespace: str, vector: np.ndarray, text: str, limit: int, actor_id: str | None
    ) -> list[tuple[Any, ...]]:
        terms = keyword_terms(text)
        if not terms:
            return []
        where = "r.namespace = %(namespace)s" + (
            " AND r.actor_id = %(actor)s" if actor_id is not None else ""
        )
        # websearch_to_tsquery never raises on user text; "or" between terms makes a disjunction.
        query = sql.SQL(
            f"SELECT {_RECORD_COLUMNS}, 1 - (r.embedding <=> %(query)s) AS cosine FROM records r, "
            "websearch_to_tsquery('english', %(terms)s) AS q "
            f"WHERE {where} AND r.fts @@ q ORDER BY ts_rank_cd(r.fts, q) DESC, r.seq LIMIT %(limit)s"
        )
        args = {
            "namespace": namespace,
            "actor": actor_id,
            "query": vector,
            "terms": " or ".join(terms),
            "limit": limit,
        }
        with self._conn("full-text search") as conn, conn.cursor(binary=True) as cur:
            return cur.execute(query, args).fetchall()

    def mentions(self, namespace: str, terms: Sequence[str], *, actor_id: str | None = None) -> set[str]:
        """Which of ``terms`` (single words) occur in some record of ``namespace``: one
        statement, an indexed full-text probe per term, no vectors read."""
        if not terms:
            return set()
        where = "r.namespace = %(namespace)s" + (
            " AND r.actor_id = %(actor)s" if actor_id is not None else ""
        )
        query = (
            "SELECT t FROM unnest(%(terms)s::text[]) AS t WHERE EXISTS (SELECT 1 FROM records r "
            f"WHERE {where} AND r.fts @@ plainto_tsquery('english', t))"
        )
        args = {"namespace": namespace, "actor": actor_id, "terms": list(dict.fromkeys(terms))}
        with self._conn("mentions") as conn:
            return {row[0] for row in conn.execute(query, args).fetchall()}

    def explain(
        self, namespace: str, query: Query, top_k: int = 10, *, plan: SearchPlan | None = None
    ) -> str:
        """PostgreSQL's plan (EXPLAIN ANALYZE, vectors left out) of a dense search's function."""
        vector = self.query_vector(query)
        chosen = plan or self.plan_for(namespace)
        args = self._dense_args(namespace, vector, top_k, None, chosen)
        with self._conn("explain") as conn, conn.transaction():
            # auto_explain would need superuser; run the function's query under its settings.
            row = conn.execute(
                "SELECT prosrc, proconfig FROM pg_proc WHERE oid = %s::regprocedure",
                (
                    f"{quote_ident(self.schema)}.{function_name(chosen, False)}(text, "
                    f"{quote_ident(self._vector_schema)}.vector, integer)",
                ),
            ).fetchone()
            assert row is not None
            body, settings = str(row[0]), list(row[1] or [])
            for setting in settings:
                name, _, value = str(setting).partition("=")
                conn.execute("SELECT set_config(%s, %s, true)", (name, value))
            for name, placeholder in (
                ("p_namespace", "%(namespace)s::text"),
                ("p_query", "%(query)s"),
                ("p_limit", "%(candidates)s::integer"),
            ):
                body = body.replace(name, placeholder)
            rows = conn.execute(
                sql.SQL("EXPLAIN (ANALYZE, COSTS OFF) ") + sql.SQL(body.strip()), args
            ).fetchall()
        return "\n".join(str(r[0]) for r in rows if "[" not in str(r[0]))

    # ---- lifecycle -----------------------------------------------------------------------
    def drop_schema(self) -> None:
        """Delete this store's schema with every record and event in it, then close the store."""
        with self._conn(f"drop schema {self.schema!r}") as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(self.schema),))
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))
        self.close()

    def close(self) -> None:
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r}, schema={self.schema!r}, embedder={self.embedder.name!r})"
