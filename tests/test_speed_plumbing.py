"""What makes a gated turn cheap, asserted as behaviour (never as timings): one embedding per
turn, cached decisions for repeated messages, thread safety, and the latency benchmark's shape."""

import json
import threading

import numpy as np

from cli_runner import run_cli
from recallwise import MemoryRecord, RecallPolicy
from recallwise.bench.latency import DelayedStore
from recallwise.deciders import EmbeddedDecider
from recallwise.embeddings import HashingEmbedder
from recallwise.stores import SQLiteStore
from recallwise.stores.base import SearchRequest

NS = ["/facts/{actorId}", "/preferences/{actorId}"]


class CountingEmbedder(HashingEmbedder):
    def __init__(self):
        super().__init__(64)
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts):
        with self._lock:
            self.texts.extend(texts)
        return super().embed(texts)


def _store(tmp_path, embedder):
    s = SQLiteStore(f"sqlite:///{tmp_path}/s.db", embedder=embedder)
    s.add_records(
        [
            MemoryRecord(actor_id="u", namespace="/facts/u", text=f"the user likes tea number {i}")
            for i in range(20)
        ]
    )
    s.add_records([MemoryRecord(actor_id="u", namespace="/preferences/u", text="prefers green tea")])
    return s


def test_one_embedding_per_turn_shared_by_every_stage(tmp_path):
    embedder = CountingEmbedder()
    store = _store(tmp_path, embedder)
    decider = EmbeddedDecider(embedder=embedder)
    policy = RecallPolicy(store, decider=decider, namespaces=NS, gate_threshold=0.0)
    # Warm the decider's question caches (the gate's and the follow-up question's examples: the
    # second turn of a conversation also asks whether it follows the first up), then count only
    # turn-time embeddings.
    policy.warm_up()
    policy.recall("warm up please", actor_id="u", session_id="s")
    embedder.texts.clear()
    recall = policy.recall("which tea should I drink?", actor_id="u", session_id="s")
    assert recall.trace.gate_open and recall.trace.candidates  # gate, search and judge all ran
    assert embedder.texts == ["which tea should I drink?"]


def test_repeated_message_in_a_session_hits_the_decision_cache(tmp_path):
    embedder = CountingEmbedder()
    store = _store(tmp_path, embedder)
    decider = EmbeddedDecider(embedder=embedder)
    decider.warm_up()
    policy = RecallPolicy(store, decider=decider, namespaces=NS, cache_size=2)
    first = policy.recall("ok", actor_id="u", session_id="s")
    embedder.texts.clear()
    second = policy.recall("ok", actor_id="u", session_id="s")
    assert embedder.texts == [] and second.trace.cache_hit and not first.trace.cache_hit
    assert second.trace.gate_p == first.trace.gate_p
    assert policy.stats.cache_hits == 1 and policy.stats.cache_misses == 1
    # another session does not share the entry; the cache stays bounded
    policy.recall("ok", actor_id="u", session_id="other")
    policy.recall("hello", actor_id="u", session_id="s")
    assert len(policy._cache) == 2


def test_concurrent_turns_are_thread_safe(tmp_path):
    store = _store(tmp_path, HashingEmbedder(64))
    policy = RecallPolicy(
        store, decider=EmbeddedDecider(embedder=store.embedder), namespaces=NS, cache_size=0
    )
    errors = []

    def worker(n):
        try:
            for i in range(25):
                policy.recall(f"tea question {n} {i}", actor_id="u")
        except Exception as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert policy.stats.turns == 200 and policy.stats.errors == 0
    assert policy.stats.gate_opened + policy.stats.gate_closed == 200


def test_delayed_store_is_remote_and_searched_in_parallel(tmp_path):
    store = _store(tmp_path, HashingEmbedder(64))
    slow = DelayedStore(store, 50)
    assert slow.local is False and slow.embedder is store.embedder
    policy = RecallPolicy(slow, decider=None, namespaces=NS)
    recall = policy.recall("tea", actor_id="u")
    assert slow.searches == 2 and recall.records
    assert policy._pool is not None  # a remote store's namespaces are searched through the thread pool
    policy.close()


def test_matrix_cache_is_invalidated_on_write(tmp_path):
    store = _store(tmp_path, HashingEmbedder(64))
    vector = store.embedder.embed(["tea"])[0]
    before = len(store.search(SearchRequest("/facts/u", vector, 100)))
    store.add_records([MemoryRecord(actor_id="u", namespace="/facts/u", text="tea again")])
    assert len(store.search(SearchRequest("/facts/u", vector, 100))) == before + 1
    assert isinstance(store._matrices["/facts/u"].vectors, np.ndarray)


def test_bench_latency_json_keys(tmp_path):
    out = run_cli(
        "bench",
        "latency",
        "--records",
        "200",
        "--repeats",
        "5",
        "--remote-store-ms",
        "5",
        "--json",
        "--store",
        f"sqlite:///{tmp_path}/b.db",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for key in (
        "embed_p50_ms",
        "gate_p50_ms",
        "judge20_p50_ms",
        "decision_overhead_p50_ms",
        "decision_overhead_episodic_p50_ms",
        "decision_overhead_follow_up_p50_ms",
        "policy_work_gated_p50_ms",
        "policy_work_stock_p50_ms",
        "search_p50_ms",
        "turn_stock_p50_ms",
        "turn_gated_p50_ms",
        "demo_wall_stock_ms",
        "demo_wall_gated_ms",
        "decisions_per_s",
        "rss_mb",
    ):
        assert isinstance(data[key], (int, float)), key
    assert data["records"] >= 200
    assert len(data["demo_per_turn_ms"]["stock"]) == 8
    # measured in a second process that only serves the file the bench built
    assert data["rss_measured_in"] == "serving process"
    assert data["rss_mb"] > 0 and data["rss_mb_bench_process"] > 0


def test_serving_rss_probe_skips_in_memory_stores():
    from recallwise.bench.latency import serving_rss_mb

    assert serving_rss_mb("sqlite://:memory:") is None


def test_bench_latency_bad_flags_exit_2():
    out = run_cli("bench", "latency", "--repeats", "0")
    assert out.returncode == 2 and "Traceback" not in out.stderr
