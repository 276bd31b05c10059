"""Writing records: binary ``COPY`` into a session's staging table, then one upsert into ``records``.

Owns the staging rows (a batch naming an id twice keeps its last version), the COPY and the
``INSERT ... ON CONFLICT`` that every write goes through, and the bulk load that drops and
rebuilds the indexes around many batches. The store wraps each in a pooled connection and a
transaction and forgets the planner's sizes of the namespaces written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import TupleRow

from ...embeddings import Embedder
from ...records import MemoryRecord
from ..ranking import ready_to_write
from ..sql import record_values
from .migrations import HNSW_INDEX, SchemaContext, namespace_index

__all__ = ["bulk_load", "copy_in", "staging_rows"]

#: The store's checked vector for a record: ``vector(value, what)`` (raises on a wrong dimension).
VectorCheck = Callable[[Any, str], np.ndarray]


def staging_rows(records: list[MemoryRecord], vector: VectorCheck) -> list[tuple[Any, ...]]:
    """COPY rows for ``records``; a batch naming an id twice keeps its last version."""
    latest: dict[str, int] = {}
    for position, record in enumerate(records):
        latest[record.id] = position
    return [
        (
            position,
            *record_values(record, json.dumps(record.metadata)),
            vector(record.embedding, f"record {record.id!r}"),
        )
        for position, record in enumerate(records)
        if latest[record.id] == position
    ]


def copy_in(conn: psycopg.Connection[TupleRow], rows: list[tuple[Any, ...]]) -> None:
    """Binary COPY into this session's staging table, then upsert into ``records``.

    Must run inside a transaction (the staging table empties itself at commit).
    """
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS recallwise_staging (ord integer, id text, actor_id text, "
        "namespace text, text text, rendered text, strategy text, created_at double precision, "
        "metadata text, embedding vector) ON COMMIT DELETE ROWS"
    )
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY recallwise_staging (ord, id, actor_id, namespace, text, rendered, strategy, "
            "created_at, metadata, embedding) FROM STDIN (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int4", "text", "text", "text", "text", "text", "text", "float8", "text", "vector"])
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
        "FROM recallwise_staging ORDER BY ord) AS numbered ORDER BY namespace, seq "
        "ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, actor_id = EXCLUDED.actor_id, "
        "namespace = EXCLUDED.namespace, text = EXCLUDED.text, rendered = EXCLUDED.rendered, "
        "strategy = EXCLUDED.strategy, created_at = EXCLUDED.created_at, "
        "metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding"
    )


def bulk_load(
    conn: psycopg.Connection[TupleRow],
    batches: Iterable[Sequence[MemoryRecord]],
    *,
    embedder: Embedder,
    vector: VectorCheck,
    ctx: SchemaContext,
    rebuild_index: bool,
    maintenance_work_mem: str | None,
) -> tuple[int, set[str]]:
    """Load ``batches`` in ONE transaction on ``conn`` (see :meth:`PostgresStore.bulk_ingest`),
    then vacuum; returns how many records were written and the namespaces they went to."""
    total = 0
    namespaces: set[str] = set()
    with conn.transaction():
        if rebuild_index:
            conn.execute("DROP INDEX IF EXISTS records_embedding_hnsw")
            # Rebuilt too: built in one pass its pages are full, where rows arriving in
            # random namespace order leave them about half full (twice the pages an
            # exact scan reads).
            conn.execute("DROP INDEX IF EXISTS records_namespace_actor")
        for batch in batches:
            records = ready_to_write(embedder, batch)
            if not records:
                continue
            copy_in(conn, staging_rows(records, vector))
            conn.execute("TRUNCATE recallwise_staging")
            namespaces.update(r.namespace for r in records)
            total += len(records)
        if rebuild_index:
            if maintenance_work_mem:
                conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (maintenance_work_mem,))
            conn.execute(ctx.format(namespace_index(ctx)))
            conn.execute(ctx.format(HNSW_INDEX))
    conn.execute("VACUUM (ANALYZE) records")
    return total, namespaces
