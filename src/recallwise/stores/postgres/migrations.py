"""The schema recallwise keeps in PostgreSQL, and the migrations that create and upgrade it.

Layout (all in one schema, ``recallwise`` unless ``?schema=NAME`` or ``schema=`` says
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

Owns the tables and indexes (:data:`MIGRATIONS`, in order), :func:`migrate` (run once per
store at open: the vector extension, the schema, the pending migrations, the embedder check),
:func:`recorded_embedder` (the name ``meta`` holds, read before the store picks its embedder)
and the advisory-lock key that serialises it with :meth:`PostgresStore.drop_schema`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from ...embeddings import Embedder
from ...errors import DimensionMismatchError, StoreError, UsageError
from .connection import quote_ident, reason
from .search_functions import search_function

__all__ = [
    "COVERING_MAX_DIMENSION",
    "HNSW_INDEX",
    "MIGRATIONS",
    "Migration",
    "SchemaContext",
    "advisory_key",
    "migrate",
    "namespace_index",
    "recorded_embedder",
]


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


def namespace_index(ctx: SchemaContext) -> str:
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
                search_function(plan, by_actor, half=False)
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
            namespace_index,
            *(search_function("exact", by_actor) for by_actor in (False, True)),
        ),
        vacuum=True,
    ),
)


def advisory_key(schema: str) -> int:
    """A stable signed 64-bit advisory-lock key for migrating ``schema``."""
    digest = hashlib.blake2b(f"recallwise-migrate:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def migrate(conn: psycopg.Connection[TupleRow], *, schema: str, url: str, embedder: Embedder) -> str:
    """Create or upgrade ``schema``, once, even when several workers start together.

    Returns the schema the vector extension lives in. ``url`` (password hidden) is for
    messages; ``embedder`` is checked against the one the schema was made with.
    """
    schema_id = sql.Identifier(schema)
    vacuum = False
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(schema),))
            vector_schema = _ensure_vector_extension(conn, url)
            exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema_id))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.schema_version (version integer PRIMARY KEY, "
                    "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
                ).format(schema_id)
            )
            applied = {
                row[0]
                for row in conn.execute(sql.SQL("SELECT version FROM {}.schema_version").format(schema_id))
            }
            ctx = SchemaContext(schema_id, vector_schema, int(embedder.dimension))
            for migration in MIGRATIONS:
                if migration.version in applied:
                    continue
                for statement in migration.statements:
                    text = statement if isinstance(statement, str) else statement(ctx)
                    conn.execute(ctx.format(text))
                conn.execute(
                    sql.SQL("INSERT INTO {}.schema_version (version, description) VALUES (%s, %s)").format(
                        schema_id
                    ),
                    (migration.version, migration.description),
                )
                vacuum = vacuum or (migration.vacuum and bool(applied))
            _check_meta(conn, schema, url, embedder)
        if vacuum:  # outside the transaction (VACUUM cannot run inside one)
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}.records").format(schema_id))
    except (StoreError, UsageError):
        raise
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(
            f"cannot create recallwise's tables in schema {schema!r} of {url}: {reason(exc)} "
            f"(grant CREATE on the database, or have an administrator run this store once)"
        ) from exc
    except psycopg.Error as exc:
        raise StoreError(f"cannot prepare the schema {schema!r} in {url}: {reason(exc)}") from exc
    return vector_schema


def recorded_embedder(conn: psycopg.Connection[TupleRow], *, schema: str, url: str) -> str | None:
    """The embedder name ``schema``'s ``meta`` table recorded, or None when nothing is recorded
    yet (no such schema, no ``meta`` table, or an empty one).

    Read without the migration lock: a store made at the same moment by another worker is
    caught by :func:`migrate`'s check, which refuses an embedder that disagrees with ``meta``.
    """
    try:
        found = conn.execute(
            "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = 'meta' AND c.relkind = 'r'",
            (schema,),
        ).fetchone()
        if found is None:
            return None
        row = conn.execute(
            sql.SQL("SELECT value FROM {}.meta WHERE key = 'embedder'").format(sql.Identifier(schema))
        ).fetchone()
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot read which embedder schema {schema!r} in {url} was made with: {reason(exc)}"
        ) from exc
    return str(row[0]) if row else None


def _ensure_vector_extension(conn: psycopg.Connection[TupleRow], url: str) -> str:
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
            f"the PostgreSQL server at {url} has no pgvector extension: install pgvector "
            f"(https://github.com/pgvector/pgvector#installation), then run CREATE EXTENSION vector; "
            f"({reason(exc)})"
        ) from exc
    return _ensure_vector_extension(conn, url)


def _check_meta(conn: psycopg.Connection[TupleRow], schema_name: str, url: str, embedder: Embedder) -> None:
    """Record the embedder on first use; refuse a store made with different vectors."""
    dimension = int(embedder.dimension)
    schema = sql.Identifier(schema_name)
    table = f"{quote_ident(schema_name)}.records"
    row = conn.execute(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
        (table,),
    ).fetchone()
    table_dim = int(row[0]) if row else dimension
    meta: dict[str, str] = dict(
        conn.execute(sql.SQL("SELECT key, value FROM {}.meta").format(schema)).fetchall()
    )
    if table_dim != dimension:
        raise DimensionMismatchError(
            f"PostgreSQL table {schema_name}.records in {url} holds {table_dim}-dimensional "
            f"vectors (embedder {meta.get('embedder', '?')!r}); embedder {embedder.name!r} makes "
            f"{dimension}-dimensional vectors: refusing to write. Open it with that embedder "
            f"(embedder={meta.get('embedder', 'NAME')} in the URL, or leave the embedder out) or use "
            f"another schema (?schema=NAME)"
        )
    if not meta:
        conn.execute(
            sql.SQL("INSERT INTO {}.meta (key, value) VALUES (%s, %s), (%s, %s)").format(schema),
            ("embedder", embedder.name, "dimension", str(dimension)),
        )
    elif meta.get("embedder") != embedder.name:
        raise DimensionMismatchError(
            f"PostgreSQL schema {schema_name!r} in {url} was embedded with "
            f"{meta.get('embedder')!r}, not {embedder.name!r}: scores would not be comparable; "
            f"open it with that embedder (embedder={meta.get('embedder')} in the URL, or leave the "
            f"embedder out) or use another schema (?schema=NAME)"
        )
