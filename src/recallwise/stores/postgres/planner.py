"""The exact-vs-HNSW planner: which plan a dense search of one namespace takes, by its size.

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

Namespace sizes are cached for ``size_cache_seconds`` and dropped on the store's own writes;
a stale size only costs speed, or recall where it wrongly picks HNSW.

Owns the plan names, the limits and over-fetch factors, the HNSW scan settings' defaults, and
the :class:`Planner` (the limits plus the size cache). What each plan's SQL looks like is in
:mod:`.search_functions`; running it is the store's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

__all__ = [
    "EXACT_OVERFETCH",
    "EXACT_SCAN_LIMIT",
    "EXACT_SCAN_MAX",
    "HNSW_EF_SEARCH",
    "HNSW_ITERATIVE_SCAN",
    "HNSW_MAX_SCAN_TUPLES",
    "HNSW_MIN_SHARE",
    "HNSW_OVERFETCH",
    "HNSW_SCAN_MEM_MULTIPLIER",
    "IterativeScan",
    "Planner",
    "SearchPlan",
]

SearchPlan = Literal["exact", "hnsw"]
IterativeScan = Literal["strict_order", "relaxed_order"]

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

_TABLE_SIZE_KEY = "\x00table"  # the size cache's entry for the whole table (no namespace has a NUL)

#: The store's pooled connection: ``with conn(action) as c`` (errors become a StoreError).
ConnectionFactory = Callable[[str], AbstractContextManager["psycopg.Connection[TupleRow]"]]


class Planner:
    """The plan choice for one store: its limits, and the namespace and table sizes it read.

    ``conn`` is the store's pooled connection (see :data:`ConnectionFactory`).
    """

    def __init__(
        self,
        conn: ConnectionFactory,
        *,
        exact_scan_limit: int = EXACT_SCAN_LIMIT,
        exact_scan_max: int = EXACT_SCAN_MAX,
        hnsw_min_share: float = HNSW_MIN_SHARE,
        size_cache_seconds: float = 30.0,
    ) -> None:
        self._conn = conn
        self.exact_scan_limit = int(exact_scan_limit)
        self.exact_scan_max = int(exact_scan_max)
        self.hnsw_min_share = float(hnsw_min_share)
        self.size_cache_seconds = float(size_cache_seconds)
        self._sizes: dict[str, tuple[int, float]] = {}
        self._sizes_lock = threading.Lock()

    def forget_sizes(self, namespaces: set[str]) -> None:
        """Drop the cached sizes of ``namespaces`` (and of the table): they were just written."""
        with self._sizes_lock:
            for namespace in namespaces:
                self._sizes.pop(namespace, None)
            self._sizes.pop(_TABLE_SIZE_KEY, None)

    def table_size(self) -> int:
        """Records in the table: the planner's estimate once ANALYZE has run, else a count."""
        return self._cached_size(_TABLE_SIZE_KEY, self._measure_table)

    def _measure_table(self) -> int:
        with self._conn("estimate the table size") as conn:
            row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'records'::regclass").fetchone()
            estimate = float(row[0]) if row else -1.0
            if estimate < 0:  # never analyzed
                counted = conn.execute("SELECT count(*) FROM records").fetchone()
                estimate = float(counted[0]) if counted else 0.0
        return int(estimate)

    def namespace_size(self, namespace: str) -> int:
        """Records in ``namespace`` (cached for ``size_cache_seconds``; only steers the plan)."""
        return self._cached_size(namespace, lambda: self._count_namespace(namespace))

    def _count_namespace(self, namespace: str) -> int:
        with self._conn("count a namespace") as conn:
            row = conn.execute("SELECT count(*) FROM records WHERE namespace = %s", (namespace,)).fetchone()
        return int(row[0]) if row else 0

    def _cached_size(self, key: str, measure: Callable[[], int]) -> int:
        """The size cached under ``key`` if younger than ``size_cache_seconds``, else ``measure()``'s,
        cached with the time the measuring began."""
        now = time.monotonic()
        with self._sizes_lock:
            cached = self._sizes.get(key)
        if cached is not None and now - cached[1] < self.size_cache_seconds:
            return cached[0]
        size = measure()
        with self._sizes_lock:
            self._sizes[key] = (size, now)
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
        return "hnsw" if size >= self.hnsw_min_share * max(self.table_size(), size) else "exact"
