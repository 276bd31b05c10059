"""The shared store: PostgreSQL with pgvector (``postgresql://user:password@host:port/db``).

For deployments with many agent workers on many machines. Needs the ``[postgres]`` extra
(psycopg 3, psycopg_pool, pgvector) and a server with the ``vector`` extension.

Layout (all in one schema, ``recallgate`` unless ``?schema=NAME`` or ``schema=`` says
otherwise, so several embedders or tenants can share one database):

- ``schema_version``: one row per applied migration. Migrations run at open, inside one
  transaction holding a transaction-scoped advisory lock, so two workers that start at once
  apply each migration exactly once and the second one just sees it done.
- ``meta``: the embedder name and dimension the vectors were made with.
- ``records``: one row per memory, ``embedding vector(dim)`` with an HNSW index (cosine),
  a generated half-precision copy ``embedding_half halfvec(dim)``, a B-tree on
  ``(actor_id, namespace)`` (an actor's records and namespaces), a B-tree on
  ``(namespace, actor_id, seq)`` that also carries each row's id and half-precision vector
  (up to :data:`COVERING_MAX_DIMENSION` dimensions) for exact search, and a generated English
  ``tsvector`` with a GIN index for hybrid search.
- ``events``: conversation messages.

Filtered search. HNSW with ``WHERE namespace = ...`` is a trap: without iterative scans the
index hands back its ``ef_search`` nearest rows of the whole table and the filter then drops
almost all of them (``tests/test_postgres_store.py`` shows it). So the plan is chosen by the
namespace's size:

- up to :data:`EXACT_SCAN_LIMIT` records, an **exact** scan: every distance in the namespace,
  computed on the half-precision vectors read from the namespace B-tree alone (an index-only
  scan, half the bytes of full vectors), then the best :data:`EXACT_OVERFETCH` x ``top_k``
  re-sorted by their full-precision distance, so the top ``top_k`` are the exact ones unless
  a true neighbour falls behind that many others by rounding (none did in the tests and
  benchmarks; recall@10 1.000);
- above it, the **HNSW** index with pgvector's iterative scans, which keep walking the graph
  until enough rows pass the filter, where that finds the right rows: for a namespace holding
  at least :data:`HNSW_MIN_SHARE` of the table, or one too large to scan
  (:data:`EXACT_SCAN_MAX`); otherwise still the exact scan.

The HNSW plan runs ``relaxed_order`` and re-sorts :data:`HNSW_OVERFETCH` x ``top_k``
candidates exactly, because ``strict_order`` skips a closer row found in a later iteration
(measured on 1M records in 100 namespaces, ``ef_search`` 200: recall@10 0.77 strict, 0.83
relaxed, where the same index's unfiltered recall is 0.85 on this clustered synthetic data).

Namespace sizes are cached for ``size_cache_seconds`` and dropped on this store's own writes;
a stale size only costs speed, or recall where it wrongly picks HNSW.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from ..embeddings import Embedder, default_embedder
from ..errors import DimensionMismatchError, StoreError, UsageError
from ..records import Event, MemoryRecord, SearchHit, score_from_cosine
from .base import Query, SearchMode, ThreadedAsyncMethods, embed_missing, keyword_terms, rrf_fuse, where_equal
from .urls import choose_embedder

__all__ = [
    "DEFAULT_SCHEMA",
    "EXACT_OVERFETCH",
    "EXACT_SCAN_LIMIT",
    "EXACT_SCAN_MAX",
    "HNSW_EF_SEARCH",
    "HNSW_MIN_SHARE",
    "MIGRATIONS",
    "PostgresStore",
    "SearchPlan",
]

SearchPlan = Literal["exact", "hnsw"]
IterativeScan = Literal["strict_order", "relaxed_order"]

DEFAULT_SCHEMA = "recallgate"
#: Namespaces up to this many records are searched exactly (7-9 ms at 10,000; BENCHMARKS.md).
EXACT_SCAN_LIMIT = 10_000
#: Above this many records a namespace is searched through HNSW whatever its share of the table
#: (measured: an exact scan of 40,000 384-d vectors took 60 ms, HNSW 10 ms at recall 0.93).
EXACT_SCAN_MAX = 50_000
#: Between the two, HNSW is used only for a namespace holding at least this share of the table:
#: a filtered HNSW walk finds the true top 10 when a tenth of the rows pass the filter (recall
#: 0.998, 12 ms, at 20,000 of 200,000) but not when one in a hundred does (0.90 and 88 ms at
#: 10,000 of 1M, where the exact scan takes 12 ms).
HNSW_MIN_SHARE = 0.10
#: Candidate list size of each HNSW iterative-scan step.
HNSW_EF_SEARCH = 200
#: How an iterative scan orders what it returns (see :meth:`PostgresStore._dense`).
HNSW_ITERATIVE_SCAN: IterativeScan = "relaxed_order"
#: Rows the HNSW scan hands back per requested hit before they are re-sorted exactly.
HNSW_OVERFETCH = 4
#: Rows the exact scan (ranked by half-precision distance) hands back per requested hit before
#: they are re-sorted by full-precision distance.
EXACT_OVERFETCH = 4
#: Upper bound on rows an iterative scan visits before giving up.
HNSW_MAX_SCAN_TUPLES = 200_000
#: Memory an iterative scan may use, in multiples of work_mem (each visited 384-d vector costs
#: ~1.6 kB, so pgvector's default of 1 x 4 MB stops a filtered scan after ~2,500 rows).
HNSW_SCAN_MEM_MULTIPLIER = 8.0
DEFAULT_CONNECT_TIMEOUT = 10.0


# Options recallgate reads from the URL's query string; everything else goes to libpq.
_OWN_PARAMETERS = ("schema", "embedder")


# ---- migrations --------------------------------------------------------------------------

#: Largest half-precision vector (2 bytes a dimension) that fits in a B-tree entry next to the
#: key (a B-tree tuple may hold at most ~2,700 bytes): up to this many dimensions the namespace
#: B-tree carries the vectors too.
COVERING_MAX_DIMENSION = 1200
#: The same limit for the full-precision vectors (4 bytes a dimension) that schema version 1's
#: namespace B-tree carried.
_V1_COVERING_MAX_DIMENSION = 600


@dataclass(frozen=True)
class SchemaContext:
    """What a migration's SQL needs: quoted names and the vector dimension."""

    schema: sql.Composable
    vector_schema: str
    dimension: int

    def format(self, statement: str) -> sql.Composed:
        return sql.SQL(statement).format(
            schema=self.schema,
            vector=sql.Identifier(self.vector_schema, "vector"),
            halfvec=sql.Identifier(self.vector_schema, "halfvec"),
            vector_schema=sql.Identifier(self.vector_schema),
            dim=sql.Literal(self.dimension),
            vector_cosine_ops=sql.SQL("{}.vector_cosine_ops").format(sql.Identifier(self.vector_schema)),
        )


def _namespace_index(ctx: SchemaContext) -> str:
    # Exact search reads one namespace's vectors. With the vectors inside the B-tree entries
    # (INCLUDE), that is an index-only scan over a few contiguous pages instead of one heap
    # page per record: 3x faster at 1,000 records per namespace (see BENCHMARKS.md). The
    # half-precision copy halves the pages read (10,000 384-d records: ~1,250 8 kB pages
    # instead of ~2,500).
    include = " INCLUDE (id, embedding_half)" if ctx.dimension <= COVERING_MAX_DIMENSION else ""
    return "CREATE INDEX records_namespace_actor ON {schema}.records (namespace, actor_id, seq)" + include


def _namespace_index_v1(ctx: SchemaContext) -> str:
    """Schema version 1's namespace index (full-precision vectors), replaced by version 3."""
    include = " INCLUDE (id, embedding)" if ctx.dimension <= _V1_COVERING_MAX_DIMENSION else ""
    return "CREATE INDEX records_namespace_actor ON {schema}.records (namespace, actor_id, seq)" + include


HNSW_INDEX = (
    "CREATE INDEX records_embedding_hnsw ON {schema}.records "
    "USING hnsw (embedding {vector_cosine_ops}) WITH (m = 16, ef_construction = 64)"
)


def _function_name(plan: SearchPlan, by_actor: bool) -> str:
    return f"nearest_{plan}" + ("_by_actor" if by_actor else "")


def _search_function(plan: SearchPlan, by_actor: bool, *, half: bool = True) -> str:
    """``CREATE FUNCTION`` for one plan's search: (namespace[, actor], query, limit) -> ids.

    The planner's cost model does not know what the store knows about a namespace, so each plan
    steers its query: left alone, PostgreSQL sorted a 10k-record namespace through the B-tree
    instead of walking HNSW, and read a namespace holding a fifth of the table by a bitmap scan
    of the heap (20 ms) instead of the namespace index alone (14 ms). A SQL function with SET
    clauses is planned under them and never inlined, so the settings ride inside one
    statement, with no BEGIN / SET LOCAL / COMMIT per search (0.4 ms each, measured). With and
    without an actor are separate functions so that neither evaluates an ``actor IS NULL OR``
    test on every row of a large namespace.

    The exact plan ranks by the half-precision copy (``half``; schema version 2's function
    ranked by the full vectors) and its caller re-sorts what it returns by full precision.
    """
    where = "r.namespace = p_namespace" + (" AND r.actor_id = p_actor" if by_actor else "")
    actor = " p_actor text," if by_actor else ""
    replace = ""
    if plan == "exact" and half:
        settings = "SET enable_seqscan = off SET enable_bitmapscan = off"
        replace = "OR REPLACE "
        # The query's half-precision copy is made once (an InitPlan), not once per row. No
        # index orders by embedding_half, so this is a plain filtered scan and a top-N sort.
        body = (
            "SELECT r.id, r.seq, r.embedding_half <=> (SELECT p_query::{halfvec}) AS distance "
            f"FROM records r WHERE {where} ORDER BY 3, 2 LIMIT p_limit"
        )
    elif plan == "exact":
        settings = "SET enable_seqscan = off SET enable_bitmapscan = off"
        # OFFSET 0 keeps the scan a plain filtered scan (the HNSW index serves only an ORDER BY
        # on the distance): every distance in the namespace, read from the namespace B-tree.
        body = (
            "SELECT s.id, s.seq, s.distance FROM (SELECT r.id, r.seq, r.embedding <=> p_query "
            f"AS distance FROM records r WHERE {where} OFFSET 0) AS s "
            "ORDER BY s.distance, s.seq LIMIT p_limit"
        )
    else:
        settings = "SET enable_sort = off"
        body = (
            "SELECT r.id, r.seq, r.embedding <=> p_query FROM records r "
            f"WHERE {where} ORDER BY r.embedding <=> p_query LIMIT p_limit"
        )
    return (
        f"CREATE {replace}FUNCTION {{schema}}.{_function_name(plan, by_actor)}(p_namespace text,{actor} "
        "p_query {vector}, p_limit integer) "
        "RETURNS TABLE (id text, seq bigint, distance double precision) LANGUAGE sql STABLE "
        f"SET search_path = {{schema}}, {{vector_schema}} {settings} AS $body$ {body} $body$"
    )


@dataclass(frozen=True)
class Migration:
    """One schema change: statements (or functions of the context returning one)."""

    version: int
    description: str
    statements: tuple[str | Callable[[SchemaContext], str], ...]
    #: VACUUM the records table afterwards: a rewritten table's pages are not marked
    #: all-visible, so index-only scans would visit the heap until autovacuum came by.
    vacuum: bool = False


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "records, events, meta and their indexes",
        (
            "CREATE TABLE {schema}.meta (key text PRIMARY KEY, value text NOT NULL)",
            """CREATE TABLE {schema}.records (
                id text PRIMARY KEY,
                seq bigint GENERATED BY DEFAULT AS IDENTITY,
                actor_id text NOT NULL,
                namespace text NOT NULL,
                text text NOT NULL,
                rendered text NOT NULL,
                strategy text NOT NULL,
                created_at double precision NOT NULL,
                metadata jsonb NOT NULL,
                embedding {vector}({dim}) NOT NULL,
                fts tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, rendered)) STORED
            )""",
            "CREATE INDEX records_actor_namespace ON {schema}.records (actor_id, namespace)",
            _namespace_index_v1,
            HNSW_INDEX,
            "CREATE INDEX records_fts ON {schema}.records USING gin (fts)",
            """CREATE TABLE {schema}.events (
                id text PRIMARY KEY,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                actor_id text NOT NULL,
                session_id text NOT NULL,
                role text NOT NULL,
                text text NOT NULL,
                created_at double precision NOT NULL,
                metadata jsonb NOT NULL
            )""",
            "CREATE INDEX events_actor_session ON {schema}.events (actor_id, session_id, created_at, seq)",
        ),
    ),
    Migration(
        2,
        "search functions that carry their planner settings; autovacuum after 2% new rows",
        (
            *(
                _search_function(plan, by_actor, half=False)
                for plan in ("exact", "hnsw")
                for by_actor in (False, True)
            ),
            # Index-only scans skip the heap only on pages VACUUM has marked all-visible; vacuum
            # an insert-mostly table sooner than the default (20% new rows) so they stay so.
            "ALTER TABLE {schema}.records SET (autovacuum_vacuum_insert_scale_factor = 0.02)",
        ),
    ),
    Migration(
        3,
        "a half-precision copy of each vector, carried by the namespace index for exact search",
        (
            # Rewrites the table (holding its lock) on an existing schema. STORAGE MAIN keeps
            # the full vector in the row, where re-sorting and returning hits read it, and
            # sends the half copy (only read when an index is built) out of line instead: the
            # two together outgrow PostgreSQL's ~2 kB row target at 384 dimensions.
            "ALTER TABLE {schema}.records ALTER COLUMN embedding SET STORAGE MAIN, "
            "ADD COLUMN embedding_half {halfvec}({dim}) "
            "GENERATED ALWAYS AS (embedding::{halfvec}({dim})) STORED",
            "DROP INDEX {schema}.records_namespace_actor",
            _namespace_index,
            *(_search_function("exact", by_actor) for by_actor in (False, True)),
        ),
        vacuum=True,
    ),
)


def _advisory_key(schema: str) -> int:
    """A stable signed 64-bit advisory-lock key for migrating ``schema``."""
    digest = hashlib.blake2b(f"recallgate-migrate:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


# ---- URLs and errors ----------------------------------------------------------------------


def _split_url(url: str) -> tuple[str, dict[str, str], str]:
    """(conninfo URL for libpq, recallgate's own options, the URL with the password hidden)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("postgresql", "postgres", "postgresql+psycopg"):
        raise UsageError(f"not a PostgreSQL URL: {url!r} (expected postgresql://user@host:port/db)")
    query = parse_qsl(parts.query, keep_blank_values=True)
    own = {k: v for k, v in query if k in _OWN_PARAMETERS}
    rest = [(k, v) for k, v in query if k not in _OWN_PARAMETERS]
    conninfo = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(rest), ""))
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    redacted = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    return conninfo, own, redacted


def _error_kind(exc: psycopg.Error) -> str:
    """How the policy counts a database error: a lost server, a cancelled statement, or a refusal."""
    if isinstance(exc, psycopg.errors.QueryCanceled):  # statement_timeout, or cancelled
        return "timeout"
    if isinstance(exc, psycopg.OperationalError):  # connection lost, server shutting down, ...
        return "unavailable"
    return "error"


def _reason(exc: BaseException) -> str:
    """libpq's message without its repeated 'connection failed:' prefixes, on one line."""
    text = " ".join(str(exc).split())
    for prefix in ("connection failed: ", "connection is bad: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text or type(exc).__name__


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# ---- the store ----------------------------------------------------------------------------

_TABLE_SIZE_KEY = "\x00table"  # the size cache's entry for the whole table (no namespace has a NUL)
_RECORD_COLUMNS = "r.id, r.actor_id, r.namespace, r.text, r.strategy, r.created_at, r.metadata, r.embedding"
# A dense hit: the record and its (full-precision) cosine similarity to the query.
_HIT_COLUMNS = _RECORD_COLUMNS + ", 1 - (r.embedding <=> %(query)s) AS cosine"


class PostgresStore(ThreadedAsyncMethods):
    """Records and events in PostgreSQL; vector search with pgvector.

    ``url`` is a libpq URL (``postgresql://user:password@host:port/db?sslmode=require``) that
    may also carry ``schema=NAME``. ``connect_timeout`` (seconds) bounds each connection
    attempt, so a wrong host fails with one :class:`StoreError` instead of hanging.
    ``pool_size`` caps the connections this store keeps open.
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
    ) -> None:
        conninfo, own, self.url = _split_url(url)
        if "schema" in own and not own["schema"]:
            raise UsageError(f"empty schema= in {self.url!r}: name a schema or leave the option out")
        self.schema = schema or own.get("schema") or DEFAULT_SCHEMA
        if "\x00" in self.schema or len(self.schema) > 63:
            raise UsageError(f"invalid schema name {self.schema!r} in {self.url!r}")
        self.embedder: Embedder = (
            choose_embedder(self.url, embedder, own.get("embedder")) or default_embedder()
        )
        self.dimension = int(self.embedder.dimension)
        self.connect_timeout = float(connect_timeout)
        self.exact_scan_limit = int(exact_scan_limit)
        self.exact_scan_max = int(exact_scan_max)
        self.hnsw_min_share = float(hnsw_min_share)
        self.ef_search = int(ef_search)
        if iterative_scan not in ("strict_order", "relaxed_order"):
            raise UsageError(f"iterative_scan must be strict_order or relaxed_order, not {iterative_scan!r}")
        self.iterative_scan: IterativeScan = iterative_scan
        self.scan_mem_multiplier = float(scan_mem_multiplier)
        self.size_cache_seconds = float(size_cache_seconds)
        self._conninfo = psycopg.conninfo.make_conninfo(
            conninfo,
            **({} if "connect_timeout" in conninfo else {"connect_timeout": max(1, round(connect_timeout))}),
            application_name="recallgate",
        )
        self._sizes: dict[str, tuple[int, float]] = {}
        self._sizes_lock = threading.Lock()
        self._vector_schema = "public"
        with self._connect() as conn:
            self._migrate(conn)
        self._pool: ConnectionPool[psycopg.Connection[TupleRow]] = ConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=self.connect_timeout + 5.0,
            open=False,
            name=f"recallgate:{self.schema}",
        )
        try:
            self._pool.open(wait=True, timeout=self.connect_timeout + 5.0)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(f"cannot open a connection pool to {self.url}: {_reason(exc)}") from exc

    # ---- connections ---------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[TupleRow]:
        """One direct connection, every failure turned into a one-line :class:`StoreError`."""
        try:
            return psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.OperationalError as exc:
            reason = _reason(exc)
            if "password authentication failed" in reason or "no password supplied" in reason:
                hint = "wrong user name or password"
            elif "timeout expired" in reason:
                hint = f"no answer within the connect timeout ({self.connect_timeout:g} s)"
            elif "failed to resolve host" in reason:
                hint = "unknown host name"
            elif "does not exist" in reason:
                hint = "no such database or role"
            else:
                hint = "server unreachable"
            raise StoreError(f"cannot connect to PostgreSQL at {self.url}: {hint}: {reason}") from exc

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

    @contextmanager
    def _conn(self, action: str) -> Iterator[psycopg.Connection[TupleRow]]:
        """A pooled connection; database errors become a :class:`StoreError` naming ``action``."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreError(
                f"{action}: no connection to {self.url}: {_reason(exc)}", kind="unavailable"
            ) from exc
        except psycopg.errors.UniqueViolation as exc:
            raise StoreError(f"{action}: {_reason(exc)}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{action} on {self.url} failed: {_reason(exc)}", kind=_error_kind(exc)) from exc

    # ---- migrations ----------------------------------------------------------------------
    def _schema_context(self) -> SchemaContext:
        return SchemaContext(sql.Identifier(self.schema), self._vector_schema, self.dimension)

    def _migrate(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Create or upgrade the schema, once, even when several workers start together."""
        schema = sql.Identifier(self.schema)
        vacuum = False
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_advisory_key(self.schema),))
                self._vector_schema = self._ensure_vector_extension(conn)
                exists = conn.execute(
                    "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
                ).fetchone()
                if not exists:
                    conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE IF NOT EXISTS {}.schema_version (version integer PRIMARY KEY, "
                        "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
                    ).format(schema)
                )
                applied = {
                    row[0]
                    for row in conn.execute(sql.SQL("SELECT version FROM {}.schema_version").format(schema))
                }
                ctx = self._schema_context()
                for migration in MIGRATIONS:
                    if migration.version in applied:
                        continue
                    for statement in migration.statements:
                        text = statement if isinstance(statement, str) else statement(ctx)
                        conn.execute(ctx.format(text))
                    conn.execute(
                        sql.SQL(
                            "INSERT INTO {}.schema_version (version, description) VALUES (%s, %s)"
                        ).format(schema),
                        (migration.version, migration.description),
                    )
                    vacuum = vacuum or (migration.vacuum and bool(applied))
                self._check_meta(conn)
            if vacuum:  # outside the transaction (VACUUM cannot run inside one)
                conn.execute(sql.SQL("VACUUM (ANALYZE) {}.records").format(schema))
        except (StoreError, UsageError):
            raise
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"cannot create recallgate's tables in schema {self.schema!r} of {self.url}: {_reason(exc)} "
                f"(grant CREATE on the database, or have an administrator run this store once)"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot prepare the schema {self.schema!r} in {self.url}: {_reason(exc)}"
            ) from exc

    def _ensure_vector_extension(self, conn: psycopg.Connection[TupleRow]) -> str:
        """The schema the vector extension lives in, creating the extension when allowed."""
        row = conn.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'vector'"
        ).fetchone()
        if row:
            return str(row[0])
        database = conn.info.dbname
        try:
            with conn.transaction():  # a savepoint: a refusal must not abort the outer transaction
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"the pgvector extension is not installed in database {database!r} and user "
                f"{conn.info.user!r} may not create it; ask an administrator to run, in that database: "
                f"CREATE EXTENSION vector;"
            ) from exc
        except (psycopg.errors.UndefinedFile, psycopg.errors.FeatureNotSupported) as exc:
            raise StoreError(
                f"the PostgreSQL server at {self.url} has no pgvector extension: install pgvector "
                f"(https://github.com/pgvector/pgvector#installation), then run CREATE EXTENSION vector; "
                f"({_reason(exc)})"
            ) from exc
        return self._ensure_vector_extension(conn)

    def _check_meta(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Record the embedder on first use; refuse a store made with different vectors."""
        schema = sql.Identifier(self.schema)
        table = f"{_quote_ident(self.schema)}.records"
        row = conn.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
            (table,),
        ).fetchone()
        table_dim = int(row[0]) if row else self.dimension
        meta: dict[str, str] = dict(
            conn.execute(sql.SQL("SELECT key, value FROM {}.meta").format(schema)).fetchall()
        )
        if table_dim != self.dimension:
            raise DimensionMismatchError(
                f"PostgreSQL table {self.schema}.records in {self.url} holds {table_dim}-dimensional "
                f"vectors (embedder {meta.get('embedder', '?')!r}); embedder {self.embedder.name!r} makes "
                f"{self.dimension}-dimensional vectors: refusing to write. Open it with that embedder "
                f"or use another schema (?schema=NAME)"
            )
        if not meta:
            conn.execute(
                sql.SQL("INSERT INTO {}.meta (key, value) VALUES (%s, %s), (%s, %s)").format(schema),
                ("embedder", self.embedder.name, "dimension", str(self.dimension)),
            )
        elif meta.get("embedder") != self.embedder.name:
            raise DimensionMismatchError(
                f"PostgreSQL schema {self.schema!r} in {self.url} was embedded with "
                f"{meta.get('embedder')!r}, not {self.embedder.name!r}: scores would not be comparable; "
                f"open it with that embedder or use another schema (?schema=NAME)"
            )

    # ---- events --------------------------------------------------------------------------
    def create_event(self, event: Event) -> Event:
        with self._conn(f"create event {event.id!r}") as conn, conn.transaction():
            conn.execute(
                "INSERT INTO events (id, actor_id, session_id, role, text, created_at, metadata) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    event.id,
                    event.actor_id,
                    event.session_id,
                    event.role,
                    event.text,
                    event.created_at,
                    Jsonb(event.metadata),
                ),
            )
        return event

    def list_events(self, actor_id: str, session_id: str | None = None) -> list[Event]:
        query = (
            "SELECT id, actor_id, session_id, role, text, created_at, metadata FROM events "
            "WHERE actor_id = %s"
        )
        args: list[Any] = [actor_id]
        if session_id is not None:
            query += " AND session_id = %s"
            args.append(session_id)
        with self._conn("list events") as conn:
            rows = conn.execute(query + " ORDER BY created_at, seq", args).fetchall()
        return [
            Event(
                id=r[0],
                actor_id=r[1],
                session_id=r[2],
                role=r[3],
                text=r[4],
                created_at=r[5],
                metadata=r[6],
            )
            for r in rows
        ]

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
        records = list(records)
        if not records:
            return []
        embed_missing(self.embedder, records)
        rows = self._staging_rows(records)
        with self._conn(f"add {len(rows)} records") as conn, conn.transaction():
            self._copy_in(conn, rows)
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
        total = 0
        namespaces: set[str] = set()
        with self._conn("bulk ingest") as conn:
            with conn.transaction():
                if rebuild_index:
                    conn.execute("DROP INDEX IF EXISTS records_embedding_hnsw")
                    # Rebuilt too: built in one pass its pages are full, where rows arriving in
                    # random namespace order leave them about half full (twice the pages an
                    # exact scan reads).
                    conn.execute("DROP INDEX IF EXISTS records_namespace_actor")
                for batch in batches:
                    records = list(batch)
                    if not records:
                        continue
                    embed_missing(self.embedder, records)
                    self._copy_in(conn, self._staging_rows(records))
                    conn.execute("TRUNCATE recallgate_staging")
                    namespaces.update(r.namespace for r in records)
                    total += len(records)
                if rebuild_index:
                    if maintenance_work_mem:
                        conn.execute(
                            "SELECT set_config('maintenance_work_mem', %s, true)", (maintenance_work_mem,)
                        )
                    ctx = self._schema_context()
                    conn.execute(ctx.format(_namespace_index(ctx)))
                    conn.execute(ctx.format(HNSW_INDEX))
            conn.execute("VACUUM (ANALYZE) records")
        self._forget_sizes(namespaces)
        return total

    def _staging_rows(self, records: list[MemoryRecord]) -> list[tuple[Any, ...]]:
        """COPY rows for ``records``; a batch naming an id twice keeps its last version."""
        latest: dict[str, int] = {}
        for position, record in enumerate(records):
            latest[record.id] = position
        return [
            (
                position,
                record.id,
                record.actor_id,
                record.namespace,
                record.text,
                record.rendered,
                record.strategy,
                float(record.created_at),
                json.dumps(record.metadata),
                self._vector(record.embedding, f"record {record.id!r}"),
            )
            for position, record in enumerate(records)
            if latest[record.id] == position
        ]

    @staticmethod
    def _copy_in(conn: psycopg.Connection[TupleRow], rows: list[tuple[Any, ...]]) -> None:
        """Binary COPY into this session's staging table, then upsert into ``records``.

        Must run inside a transaction (the staging table empties itself at commit).
        """
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS recallgate_staging (ord integer, id text, actor_id text, "
            "namespace text, text text, rendered text, strategy text, created_at double precision, "
            "metadata text, embedding vector) ON COMMIT DELETE ROWS"
        )
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY recallgate_staging (ord, id, actor_id, namespace, text, rendered, strategy, "
                "created_at, metadata, embedding) FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(
                ["int4", "text", "text", "text", "text", "text", "text", "float8", "text", "vector"]
            )
            for row in rows:
                copy.write_row(row)
        # seq follows the order given (it orders list_records and breaks ties), but the rows
        # are written grouped by namespace, so a namespace's records share heap pages: an exact
        # scan of a namespace then visits fewer pages before VACUUM lets it skip the heap.
        conn.execute(
            "INSERT INTO records (id, seq, actor_id, namespace, text, rendered, strategy, created_at, "
            "metadata, embedding) "
            "SELECT id, seq, actor_id, namespace, text, rendered, strategy, created_at, metadata::jsonb, "
            "embedding FROM (SELECT *, nextval(pg_get_serial_sequence('records', 'seq')) AS seq "
            "FROM recallgate_staging ORDER BY ord) AS numbered ORDER BY namespace, seq "
            "ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, actor_id = EXCLUDED.actor_id, "
            "namespace = EXCLUDED.namespace, text = EXCLUDED.text, rendered = EXCLUDED.rendered, "
            "strategy = EXCLUDED.strategy, created_at = EXCLUDED.created_at, "
            "metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding"
        )

    @staticmethod
    def _row_to_record(row: Sequence[Any]) -> MemoryRecord:
        return MemoryRecord(
            id=row[0],
            actor_id=row[1],
            namespace=row[2],
            text=row[3],
            strategy=row[4],
            created_at=row[5],
            metadata=row[6],
            embedding=row[7].to_numpy(),
        )

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
        with self._sizes_lock:
            for namespace in namespaces:
                self._sizes.pop(namespace, None)
            self._sizes.pop(_TABLE_SIZE_KEY, None)

    def _table_size(self) -> int:
        """Records in the table: the planner's estimate once ANALYZE has run, else a count."""
        now = time.monotonic()
        with self._sizes_lock:
            cached = self._sizes.get(_TABLE_SIZE_KEY)
        if cached is not None and now - cached[1] < self.size_cache_seconds:
            return cached[0]
        with self._conn("estimate the table size") as conn:
            row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'records'::regclass").fetchone()
            estimate = float(row[0]) if row else -1.0
            if estimate < 0:  # never analyzed
                counted = conn.execute("SELECT count(*) FROM records").fetchone()
                estimate = float(counted[0]) if counted else 0.0
        size = int(estimate)
        with self._sizes_lock:
            self._sizes[_TABLE_SIZE_KEY] = (size, now)
        return size

    def namespace_size(self, namespace: str) -> int:
        """Records in ``namespace`` (cached for ``size_cache_seconds``; only steers the plan)."""
        now = time.monotonic()
        with self._sizes_lock:
            cached = self._sizes.get(namespace)
        if cached is not None and now - cached[1] < self.size_cache_seconds:
            return cached[0]
        with self._conn("count a namespace") as conn:
            row = conn.execute("SELECT count(*) FROM records WHERE namespace = %s", (namespace,)).fetchone()
        size = int(row[0]) if row else 0
        with self._sizes_lock:
            self._sizes[namespace] = (size, now)
        return size

    def plan_for(self, namespace: str) -> SearchPlan:
        """``"exact"`` or ``"hnsw"`` for a search of ``namespace`` (see the module doc).

        Exact up to ``exact_scan_limit`` records. Above it HNSW, but only where its filtered
        walk finds the right rows: when the namespace holds at least ``hnsw_min_share`` of the
        table, or when it is so large (over ``exact_scan_max``) that scanning it would cost
        more than the approximation does.
        """
        size = self.namespace_size(namespace)
        if size <= self.exact_scan_limit:
            return "exact"
        if size > self.exact_scan_max:
            return "hnsw"
        return "hnsw" if size >= self.hnsw_min_share * max(self._table_size(), size) else "exact"

    def query_vector(self, query: Query) -> np.ndarray:
        """The unit vector for ``query`` (embedding it when it is text)."""
        if isinstance(query, str):
            return np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        return self._vector(query, "query vector")

    def search(
        self,
        namespace: str,
        query: Query,
        top_k: int = 10,
        *,
        actor_id: str | None = None,
        text: str | None = None,
        mode: SearchMode = "dense",
        plan: SearchPlan | None = None,
    ) -> list[SearchHit]:
        """Top ``top_k`` records of ``namespace``, best first.

        ``mode="dense"``: by cosine similarity. ``mode="hybrid"``: the dense ranking fused with
        PostgreSQL full-text search's ranking (``ts_rank_cd`` over an English ``tsvector``) of
        ``text`` (or of ``query`` when it is text) by reciprocal rank fusion. Scores are
        always ``(1 + cosine) / 2``. ``actor_id`` restricts hits to that actor's records.
        ``plan`` overrides the size-based plan choice (for measurements).
        """
        if mode not in ("dense", "hybrid"):
            raise UsageError(f"unknown search mode {mode!r} (dense or hybrid)")
        if top_k <= 0:
            return []
        vector = self.query_vector(query)
        chosen = plan or self.plan_for(namespace)
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
        ).format(sql.Identifier(_function_name(plan, by_actor)))

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
                    f"{_quote_ident(self.schema)}.{_function_name(chosen, False)}(text, "
                    f"{_quote_ident(self._vector_schema)}.vector, integer)",
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
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_advisory_key(self.schema),))
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))
        self.close()

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r}, schema={self.schema!r}, embedder={self.embedder.name!r})"
