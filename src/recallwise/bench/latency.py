"""Latency benchmark: what a decision costs, and whether a gated turn beats a stock one.

Everything is timed with ``time.perf_counter`` over repeated runs after a warm-up; medians
are reported. The decision figures are turns of the real policy, read from the timings its
trace records (:mod:`recallwise.bench.decisions`). ``--remote-store-ms`` wraps the store in a
fixed per-search delay that models a remote memory service, so the demo's wall clock can be
compared arm against arm in one run.

The rest lives by job: :mod:`~recallwise.bench.decisions` (the decision figures),
:mod:`~recallwise.bench.fixtures` (the synthetic records and the remote store) and
:mod:`~recallwise.bench.rss` (memory); ``DelayedStore``, ``add_synthetic_records``, ``rss_mb``
and ``serving_rss_mb`` are still importable from here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from ..deciders import Decider
from ..demo import DEMO_NAMESPACES, persona, seed_persona
from ..policy import DecisionLog, RecallOptions, RecallPolicy
from ..records import resolve_namespace
from ..stores.base import MemoryStore, SearchRequest
from .decisions import NO_DECISIONS, DecisionBench, multilingual_figures
from .fixtures import DelayedStore, add_synthetic_records
from .rss import rss_mb, serving_rss_mb
from .timing import p50, timed

__all__ = [
    "MESSAGES",
    "MESSAGES_MULTILINGUAL",
    "DelayedStore",
    "add_synthetic_records",
    "rss_mb",
    "run_latency",
    "serving_rss_mb",
]

#: Messages in other languages: on these the embedded decider embeds once more, with the
#: multilingual model (the second embedding of a turn that is not English).
MESSAGES_MULTILINGUAL = [
    "¿Qué me pido de beber?",
    "Was soll ich heute Abend kochen?",
    "Réserve-moi un vol pour la semaine prochaine",
    "Cosa regalo al mio cane?",
    "Obrigado, isso ajuda",
    "Какая столица Перу?",
    "今週末の予定を立てて",
    "이 함수 좀 검토해 줄래?",
    "帮我订一张去上海的机票",
    "ما هو أفضل مشروب لي الآن؟",
]

#: Assorted user messages the benchmarks cycle through (memory questions and small talk).
MESSAGES = [
    "I'd like a drink, what should I get?",
    "What should I have for dinner tonight?",
    "I'm booking a flight next week, anything you should know?",
    "Can you review this function for me?",
    "Plan my weekend for me",
    "What's a good gift for my dog?",
    "Hello there!",
    "Thanks, that helps",
    "What is the capital of Peru?",
    "Explain how a hash map works",
]


def run_latency(
    store: MemoryStore,
    decider: Decider | None,
    *,
    records: int = 10_000,
    remote_store_ms: float = 0.0,
    concurrency: int = 1,
    repeats: int = 200,
    warmup: int = 20,
    on_stage: Callable[[str], None] | None = None,
    rss_probe: Callable[[], float | None] | None = None,
    via: str = "policy",
    log: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Measure the figures of ``recallwise bench latency`` (see the issue for each key).

    ``via="memory-manager"`` measures the turns and the demo through Strands' own machinery: a real
    ``strands.Agent`` with a ``MemoryManager`` over the store's two namespaces, stock stores vs the
    same stores behind one ``MemoryGate`` (``recallwise.bench.memory_manager``).

    ``rss_probe`` measures the memory of a process that only serves this store (see
    ``serving_rss_mb``); without it, or when it returns None, ``rss_mb`` is this process's.

    ``log``: the timed turns of both arms write to this decision log (``turn_*_p50_ms`` then
    include it), and ``log_p50_ms`` is what writing a gated turn's row added to it (its trace's
    ``log`` timing: the row, and the stock arm's tokens when the turn's own search tells them).
    """
    stage = on_stage or (lambda name: None)
    stage("seeding")
    seed_persona(store)
    existing_synthetic = len(store.list_records("/facts/synthetic-0"))
    if records and not existing_synthetic:
        add_synthetic_records(store, records)
    actor = persona()["actor_id"]
    embedder = store.embedder
    namespaces = [resolve_namespace(t, actor_id=actor) for t in DEMO_NAMESPACES]

    stage("embedding")
    embed = timed(lambda i: embedder.embed([MESSAGES[i % len(MESSAGES)] + f" #{i}"]), repeats, warmup)
    vectors = embedder.embed(MESSAGES)

    # The decisions: turns of the real policy over this store's hits, read from their traces.
    decisions: dict[str, Any] = dict(NO_DECISIONS)
    bench: DecisionBench | None = None
    if decider is not None:
        stage("deciding")
        bench = DecisionBench(store, decider, actor, MESSAGES, repeats=repeats, warmup=warmup)
        decisions = bench.figures()

    multilingual = multilingual_figures(
        bench, embedder, MESSAGES, MESSAGES_MULTILINGUAL, repeats, warmup, stage
    )

    stage("searching")
    search_ms = timed(
        lambda i: store.search(
            SearchRequest(
                namespaces[i % 2],
                vectors[i % len(MESSAGES)],
                10,
                actor_id=actor,
                text=MESSAGES[i % len(MESSAGES)],
                mode="hybrid",
            )
        ),
        repeats,
        warmup,
    )

    stage("turns")
    turns = list(persona()["demo_turns"])
    per_turn: dict[str, list[float]] = {"stock": [], "gated": []}
    log_ms: list[float] = []
    walls: dict[str, float] = {}
    if via == "memory-manager":
        turn_stock, turn_gated = _memory_manager_turns(store, decider, turns, actor, repeats, warmup)
        stage("demo")
        _memory_manager_demo(store, decider, remote_store_ms, per_turn, walls)
    else:
        decision_log = DecisionLog(log) if log is not None else None
        stock_policy = RecallPolicy(
            store, decider=None, namespaces=DEMO_NAMESPACES, cache_size=0, log=decision_log
        )
        gated_policy = RecallPolicy(
            store, decider=decider, namespaces=DEMO_NAMESPACES, cache_size=0, log=decision_log
        )

        def gated_turn(i: int) -> None:
            trace = gated_policy.recall(turns[i % len(turns)], actor_id=actor).trace
            if "log" in trace.timings_ms:
                log_ms.append(trace.timings_ms["log"])

        turn_stock = timed(
            lambda i: stock_policy.recall(turns[i % len(turns)], actor_id=actor), repeats, warmup
        )
        turn_gated = timed(gated_turn, repeats, warmup)
        if decision_log is not None:
            decision_log.close()
        stage("demo")
        _policy_demo(store, decider, remote_store_ms, turns, actor, per_turn, walls)

    decisions_per_s = 0.0
    otel: dict[str, Any] = {}
    if bench is not None:
        stage("throughput")
        decisions_per_s = bench.decisions_per_s(concurrency)
        stage("telemetry")
        otel = bench.telemetry_cost()

    # RSS with every record "loaded": search each namespace once so all its vectors are cached.
    stage("memory")
    for ns in store.namespaces() if hasattr(store, "namespaces") else []:
        store.search(SearchRequest(ns, vectors[0], 1))
    bench_rss = rss_mb()
    serving_rss = rss_probe() if rss_probe is not None else None
    return {
        "via": via,
        "decider": getattr(decider, "name", "none") if decider is not None else "none",
        "store": store.url,
        "records": store.count_records(),
        "remote_store_ms": remote_store_ms,
        "concurrency": concurrency,
        "cores": os.cpu_count(),
        "repeats": repeats,
        "embed_p50_ms": p50(embed),
        **decisions,
        "search_p50_ms": p50(search_ms),
        "turn_stock_p50_ms": p50(turn_stock),
        "turn_gated_p50_ms": p50(turn_gated),
        **({"log": str(log), "log_p50_ms": p50(log_ms)} if log is not None else {}),
        "demo_wall_stock_ms": round(walls["stock"], 1),
        "demo_wall_gated_ms": round(walls["gated"], 1),
        "demo_per_turn_ms": per_turn,
        "demo_turns": turns,
        "decisions_per_s": decisions_per_s,
        **otel,
        "rss_mb": serving_rss if serving_rss is not None else bench_rss,
        "rss_measured_in": "serving process" if serving_rss is not None else "bench process",
        "rss_mb_bench_process": bench_rss,
        **multilingual,
    }


def _policy_demo(
    store: MemoryStore,
    decider: Decider | None,
    remote_store_ms: float,
    turns: list[str],
    actor: str,
    per_turn: dict[str, list[float]],
    walls: dict[str, float],
) -> None:
    remote: MemoryStore = DelayedStore(store, remote_store_ms) if remote_store_ms > 0 else store
    for arm, arm_decider in (("stock", None), ("gated", decider)):
        policy = RecallPolicy(remote, decider=arm_decider, namespaces=DEMO_NAMESPACES, cache_size=0)
        started = time.perf_counter()
        for turn in turns:
            t0 = time.perf_counter()
            policy.recall(turn, actor_id=actor, session_id="bench")
            per_turn[arm].append(round((time.perf_counter() - t0) * 1000.0, 3))
        walls[arm] = (time.perf_counter() - started) * 1000.0
        policy.close()


def _memory_manager_turns(
    store: MemoryStore, decider: Decider | None, turns: list[str], actor: str, repeats: int, warmup: int
) -> tuple[list[float], list[float]]:
    """Whole agent turns (a real strands.Agent, MemoryManager injection included) of both arms."""
    from .memory_manager import MemoryManagerArm

    stock = MemoryManagerArm(store, None, gated=False, actor_id=actor)
    gated = MemoryManagerArm(store, decider, gated=True, actor_id=actor, options=RecallOptions(cache_size=0))
    return (
        timed(lambda i: stock.turn(turns[i % len(turns)]), repeats, warmup),
        timed(lambda i: gated.turn(turns[i % len(turns)]), repeats, warmup),
    )


def _memory_manager_demo(
    store: MemoryStore,
    decider: Decider | None,
    remote_store_ms: float,
    per_turn: dict[str, list[float]],
    walls: dict[str, float],
) -> None:
    from .memory_manager import run_memory_manager_demo

    wrap = (lambda s: DelayedStore(s, remote_store_ms)) if remote_store_ms > 0 else None
    result = run_memory_manager_demo(store, decider, wrap_store=wrap)
    for arm in ("stock", "gated"):
        per_turn[arm].extend(row[arm]["ms"] for row in result["per_turn"])
        walls[arm] = float(result["arms"][arm]["wall_ms"])
