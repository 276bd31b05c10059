"""``recallwise bench store``: ingest speed, filtered search latency and recall of a store.

Builds N synthetic records (clustered unit vectors, generated texts) across M namespaces in
the store the URL names, then times namespace-filtered top-10 searches and checks them
against exact search. PostgreSQL runs in a schema of its own and SQLite needs a new file;
both are removed afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse

from ..bench.store import DEFAULT_DIMENSION, StoreBenchResult, bench_store
from . import progress_bar, report
from .common import add_json, flag_values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """time ingest and namespace-filtered search of a store; recall against exact search

    Build N synthetic records across M namespaces in a store, then measure insert rate, filtered top-10
    search latency (p50, p95) and recall@10 against exact search.
    """
    parser.add_argument(
        "--store", required=True, metavar="URL", help="postgresql://... or a new sqlite:///file.db"
    )
    parser.add_argument("--records", type=int, required=True, metavar="N", help="records to build")
    parser.add_argument(
        "--namespaces",
        type=int,
        default=100,
        metavar="M",
        help="namespaces to spread them over (default 100)",
    )
    parser.add_argument("--queries", type=int, default=500, help="measured queries (default %(default)s)")
    parser.add_argument(
        "--dimension", type=int, default=DEFAULT_DIMENSION, help="vector dimension (default %(default)s)"
    )
    parser.add_argument("--batch", type=int, default=5000, help="records per write (default %(default)s)")
    parser.add_argument(
        "--ingest",
        choices=("add", "bulk"),
        default="add",
        help="add: add_records per batch (what agents do; default); "
        "bulk: the store's bulk_ingest (PostgreSQL: one COPY transaction, HNSW index built once)",
    )
    parser.add_argument(
        "--plan",
        choices=("exact", "hnsw"),
        default=None,
        help="PostgreSQL only: force the exact scan or the HNSW index (default: chosen by namespace size)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--keep", action="store_true", help="leave the benchmark's records in place")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    with progress_bar(args) as bar:
        stage_now = ""

        def progress(stage: str, done: int, total: int) -> None:
            nonlocal stage_now
            if stage != stage_now:  # each stage counts from 0 to its own total
                stage_now = stage
                bar.reset(total=total)
                bar.set_description(stage)
            bar.n = done
            bar.refresh()

        result = bench_store(
            args.store,
            args.records,
            args.namespaces,
            **flag_values(args, "dimension", "queries", "batch", "ingest", "plan", "seed", "keep"),
            progress=progress,
        )
    return report(args, result, _print_text)


def _print_text(result: StoreBenchResult) -> None:
    """The figures as text."""
    print(
        f"{result.backend}: {result.records:,} records in {result.namespaces} namespaces "
        f"({result.dimension}-d, ingest {result.ingest}, plan {result.plan})\n"
        f"  insert        {result.insert_per_s:,.0f} records/s\n"
        f"  search p50    {result.search_p50_ms:.2f} ms\n"
        f"  search p95    {result.search_p95_ms:.2f} ms\n"
        f"  recall@10     {result.recall_at_10:.3f} (vs exact search, {result.queries} queries)"
    )
