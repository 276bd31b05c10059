"""Latency benchmark: what a decision costs, and whether a gated turn beats a stock one.

Everything is timed with ``time.perf_counter`` over repeated runs after a warm-up; medians
are reported. ``--remote-store-ms`` wraps the store in a fixed per-search delay that models a
remote memory service, so the demo's wall clock can be compared arm against arm in one run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..deciders import Decider, DecisionHints
from ..deciders import ask as ask_decider
from ..deciders.questions import MAX_QUESTIONS
from ..demo import DEMO_NAMESPACES, persona, seed_persona
from ..embeddings.language import guess_language
from ..policy import RecallOptions, RecallPolicy
from ..policy.budget import ADAPTIVE_BUDGET, keep_count
from ..policy.conversation import log_odds, rescore_by_conversation
from ..policy.telemetry import Telemetry
from ..policy.wording import (
    FOLLOW_UP,
    GATE,
    ROUTE,
    follow_up_question,
    gate_question,
    judge_question,
    route_question,
)
from ..records import MemoryRecord, SearchHit, resolve_namespace
from ..stores.base import MemoryStore, SearchRequest

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


class DelayedStore:
    """A store wrapper whose searches take at least ``delay_ms``: a remote memory service.

    Marked non-local, so the policy searches its namespaces concurrently, as the AgentCore
    session manager does with one thread per namespace.
    """

    local = False

    def __init__(self, store: MemoryStore, delay_ms: float) -> None:
        self.inner = store
        self.delay_s = delay_ms / 1000.0
        self.url = store.url
        self.embedder = store.embedder
        self.searches = 0
        self._lock = threading.Lock()

    def search(self, *args: Any, **kwargs: Any) -> list[SearchHit]:
        started = time.perf_counter()
        hits = self.inner.search(*args, **kwargs)
        with self._lock:
            self.searches += 1
        remaining = self.delay_s - (time.perf_counter() - started)
        if remaining > 0:
            time.sleep(remaining)
        return hits

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def rss_mb() -> float:
    """Resident set size of this process now, in MB (Linux /proc; else peak RSS)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def serving_rss_mb(
    store_url: str, decider: str | None = None, decider_options: dict[str, Any] | None = None
) -> float | None:
    """RSS in MB of a fresh process serving the store: it opens ``store_url``, searches every
    namespace once (so every vector is in the cache) and runs the demo's turns through a gated
    policy with ``decider`` (a backend name; None = stock). ``None`` for an in-memory store.

    Measured in its own process because the bench process also built the store: the freed
    Python objects of a 100k-record ingest stay in the allocator's heap (fragmented, not returned
    to the system) and would be counted against a process that only serves.
    """
    if store_url == "sqlite://" or (store_url.startswith("sqlite://") and ":memory:" in store_url):
        return None
    spec = json.dumps({"store": store_url, "decider": decider, "options": decider_options or {}})
    done = subprocess.run(
        [sys.executable, "-m", "recallwise.bench.latency", spec],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"serving-process RSS probe failed: {tail}")
    return float(done.stdout.strip().splitlines()[-1])


def _serving_probe(spec: dict[str, Any]) -> float:
    from ..deciders import make_decider
    from ..stores import open_store

    store = open_store(spec["store"])
    try:
        decider = make_decider(spec["decider"], **spec["options"]) if spec["decider"] else None
        vector = store.embedder.embed(["warm-up"])[0]
        for namespace in store.namespaces() if hasattr(store, "namespaces") else []:
            store.search(SearchRequest(namespace, vector, 1))
        policy = RecallPolicy(store, decider=decider, namespaces=DEMO_NAMESPACES)
        for turn in persona()["demo_turns"]:
            policy.recall(turn, actor_id=persona()["actor_id"], session_id="bench")
        policy.close()
        return rss_mb()
    finally:
        store.close()


def add_synthetic_records(store: MemoryStore, count: int, namespaces: int = 100, seed: int = 7) -> int:
    """Fill the store with ``count`` records of other actors (random unit vectors, no embedding
    cost) so searches and memory are measured against a realistically sized store."""
    if count <= 0:
        return 0
    rng = np.random.default_rng(seed)
    dim = store.embedder.dimension
    batch = 5000
    for start in range(0, count, batch):
        n = min(batch, count - start)
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        records = []
        for i in range(n):
            actor = f"synthetic-{(start + i) % namespaces}"
            records.append(
                MemoryRecord(
                    actor_id=actor,
                    namespace=f"/facts/{actor}",
                    text=f"Synthetic memory {start + i} of {actor}.",
                    embedding=vectors[i],
                )
            )
        store.add_records(records)
    return count


def _p50(samples: Sequence[float]) -> float:
    return round(float(statistics.median(samples)), 4) if samples else 0.0


def _timed(fn: Callable[[int], Any], repeats: int, warmup: int) -> list[float]:
    for i in range(warmup):
        fn(i)
    out = []
    for i in range(repeats):
        started = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - started) * 1000.0)
    return out


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
) -> dict[str, Any]:
    """Measure the figures of ``recallwise bench latency`` (see the issue for each key).

    ``via="memory-manager"`` measures the turns and the demo through Strands' own machinery: a real
    ``strands.Agent`` with a ``MemoryManager`` over the store's two namespaces, stock stores vs the
    same stores behind one ``MemoryGate`` (``recallwise.bench.memory_manager``).

    ``rss_probe`` measures the memory of a process that only serves this store (see
    ``serving_rss_mb``); without it, or when it returns None, ``rss_mb`` is this process's.
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
    embed = _timed(lambda i: embedder.embed([MESSAGES[i % len(MESSAGES)] + f" #{i}"]), repeats, warmup)
    vectors = embedder.embed(MESSAGES)

    # Twenty candidate records for the judge: the persona's records plus synthetic ones.
    candidates = [
        h for ns in namespaces for h in store.search(SearchRequest(ns, vectors[0], 10, actor_id=actor))
    ]
    while len(candidates) < 20:
        candidates += candidates[: 20 - len(candidates)]
    candidates = candidates[:20]
    judge_qs = {f"r{i}": judge_question(h.record.rendered) for i, h in enumerate(candidates)}
    judge_hints = DecisionHints(
        subject_vectors={
            f"r{i}": np.asarray(h.record.embedding, dtype=np.float32) for i, h in enumerate(candidates)
        }
    )
    # What a gated turn of the default policy judges: every namespace searched as deep as the
    # policy searches for this decider (RecallOptions.gated_top_k), in calls of MAX_QUESTIONS.
    depth = RecallOptions().search_depth(getattr(decider, "name", None)) if decider is not None else 10
    deep = [
        h for ns in namespaces for h in store.search(SearchRequest(ns, vectors[0], depth, actor_id=actor))
    ]
    per_turn_count = len(namespaces) * depth
    while deep and len(deep) < per_turn_count:
        deep += deep[: per_turn_count - len(deep)]
    deep = deep[:per_turn_count]
    turn_qs = {f"r{i}": judge_question(h.record.rendered) for i, h in enumerate(deep)}
    turn_vectors = {f"r{i}": np.asarray(h.record.embedding, dtype=np.float32) for i, h in enumerate(deep)}
    turn_matrix = np.stack(list(turn_vectors.values())).astype(np.float64)
    # EPISODIC_OPTIONS' worst case: every turn's records from several sessions
    turn_sessions: list[str | None] = [f"s{i % 4}" for i in range(len(deep))]
    turn_names = list(turn_qs)
    gate_qs = {GATE: gate_question()}
    route_qs = {GATE: gate_question(), ROUTE: route_question({t: t.split("/")[1] for t in DEMO_NAMESPACES})}
    # a turn after one that retrieved also asks the follow-up question, in the same call
    follow_qs = {**route_qs, FOLLOW_UP: follow_up_question()}

    gate_ms: list[float] = []
    judge_ms: list[float] = []
    judge_turn_ms: list[float] = []
    episodic_ms: list[float] = []
    follow_up_ms: list[float] = []
    overhead_ms: list[float] = []
    if decider is not None:
        stage("deciding")

        def gate(i: int) -> None:
            ask_decider(
                decider,
                MESSAGES[i % len(MESSAGES)],
                gate_qs,
                DecisionHints(state_vector=vectors[i % len(MESSAGES)]),
            )

        def judge(i: int) -> None:
            hints = DecisionHints(
                state_vector=vectors[i % len(MESSAGES)], subject_vectors=judge_hints.subject_vectors
            )
            ask_decider(decider, MESSAGES[i % len(MESSAGES)], judge_qs, hints)

        def judge_turn(i: int) -> dict[str, Any]:
            hints = DecisionHints(state_vector=vectors[i % len(MESSAGES)], subject_vectors=turn_vectors)
            answers: dict[str, Any] = {}
            for start in range(0, len(turn_names), MAX_QUESTIONS):
                part = {n: turn_qs[n] for n in turn_names[start : start + MAX_QUESTIONS]}
                answers.update(ask_decider(decider, MESSAGES[i % len(MESSAGES)], part, hints))
            return answers

        def route(i: int) -> None:
            ask_decider(
                decider,
                MESSAGES[i % len(MESSAGES)],
                route_qs,
                DecisionHints(state_vector=vectors[i % len(MESSAGES)]),
            )

        def overhead(i: int) -> None:
            route(i)
            judge_turn(i)

        def overhead_follow_up(i: int) -> None:
            ask_decider(
                decider,
                MESSAGES[i % len(MESSAGES)],
                follow_qs,
                DecisionHints(state_vector=vectors[i % len(MESSAGES)]),
            )
            judge_turn(i)

        def overhead_episodic(i: int) -> None:
            # EPISODIC_OPTIONS: then re-scoring by session and the adaptive budget (worst case:
            # every record from one of several sessions, so the re-scoring always runs)
            route(i)
            answers = judge_turn(i)
            scores = rescore_by_conversation(
                log_odds([float(answers[n]) for n in turn_names]), turn_matrix, turn_sessions
            )
            keep_count(scores, ADAPTIVE_BUDGET)

        gate_ms = _timed(gate, repeats, warmup)
        judge_ms = _timed(judge, repeats, warmup)
        judge_turn_ms = _timed(judge_turn, repeats, warmup)
        overhead_ms = _timed(overhead, repeats, warmup)
        episodic_ms = _timed(overhead_episodic, repeats, warmup)
        follow_up_ms = _timed(overhead_follow_up, repeats, warmup)

    multilingual = _multilingual_figures(
        decider, embedder, candidates, route_qs, judge_qs, repeats, warmup, stage
    )

    stage("searching")
    search_ms = _timed(
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
    walls: dict[str, float] = {}
    if via == "memory-manager":
        turn_stock, turn_gated = _memory_manager_turns(store, decider, turns, actor, repeats, warmup)
        stage("demo")
        _memory_manager_demo(store, decider, remote_store_ms, per_turn, walls)
    else:
        stock_policy = RecallPolicy(store, decider=None, namespaces=DEMO_NAMESPACES, cache_size=0)
        gated_policy = RecallPolicy(store, decider=decider, namespaces=DEMO_NAMESPACES, cache_size=0)
        turn_stock = _timed(
            lambda i: stock_policy.recall(turns[i % len(turns)], actor_id=actor), repeats, warmup
        )
        turn_gated = _timed(
            lambda i: gated_policy.recall(turns[i % len(turns)], actor_id=actor), repeats, warmup
        )
        stage("demo")
        _policy_demo(store, decider, remote_store_ms, turns, actor, per_turn, walls)

    stage("throughput")
    decisions_per_s = 0.0
    if decider is not None:

        def one(i: int) -> None:
            ask_decider(
                decider,
                MESSAGES[i % len(MESSAGES)],
                route_qs,
                DecisionHints(state_vector=vectors[i % len(MESSAGES)]),
            )
            judge_turn(i)

        count = max(repeats * 2, 200)
        started = time.perf_counter()
        if concurrency > 1:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                list(pool.map(one, range(count)))
        else:
            for i in range(count):
                one(i)
        decisions_per_s = round(count / (time.perf_counter() - started), 1)

    otel = _telemetry_cost(
        store,
        decider,
        actor,
        turns,
        (lambda i: overhead(i)) if decider is not None else None,
        repeats,
        warmup,
    )
    if otel:
        stage("telemetry")

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
        "embed_p50_ms": _p50(embed),
        "gate_p50_ms": _p50(gate_ms),
        "judge20_p50_ms": _p50(judge_ms),
        "judged_per_turn": per_turn_count if decider is not None else 0,
        "judge_per_turn_p50_ms": _p50(judge_turn_ms),
        "decision_overhead_p50_ms": _p50(overhead_ms),
        "decision_overhead_episodic_p50_ms": _p50(episodic_ms),
        "decision_overhead_follow_up_p50_ms": _p50(follow_up_ms),
        "search_p50_ms": _p50(search_ms),
        "turn_stock_p50_ms": _p50(turn_stock),
        "turn_gated_p50_ms": _p50(turn_gated),
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


def _telemetry_cost(
    store: MemoryStore,
    decider: Decider | None,
    actor: str,
    turns: Sequence[str],
    overhead: Callable[[int], None] | None,
    repeats: int,
    warmup: int,
) -> dict[str, Any]:
    """The decision overhead with an OpenTelemetry SDK and in-memory exporters configured.

    With providers of its own (the process's global ones are left alone): ``otel_emit_p50_ms``
    is making one gated turn's spans and metrics, ``decision_overhead_otel_p50_ms`` the
    decisions plus that. Empty when the SDK is not installed or there is no decider.
    """
    if decider is None or overhead is None:
        return {}
    decide = overhead
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        return {"otel": "opentelemetry-sdk is not installed"}
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    # The batch processor, as a deployment uses (the simple one exports inside the turn).
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    policy = RecallPolicy(store, decider=decider, namespaces=DEMO_NAMESPACES, cache_size=0)
    # Its own providers: the bench must not set the process's (set-once) global ones.
    policy.telemetry = Telemetry(
        policy.stats,
        decider=policy.stats.decider,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
    )
    drink = next((t for t in turns if "drink" in t.lower()), turns[0])
    recall = policy.recall(drink, actor_id=actor)
    telemetry, stats = policy.telemetry, policy.stats

    def emit(i: int) -> None:
        # What a gated turn adds when an SDK is on: its spans and its counters.
        telemetry.emit(recall.trace, started_ns=0, ended_ns=1, kept_ids=[], message="")
        stats.add(turns=1, baseline_retrievals=1, gate_calls=1, gate_opened=1, retrievals=1, memory_ms=0.2)
        stats.add(records_injected=1, records_dropped=2, context_chars=40, context_tokens=10, decider_calls=2)
        if i % 64 == 0:
            exporter.clear()

    def decide_and_emit(i: int) -> None:
        decide(i)
        emit(i)

    emit_ms = _timed(emit, repeats, warmup)
    with_otel = _timed(decide_and_emit, repeats, warmup)
    policy.close()
    tracer_provider.shutdown()
    return {
        "otel": "sdk, batch span processor, in-memory exporters",
        "otel_emit_p50_ms": _p50(emit_ms),
        "decision_overhead_otel_p50_ms": _p50(with_otel),
    }


def _multilingual_figures(
    decider: Decider | None,
    embedder: Any,
    candidates: list[SearchHit],
    route_qs: dict[str, Any],
    judge_qs: dict[str, Any],
    repeats: int,
    warmup: int,
    stage: Callable[[str], None],
) -> dict[str, Any]:
    """What a turn in another language costs the embedded decider beyond the English path.

    ``language_guess_p50_ms``: deciding which model reads a new message (every turn pays it).
    When the decider has a multilingual model the store's embedder is not: the second
    embedding (``multilingual_embed_p50_ms``, the message), the first sight of 20 judged
    records (``multilingual_embed20_p50_ms``; records recur, and are then cached), and the
    decision itself with those vectors cached (``multilingual_decision_overhead_p50_ms``:
    gate + route + judge of 20; a multilingual turn is never re-scored by conversation).
    """
    out: dict[str, Any] = {}
    guess = getattr(guess_language, "__wrapped__", guess_language)  # uncached: a new message each time
    out["language_guess_p50_ms"] = _p50(
        _timed(lambda i: guess(f"{MESSAGES[i % len(MESSAGES)]} #{i}"), repeats, warmup)
    )
    second = getattr(decider, "multilingual_decider", None)
    ml = second() if callable(second) else None
    if decider is None or ml is None or ml.embedder.name == getattr(embedder, "name", None):
        out["multilingual_embedder"] = None
        return out
    stage("multilingual")
    model = ml.embedder
    model.embed(["warm-up"])
    texts = [h.record.rendered for h in candidates]
    n = len(MESSAGES_MULTILINGUAL)
    embed_ml = _timed(lambda i: model.embed([f"{MESSAGES_MULTILINGUAL[i % n]} #{i}"]), repeats, warmup)
    embed20 = _timed(lambda i: model.embed([f"{t} #{i}" for t in texts]), max(repeats // 10, 5), 2)
    vectors = embedder.embed(MESSAGES_MULTILINGUAL)  # what the policy passes: the store's vectors
    subject_vectors = {
        f"r{i}": np.asarray(h.record.embedding, dtype=np.float32) for i, h in enumerate(candidates)
    }

    def overhead(i: int) -> None:
        message, vector = MESSAGES_MULTILINGUAL[i % n], vectors[i % n]
        ask_decider(decider, message, route_qs, DecisionHints(state_vector=vector))
        hints = DecisionHints(state_vector=vector, subject_vectors=subject_vectors)
        ask_decider(decider, message, judge_qs, hints)

    out["multilingual_embedder"] = model.name
    out["multilingual_embed_p50_ms"] = _p50(embed_ml)
    out["multilingual_embed20_p50_ms"] = _p50(embed20)
    out["multilingual_decision_overhead_p50_ms"] = _p50(_timed(overhead, repeats, max(warmup, n)))
    return out


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
    gated = MemoryManagerArm(store, decider, gated=True, actor_id=actor, cache_size=0)
    return (
        _timed(lambda i: stock.turn(turns[i % len(turns)]), repeats, warmup),
        _timed(lambda i: gated.turn(turns[i % len(turns)]), repeats, warmup),
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


if __name__ == "__main__":  # the serving-process probe of ``serving_rss_mb``
    print(_serving_probe(json.loads(sys.argv[1])))
