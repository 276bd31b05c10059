"""``recallwise bench serve``: throughput and latency of real ``recallwise serve`` processes over HTTP."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..extras import EXTRA_MODULES, require_extra
from . import progress_bar, report
from .common import add_json, flag_values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """drive real recallwise serve processes over HTTP: turns/s, p50/p95/p99, lost writes

    Start recallwise serve replica(s) over one store, drive them with concurrent sessions (recall, then
    the message stored as an event, a record every few turns; two tenants), then check nothing was lost or
    leaked, and measure the same workload in process and the embedder's batched ceiling in the same run.
    The ceiling ratio is read from CPU seconds: the embedder's CPU for a turn's texts over the servers'
    own CPU per turn (from /proc), which a shared machine distorts far less than turns/s.
    """
    parser.add_argument("--sessions", type=int, default=50, help="concurrent sessions (default %(default)s)")
    parser.add_argument("--turns", type=int, default=20, help="turns per session (default %(default)s)")
    parser.add_argument(
        "--replicas", type=int, default=1, help="servers, each on its own port (default %(default)s)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes of each server (recallwise serve --workers; default %(default)s)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="a PostgreSQL URL the replicas share (a schema of its own, dropped afterwards); "
        "default: a new SQLite file",
    )
    parser.add_argument(
        "--log",
        metavar="sqlite|URL",
        help="the replicas log every turn (--log --log-content): 'sqlite', a new file; a PostgreSQL URL, "
        "a schema of its own there, dropped afterwards (default: no log)",
    )
    parser.add_argument("--write-every", type=int, default=5, help="a record every N turns (default 5)")
    parser.add_argument("--max-batch", type=int, default=16, help="the servers' embedding batch (default 16)")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    # the servers it starts need the service's packages; its load driver needs aiohttp
    require_extra("serve", "recallwise bench serve", (*EXTRA_MODULES["serve"], "aiohttp"))
    from ..bench.serve import bench_serve

    if args.write_every < 1:
        raise UsageError("--write-every must be at least 1")
    with progress_bar(args, args.sessions * args.turns, desc="turns", unit="turn") as bar:
        flags = flag_values(
            args, "sessions", "turns", "replicas", "workers", "store", "write_every", "max_batch", "log"
        )
        result = bench_serve(**flags, progress=bar.update)
    return report(args, result, _print_text)


def _ms(seconds: float | None) -> str:
    return "unknown" if seconds is None else f"{seconds * 1000:.2f} ms"


def _print_text(result: dict[str, Any]) -> None:
    """The result as text: throughput and latency over HTTP and in process, the ceiling, the losses."""
    http, inproc, ceiling = result["http"], result["in_process"], result["ceiling"]
    print(
        f"{result['replicas']} replica(s) of {result['workers_per_replica']} worker(s) over "
        f"{result['store']}{'' if result.get('log') is None else ', decision log in ' + result['log']}: "
        f"{result['sessions']} sessions x "
        f"{result['turns_per_session']} turns, {result['tenants']} tenants\n"
        f"  HTTP          {http['turns_per_s']:.1f} turns/s, p50 {http['p50_ms']:.1f} / "
        f"p95 {http['p95_ms']:.1f} / p99 {http['p99_ms']:.1f} ms, errors {http['errors']}\n"
        f"  in process    {inproc['turns_per_s']:.1f} turns/s, p95 {inproc['p95_ms']:.1f} ms\n"
        f"  embedder      {ceiling['single_texts_per_s']:.0f} texts/s one at a time, "
        f"{ceiling['batched_texts_per_s']:.0f} batched; "
        f"{result['embeddings_per_turn']:.2f} embeddings a turn "
        f"-> ceiling {result['ceiling_turns_per_s']:.1f} turns/s (wall-clock ratio "
        f"{result['wall_ceiling_ratio']})\n"
        f"  CPU a turn    server {_ms(result['server_cpu_s_per_turn'])}, driver "
        f"{_ms(result['driver_cpu_s_per_turn'])}; the embedder's for a turn's texts "
        f"{_ms(result['embed_cpu_s_per_turn'])} -> ceiling ratio {result['ceiling_ratio']}\n"
        f"  lost {result['lost']}, cross-tenant reads {result['cross_tenant_reads']}, "
        f"cross-actor reads {result['cross_actor_reads']}\n"
        f"  idle recall   p50 {result['idle']['p50_ms']:.1f} ms "
        f"vs embed {result['idle']['embed_p50_ms']:.1f} ms "
        f"(+{result['idle_overhead_ms']:.1f} ms)"
    )
