"""The shared store: PostgreSQL with pgvector (``postgresql://user:password@host:port/db``).

For deployments with many agent workers on many machines. Needs the ``[postgres]`` extra
(psycopg 3, psycopg_pool, pgvector) and a server with the ``vector`` extension.

One module per job, imported in this order (each uses only those above it):

- :mod:`.connection`: the URL (recallwise's ``schema=`` option, the password hidden in
  messages), one direct connection, how a database error is counted;
- :mod:`.planner`: the exact-vs-HNSW plan of a filtered search, by the namespace's size;
- :mod:`.search_functions`: the SQL function each plan runs;
- :mod:`.migrations`: the tables and indexes, and the migrations that create and upgrade them;
- :mod:`.ingest`: every write, by binary COPY and one upsert, and bulk loads;
- :mod:`.store`: :class:`PostgresStore` (pool, events, records, search).
"""

from __future__ import annotations

from . import planner
from .connection import DEFAULT_CONNECT_TIMEOUT
from .migrations import COVERING_MAX_DIMENSION, HNSW_INDEX, MIGRATIONS, Migration, SchemaContext
from .planner import *  # noqa: F403 (the planner's public names, its __all__, are the package's too)
from .store import DEFAULT_SCHEMA, PostgresStore

__all__ = [
    "COVERING_MAX_DIMENSION",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SCHEMA",
    "HNSW_INDEX",
    "MIGRATIONS",
    "Migration",
    "PostgresStore",
    "SchemaContext",
]
__all__ += planner.__all__
