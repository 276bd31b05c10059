"""The store benchmark: ingest speed, filtered search latency and recall against exact search.

Synthetic data, so any store can be measured at any size without a model: unit vectors drawn
around random cluster centres (real embeddings are clustered by topic, and uniform random
vectors in 384 dimensions would make every neighbour equally far), short generated texts, and
records spread evenly over namespaces (one actor each) independently of their cluster, so a
namespace filter cannot be answered by walking one region of the vector space.

Each query is a fresh point near a random cluster centre, searched in a random namespace for
its top 10; recall@10 is the share of the exact top 10 (numpy over that namespace's vectors)
that the store returned.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..embeddings import HashingEmbedder
from ..errors import UsageError
from ..records import MemoryRecord
from ..stores import MemoryStore, open_store
from ..stores.base import SearchRequest
from ..stores.ranking import top_k_indices

__all__ = [
    "StoreBenchResult",
    "SyntheticCorpus",
    "bench_store",
    "percentile",
]

DEFAULT_DIMENSION = 384  # all-MiniLM-L6-v2, the default embedder
# Spread of a record around its cluster centre: cosine(record, centre) is about 1/sqrt(1 + s^2).
CLUSTER_SPREAD = 1.0

_SUBJECTS = ["user", "partner", "team", "manager", "sister", "friend", "client", "doctor", "teacher"]
_VERBS = ["likes", "prefers", "avoids", "visited", "booked", "mentioned", "ordered", "planned", "forgot"]
_TOPICS = [
    "green tea",
    "espresso",
    "Lisbon trips",
    "Python code",
    "marathon training",
    "jazz records",
    "sushi",
    "budget spreadsheets",
    "hiking boots",
    "Kyoto hotels",
    "vegan recipes",
    "chess openings",
    "red wine",
    "electric cars",
    "board games",
    "yoga classes",
    "sci-fi novels",
    "Rust crates",
]


@dataclass
class StoreBenchResult:
    """What ``recallwise bench store`` prints (times in milliseconds, rates per second)."""

    backend: str
    records: int
    namespaces: int
    insert_per_s: float
    search_p50_ms: float
    search_p95_ms: float
    recall_at_10: float
    queries: int
    dimension: int
    ingest: str
    plan: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


class SyntheticCorpus:
    """``n`` clustered unit vectors with texts, spread over ``namespaces`` namespaces."""

    def __init__(self, n: int, namespaces: int, *, dimension: int = DEFAULT_DIMENSION, seed: int = 0) -> None:
        if n < 1 or namespaces < 1:
            raise UsageError("--records and --namespaces must be at least 1")
        if namespaces > n:
            raise UsageError(f"--namespaces ({namespaces}) cannot exceed --records ({n})")
        self.n, self.namespace_count, self.dimension = n, namespaces, dimension
        self.rng = np.random.default_rng(seed)
        self.cluster_count = int(min(1024, max(8, n // 200)))
        self.centres = _unit(self.rng.standard_normal((self.cluster_count, dimension), dtype=np.float32))
        self.cluster = self.rng.integers(0, self.cluster_count, size=n)
        self.namespace_of = self.rng.permutation(np.arange(n) % namespaces)
        self.vectors = np.empty((n, dimension), dtype=np.float32)
        for start in range(0, n, 50_000):  # in slices: a 1M x 384 float64 temporary is 3 GB
            stop = min(n, start + 50_000)
            self.vectors[start:stop] = self._near(self.centres[self.cluster[start:stop]])
        self._members: dict[int, np.ndarray] | None = None

    def _near(self, centres: np.ndarray) -> np.ndarray:
        noise = self.rng.standard_normal(centres.shape, dtype=np.float32)
        return _unit(centres + noise * (CLUSTER_SPREAD / np.sqrt(self.dimension)))

    @staticmethod
    def namespace(index: int) -> str:
        return f"/bench/ns{index:05d}"

    @staticmethod
    def actor(index: int) -> str:
        return f"bench-actor-{index:05d}"

    def record_id(self, i: int) -> str:
        return f"bench-{i:08d}"

    def text(self, i: int) -> str:
        cluster = int(self.cluster[i])
        return (
            f"The {_SUBJECTS[i % len(_SUBJECTS)]} {_VERBS[(i // 7) % len(_VERBS)]} "
            f"{_TOPICS[cluster % len(_TOPICS)]} (note {i}, topic {cluster})."
        )

    def batches(self, size: int) -> Iterator[list[MemoryRecord]]:
        """The records in insertion order, ``size`` at a time, each with its vector."""
        for start in range(0, self.n, size):
            batch = []
            for i in range(start, min(self.n, start + size)):
                ns = int(self.namespace_of[i])
                batch.append(
                    MemoryRecord(
                        actor_id=self.actor(ns),
                        namespace=self.namespace(ns),
                        text=self.text(i),
                        id=self.record_id(i),
                        created_at=1_700_000_000.0 + i,
                        embedding=self.vectors[i],
                    )
                )
            yield batch

    def members(self, namespace_index: int) -> np.ndarray:
        """Row indices of the records in one namespace."""
        if self._members is None:
            order = np.argsort(self.namespace_of, kind="stable")
            bounds = np.searchsorted(self.namespace_of[order], np.arange(self.namespace_count + 1))
            self._members = {j: order[bounds[j] : bounds[j + 1]] for j in range(self.namespace_count)}
        return self._members[namespace_index]

    def queries(self, count: int) -> list[tuple[int, np.ndarray]]:
        """(namespace index, query vector) pairs, each query near a random cluster centre."""
        clusters = self.rng.integers(0, self.cluster_count, size=count)
        vectors = self._near(self.centres[clusters])
        spaces = self.rng.integers(0, self.namespace_count, size=count)
        return [(int(s), v) for s, v in zip(spaces, vectors, strict=True)]

    def exact_top(self, namespace_index: int, query: np.ndarray, k: int) -> list[str]:
        """The true top ``k`` ids of one namespace for ``query``."""
        rows = self.members(namespace_index)
        scores = self.vectors[rows] @ query
        return [self.record_id(int(rows[i])) for i in top_k_indices(scores, k)]


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def _backend(url: str) -> str:
    scheme = url.split("://", 1)[0].lower()
    return {"postgres": "postgresql", "postgresql+psycopg": "postgresql"}.get(scheme, scheme)


def _open_bench_store(url: str, dimension: int) -> tuple[MemoryStore, Callable[[], None]]:
    """A store for the benchmark's records only, and how to remove them afterwards.

    PostgreSQL: a schema of its own (dropped afterwards), so an existing recallwise schema in
    the same database is neither read nor touched. SQLite: the file must be new (or
    ``:memory:``); it is deleted afterwards.
    """
    embedder = HashingEmbedder(dimension)  # names the vectors' dimension; queries are vectors
    backend = _backend(url)
    if backend == "postgresql":
        schema = f"recallwise_bench_{os.getpid()}"
        store = open_store(url, embedder=embedder, schema=schema)

        def drop() -> None:
            drop_schema = getattr(store, "drop_schema", None)
            if drop_schema is not None:
                drop_schema()
            store.close()

        return store, drop
    if backend == "sqlite":
        # The same reading of the URL as the embedded store: sqlite:///PATH, or :memory:.
        path = url[len("sqlite:///") :].split("?", 1)[0] if url.startswith("sqlite:///") else ""
        if path in ("", ":memory:"):
            path = ""
        if path and Path(path).exists():
            raise UsageError(
                f"bench store writes synthetic records: give it a new sqlite file or sqlite://:memory:, "
                f"not the existing {path!r}"
            )
        store = open_store(url, embedder=embedder)

        def remove() -> None:
            store.close()
            for suffix in ("", "-wal", "-shm") if path else ():
                Path(path + suffix).unlink(missing_ok=True)

        return store, remove
    return open_store(url, embedder=embedder), lambda: None


def _ingest(
    store: MemoryStore,
    corpus: SyntheticCorpus,
    batch: int,
    ingest: str,
    progress: Callable[[str, int, int], None] | None,
) -> float:
    """Write the corpus; returns the seconds spent inside the store's write calls."""
    done = 0

    def batches() -> Iterator[list[MemoryRecord]]:
        nonlocal done
        for chunk in corpus.batches(batch):
            yield chunk
            done += len(chunk)
            if progress:
                progress("insert", done, corpus.n)

    if ingest == "bulk":
        bulk = getattr(store, "bulk_ingest", None)
        if bulk is None:
            raise UsageError(f"--ingest bulk: the {type(store).__name__} has no bulk_ingest")
        # One call for everything: its time also covers building the records as they stream in.
        started = time.perf_counter()
        bulk(batches())
        return time.perf_counter() - started
    spent = 0.0
    for chunk in batches():
        started = time.perf_counter()
        store.add_records(chunk)
        spent += time.perf_counter() - started
    return spent


def bench_store(
    url: str,
    records: int,
    namespaces: int = 100,
    *,
    dimension: int = DEFAULT_DIMENSION,
    queries: int = 500,
    batch: int = 5000,
    ingest: str = "add",
    plan: str | None = None,
    seed: int = 0,
    keep: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> StoreBenchResult:
    """Ingest ``records`` synthetic records into the store ``url`` names and measure it.

    ``insert_per_s`` counts records over the wall time of the ``add_records`` calls (vectors
    given, so no embedding). Searches are namespace-filtered top-10 queries by vector, one at
    a time (``plan`` forces a PostgreSQL plan, ``"exact"`` or ``"hnsw"``; by default the
    store chooses), after one warm-up query per namespace (up to 1,000); their wall times give p50 and
    p95.
    """
    if batch < 1 or queries < 1:
        raise UsageError("--batch and --queries must be at least 1")
    if ingest not in ("add", "bulk"):
        raise UsageError(f"unknown ingest {ingest!r} (add or bulk)")
    # the search plan travels in the request's extensions (PostgreSQL's planner reads "plan")
    options: dict[str, Any] = {}
    if plan is not None:
        options["plan"] = plan
    corpus = SyntheticCorpus(records, namespaces, dimension=dimension, seed=seed)
    store, cleanup = _open_bench_store(url, dimension)
    try:
        if options and not hasattr(store, "plan_for"):  # only PostgreSQL plans its searches
            raise UsageError(f"--plan: the {type(store).__name__} chooses no search plan")
        if store.count_records():
            raise UsageError(f"bench store needs an empty store; {store.url} already holds records")
        spent = _ingest(store, corpus, batch, ingest, progress)
        # Warm-up: one query per namespace (up to 1,000), so the measured queries see the steady
        # state of a store in use rather than the first read of each namespace after the load.
        warmup = [(ns, vector) for ns, (_, vector) in enumerate(corpus.queries(min(namespaces, 1000)))]
        measured = corpus.queries(queries)
        for ns, vector in warmup:
            store.search(SearchRequest(corpus.namespace(ns), vector, 10, extensions=options))
        times, recalls = [], []
        for n, (ns, vector) in enumerate(measured, 1):
            started = time.perf_counter()
            hits = store.search(SearchRequest(corpus.namespace(ns), vector, 10, extensions=options))
            times.append((time.perf_counter() - started) * 1000.0)
            truth = corpus.exact_top(ns, vector, 10)
            found = {h.record.id for h in hits}
            recalls.append(len(found.intersection(truth)) / len(truth))
            if progress:
                progress("search", n, queries)
        return StoreBenchResult(
            backend=_backend(url),
            records=records,
            namespaces=namespaces,
            insert_per_s=round(records / spent, 1) if spent > 0 else float("inf"),
            search_p50_ms=round(statistics.median(times), 3),
            search_p95_ms=round(percentile(times, 95), 3),
            recall_at_10=round(float(np.mean(recalls)), 4),
            queries=queries,
            dimension=dimension,
            ingest=ingest,
            plan=plan or "auto",
        )
    finally:
        if keep:
            store.close()
        else:
            cleanup()
