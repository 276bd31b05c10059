"""``recallgate bench latency``: decision cost, turn latency of both arms, demo wall clock."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..bench.latency import run_latency, serving_rss_mb
from ..errors import UsageError
from ..stores import open_store
from . import emit_json, progress_enabled
from .common import add_decider, add_json, decider_from_args, table
from .demo import add_via, memory_manager_runner

KEYS = [
    ("embed p50 (ms)", "embed_p50_ms"),
    ("gate p50 (ms)", "gate_p50_ms"),
    ("judge of 20 p50 (ms)", "judge20_p50_ms"),
    ("decision overhead p50 (ms)", "decision_overhead_p50_ms"),
    ("search p50 (ms)", "search_p50_ms"),
    ("turn stock p50 (ms)", "turn_stock_p50_ms"),
    ("turn gated p50 (ms)", "turn_gated_p50_ms"),
    ("demo wall stock (ms)", "demo_wall_stock_ms"),
    ("demo wall gated (ms)", "demo_wall_gated_ms"),
    ("decisions / s", "decisions_per_s"),
    ("RSS serving the store (MB)", "rss_mb"),
    ("RSS of this bench process (MB)", "rss_mb_bench_process"),
]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "latency",
        help="what a decision costs and whether a gated turn beats a stock one",
        description="Time embedding, gate, judge, search and whole turns of both arms (medians over "
        "repeated runs after a warm-up), and the 8-turn demo's wall clock with a modelled remote store.",
    )
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="store URL (default: a fresh SQLite file in a temporary directory)",
    )
    add_decider(parser)
    parser.add_argument(
        "--records",
        type=int,
        default=10_000,
        help="synthetic records of other actors loaded into the store (default 10000)",
    )
    parser.add_argument(
        "--remote-store-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="delay added to every search, modelling a remote memory service (e.g. 530)",
    )
    parser.add_argument("--concurrency", type=int, default=1, help="threads for the throughput run")
    parser.add_argument("--repeats", type=int, default=200, help="timed repetitions per figure (default 200)")
    parser.add_argument("--plot", metavar="OUT.png", help="write a plot of per-turn latency of both arms")
    add_via(parser)
    add_json(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.records < 0 or args.repeats < 1 or args.concurrency < 1 or args.remote_store_ms < 0:
        raise UsageError("--records, --remote-store-ms must be >= 0; --repeats, --concurrency >= 1")
    if args.plot:
        _pyplot()  # fail before the long run, not after it
    decider = decider_from_args(args)
    via = getattr(args, "via", "policy")
    if via == "memory-manager":
        memory_manager_runner()  # fail before the long run when strands is not installed
    options = {"url": args.url} if getattr(args, "url", None) else {}
    tmp = None
    url = args.store
    if url is None:
        tmp = tempfile.TemporaryDirectory(prefix="recallgate-bench-")
        url = f"sqlite:///{tmp.name}/bench.db"
    store = open_store(url)
    show = progress_enabled(args)
    try:
        result = run_latency(
            store,
            decider,
            records=args.records,
            remote_store_ms=args.remote_store_ms,
            concurrency=args.concurrency,
            repeats=args.repeats,
            on_stage=(lambda name: print(f"... {name}", file=sys.stderr)) if show else None,
            rss_probe=lambda: serving_rss_mb(url, None if decider is None else args.decider, options),
            via=via,
        )
    finally:
        store.close()
        if tmp is not None:
            tmp.cleanup()
    if args.plot:
        write_plot(result, Path(args.plot))
    if args.json:
        emit_json(result)
        return 0
    print(
        f"decider {result['decider']}, {result['records']} records, remote store delay "
        f"{result['remote_store_ms']} ms, {result['cores']} cores"
        + (", turns through Strands' MemoryManager (a real strands.Agent)" if via == "memory-manager" else "")
        + "\n"
    )
    print(table([(label, result[key]) for label, key in KEYS], ["", "value"]))
    ratio = result["demo_wall_gated_ms"] / max(result["demo_wall_stock_ms"], 1e-9)
    print(f"\ngated demo wall clock = {ratio:.0%} of stock")
    return 0


def write_plot(result: dict, path: Path) -> None:
    """Per-turn latency of both arms over the demo conversation, as a PNG."""
    plt = _pyplot()
    turns = result["demo_turns"]
    stock, gated = result["demo_per_turn_ms"]["stock"], result["demo_per_turn_ms"]["gated"]
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=120)
    xs = range(len(turns))
    ax.bar([x - 0.2 for x in xs], stock, width=0.4, label="stock", color="#9aa5b1")
    ax.bar([x + 0.2 for x in xs], gated, width=0.4, label="gated", color="#2f7ed8")
    ax.set_xticks(
        list(xs), [t if len(t) < 18 else t[:16] + "…" for t in turns], rotation=30, ha="right", fontsize=7
    )
    ax.set_ylabel("turn latency (ms)")
    ax.set_title(
        f"Demo turns with a {result['remote_store_ms']:.0f} ms remote store: "
        f"stock {result['demo_wall_stock_ms']:.0f} ms vs gated {result['demo_wall_gated_ms']:.0f} ms",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise UsageError("--plot needs matplotlib: pip install 'recallgate[plot]'") from exc
    return plt
